#!/bin/bash
# Control plane at scale: builds optimized (-c opt, also .bazelrc's
# default), runs N = 64..4096 simulated workers against a real coordinator,
# writes bench/results/control_plane.json and .png. Extra flags go to the
# benchmark, e.g. --sizes=256 --repeats=5.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel run -c opt //bench/control_plane:control_plane_bench -- "$@"
/usr/bin/python3 bench/control_plane/plot_control_plane.py

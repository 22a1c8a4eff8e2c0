#!/bin/bash
# kill -9 of 1 of 3 real workers -> survivors in the next generation, at the
# default lease and a short one; writes bench/results/failure_detection.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel run //bench/recovery:failure_detection_bench -- "$@"

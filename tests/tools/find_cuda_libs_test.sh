#!/usr/bin/env bash
# Runs tests/tools/find_cuda_libs_test.py from the runfiles root, where
# tools/find_cuda_libs.py is.
set -euo pipefail
exec /usr/bin/python3 tests/tools/find_cuda_libs_test.py

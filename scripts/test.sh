#!/usr/bin/env bash
# Builds everything and runs every test, then prints "N passed, N failed"
# counted over GoogleTest cases (from each target's test.xml).
set -uo pipefail
cd "$(dirname "$0")/.."

bazel build //... || { echo "0 passed, 1 failed"; exit 1; }
# Results are never taken from the cache: every run runs every test.
bazel test //... --nocache_test_results "$@"
rc=$?
python3 tools/count_tests.py bazel-testlogs
count_rc=$?
if [[ $rc -ne 0 || $count_rc -ne 0 ]]; then exit 1; fi

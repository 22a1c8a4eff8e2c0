#!/usr/bin/env bash
# Builds everything and runs every test, then prints "N passed, N failed"
# counted over GoogleTest cases (from each target's test.xml), plus one case
# for clang's lock-annotation analysis (scripts/thread_safety.sh) and one per
# fuzzer for a bounded libFuzzer run over job-spec parsing and .npy headers
# (scripts/fuzz.sh; FUZZ_SECONDS, default 60 in all; FUZZ_SECONDS=0 skips it).
set -uo pipefail
cd "$(dirname "$0")/.."

bazel build //... || { echo "0 passed, 1 failed"; exit 1; }
# Results are never taken from the cache: every run runs every test.
bazel test //... --nocache_test_results "$@"
rc=$?
extra_dir="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-extra-results.XXXXXX")"
TSA_XML="$extra_dir/thread_safety/test.xml" bash scripts/thread_safety.sh || rc=1
if [[ "${FUZZ_SECONDS:-60}" != 0 ]]; then
  # A crash, a sanitizer report or a failed clang build is a failed case.
  FUZZ_XML="$extra_dir/fuzz/test.xml" \
    bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}" || rc=1
fi
# The results of this configuration (the bazel-testlogs symlink follows
# whichever configuration built last, e.g. a -c opt benchmark build).
python3 tools/count_tests.py "$(bazel info bazel-testlogs 2>/dev/null)" "$extra_dir"
count_rc=$?
rm -rf "$extra_dir"
if [[ $rc -ne 0 || $count_rc -ne 0 ]]; then exit 1; fi

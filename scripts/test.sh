#!/usr/bin/env bash
# Builds everything and runs every test, then prints "N passed, N failed"
# counted over GoogleTest cases (from each target's test.xml) and the Python
# package's pytest cases (scripts/python_tests.sh, against the daemons just
# built), plus one case for clang's lock-annotation analysis
# (scripts/thread_safety.sh), one for clang's implicit-narrowing check of
# coordinator/, worker/, common/ and cli/ (scripts/narrowing.sh), three for
# the logging includes that a torch 2.x LibTorch needs
# (tools/check_logging_includes.py), one for no function over 80 lines in
# coordinator/, worker/, cli/ and common/ (scripts/function_lengths.py), one per
# fuzzer for a bounded libFuzzer run over job-spec parsing and .npy headers
# (scripts/fuzz.sh; FUZZ_SECONDS, default 60 in all; FUZZ_SECONDS=0 skips it),
# and three for what a new user sees (scripts/first_run_check.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/bazel_output.sh

# Tests build at fastbuild (-O0; .bazelrc's `test -c fastbuild`), so the
# build before them does too: one configuration, compiled once.
extra_dir="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-extra-results.XXXXXX")"
build_log="$extra_dir/build.log"
bazel build -c fastbuild "${BAZEL_QUIET[@]}" //... 2>&1 | tee "$build_log"
((PIPESTATUS[0] == 0)) || { echo "0 passed, 1 failed"; exit 1; }
# Results are never taken from the cache: every run runs every test.
bazel test //... "${BAZEL_QUIET[@]}" --nocache_test_results "$@"
rc=$?
PYTHON_XML="$extra_dir/python/test.xml" bash scripts/python_tests.sh || rc=1
TSA_XML="$extra_dir/thread_safety/test.xml" bash scripts/thread_safety.sh || rc=1
NARROWING_XML="$extra_dir/narrowing/test.xml" bash scripts/narrowing.sh || rc=1
python3 tools/check_logging_includes.py \
  --xml "$extra_dir/logging_includes/test.xml" || rc=1
python3 scripts/function_lengths.py \
  --xml "$extra_dir/function_lengths/test.xml" || rc=1
if [[ "${FUZZ_SECONDS:-60}" != 0 ]]; then
  # A crash, a sanitizer report or a failed clang build is a failed case.
  FUZZ_XML="$extra_dir/fuzz/test.xml" \
    bash scripts/fuzz.sh "${FUZZ_SECONDS:-60}" || rc=1
fi
FIRST_RUN_XML="$extra_dir/first_run/test.xml" \
  bash scripts/first_run_check.sh "$build_log" || rc=1
rm -f "$build_log"
# The results of the tests' configuration (the bazel-testlogs symlink follows
# whichever configuration built last).
python3 tools/count_tests.py \
  "$(bazel info -c fastbuild bazel-testlogs 2>/dev/null)" "$extra_dir"
count_rc=$?
rm -rf "$extra_dir"
if [[ $rc -ne 0 || $count_rc -ne 0 ]]; then exit 1; fi

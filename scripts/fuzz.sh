#!/usr/bin/env bash
# Builds the job-spec libFuzzer target (//fuzz:job_spec_fuzzer) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs it for a bounded
# time over a scratch copy of the seed corpus (fuzz/corpus/job_spec) plus the
# shipped examples. Exits non-zero when the fuzzer finds a crash, a sanitizer
# report, a broken invariant or a hang; the reproducer is kept and named.
#
#   scripts/fuzz.sh [SECONDS]        default 60 (or $FUZZ_SECONDS)
#   FUZZ_XML=path/test.xml scripts/fuzz.sh   also writes the outcome as one
#                                    JUnit test case (scripts/test.sh counts it)
#
# The clang build lives in its own Bazel output base (its own server, keyed on
# this checkout's path), so it never invalidates or waits on the gcc build;
# compiled actions are shared through the disk cache in .bazelrc.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-${FUZZ_SECONDS:-60}}"
xml="${FUZZ_XML:-}"
key="$(pwd | md5sum | cut -c1-12)"
output_base="${FUZZ_OUTPUT_BASE:-$HOME/.cache/ringleader-fuzz-base/$key}"

# One JUnit case for the whole run: count_tests.py reads it like Bazel's.
. scripts/junit.sh
check_begin "$xml" fuzz "job_spec_fuzzer_${seconds}s" fuzz

command -v clang >/dev/null || check_fail "clang is not installed (scripts/setup.sh installs it)"
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  check_fail "libclang_rt.fuzzer is not installed (scripts/setup.sh installs libclang-rt-dev)"

san="-fsanitize=address,undefined"
flags=(
  --repo_env=CC=clang
  --copt=-fsanitize=fuzzer-no-link,address,undefined
  --copt=-fno-sanitize-recover=undefined
  --copt=-fno-omit-frame-pointer
  --copt=-gline-tables-only
  --copt=-O1
  --linkopt="$san"
  # The gcc-default C driver does not link UBSan's C++ part by itself.
  --linkopt=-fsanitize-link-c++-runtime
)
bazel_fuzz() {
  bazel --output_base="$output_base" --max_idle_secs=120 "$@"
}
echo "fuzz: building //fuzz:job_spec_fuzzer with clang (output base $output_base)"
bazel_fuzz build "${flags[@]}" //fuzz:job_spec_fuzzer ||
  check_fail "clang build of //fuzz:job_spec_fuzzer failed"
bin="$(bazel_fuzz info "${flags[@]}" bazel-bin 2>/dev/null)/fuzz/job_spec_fuzzer"
[[ -x "$bin" ]] || check_fail "no fuzzer binary at $bin"

work="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-fuzz.XXXXXX")"
mkdir -p "$work/corpus" "$work/artifacts"
cp fuzz/corpus/job_spec/* examples/*.textproto "$work/corpus/"
seeds=$(ls "$work/corpus" | wc -l)
echo "fuzz: running $seconds s over $seeds seeds (scratch $work)"
# -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak or a
# runaway allocation is a failure too.
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  TEST_TMPDIR="$work" \
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
  "$work/corpus" >"$work/fuzz.log" 2>&1
rc=$?
grep -E '^(#[0-9]+ *(INITED|DONE)|stat::|Done )' "$work/fuzz.log" | tail -12
if [[ $rc -ne 0 ]]; then
  tail -40 "$work/fuzz.log" >&2
  artifacts=$(ls "$work/artifacts" 2>/dev/null | tr '\n' ' ')
  check_fail "fuzzer exited $rc; reproducer(s) in $work/artifacts: ${artifacts:-none}; log $work/fuzz.log"
fi
corpus=$(ls "$work/corpus" | wc -l)
echo "fuzz: no crash in $seconds s; corpus $seeds -> $corpus inputs"
check_pass
rm -rf "$work"

#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for its share of a bounded time
# over a scratch copy of its seed corpus:
#   - job_spec_fuzzer (//fuzz:job_spec_fuzzer): job-spec parsing and
#     validation, seeds fuzz/corpus/job_spec plus the shipped examples;
#   - npy_header_fuzzer (//fuzz:npy_header_fuzzer): the .npy header parser
#     behind the NPY and TOKENS datasets, seeds fuzz/corpus/npy_header, with
#     the dictionary fuzz/npy_header.dict;
#   - image_decode_fuzzer (//fuzz:image_decode_fuzzer): the JPEG (libjpeg) and
#     PNG (libspng) decoders and the image transform, seeds
#     fuzz/corpus/image_decode;
#   - tar_reader_fuzzer (//fuzz:tar_reader_fuzzer): the tar reader and the
#     WebDataset shard index, seeds fuzz/corpus/tar_reader.
# Exits non-zero when a fuzzer finds a crash, a sanitizer report, a broken
# invariant or a hang; the reproducer is kept and named.
#
#   scripts/fuzz.sh [SECONDS]        default 60 (or $FUZZ_SECONDS), split
#                                    between the fuzzers (at least 1 s each):
#                                    a third to the job spec's, the rest
#                                    evenly; the clang build is not counted
#   FUZZ_XML=path/test.xml scripts/fuzz.sh   also writes the outcome as one
#                                    JUnit test case per fuzzer
#                                    (scripts/test.sh counts them)
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

# Each fuzzer's share; -max_total_time=0 would mean "forever", hence >= 1.
job_spec_seconds=$((seconds / 3))
npy_seconds=$(((seconds - job_spec_seconds) / 3))
image_seconds=$npy_seconds
tar_seconds=$((seconds - job_spec_seconds - npy_seconds - image_seconds))
for v in job_spec_seconds npy_seconds image_seconds tar_seconds; do
  ((${!v} >= 1)) || printf -v "$v" 1
done

# One JUnit case per fuzzer: count_tests.py reads them like Bazel's.
. scripts/junit.sh
check_begin "$xml" fuzz "job_spec_fuzzer_${job_spec_seconds}s" fuzz

# A failure before any fuzzer runs fails every case.
fail_both() {
  check_failed "$1"
  for c in "npy_header_fuzzer_${npy_seconds}s" \
    "image_decode_fuzzer_${image_seconds}s" "tar_reader_fuzzer_${tar_seconds}s"; do
    check_next "$c" fuzz
    check_fail "$1"
  done
}

command -v clang >/dev/null || fail_both "clang is not installed (scripts/setup.sh installs it)"
ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 ||
  fail_both "libclang_rt.fuzzer is not installed (scripts/setup.sh installs libclang-rt-dev)"

san="-fsanitize=address,undefined"
flags=(
  --repo_env=CC=clang
  # Assertions on (no NDEBUG), unlike .bazelrc's default -c opt.
  -c fastbuild
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
targets=(//fuzz:job_spec_fuzzer //fuzz:npy_header_fuzzer
  //fuzz:image_decode_fuzzer //fuzz:tar_reader_fuzzer)
echo "fuzz: building ${targets[*]} with clang (output base $output_base)"
bazel_fuzz build "${flags[@]}" "${targets[@]}" ||
  fail_both "clang build of the fuzzers failed"
bin_dir="$(bazel_fuzz info "${flags[@]}" bazel-bin 2>/dev/null)/fuzz"

work="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-fuzz.XXXXXX")"

# run_fuzzer NAME SECONDS "EXTRA FLAGS" SEED...: records the current case.
run_fuzzer() {
  local name="$1" secs="$2" extra="$3"
  shift 3
  local bin="$bin_dir/$name" dir="$work/$name"
  if [[ ! -x "$bin" ]]; then
    check_failed "no fuzzer binary at $bin"
    return
  fi
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$@" "$dir/corpus/"
  local seeds rc
  seeds=$(ls "$dir/corpus" | wc -l)
  echo "fuzz: running $name for $secs s over $seeds seeds (scratch $dir)"
  # -timeout: one input taking 10 s is a hang; -rss_limit_mb: a leak or a
  # runaway allocation is a failure too.
  # shellcheck disable=SC2086  # $extra is a list of flags.
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    TEST_TMPDIR="$dir" \
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
    $extra "$dir/corpus" >"$dir/fuzz.log" 2>&1
  rc=$?
  grep -E '^(#[0-9]+ *(INITED|DONE)|stat::|Done )' "$dir/fuzz.log" | tail -12
  if [[ $rc -ne 0 ]]; then
    tail -40 "$dir/fuzz.log" >&2
    local artifacts
    artifacts=$(ls "$dir/artifacts" 2>/dev/null | tr '\n' ' ')
    check_failed "$name exited $rc; reproducer(s) in $dir/artifacts: ${artifacts:-none}; log $dir/fuzz.log"
    return
  fi
  echo "fuzz: $name: no crash in $secs s; corpus $seeds -> $(ls "$dir/corpus" | wc -l) inputs"
  check_pass
  rm -rf "$dir"
}

# Restarts the first case's clock: the build is not the fuzzer's time.
check_next "job_spec_fuzzer_${job_spec_seconds}s" fuzz
run_fuzzer job_spec_fuzzer "$job_spec_seconds" "" \
  fuzz/corpus/job_spec/* examples/*.textproto
check_next "npy_header_fuzzer_${npy_seconds}s" fuzz
run_fuzzer npy_header_fuzzer "$npy_seconds" "-dict=fuzz/npy_header.dict" \
  fuzz/corpus/npy_header/*
# Images and shards are larger than a header: longer inputs (a later
# -max_len wins).
check_next "image_decode_fuzzer_${image_seconds}s" fuzz
run_fuzzer image_decode_fuzzer "$image_seconds" "-max_len=8192" \
  fuzz/corpus/image_decode/*
check_next "tar_reader_fuzzer_${tar_seconds}s" fuzz
run_fuzzer tar_reader_fuzzer "$tar_seconds" "-max_len=16384" \
  fuzz/corpus/tar_reader/*
# What failed keeps its scratch directory (reproducers, log).
rmdir "$work" 2>/dev/null
check_status

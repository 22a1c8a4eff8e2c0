#!/usr/bin/env bash
# Checks that no integer is narrowed implicitly in coordinator/, worker/,
# common/ and cli/ (issue 49): clang's -Wshorten-64-to-32 (an int64 wire
# field read through an int32, as comm_index once was: INT64_MAX became -1
# and 2^32 + 5 became 5) and -Wimplicit-int-conversion (an int into a
# short or a char). The build uses gcc, which has no such check by default.
# Every source file is parsed (-fsyntax-only, no code generated); any such
# warning fails the check. A narrowing that is meant is written as a cast,
# with a comment saying why the value fits.
#
# Needs the generated headers of a fastbuild `bazel build //...` (as
# scripts/test.sh runs first). NARROWING_XML=PATH also writes the result as
# one JUnit case for tools/count_tests.py.
#   scripts/narrowing.sh
set -uo pipefail
cd "$(dirname "$0")/.."
xml="${NARROWING_XML:-}"

. scripts/junit.sh
check_begin "$xml" narrowing clang_implicit_narrowing narrowing

command -v clang++ >/dev/null ||
  check_fail "clang++ is not installed (scripts/setup.sh installs clang)"
bin="$(bazel info -c fastbuild bazel-bin 2>/dev/null)" || check_fail "bazel info failed"
[[ -d "$bin/proto/ringleader" ]] ||
  check_fail "no generated headers under $bin (run bazel build //... first)"

torch_includes=(-isystem /usr/include/torch/csrc/api/include)
if [[ -n "${LIBTORCH:-}" ]]; then
  torch_includes=(-isystem "$LIBTORCH/include"
    -isystem "$LIBTORCH/include/torch/csrc/api/include")
  grep -q '^#define C10_USE_GLOG' "$LIBTORCH/include/c10/macros/cmake_macros.h" ||
    torch_includes+=(-DRINGLEADER_C10_OWN_LOGGING)
fi
# Only these two diagnostics, as errors: the others clang has are not this
# check's business (gcc's -Wall is the build's).
flags=(-std=c++17 -fsyntax-only -Wno-everything
  -Werror=shorten-64-to-32 -Werror=implicit-int-conversion
  -I. -I"$bin" -I"$bin/proto" -I"$bin/tests/deploy/proto"
  "${torch_includes[@]}" -isystem /usr/local/cuda/include
  # The one header a CPU LibTorch lacks for the CUDA backend, as its Bazel
  # compile check supplies it; searched last, so a CUDA LibTorch's wins.
  -idirafter tests/worker/device/compile_check)

mapfile -t files < <(git ls-files -- '*.cc' | grep -E '^(coordinator|worker|common|cli)/')
((${#files[@]} > 0)) || check_fail "found no source files to check"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Two at a time: the torch headers make each parse take a few seconds.
printf '%s\0' "${files[@]}" |
  xargs -0 -P 2 -I{} sh -c 'clang++ "$@" {} 2>&1 || echo "FAILED: {}"' \
    _ "${flags[@]}" >"$log"
if grep -q "^FAILED: " "$log"; then
  cat "$log" >&2
  check_fail "$(grep -c '^FAILED: ' "$log") of ${#files[@]} files narrow an integer implicitly or do not parse: $(grep '^FAILED: ' "$log" | cut -d' ' -f2 | tr '\n' ' ')"
fi
echo "narrowing: ${#files[@]} files pass clang's -Wshorten-64-to-32 and -Wimplicit-int-conversion"
check_pass

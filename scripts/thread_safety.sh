#!/usr/bin/env bash
# Checks the lock annotations (ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED,
# ...) with clang's -Wthread-safety analysis. The build uses gcc, which
# ignores them; without this check they are comments that can go stale.
# Every source file that uses absl::Mutex or the annotations is parsed
# (-fsyntax-only, no code generated); any warning fails the check.
#
# Needs the generated headers of a fastbuild `bazel build //...` (as
# scripts/test.sh runs first). TSA_XML=PATH also writes the result as one
# JUnit case for tools/count_tests.py.
#   scripts/thread_safety.sh
set -uo pipefail
cd "$(dirname "$0")/.."
xml="${TSA_XML:-}"

. scripts/junit.sh
check_begin "$xml" thread_safety clang_thread_safety_analysis thread_safety

command -v clang++ >/dev/null ||
  check_fail "clang++ is not installed (scripts/setup.sh installs clang)"
bin="$(bazel info -c fastbuild bazel-bin 2>/dev/null)" || check_fail "bazel info failed"
[[ -d "$bin/proto/ringleader" ]] ||
  check_fail "no generated headers under $bin (run bazel build //... first)"

torch_includes=(-isystem /usr/include/torch/csrc/api/include)
if [[ -n "${LIBTORCH:-}" ]]; then
  torch_includes=(-isystem "$LIBTORCH/include"
    -isystem "$LIBTORCH/include/torch/csrc/api/include")
  # As tools/libtorch_configure.bzl does for common/logging.h.
  grep -q '^#define C10_USE_GLOG' "$LIBTORCH/include/c10/macros/cmake_macros.h" ||
    torch_includes+=(-DRINGLEADER_C10_OWN_LOGGING)
fi
flags=(-std=c++17 -fsyntax-only -Wthread-safety -Werror=thread-safety
  -I. -I"$bin" -I"$bin/proto" -I"$bin/tests/deploy/proto"
  "${torch_includes[@]}" -isystem /usr/local/cuda/include)

mapfile -t files < <(git ls-files -- '*.cc' | grep -E \
  '^(coordinator|worker|common|cli|bench|tests|fuzz)/' |
  xargs grep -lE 'absl::Mutex|ABSL_(GUARDED_BY|EXCLUSIVE_LOCKS_REQUIRED|LOCKS_EXCLUDED)')
((${#files[@]} > 0)) || check_fail "found no source files to check"

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# Two at a time: the torch headers make each parse take a few seconds.
printf '%s\0' "${files[@]}" |
  xargs -0 -P 2 -I{} sh -c 'clang++ "$@" {} 2>&1 || echo "FAILED: {}"' \
    _ "${flags[@]}" >"$log"
if grep -q "^FAILED: " "$log"; then
  cat "$log" >&2
  check_fail "$(grep -c '^FAILED: ' "$log") of ${#files[@]} files fail the analysis or do not parse: $(grep '^FAILED: ' "$log" | cut -d' ' -f2 | tr '\n' ' ')"
fi
echo "thread_safety: ${#files[@]} files pass clang's -Wthread-safety"
check_pass

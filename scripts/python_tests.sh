#!/usr/bin/env bash
# Runs the Python package's tests (python/tests) under Debian's python3
# against the daemons of a fastbuild `bazel build //...` (as scripts/test.sh
# runs first), or those of $RINGLEADER_BIN_DIR when it is set. PYTHON_XML=PATH
# has pytest write its JUnit XML there, one case per test, which
# tools/count_tests.py sums with the GoogleTest cases; a pytest that could not
# run at all (not installed, a crash before any result) is one failed case.
# Extra arguments go to pytest (e.g. -k fit, -x).
#   scripts/python_tests.sh [PYTEST_ARGS...]
set -uo pipefail
cd "$(dirname "$0")/.."
xml="${PYTHON_XML:-}"

. scripts/junit.sh
if [[ -z "${RINGLEADER_BIN_DIR:-}" ]]; then
  RINGLEADER_BIN_DIR="$(bazel info -c fastbuild bazel-bin 2>/dev/null)" ||
    RINGLEADER_BIN_DIR=""
fi
export RINGLEADER_BIN_DIR
args=(-q -p no:cacheprovider python/tests)
[[ -n "$xml" ]] && args+=(--junitxml="$xml")
/usr/bin/python3 -m pytest "${args[@]}" "$@"
rc=$?
# 5: no tests collected; any code with no XML written is a failure too.
if [[ -n "$xml" && ! -s "$xml" ]] || ((rc == 5)); then
  check_begin "$xml" python pytest python_tests
  check_fail "pytest exited $rc without results (scripts/setup.sh installs python3-pytest)"
fi
exit "$rc"

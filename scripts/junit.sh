# Sourced by the checks that scripts/test.sh runs outside Bazel
# (scripts/fuzz.sh, scripts/thread_safety.sh): each check's outcome becomes
# one JUnit case, which tools/count_tests.py reads like Bazel's test.xml.
#
#   check_begin XML SUITE CASE LABEL   XML empty: no file is written
#   check_fail MESSAGE                 prints "LABEL: MESSAGE", records the
#                                      failure, exits 1
#   check_pass                         records the success
check_begin() {
  _check_xml="$1" _check_suite="$2" _check_case="$3" _check_label="$4"
  _check_started=$(date +%s)
}

_check_write() {  # _check_write PASSED|FAILED [MESSAGE]
  [[ -n "$_check_xml" ]] || return 0
  mkdir -p "$(dirname "$_check_xml")"
  local elapsed=$(($(date +%s) - _check_started)) body="" failures=0
  if [[ $1 == FAILED ]]; then
    failures=1
    body="<failure message=\"$(printf '%s' "${2:-}" | sed 's/&/\&amp;/g; s/"/\&quot;/g; s/</\&lt;/g')\"/>"
  fi
  cat >"$_check_xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1" failures="$failures">
  <testsuite name="$_check_suite" tests="1">
    <testcase classname="$_check_suite" name="$_check_case" time="$elapsed">$body</testcase>
  </testsuite>
</testsuites>
XML
}

check_fail() {
  echo "$_check_label: $1" >&2
  _check_write FAILED "$1"
  exit 1
}

check_pass() {
  _check_write PASSED
}

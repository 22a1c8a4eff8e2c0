# Sourced by the checks that scripts/test.sh runs outside Bazel
# (scripts/fuzz.sh, scripts/thread_safety.sh): each check's outcome becomes
# one JUnit case, which tools/count_tests.py reads like Bazel's test.xml. A
# script may record several cases in one file (fuzz.sh: one per fuzzer).
#
#   check_begin XML SUITE CASE LABEL   XML empty: no file is written
#   check_fail MESSAGE                 prints "LABEL: MESSAGE", records the
#                                      current case failed, exits 1
#   check_failed MESSAGE               the same, but returns: the script
#                                      goes on to its next case
#   check_pass                         records the current case passed
#   check_next CASE LABEL              starts another case in the same file
#   check_status                       fails (returns 1) if a case failed
check_begin() {
  _check_xml="$1" _check_suite="$2" _check_case="$3" _check_label="$4"
  _check_started=$(date +%s)
  _check_cases="" _check_tests=0 _check_failures=0
}

check_next() {
  _check_case="$1" _check_label="$2"
  _check_started=$(date +%s)
}

# Adds the current case to the file, which is rewritten whole each time, so
# it always holds every case recorded so far.
_check_record() {  # _check_record PASSED|FAILED [MESSAGE]
  local elapsed=$(($(date +%s) - _check_started)) body=""
  _check_tests=$((_check_tests + 1))
  if [[ $1 == FAILED ]]; then
    _check_failures=$((_check_failures + 1))
    body="<failure message=\"$(printf '%s' "${2:-}" | sed 's/&/\&amp;/g; s/"/\&quot;/g; s/</\&lt;/g')\"/>"
  fi
  _check_cases+="    <testcase classname=\"$_check_suite\" name=\"$_check_case\" time=\"$elapsed\">$body</testcase>
"
  [[ -n "$_check_xml" ]] || return 0
  mkdir -p "$(dirname "$_check_xml")"
  cat >"$_check_xml" <<XML
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="$_check_tests" failures="$_check_failures">
  <testsuite name="$_check_suite" tests="$_check_tests">
$_check_cases  </testsuite>
</testsuites>
XML
}

check_failed() {
  echo "$_check_label: $1" >&2
  _check_record FAILED "$1"
}

check_fail() {
  check_failed "$1"
  exit 1
}

check_pass() {
  _check_record PASSED
}

check_status() {
  ((_check_failures == 0))
}

# Sourced by the scripts a user runs (demo.sh, test.sh). Sets BAZEL_QUIET to
# the flags that keep Bazel's output short: on a terminal Bazel draws its own
# one-line progress; off one (CI, a pipe, a log file) it would print a line
# for nearly every finished action, hundreds in a cold build, so progress is
# printed at most once a minute there.
BAZEL_QUIET=()
if [[ ! -t 2 ]]; then
  BAZEL_QUIET=(--curses=no --show_progress_rate_limit=60)
fi

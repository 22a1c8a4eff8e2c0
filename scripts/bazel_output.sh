# Sourced by the scripts a user runs (demo.sh, test.sh). Sets BAZEL_QUIET to
# the flags that keep Bazel's output short:
# - --nosandbox_debug, also in .bazelrc: Debian's /etc/bazel/bazelrc turns
#   sandbox tracing on (about 40 lines for each compile); said again here so
#   that the scripts stay quiet whatever rc files a machine has.
# - on a terminal Bazel draws its own one-line progress; off one (CI, a pipe,
#   a log file) it would print a line for nearly every finished action,
#   hundreds in a cold build, so progress goes at most once a minute there.
BAZEL_QUIET=(--nosandbox_debug)
if [[ ! -t 2 ]]; then
  BAZEL_QUIET+=(--curses=no --show_progress_rate_limit=60)
fi

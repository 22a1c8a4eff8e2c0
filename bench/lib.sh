# Shared by the benchmark scripts that drive the real binaries. Source it from
# the repository root.

# Optimized binaries (-c opt, also .bazelrc's default; said here so that the
# figures never depend on it), built without moving the bazel-bin symlink
# other builds use. Sets BIN to their directory.
build_opt() {
  local opt=(-c opt --symlink_prefix=/)
  bazel build "${opt[@]}" "$@" >/dev/null 2>&1
  BIN="$(bazel info "${opt[@]}" bazel-bin 2>/dev/null)"
}

# start_coordinator DIR: a coordinator on a free loopback port with its state
# and log in DIR. Sets COORD (its pid) and TARGET (host:port).
start_coordinator() {
  local dir="$1"
  "$BIN/coordinator/ringleader-coordinator" --listen=127.0.0.1:0 \
    --state="$dir/state.db" --port_file="$dir/port" >"$dir/coord.log" 2>&1 &
  COORD=$!
  for _ in $(seq 100); do [[ -s "$dir/port" ]] && break; sleep 0.1; done
  [[ -s "$dir/port" ]] || { echo "coordinator did not start" >&2; cat "$dir/coord.log" >&2; return 1; }
  TARGET="127.0.0.1:$(cat "$dir/port")"
}

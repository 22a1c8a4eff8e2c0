#!/usr/bin/env bash
# The main job: a coordinator, two workers and a Fashion-MNIST training job
# followed with `ringctl watch` until it ends. Everything on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

WORKERS=${WORKERS:-2}
JOB_FILE=${JOB_FILE:-examples/fashion_mnist.textproto}
# Extra Bazel flags; scripts/first_run_check.sh runs the demo on the tests'
# fastbuild binaries with "-c fastbuild" rather than build everything twice.
read -r -a extra_flags <<<"${DEMO_BAZEL_FLAGS:-}"
. scripts/bazel_output.sh

# Optimized: -c opt is the default in .bazelrc.
bazel build "${BAZEL_QUIET[@]}" "${extra_flags[@]}" \
  //coordinator:ringleader-coordinator //cli:ringctl //worker:ringleader-worker
BIN="$(bazel info "${extra_flags[@]}" bazel-bin 2>/dev/null)"
work=$(mktemp -d /tmp/ringleader-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# With the dashboard on its metrics port (both on loopback only).
"$BIN/coordinator/ringleader-coordinator" --listen=127.0.0.1:0 \
  --state="$work/state.db" --port_file="$work/port" \
  --metrics_listen=127.0.0.1:0 --metrics_port_file="$work/http_port" --dashboard \
  2>"$work/coordinator.log" &
pids+=($!)
for _ in $(seq 1 100); do [[ -s "$work/port" && -s "$work/http_port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { echo "coordinator did not start; see $work/coordinator.log"; exit 1; }
export RINGLEADER_COORDINATOR="127.0.0.1:$(cat "$work/port")"
echo "coordinator on $RINGLEADER_COORDINATOR (state $work/state.db)"
dashboard="http://127.0.0.1:$(cat "$work/http_port" 2>/dev/null)"

# One LibTorch and one OpenBLAS thread per rank (--threads sizes both), so
# ranks sharing a host do not oversubscribe its cores.
for i in $(seq 1 "$WORKERS"); do
  "$BIN/worker/ringleader-worker" \
    --coordinator="$RINGLEADER_COORDINATOR" --device=cpu --threads=1 \
    2>"$work/worker$i.log" &
  pids+=($!)
  echo "worker $i started (log $work/worker$i.log)"
done
job=$("$BIN/cli/ringctl" submit --file="$JOB_FILE")
echo "submitted $job ($JOB_FILE)"
echo "dashboard: $dashboard/jobs/$job   all ranks' logs: ringctl logs $job"
"$BIN/cli/ringctl" watch "$job"

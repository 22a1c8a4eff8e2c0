#!/usr/bin/env bash
# What seeing a job costs (issue 36, point 5), side by side in one run.
#
# 1. Training throughput: the same real 2-worker job (the built-in MLP on
#    Fashion-MNIST, whose ~2 ms steps show a per-step cost most; the
#    ResNet and GPT examples on subsets) with what issue 36 added on
#    (default): the job log shipped to the coordinator (--ship_job_logs),
#    the phase in each heartbeat (--report_phases), the job history the
#    coordinator keeps from the reports, and rank 0 writing TensorBoard
#    event files (export.tensorboard_dir); against off: workers with
#    --ship_job_logs=false --report_phases=false and no export. (The
#    history cannot be turned off: the coordinator records the reports it
#    receives anyway; its share is in part 2.) The runs alternate
#    off/on, on/off, ... ($REPEATS pairs); samples/s as train_bench.sh
#    measures it (bench/common/train_watch.py); the figure is on/off per
#    pair, its median and spread.
# 2. The coordinator with $SIM_RANKS simulated ranks in one job
#    (ringleader-simworkers: the real worker protocol without training, a
#    step every 20 ms, a report every 10 steps): with phases in the
#    heartbeats, the history's fields in the reports and
#    $SIM_LOG_LINES job log lines of 120 bytes with each report (sent
#    once a second, as the worker's shipper sends), against without; the
#    coordinator's CPU seconds (utime + stime) and peak resident memory
#    (VmHWM), alternating the same way; in the first repeat also each of
#    the three alone.
# 3. Memory bound: the same ranks flood the job log (100 lines of
#    $FLOOD_LINE_BYTES bytes with each report) far past each rank's ring;
#    the coordinator's peak resident memory against its documented bounds
#    (--log_bytes_per_rank 512 KiB, --log_lines_per_rank 2000, at most
#    --log_total_bytes 256 MiB over all jobs).
#
#   bench/observability/cost_bench.sh [MODELS]
# Defaults: MODELS "mlp resnet gpt", REPEATS 3, SIM_RANKS 256,
# SIM_STEPS 1500 (30 s a run), SIM_LOG_LINES 2, FLOOD_LINE_BYTES "1000 100",
# PARTS "train coordinator flood" (which of the three to run).
# Writes $RESULTS (default bench/results/observability_cost.jsonl) and
# prints the tables (bench/observability/cost_summary.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp resnet gpt}}"
REPEATS="${REPEATS:-3}"
SIM_RANKS="${SIM_RANKS:-256}"
SIM_STEPS="${SIM_STEPS:-1500}"
SIM_LOG_LINES="${SIM_LOG_LINES:-2}"
FLOOD_LINE_BYTES="${FLOOD_LINE_BYTES:-1000 100}"
PARTS="${PARTS:-train coordinator flood}"
RUNS=0  # Numbers each run's directory.
PY=/usr/bin/python3
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/control_plane:ringleader-simworkers
OUT="${RESULTS:-bench/results/observability_cost.jsonl}"
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
[[ -n ${APPEND:-} ]] || : >"$OUT"

say() { echo "== $*" >&2; }

# stop_coordinator: ends $COORD and waits for it.
stop_coordinator() {
  kill "$COORD" 2>/dev/null || true
  wait "$COORD" 2>/dev/null || true
}

# cpu_seconds PID: utime + stime of PID so far.
cpu_seconds() {
  "$PY" -c 'import os,sys
f = open(f"/proc/{sys.argv[1]}/stat").read().rsplit(")", 1)[1].split()
print((int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK"))' "$1"
}

# mem_kib PID FIELD: VmHWM or VmRSS of PID, in KiB.
mem_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# train_job M FILE: the job file of model M for this benchmark, 2 ranks.
train_job() {
  case $1 in
    mlp)
      sed -e 's/^epochs: .*/epochs: 1/' -e 's/^progress_every_steps: .*/progress_every_steps: 10/' \
        examples/fashion_mnist.textproto >"$2" ;;
    *)
      M=$1 example_spec "$2" 2 "$(batch_of "$1")" auto ;;
  esac
}

# batch_of M: the per-rank batch of the example's job file.
batch_of() { sed -n 's/^batch_size: *//p' examples/"$1"/*.textproto | head -1; }

# train_run M MODE REPEAT: one 2-worker job, MODE on or off.
train_run() {
  local m=$1 mode=$2 rep=$3 run="$TMP/train-$1-$2-$3"
  mkdir -p "$run"
  train_job "$m" "$run/job.textproto"
  if [[ $mode == on ]]; then
    printf 'export { tensorboard_dir: "%s" }\n' "$run/tb" >>"$run/job.textproto"
    WORKER_FLAGS=""
  else
    WORKER_FLAGS="--ship_job_logs=false --report_phases=false"
  fi
  start_coordinator "$run"
  run_job "$run/job.textproto" 2 "$run/watch.jsonl" "$run/worker"
  stop_coordinator
  local gb=$(($(sed -n 's/^batch_size: *//p' "$run/job.textproto" | head -1) * 2))
  "$PY" bench/common/train_watch.py "$run/watch.jsonl" "ringleader-$mode" "$m" 2 "$gb" 1 "$rep" |
    "$PY" -c 'import json,sys
j = json.loads(sys.stdin.read()); j.update(part="train", mode=sys.argv[1]); print(json.dumps(j))' "$mode" >>"$OUT"
}

# sim_spec FILE STEPS: a job for $SIM_RANKS simulated ranks, STEPS steps.
sim_spec() {
  cat >"$1" <<SPEC
name: "observability-cost"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: $(($2 * SIM_RANKS * 32)) synthetic_test_size: 1000 }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 }
epochs: 1
batch_size: 32
min_workers: $SIM_RANKS
max_workers: $SIM_RANKS
rendezvous_last_call_ms: 60000
progress_every_steps: 10
SPEC
}

# sim_run PART MODE REPEAT STEPS [SIMWORKER FLAGS...]: a fresh coordinator,
# one job of $SIM_RANKS simulated ranks; one result line.
sim_run() {
  local part=$1 mode=$2 rep=$3 steps=$4 run="$TMP/$1-$2-$3-$((++RUNS))"
  shift 4
  mkdir -p "$run"
  sim_spec "$run/job.textproto" "$steps"
  start_coordinator "$run"
  "$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$run/job.textproto" >/dev/null
  local cpu0 t0 t1 cpu1 hwm rss rc=0
  cpu0=$(cpu_seconds "$COORD")
  t0=$(date +%s.%N)
  "$BIN/bench/control_plane/ringleader-simworkers" --coordinator="$TARGET" \
    --workers="$SIM_RANKS" --step_ms=20 --assignment_timeout_s=120 "$@" \
    >"$run/sim.log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  cpu1=$(cpu_seconds "$COORD")
  hwm=$(mem_kib "$COORD" VmHWM)
  rss=$(mem_kib "$COORD" VmRSS)
  stop_coordinator
  "$PY" -c 'import json,sys
a = sys.argv
print(json.dumps({"part": a[1], "mode": a[2], "repeat": int(a[3]), "ranks": int(a[4]),
                  "steps": int(a[5]), "wall_s": round(float(a[7]) - float(a[6]), 2),
                  "coordinator_cpu_s": round(float(a[9]) - float(a[8]), 2),
                  "coordinator_hwm_mib": round(int(a[10]) / 1024, 1),
                  "coordinator_rss_mib": round(int(a[11]) / 1024, 1),
                  "simworkers_exit": int(a[12]), "flags": a[13]}))' \
    "$part" "$mode" "$rep" "$SIM_RANKS" "$steps" "$t0" "$t1" "$cpu0" "$cpu1" \
    "$hwm" "$rss" "$rc" "$*" >>"$OUT"
}

# sim_flags MODE: the simulated ranks' flags for coordinator MODE: off,
# on (everything), or one part alone (phases, history, logs).
sim_flags() {
  case $1 in
    off) ;;
    on) echo --report_phases --history_fields --log_lines_per_report="$SIM_LOG_LINES" ;;
    phases) echo --report_phases ;;
    history) echo --history_fields ;;
    logs) echo --log_lines_per_report="$SIM_LOG_LINES" ;;
  esac
}

for rep in $(seq "$REPEATS"); do
  # Alternating which goes first, so a drift of the machine cancels out.
  order="off on"; ((rep % 2 == 0)) && order="on off"
  if [[ " $PARTS " == *" train "* ]]; then
    for m in $MODELS; do
      [[ $m == mlp ]] || prepare_example "$m"
      for mode in $order; do
        say "train $m $mode (repeat $rep)"
        train_run "$m" "$mode" "$rep"
      done
    done
  fi
  if [[ " $PARTS " == *" coordinator "* ]]; then
    modes="$order"
    # Each part alone once: which of them the difference comes from.
    ((rep == 1)) && modes="$order phases history logs"
    for mode in $modes; do
      say "coordinator, $SIM_RANKS simulated ranks, $mode (repeat $rep)"
      # shellcheck disable=SC2046 # Flags: words without spaces.
      sim_run coordinator "$mode" "$rep" "$SIM_STEPS" $(sim_flags "$mode")
    done
  fi
done
if [[ " $PARTS " == *" flood "* ]]; then
  for bytes in $FLOOD_LINE_BYTES; do
    say "coordinator, $SIM_RANKS ranks flooding the job log with $bytes-byte lines"
    sim_run flood on 1 150 --report_phases --history_fields \
      --log_lines_per_report=100 --log_line_bytes="$bytes"
  done
fi
"$PY" bench/observability/cost_summary.py "$OUT"

#!/usr/bin/env bash
# Where the step goes: for each example workload (mlp and cnn, the built-ins
# on Fashion-MNIST; resnet and gpt, the examples/ TorchScript models with
# their modern recipes) at 1 and 2 ranks in fp32 and bf16, side by side in
# one run:
#   - a real Ringleader job (coordinator, --threads=1 workers, shared memory)
#     of one epoch with every rank's timeline (JobSpec.timeline_dir), its
#     measured step from its progress reports (train_watch.py: the global
#     batch over samples/s, from the first report at step 20 or later that
#     `ringctl watch` showed to the last before the job's last step), and its
#     mean step split into parts by ringleader.step_profile over exactly
#     those steps (--steps);
#   - the compute limit (ringleader-compute-limit: the worker's step with no
#     communication) at the same per-rank batch, with its own timeline: one
#     loop for 1 rank, two loops side by side for 2 ranks (the concurrent
#     limit), quiet loops only, split the same way.
# The limit runs before and after the job (its lines tagged phase 0 and 1),
# and the tables take the mean of the two: a VM whose step drifts by 20%
# within the hour moved a limit run after the job alone by up to 5% at one
# rank. The gap between the job's step and the limit's is then attributed
# part by part (bench/training/profile_summary.py prints the tables).
#   bench/training/profile_bench.sh [MODELS] [WORLDS] [PRECISIONS]
# Defaults: "mlp cnn resnet gpt", "1 2", "fp32 bf16"; REPEATS (default 3)
# runs everything again, interleaved (the tables take medians); RECIPE (default 1) gives resnet and gpt their
# recipes (example_job.py). WORKER_FLAGS reach every worker (run_job), so a
# change behind a flag can be weighed: WORKER_FLAGS=--x=false with
# IMPL=ringleader-x tags its lines; SUBMIT_FLAGS reach `ringctl submit` (a
# job setting: SUBMIT_FLAGS=--balance_batches); COMPARE_WORKER=PATH runs
# that worker binary's job too in each configuration, COMPARE_SUBMIT_FLAGS
# a job with those submit flags (COMPARE_IMPL names it, default "other"),
# alternating which goes first. NEIGHBOUR_CPU=N runs a busy loop on CPU N
# beside every job and limit loop (a straggler rank). Writes $RESULTS (default
# bench/results/profile.jsonl), then the tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp cnn resnet gpt}}"
WORLDS="${2:-${WORLDS:-1 2}}"
PRECISIONS="${3:-${PRECISIONS:-fp32 bf16}}"
REPEATS="${REPEATS:-3}"
RECIPE="${RECIPE-1}"
IMPL="${IMPL:-ringleader}"
PY=/usr/bin/python3
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/training:ringleader-compute-limit
OUT="${RESULTS:-bench/results/profile.jsonl}"
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
SKIP=20  # train_watch.py's first measured step
# PIN_CPUS (default 1): rank r's worker and the r-th limit loop on CPU r-1, so that
# job and limit meet the same cores (this machine's two run up to 20% apart).
if [[ ${PIN_CPUS-1} == 1 ]]; then
  export WORKER_CPUS="$(seq -s ' ' 0 $(($(getconf _NPROCESSORS_ONLN) - 1)))"
fi

# builtin_spec FILE ARCH WORLD BATCH PRECISION TIMELINE: the built-in model
# on Fashion-MNIST as examples/fashion_mnist.textproto trains it, one epoch
# (469 steps at 2 ranks), every step in the timeline, a report every 10
# steps whatever the time (the MLP's epoch is under a second: at most one
# report per 100 ms measured its step 4% off).
builtin_spec() {
  local precision=PRECISION_FP32
  [[ $5 == bf16 ]] && precision=PRECISION_BF16_MIXED
  cat > "$1" <<SPEC
name: "profile-bench"
model { arch: $2 }
dataset { format: DATASET_FORMAT_IDX path: "/usr/share/datasets/fashion-mnist" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $4
min_workers: $3
max_workers: $3
seed: 42
progress_every_steps: 10
progress_min_interval_ms: 0
precision: $precision
timeline_dir: "$6"
timeline_steps: 1000
SPEC
}

# spec FILE WORLD TIMELINE: this configuration's job file.
spec() {
  case $M in
    mlp) builtin_spec "$1" MODEL_ARCH_MLP "$2" 64 "$P" "$3" ;;
    cnn) builtin_spec "$1" MODEL_ARCH_CNN "$2" 64 "$P" "$3" ;;
    resnet|gpt)
      local recipe=()
      if [[ -n $RECIPE ]]; then
        [[ $M == gpt ]] && recipe=(--recipe nanogpt) || recipe=(--recipe torchvision)
      fi
      "$PY" bench/common/example_job.py examples/$M/*.textproto "$1" --data "$TMP/$M" \
        --world "$2" --batch "$B" --epochs 1 --precision "$P" --timeline "$3" "${recipe[@]}" ;;
  esac
}

# cpu_ticks PID: the process's user and system CPU so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# profile IMPL MEASURED_STEP_MS FILES...: one JSON line per rank of one job,
# over the steps $WINDOW (FIRST:LAST) when set, else after the first $SKIP
# (with $COORD_SHARE, the coordinator's share of the host during it, and
# $LOCKSTEP_MS and $LOCKSTEP_BY_SPEED_MS, the limit loops' lockstep step with
# an even split and split by speed, and $PHASE, the limit's run before or
# after the job).
profile() {
  local impl="$1" measured="$2"; shift 2
  local steps=(--skip "$SKIP")
  [[ -n ${WINDOW:-} ]] && steps=(--steps "$WINDOW")
  "$PY" -m ringleader.step_profile "${steps[@]}" --json "$@" | "$PY" -c '
import json, sys
impl, m, p, w, rep, measured, share, lock, lock_by_speed, phase = sys.argv[1:11]
for line in sys.stdin:
    r = json.loads(line)
    r.update(impl=impl, model=m, precision=p, world=int(w), repeat=int(rep),
             measured_step_ms=float(measured) if measured else None)
    if phase:
        r["phase"] = int(phase)
    if share:
        r["coordinator_cpu_share"] = float(share)
    if lock:
        r["lockstep_ms"] = float(lock)
        r["lockstep_by_speed_ms"] = float(lock_by_speed)
    print(json.dumps(r))' "$impl" "$M" "$P" "$W" "$REP" "$measured" "${COORD_SHARE:-}" \
    "${LOCKSTEP_MS:-}" "${LOCKSTEP_BY_SPEED_MS:-}" "${PHASE:-}" >> "$OUT"
}

# run_ringleader: the job, its measured step and its profile.
run_ringleader() {
  local tl="$RUN/timeline" watch
  spec "$RUN/job.textproto" "$W" "$tl"
  local cpu0 t0
  cpu0=$(cpu_ticks "$COORD"); t0=$(date +%s%N)
  run_job "$RUN/job.textproto" "$W" "$RUN/watch.jsonl" "$RUN/worker"
  # The coordinator's share of the host while the job ran: CPU the ranks
  # could not use, which the limit's loops did not lose.
  COORD_SHARE=$("$PY" -c 'import os, sys
ticks, ns, cores = int(sys.argv[1]), int(sys.argv[2]), os.cpu_count()
print(ticks / os.sysconf("SC_CLK_TCK") / (ns / 1e9) / cores)' \
    $(($(cpu_ticks "$COORD") - cpu0)) $(($(date +%s%N) - t0)))
  watch=$("$PY" bench/common/train_watch.py "$RUN/watch.jsonl" "$IMPL" "$M" "$W" $((B * W)))
  local step_ms window
  read -r step_ms window < <("$PY" -c 'import json, sys
r = json.loads(sys.argv[1]); gb = int(sys.argv[2])
if r["final_state"] != "JOB_STATE_SUCCEEDED" or not r["samples_per_s"]:
    sys.exit("the job ended " + r["final_state"])
# Reports at steps s0 and s1 bound steps s0+1 to s1.
s0, s1 = r["window_steps"]
print(1000.0 * gb / r["samples_per_s"], f"{s0 + 1}:{s1}")' "$watch" $((B * W))) ||
    true
  [[ -n $window ]] || { echo "$M $P x$W: the job failed (see $RUN)" >&2; return 0; }
  # A timeline that lacks a step of the window (timeline_steps below the
  # epoch's) loses this job's lines, not the run.
  WINDOW="$window" profile "$IMPL" "$step_ms" "$tl/$JOB"-rank*.trace.json ||
    echo "$M $P x$W: no profile over steps $window (see $RUN)" >&2
}

# run_limit PHASE: the compute limit, W loops side by side, quiet loops
# only, on the CPUs the job's ranks had; PHASE 0 before the job, 1 after.
run_limit() {
  local i PHASE="$1"
  spec "$RUN/limit.textproto" 1 "$RUN/unused"
  limit_loops "$W" "$RUN/limit.textproto" "$RUN/limit" --warmup="$SKIP" \
    --steps="$LIMIT_STEPS" --rounds=1 --report_loops=false \
    --timeline="$RUN/limit-{i}.trace.json" ||
    { echo "$M $P x$W: a limit loop failed (see $RUN)" >&2; return 0; }
  # Each loop is a job of its own (rank 0 of one), profiled alone, with its
  # own measured step; and the loops together as if they waited for one
  # another every step (step_profile.lockstep_ms: each step's slowest), with
  # the batch split evenly and by the loops' speeds.
  COORD_SHARE=
  read -r LOCKSTEP_MS LOCKSTEP_BY_SPEED_MS < <("$PY" -c 'import sys
from ringleader.step_profile import lockstep_ms
paths, skip = sys.argv[2:], int(sys.argv[1])
print(lockstep_ms(paths, skip), lockstep_ms(paths, skip, by_speed=True))' \
    "$SKIP" "$RUN"/limit-*.trace.json)
  for i in $(seq "$W"); do
    profile limit "$("$PY" -c 'import json, sys
print(1000.0 * int(sys.argv[1]) / json.load(open(sys.argv[2]))["samples_per_s"])' \
      "$B" "$RUN/limit-$i.json")" "$RUN/limit-$i.trace.json"
  done
  LOCKSTEP_MS= LOCKSTEP_BY_SPEED_MS=
}

for M in $MODELS; do
  case $M in
    mlp|cnn) ;;
    resnet|gpt) prepare_example "$M" ;;
    *) echo "unknown model $M (mlp, cnn, resnet, gpt)" >&2; exit 2 ;;
  esac
done
[[ -n ${APPEND:-} ]] || : > "$OUT"
for REP in $(seq "$REPEATS"); do
  for M in $MODELS; do
    case $M in
      mlp|cnn) B=64 ;;
      *) B=$(sed -n 's/^batch_size: *//p' examples/$M/*.textproto) ;;
    esac
    # The limit's loop: about as many steps as the job's measured ones.
    LIMIT_STEPS=60
    for P in $PRECISIONS; do
      for W in $WORLDS; do
        echo "[$(date +%T)] $M $P x$W (repeat $REP)" >&2
        base="$TMP/$M-$P-$W-$REP"; mkdir -p "$base"
        start_coordinator "$base"
        # NEIGHBOUR_CPU=N: a busy loop pinned to CPU N through the whole
        # configuration (jobs and limit loops alike), a noisy neighbour
        # that makes the rank there a straggler.
        NEIGHBOUR=
        if [[ -n ${NEIGHBOUR_CPU:-} ]]; then
          taskset -c "$NEIGHBOUR_CPU" sh -c 'while :; do :; done' &
          NEIGHBOUR=$!
        fi
        RUN="$base"
        [[ -n ${NO_LIMIT:-} ]] || run_limit 0
        if [[ -n ${COMPARE_WORKER:-}${COMPARE_SUBMIT_FLAGS:-} ]]; then
          # The other worker too, first on odd repeats, second on even ones.
          local_order=(this other); ((REP % 2)) || local_order=(other this)
          for which in "${local_order[@]}"; do
            if [[ $which == other ]]; then
              RUN="$base/other"; mkdir -p "$RUN"
              WORKER_BIN="${COMPARE_WORKER:-${WORKER_BIN:-}}" IMPL="${COMPARE_IMPL:-other}" \
                SUBMIT_FLAGS="${COMPARE_SUBMIT_FLAGS:-${SUBMIT_FLAGS:-}}" run_ringleader
              RUN="$base"
            else
              run_ringleader
            fi
          done
        else
          run_ringleader
        fi
        [[ -n ${NO_LIMIT:-} ]] || run_limit 1
        [[ -z $NEIGHBOUR ]] || { kill "$NEIGHBOUR"; wait "$NEIGHBOUR" 2>/dev/null || true; }
        kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
      done
    done
  done
done
"$PY" bench/training/profile_summary.py "$OUT"

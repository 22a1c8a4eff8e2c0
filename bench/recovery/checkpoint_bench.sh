#!/usr/bin/env bash
# Checkpoint overhead per training step, side by side in one run: each model
# trains one epoch on one real ringleader-worker (-c opt, --threads=1; rank 0
# is the rank that checkpoints, and one rank keeps collectives out of the
# figure) with a checkpoint every $EVERY optimizer steps, per mode:
#   none        no checkpoint_dir: the step time without checkpoints;
#   sync        checkpoint_synchronous: the training thread serializes,
#               writes, fsyncs and renames the file and waits for the
#               commit's answer (what every checkpoint cost before);
#   background  the default: the training thread copies the state and a
#               background thread writes it (CheckFreq's split).
# Models: mlp (the built-in MLP on Fashion-MNIST, SGD with momentum, global
# batch $MLP_BATCH), and the example workloads (bench/common/lib.sh's
# prepare_example): resnet (examples/resnet, SGD, batch 64 per rank) and gpt
# (examples/gpt, Adam: twice the parameters in optimizer state), on the same
# subsets as train_bench.sh. Figures: ms per step (from the job's progress
# reports over the epoch after 20 warm-up steps, as train_watch.py measures
# samples/s), overhead per step against `none` in the same repeat, and the
# time each checkpoint held the training thread (the Checkpointer's own
# count, from the worker's log). Within a repeat the modes run one after the
# other, in another rotation each repeat; the table gives medians over
# $REPEATS and the ratio of the synchronous overhead to the background one.
# Checkpoints go to $CKPT_DIR (default /var/tmp: a real disk where /tmp is a
# tmpfs, on which fsync costs nothing).
#   bench/recovery/checkpoint_bench.sh [MODELS]
# Defaults: MODELS "mlp resnet gpt", EVERY 10, REPEATS 3, MLP_BATCH 128.
# Writes $RESULTS (default bench/results/checkpoint.jsonl), then the table.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp resnet gpt}}"
EVERY="${EVERY:-10}"
REPEATS="${REPEATS:-3}"
MLP_BATCH="${MLP_BATCH:-128}"
MODES="none sync background"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker
OUT="${RESULTS:-bench/results/checkpoint.jsonl}"
TMP="$(mktemp -d)"
CKPT="$(mktemp -d "${CKPT_DIR:-/var/tmp}/ringleader-ckpt-bench.XXXXXX")"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$CKPT"; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# job_file FILE MODE: the job of model $M for MODE, one worker, one epoch.
job_file() {
  if [[ $M == mlp ]]; then
    cat > "$1" <<SPEC
name: "checkpoint-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $MLP_BATCH
min_workers: 1
max_workers: 1
seed: 1
progress_every_steps: 10
progress_min_interval_ms: 100
SPEC
  else
    example_spec "$1" 1 "$PER_RANK" auto
  fi
  case $2 in
    none) ;;
    sync | background)
      rm -rf "$CKPT/$M"; mkdir -p "$CKPT/$M"
      {
        echo "checkpoint_dir: \"$CKPT/$M\""
        echo "checkpoint_every_steps: $EVERY"
        if [[ $2 == sync ]]; then echo "checkpoint_synchronous: true"; fi
      } >> "$1" ;;
  esac
}

# run_mode MODE: one job; its line (train_watch.py's, with the mode, the
# batch and the Checkpointer's count of the time it held training) to $OUT.
run_mode() {
  local run="$TMP/$M-$1-$REP"
  mkdir -p "$run"
  echo "[$(date +%T)] $M $1 (repeat $REP)" >&2
  start_coordinator "$run"
  job_file "$run/job.textproto" "$1"
  run_job "$run/job.textproto" 1 "$run/watch.jsonl" "$run/worker"
  kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
  local gb=$MLP_BATCH
  if [[ $M != mlp ]]; then gb=$PER_RANK; fi
  "$PY" bench/common/train_watch.py "$run/watch.jsonl" "$1" "$M" 1 "$gb" 1 "$REP" |
    "$PY" -c 'import json, re, sys
r = json.loads(sys.stdin.read())
r.update(mode=sys.argv[1], every=int(sys.argv[2]), global_batch=int(sys.argv[3]))
m = re.search(r"checkpoints: (\d+) saves .* blocked training for ([\d.e+-]+) ms",
              open(sys.argv[4]).read())
if m:
    r.update(saves=int(m.group(1)), blocked_ms=float(m.group(2)))
print(json.dumps(r))' "$1" "$EVERY" "$gb" "$run/worker-1.log" >> "$OUT" ||
    echo "$M $1: no result (see $run)" >&2
  tail -n 1 "$OUT" | cut -c1-200 >&2
}

for M in $MODELS; do
  case $M in
    mlp) ;;
    resnet|gpt)
      prepare_example "$M"
      PER_RANK=$(sed -n 's/^batch_size: *//p' examples/$M/*.textproto) ;;
    *) echo "unknown model $M (mlp, resnet, gpt)" >&2; exit 2 ;;
  esac
done
: > "$OUT"
"$PY" -c 'import json, os, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
print(json.dumps({"conditions": {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                  "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg(),
                  "every": int(os.environ.get("EVERY", "10"))}}))' >> "$OUT"
for REP in $(seq "$REPEATS"); do
  # Each mode takes each place in the order over the repeats.
  ms=($MODES) order=()
  for ((i = 0; i < ${#ms[@]}; ++i)); do order+=("${ms[(i + REP - 1) % ${#ms[@]}]}"); done
  for M in $MODELS; do
    if [[ $M != mlp ]]; then
      PER_RANK=$(sed -n 's/^batch_size: *//p' examples/$M/*.textproto)
    fi
    for MODE in "${order[@]}"; do run_mode "$MODE"; done
  done
done
"$PY" bench/recovery/checkpoint_summary.py "$OUT"

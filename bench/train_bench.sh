#!/usr/bin/env bash
# Training on Fashion-MNIST, side by side in one run for each configuration
# (model x global batch x ranks):
#   - Ringleader: a real coordinator and real ringleader-workers (-c opt,
#     --threads=1), per transport in $TRANSPORTS (auto: shared memory on one
#     host; gloo: TCP);
#   - PyTorch DDP (bench/train_ddp.py: Debian's python3-torch, Gloo, same
#     model, global batch and optimizer, one thread per rank), as a user runs
#     it, and again with glibc malloc told to keep freed memory (the setting
#     ringleader-worker applies itself; see worker/malloc_tuning.h), and for
#     the CNN once more written as the worker runs it on CPU (--nhwc:
#     channels-last activations, ReLU after pooling);
#   - the compute limit: the worker's step loop with no communication at all
#     (ringleader-compute-limit) at the per-rank batch, times
#     min(ranks, cores); it also measures the CPU cost of progress reports.
# Each trains $EPOCHS_MLP / $EPOCHS_CNN epochs and evaluates after each.
# samples/s: over the first epoch after 20 warm-up steps; time to 85%: from
# the first training step to the first evaluation at or above 85% test
# accuracy (evaluations included).
#   bench/train_bench.sh [MODELS] [WORLDS] [BATCHES]
# Defaults: "mlp cnn", "1 2 3", "128 512". Writes bench/results/train.jsonl,
# then the table and bench/results/train.png.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS="${1:-mlp cnn}"
WORLDS="${2:-1 2 3}"
BATCHES="${3:-128 512}"
TRANSPORTS="${TRANSPORTS:-auto gloo}"
EPOCHS_MLP="${EPOCHS_MLP:-3}"
EPOCHS_CNN="${EPOCHS_CNN:-2}"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench:ringleader-compute-limit
OUT=bench/results/train.jsonl
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
CORES=$(getconf _NPROCESSORS_ONLN)  # nproc would obey OMP_NUM_THREADS

# write_spec FILE ARCH EPOCHS BATCH WORKERS TRANSPORT
write_spec() {
  cat > "$1" <<SPEC
name: "train-bench"
model { arch: $2 }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: $3
batch_size: $4
min_workers: $5
max_workers: $5
seed: 1
progress_every_steps: 10
progress_min_interval_ms: 100
evaluate_every_epoch: true
ddp { cpu_transport: CPU_TRANSPORT_$6 }
SPEC
}

# run_ddp IMPL [ARGS...]: bench/train_ddp.py for this configuration ($M, $W,
# $GB, $EPOCHS), its line appended to $OUT as IMPL; KEPT_MEMORY=1 tells
# glibc malloc to keep freed memory. Bounded: a DDP rank that dies leaves the
# others in Gloo's 30-minute timeout. A run that fails or hangs is reported
# and left out.
run_ddp() {
  local impl="$1"; shift
  local malloc=()
  [[ -n "${KEPT_MEMORY:-}" ]] &&
    malloc=(MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824)
  env "${malloc[@]}" timeout 600 "$PY" bench/train_ddp.py --model "$M" \
    --world "$W" --global_batch "$GB" --epochs "$EPOCHS" --impl "$impl" "$@" \
    >> "$OUT" || echo "$impl $M $GB $W: failed or timed out" >&2
}

: > "$OUT"
for M in $MODELS; do
  ARCH=MODEL_ARCH_MLP; EPOCHS=$EPOCHS_MLP; LIMIT_STEPS=100
  [[ $M == cnn ]] && { ARCH=MODEL_ARCH_CNN; EPOCHS=$EPOCHS_CNN; LIMIT_STEPS=20; }
  for GB in $BATCHES; do
    for W in $WORLDS; do
      B=$((GB / W))
      RUN="$TMP/$M-$GB-$W"; mkdir -p "$RUN"
      start_coordinator "$RUN"
      for T in $TRANSPORTS; do
        write_spec "$RUN/job-$T.textproto" "$ARCH" "$EPOCHS" "$B" "$W" "${T^^}"
        JOB=$("$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$RUN/job-$T.textproto")
        for R in $(seq "$W"); do
          "$BIN/worker/ringleader-worker" --coordinator="$TARGET" --threads=1 \
            --max_jobs=1 >"$RUN/worker-$T-$R.log" 2>&1 &
        done
        "$BIN/cli/ringctl" --coordinator="$TARGET" --output=json watch "$JOB" \
          > "$RUN/watch-$T.jsonl" 2>/dev/null || true
        wait $(jobs -p | grep -v "^$COORD$") 2>/dev/null || true
        IMPL=ringleader; [[ $T != auto ]] && IMPL="ringleader-$T"
        "$PY" bench/train_watch.py "$RUN/watch-$T.jsonl" "$IMPL" "$M" "$W" "$GB" >> "$OUT"
      done
      # The compute limit at this per-rank batch: a 1-rank job gives it the
      # spec and a generation to report progress to.
      write_spec "$RUN/limit.textproto" "$ARCH" 1 "$B" 1 AUTO
      "$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$RUN/limit.textproto" >/dev/null
      "$BIN/bench/ringleader-compute-limit" --coordinator="$TARGET" --batch="$B" \
        --steps="$LIMIT_STEPS" --rounds=3 2>"$RUN/limit.log" |
        "$PY" -c 'import json,sys
line = sys.stdin.read()
if not line.strip():
    sys.exit("compute limit: no result (see its log)")
r = json.loads(line)
w, cores = int(sys.argv[3]), int(sys.argv[5])
r.update(impl="compute-limit", model=sys.argv[1], global_batch=int(sys.argv[2]),
         world=w, per_rank_batch=r.pop("batch"),
         samples_per_s=r["samples_per_s"] * min(w, cores),
         per_rank_samples_per_s=r["samples_per_s"])
print(json.dumps(r))' "$M" "$GB" "$W" "$B" "$CORES" >> "$OUT"
      kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
      run_ddp pytorch-ddp
      KEPT_MEMORY=1 run_ddp pytorch-ddp-kept-memory
      # PyTorch with the CNN written as Ringleader runs it (channels-last,
      # ReLU after pooling) and kept memory: what is left is the runtime.
      if [[ $M == cnn ]]; then KEPT_MEMORY=1 run_ddp pytorch-ddp-nhwc --nhwc; fi
      tail -n 6 "$OUT" | cut -c1-160
    done
  done
done
"$PY" bench/train_summary.py "$OUT" bench/results/train.png

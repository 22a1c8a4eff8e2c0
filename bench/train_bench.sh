#!/usr/bin/env bash
# Training throughput on Fashion-MNIST: Ringleader (real coordinator and
# workers, Gloo, one LibTorch thread per rank) beside PyTorch DDP (Debian's
# python3-torch, Gloo, same model and global batch, one thread per rank) and
# beside the compute limit (Ringleader's 1-rank rate times ranks, capped by
# the cores), in one run. One epoch per configuration. Ringleader's samples/s:
# optimizer steps of the slowest rank times the global batch, over the
# coordinator's clock, from the first progress report past step 20 to the last
# one before the end; DDP's is timed the same way after 20 warm-up steps.
#   bench/train_bench.sh [MODELS] [WORLDS] [BATCHES]
# Defaults: "mlp cnn", "1 2 3", "128 512". Writes bench/results/train.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
MODELS="${1:-mlp cnn}"
WORLDS="${2:-1 2 3}"
BATCHES="${3:-128 512}"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl //worker:ringleader-worker
OUT=bench/results/train.jsonl
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
: > "$OUT"
for M in $MODELS; do
  ARCH=MODEL_ARCH_MLP; [[ $M == cnn ]] && ARCH=MODEL_ARCH_CNN
  for GB in $BATCHES; do
    for W in $WORLDS; do
      RUN="$TMP/$M-$GB-$W"; mkdir -p "$RUN"
      start_coordinator "$RUN"
      cat > "$RUN/job.textproto" <<SPEC
name: "train-bench"
model { arch: $ARCH }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $((GB / W))
min_workers: $W
max_workers: $W
seed: 1
progress_every_steps: 10
SPEC
      JOB=$("$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$RUN/job.textproto")
      for R in $(seq "$W"); do
        "$BIN/worker/ringleader-worker" --coordinator="$TARGET" --threads=1 \
          --max_jobs=1 >"$RUN/worker$R.log" 2>&1 &
      done
      "$BIN/cli/ringctl" --coordinator="$TARGET" --output=json watch "$JOB" \
        > "$RUN/watch.jsonl" 2>/dev/null || true
      "$PY" - "$RUN/watch.jsonl" "$M" "$W" "$GB" >> "$OUT" <<'PYEOF'
import json, statistics, sys
path, model, world, gb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
points, acc = [], None
for line in open(path):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    job = j.get("job", j)
    p = job.get("progress", {})
    step = int(p.get("step", 0))
    if job.get("state") == "JOB_STATE_RUNNING" and step >= 20:
        # When the coordinator received the newest of the ranks' reports.
        t = max([int(r.get("reportTimeMs", 0)) for r in p.get("ranks", [])] or [0])
        points.append((t, step))
    if p.get("hasFinalMetrics"):
        acc = p.get("testAccuracy")
# The slowest rank's optimizer steps over the coordinator's clock, from the
# first report past step 20 to the last one before the job finished.
rate = 0.0
if len(points) >= 2 and points[-1][0] > points[0][0]:
    (t0, s0), (t1, s1) = points[0], points[-1]
    rate = (s1 - s0) * gb / ((t1 - t0) / 1000.0)
print(json.dumps({"impl": "ringleader", "model": model, "world": world,
                  "global_batch": gb, "samples_per_s": rate,
                  "reports": len(points), "test_accuracy": acc}))
PYEOF
      kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
      wait
      "$PY" bench/train_ddp.py --model "$M" --world "$W" --global_batch "$GB" >> "$OUT"
      tail -2 "$OUT"
    done
  done
done
"$PY" bench/train_summary.py "$OUT"

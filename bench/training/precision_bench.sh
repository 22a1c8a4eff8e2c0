#!/usr/bin/env bash
# bf16 mixed precision (JobSpec.precision) against float32 on this CPU, for the
# example workloads, side by side in one run:
#   - limit: ringleader-compute-limit (the worker's step in a world of one
#     rank, no communication) at the job file's per-rank batch, fp32 and bf16
#     alternating, $REPEATS times;
#   - train: one epoch of the subset (as bench/training/train_bench.sh) on 2 real
#     workers under a real coordinator, fp32 then bf16: samples/s and the
#     test metrics after the epoch (the accuracy cost).
# Prints bf16/fp32 ratios; writes $RESULTS (default
# bench/results/precision.jsonl).
#   bench/training/precision_bench.sh [MODELS]     MODELS: "resnet gpt" (default)
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-resnet gpt}"
REPEATS="${REPEATS:-3}"
PY=/usr/bin/python3
OUT="${RESULTS:-bench/results/precision.jsonl}"
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/training:ringleader-compute-limit
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
: >"$OUT"

# limit PRECISION REPEAT: one compute-limit loop, its JSON line tagged.
limit() {
  example_spec "$RUN/limit-$1.textproto" 1 "$B" auto "$1"
  "$BIN/cli/ringctl" --coordinator="$TARGET" submit \
    --file="$RUN/limit-$1.textproto" >/dev/null
  "$BIN/bench/training/ringleader-compute-limit" --coordinator="$TARGET" --batch="$B" \
    2>"$RUN/limit-$1-$2.log" |
    "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read())
r.update(kind="limit", model=sys.argv[1], precision=sys.argv[2], repeat=int(sys.argv[3]))
print(json.dumps(r))' "$M" "$1" "$2" >>"$OUT"
}

# train PRECISION: one epoch on 2 workers, its train_watch.py line tagged.
train() {
  example_spec "$RUN/train-$1.textproto" 2 "$B" auto "$1"
  run_job "$RUN/train-$1.textproto" 2 "$RUN/watch-$1.jsonl" "$RUN/worker-$1"
  "$PY" bench/common/train_watch.py "$RUN/watch-$1.jsonl" "train" "$M" 2 $((2 * B)) \
    "$TOKENS" | "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read())
r.update(kind="train", precision=sys.argv[1]); print(json.dumps(r))' "$1" >>"$OUT"
}

for M in $MODELS; do
  prepare_example "$M"
  RUN="$TMP/run-$M"; mkdir -p "$RUN"
  JOBFILE=$(ls examples/$M/*.textproto)
  B=$(sed -n 's/^batch_size: *//p' "$JOBFILE")
  TOKENS=1
  [[ $M == gpt ]] && TOKENS=$(sed -n 's/^ *block_size: *//p' "$JOBFILE")
  start_coordinator "$RUN"
  for rep in $(seq "$REPEATS"); do
    echo "[$(date +%T)] $M: compute limit, repeat $rep" >&2
    limit fp32 "$rep"
    limit bf16 "$rep"
  done
  for p in fp32 bf16; do
    echo "[$(date +%T)] $M: one epoch on 2 workers, $p" >&2
    train "$p"
  done
  kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
done
"$PY" - "$OUT" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for m in sorted({r["model"] for r in rows}):
    lim = {p: [r for r in rows if r["model"] == m and r["kind"] == "limit" and r["precision"] == p]
           for p in ("fp32", "bf16")}
    ratios = [b["samples_per_s"] / f["samples_per_s"]
              for f, b in zip(sorted(lim["fp32"], key=lambda r: r["repeat"]),
                              sorted(lim["bf16"], key=lambda r: r["repeat"]))]
    med = {p: statistics.median(r["samples_per_s"] for r in lim[p]) for p in lim}
    print(f"{m}: compute limit samples/s fp32 {med['fp32']:.0f} bf16 {med['bf16']:.0f}; "
          f"bf16/fp32 per repeat {', '.join(f'{x:.2f}' for x in ratios)}")
    tr = {r["precision"]: r for r in rows if r["model"] == m and r["kind"] == "train"}
    for p in ("fp32", "bf16"):
        r = tr.get(p, {})
        print(f"  train 2 workers {p}: {r.get('samples_per_s', 0):.0f} samples/s, "
              f"test accuracy {r.get('test_accuracy')}, test loss {r.get('test_loss')}, "
              f"train loss {r.get('train_loss')}, {r.get('final_state')}")
PY

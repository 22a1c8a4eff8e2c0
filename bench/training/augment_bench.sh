#!/usr/bin/env bash
# What the CIFAR recipe's augmentation buys the ResNet example
# (examples/resnet, Fashion-MNIST as 3x32x32, 10 epochs on 2 workers): the job
# file as shipped with a cosine schedule, trained twice, without and with
# dataset.augmentation (RandomCrop(32, padding=4) and RandomHorizontalFlip),
# one after the other. Prints every epoch's test accuracy and the final test
# metrics of each; writes $RESULTS (default bench/results/augment.jsonl).
#   bench/training/augment_bench.sh          EPOCHS (default the job's 10), EXTRA:
#                                   more ringctl submit flags for both runs
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3
OUT="${RESULTS:-bench/results/augment.jsonl}"
RESNET_TRAIN=0 RESNET_TEST=0  # The whole of Fashion-MNIST.
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl //worker:ringleader-worker
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
: >"$OUT"
M=resnet
prepare_example resnet
start_coordinator "$TMP"
"$PY" bench/common/example_job.py examples/resnet/*.textproto "$TMP/job.textproto" \
  --data "$TMP/resnet" --world 2 --batch 64 --epochs "${EPOCHS:-0}"
read -r -a extra <<<"${EXTRA:-}"

for variant in plain augmented; do
  flags=(--lr_schedule=cosine "${extra[@]}")
  [[ $variant == augmented ]] && flags+=(--random_crop_padding=4 --horizontal_flip)
  echo "[$(date +%T)] resnet, cosine schedule, $variant: ${flags[*]}" >&2
  run_job "$TMP/job.textproto" 2 "$TMP/watch-$variant.jsonl" \
    "$TMP/worker-$variant" "${flags[@]}"
  # The final evaluation (after the last epoch) is the job's, not an epoch's.
  "$BIN/cli/ringctl" --coordinator="$TARGET" get "$JOB" | grep -i "final\|accuracy" >&2 || true
  "$PY" bench/common/train_watch.py "$TMP/watch-$variant.jsonl" "$variant" resnet 2 128 |
    "$PY" -c 'import json,sys; r=json.loads(sys.stdin.read()); r["flags"]=sys.argv[1:]; print(json.dumps(r))' \
      "${flags[@]}" >>"$OUT"
done
"$PY" - "$OUT" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    accs = " ".join(f"{a * 100:.2f}" for a in r["test_accuracy"])
    print(f"{r['impl']:9s} {r['final_state']}: test accuracy by epoch {accs}; "
          f"train loss {r.get('train_loss')}")
PY

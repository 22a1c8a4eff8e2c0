#!/usr/bin/env bash
# All-reduce bandwidth: Ringleader's CPU communicators, shared memory and
# Gloo (real coordinator bootstrap, the worker's communicator factory),
# beside torch.distributed's Gloo all_reduce (Debian's python3-torch), same sizes, same processes count,
# in one run. Writes bench/results/allreduce.jsonl and .png and prints a table.
#   bench/allreduce/allreduce_bench.sh [WORLDS] [SIZES]
# WORLDS default "2 3 4"; SIZES default 1 KiB .. 256 MiB (bytes, comma-separated).
# DEVICE=cuda: the NCCL path instead, rank r on cuda:r, beside torch's NCCL
# backend (needs a CUDA LibTorch build, RINGLEADER_LIBTORCH, a CUDA
# PyTorch for $PY, and one GPU per rank: a world larger than the GPUs is
# skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
WORLDS="${1:-2 3 4}"
SIZES="${2:-1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456}"
PY="${PY:-/usr/bin/python3}"
DEVICE="${DEVICE:-cpu}"
TRANSPORTS="shm gloo"
GPUS=0
if [[ $DEVICE == cuda ]]; then
  TRANSPORTS=nccl
  GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //bench/allreduce:ringleader-allreduce-peer
OUT=bench/results/allreduce.jsonl
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$TMP"' EXIT
: > "$OUT"
for W in $WORLDS; do
  if [[ $DEVICE == cuda && $W -gt $GPUS ]]; then
    echo "world $W: only $GPUS GPU(s), NCCL needs one per rank: skipped" >&2
    continue
  fi
  mkdir -p "$TMP/$W"
  start_coordinator "$TMP/$W"
  cat > "$TMP/job.textproto" <<SPEC
name: "allreduce-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 64 synthetic_test_size: 8 }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.1 }
epochs: 1
batch_size: 8
min_workers: $W
max_workers: $W
SPEC
  for T in $TRANSPORTS; do
    "$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$TMP/job.textproto" >/dev/null
    PIDS=()
    for R in $(seq "$W"); do
      DEV=cpu; TR=$T
      # On a GPU the factory gives NCCL; --transport only matters on the CPU.
      [[ $T == nccl ]] && { DEV="cuda:$((R - 1))"; TR=shm; }
      "$BIN/bench/allreduce/ringleader-allreduce-peer" --coordinator="$TARGET" --sizes="$SIZES" \
        --transport="$TR" --device="$DEV" >"$TMP/peer-$T-$W-$R.out" 2>"$TMP/peer-$T-$W-$R.err" &
      PIDS+=($!)
    done
    for P in "${PIDS[@]}"; do wait "$P"; done
    cat "$TMP"/peer-"$T"-"$W"-*.out >> "$OUT"
  done
  kill "$COORD"; wait "$COORD" 2>/dev/null || true
  BACKEND=gloo; [[ $DEVICE == cuda ]] && BACKEND=nccl
  OMP_NUM_THREADS=1 "$PY" bench/allreduce/torch_allreduce.py --world "$W" --sizes "$SIZES" \
    --backend "$BACKEND" >> "$OUT"
done
"$PY" bench/allreduce/plot_allreduce.py "$OUT" bench/results/allreduce.png

#!/usr/bin/env bash
# Preemption, measured (issue 34, point 4; a benchmark, not a timed test).
# Optimized binaries (-c opt), a fresh coordinator and three workers
# (--threads=1, CPU) per trial; bench/recovery/preempt_bench.py runs the trials and
# writes one JSON line each (steps lost, SIGTERM-to-exit per worker, the
# final checkpoint's size and write time):
#   whole  SIGTERM to every worker at a random optimizer step (uniform over
#          the job's steps after its first 10% and before its last 10%,
#          seeded), then three new workers resume the PREEMPTED job;
#   one    SIGTERM to one random worker of three; the others go on.
# Paths ($PATHS, issue 48): how the first three workers start and stop,
# as a deployment file gives (preempt_bench.py: bare, systemd, pid1); none
# of them sets OPENBLAS_NUM_THREADS.
# Workloads ($WORKLOADS): mlp, the built-in MLP on $MLP_TRAIN samples of
# Fashion-MNIST (batch 32 per rank, one epoch); gpt, examples/gpt on
# bench/common/lib.sh's token subset (one epoch).
#   bench/recovery/preempt_bench.sh
# Defaults: WORKLOADS "mlp gpt", MODES "whole one", PATHS bare, TRIALS 20, SEED 1,
# MLP_TRAIN 30000, MLP_EPOCHS 1, BIN_DIR unset (build -c opt). Appends to $RESULTS (default bench/results/preempt.jsonl).
set -euo pipefail
cd "$(dirname "$0")/../.."
WORKLOADS="${WORKLOADS:-mlp gpt}"
MODES="${MODES:-whole one}"
PATHS="${PATHS:-bare}"
TRIALS="${TRIALS:-20}"
SEED="${SEED:-1}"
: "${MLP_TRAIN:=30000}" "${MLP_TEST:=2000}" "${MLP_EPOCHS:=1}"
RESULTS="${RESULTS:-bench/results/preempt.jsonl}"
PY=/usr/bin/python3
. bench/common/lib.sh
TMP="$(mktemp -d /tmp/preempt-bench.XXXXXX)"
trap 'rm -rf "$TMP"' EXIT
# BIN_DIR: binaries already built (a smoke run with fastbuild ones, say; the
# rows then say so), else -c opt.
if [[ -n ${BIN_DIR:-} ]]; then
  BIN=$BIN_DIR
else
  build_opt //coordinator:ringleader-coordinator //worker:ringleader-worker //cli:ringctl
fi
for M in $WORKLOADS; do
  prepare_example "$M"
  spec="$TMP/$M.textproto"
  case $M in
    mlp)
      cat >"$spec" <<TXT
name: "preempt-mlp"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_IDX path: "$TMP/mlp" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: $MLP_EPOCHS batch_size: 32 seed: 42
progress_every_steps: 1 progress_min_interval_ms: 50
TXT
      ;;
    gpt)
      example_spec "$spec" 3 32 auto
      # Every progress report: the signal lands near its step.
      sed -i 's/^progress_every_steps: .*/progress_every_steps: 1/' "$spec" ;;
  esac
  for mode in $MODES; do
    # "whole": all three must come back; "one": two go on.
    sed -i '/^min_workers:/d;/^max_workers:/d' "$spec"
    if [[ $mode == whole ]]; then
      printf 'min_workers: 3\nmax_workers: 3\nrendezvous_last_call_ms: 3000\n' >>"$spec"
    else
      printf 'min_workers: 2\nmax_workers: 3\nrendezvous_last_call_ms: 3000\n' >>"$spec"
    fi
    sed -i '0,/^rendezvous_last_call_ms:/!{/^rendezvous_last_call_ms:/d}' "$spec"
    for path in $PATHS; do
      "$PY" bench/recovery/preempt_bench.py "$BIN" "$M" "$spec" "$mode" "$TRIALS" "$SEED" "$RESULTS" "$path"
    done
  done
done
"$PY" bench/recovery/preempt_summary.py "$RESULTS"

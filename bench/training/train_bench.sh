#!/usr/bin/env bash
# Training side by side in one run for each configuration (model x global
# batch x ranks):
#   - Ringleader: a real coordinator and real ringleader-workers (-c opt,
#     --threads=1), per transport in $TRANSPORTS (auto: shared memory on one
#     host; gloo: TCP);
#   - PyTorch DDP (bench/training/train_ddp.py: Debian's python3-torch, Gloo, same
#     model, global batch and optimizer, one thread per rank), as a user runs
#     it, and again with glibc malloc told to keep freed memory (the setting
#     ringleader-worker applies itself; see worker/malloc_tuning.h), and for
#     the CNN and the ResNet once more as the worker runs them on CPU
#     (--nhwc: channels-last activations, and for the CNN ReLU after
#     pooling);
#   - the compute limit: the worker's step (worker/train/train_step.h) in a
#     world of one rank, i.e. with no communication at all
#     (ringleader-compute-limit) at the per-rank batch, times
#     min(ranks, cores); it also measures the CPU cost of progress reports.
# Models:
#   mlp, cnn: the built-ins on Fashion-MNIST (IDX); each trains $EPOCHS_MLP /
#     $EPOCHS_CNN epochs and evaluates after each; time to 85%: from the first
#     training step to the first evaluation at or above 85% test accuracy
#     (evaluations included).
#   resnet, gpt: the example workloads (examples/resnet: TorchScript ResNet
#     with BatchNorm, .npy Fashion-MNIST 3x32x32, SGD; examples/gpt: byte-level
#     GPT computing its own loss, uint16 token file, Adam), each prepared by its
#     prepare.py into a temporary directory and trained for one epoch of a
#     subset ($RESNET_TRAIN samples, $GPT_TRAIN_TOKENS tokens; test splits of
#     $RESNET_TEST samples and $GPT_TEST_TOKENS tokens) from its own job file
#     (bench/common/example_job.py sets the ranks, per-rank batch and paths). DDP
#     trains the example's eager model.py with the job's seed, data, loss and
#     optimizer. Global batch: the job file's (per-rank batch x 2 ranks).
# samples/s (tokens/s for the GPT): over the first epoch after 20 warm-up
# steps.
# The example workloads with the training recipe of a modern DDP script on
# both sides: RECIPE=1 gives both job files (so Ringleader, the compute limit
# and DDP alike) example_job.py's recipe in place of their optimizer:
# nanoGPT's AdamW for the GPT, torchvision's SGD with Nesterov for the ResNet,
# each with its no-decay group, a cosine schedule with warmup and a floor, and
# clipping at global norm 1; train_ddp.py applies it as the worker does.
# PRECISION=bf16 (or fp32) sets the job files' precision; PRECISIONS="fp32
# bf16" runs every implementation in each precision within a configuration,
# side by side. Either tags every line with its precision; the tables are per
# precision.
# Order and pinning: within a configuration DDP runs after Ringleader and its
# limits on odd repeats and before them on even ones, so a machine that
# drifts over minutes favours neither side (given 2 or more repeats; the
# built-ins run once unless REPEATS says otherwise). PIN_CPUS=1 pins
# Ringleader's r-th worker, the r-th limit loop and DDP's r-th rank alike to
# the r-th CPU (this VM's two vCPUs ran up to 2x apart; unpinned, the
# scheduler moves ranks between them differently from run to run). DDPS
# picks the DDP runs (default "plain kept nhwc": as a user runs it, with kept
# memory, and channels-last for the CNN and the ResNet).
#   bench/training/train_bench.sh [MODELS] [WORLDS] [BATCHES]
# Defaults: MODELS "mlp cnn resnet gpt" (or $MODELS); WORLDS "1 2 3" for mlp
# and cnn, "1 2" for resnet and gpt; BATCHES "128 512" for mlp and cnn, the
# job file's for resnet (128) and gpt (32). TRANSPORTS: "auto gloo" for mlp
# and cnn, "auto" for resnet and gpt. Writes $RESULTS (default
# bench/results/train.jsonl), then the tables and $PLOT (the same name, .png).
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp cnn resnet gpt}}"
WORLDS="${2:-${WORLDS:-}}"
BATCHES="${3:-${BATCHES:-}}"
EPOCHS_MLP="${EPOCHS_MLP:-3}"
EPOCHS_CNN="${EPOCHS_CNN:-2}"
# The example workloads' subsets: about 100 optimizer steps per epoch at the
# job files' global batches.
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/training:ringleader-compute-limit
OUT="${RESULTS:-bench/results/train.jsonl}"
PLOT="${PLOT:-${OUT%.jsonl}.png}"
TMP="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
CORES=$(getconf _NPROCESSORS_ONLN)  # nproc would obey OMP_NUM_THREADS
DDPS="${DDPS:-plain kept nhwc}"
if [[ ${PIN_CPUS:-} == 1 ]]; then
  export WORKER_CPUS="$(seq -s ' ' 0 $((CORES - 1)))"
fi
P=default  # the precision being run (run_config)

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

# run_ddp IMPL [ARGS...]: bench/training/train_ddp.py for this configuration ($M, $W,
# $GB, $EPOCHS), its line appended to $OUT as IMPL; KEPT_MEMORY=1 tells
# glibc malloc to keep freed memory. Bounded: a DDP rank that dies leaves the
# others in Gloo's 30-minute timeout. A run that fails or hangs is reported
# and left out.
run_ddp() {
  local impl="$1"; shift
  local malloc=()
  [[ -n "${KEPT_MEMORY:-}" ]] &&
    malloc=(MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824)
  local job=()
  [[ $M == resnet || $M == gpt ]] && job=(--job "$RUN/job-auto.textproto")
  local pin=()
  [[ -n ${WORKER_CPUS:-} ]] && pin=(--cpus "${WORKER_CPUS// /,}")
  env "${malloc[@]}" timeout 600 "$PY" bench/training/train_ddp.py --model "$M" \
    --world "$W" --global_batch "$GB" --epochs "$EPOCHS" --impl "$impl" \
    --repeat "$REP" "${job[@]}" "${pin[@]}" "$@" | tagged >> "$OUT" ||
    echo "$impl $M $GB $W $P: failed or timed out" >&2
}

# tagged: stdin's JSON lines with "precision": $P added, unless the job
# files keep their own ($P is "default").
tagged() {
  if [[ $P == default ]]; then
    cat
  else
    "$PY" -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r["precision"] = sys.argv[1]
    print(json.dumps(r))' "$P"
  fi
}

# precision_arg: example_spec's precision argument for $P.
precision_arg() { [[ $P == default ]] || echo "$P"; }

# compute_limit IMPL JOBFILE N: N ringleader-compute-limit processes side by
# side, each in a 1-rank job of its own from JOBFILE, their measured loops
# started together once all warmed up; one JSON line as IMPL: their summed
# rate (one process: its rate times min(ranks, cores), the ideal of W ranks
# on W free cores).
compute_limit() {
  local impl="$1" job="$2" n="$3"
  limit_loops "$n" "$job" "$RUN/$impl" "${LIMIT[@]}" || true
  "$PY" -c 'import json,sys
impl, model, gb, w, cores, n, rep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
rs = []
for path in sys.argv[8:]:
    text = open(path).read().strip()
    if not text:
        sys.exit(f"compute limit: no result from {path} (see its .log)")
    rs.append(json.loads(text))
r = rs[0]
per_rank = [x["samples_per_s"] for x in rs]
r.update(impl=impl, model=model, global_batch=gb, world=w, repeat=rep,
         per_rank_batch=r.pop("batch"), processes=n,
         samples_per_s=sum(per_rank) * (min(w, cores) if n == 1 else 1),
         per_rank_samples_per_s=sum(per_rank) / n)
if r["tokens_per_sample"] > 1:
    r["tokens_per_s"] = r["samples_per_s"] * r["tokens_per_sample"]
print(json.dumps(r))' "$impl" "$M" "$GB" "$W" "$CORES" "$n" "$REP" \
    $(for i in $(seq "$n"); do echo "$RUN/$impl-$i.json"; done) | tagged >> "$OUT" ||
    echo "$impl $M $GB $W: failed (see $RUN/$impl-*.log)" >&2
}

# say WHAT: a timestamped progress line on stderr.
say() { echo "[$(date +%T)] $M batch $GB x$W (repeat $REP, $P): $*" >&2; }

# conditions: one JSON line of what the machine was doing (and the recipe
# and precisions, when set).
conditions() {
  "$PY" -c 'import json, os, sys, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
c = {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
     "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg(),
     "model": sys.argv[1], "world": int(sys.argv[2]), "repeat": int(sys.argv[3])}
if sys.argv[4]:
    c["recipe"] = True
if sys.argv[5] != "default":
    c["precisions"] = sys.argv[5].split()
print(json.dumps({"conditions": c}))' "$M" "$W" "$REP" "${RECIPE:-}" "$M_PRECISIONS" >> "$OUT"
}

# run_ringleader: Ringleader on $W workers per transport, for ($M, $GB, $W, $P).
run_ringleader() {
  for T in $M_TRANSPORTS; do
    say "ringleader ($T)"
    if [[ -n $EXAMPLE ]]; then
      example_spec "$RUN/job-$T.textproto" "$W" "$B" "$T" "$(precision_arg)"
    else
      write_spec "$RUN/job-$T.textproto" "$ARCH" "$EPOCHS" "$B" "$W" "${T^^}"
    fi
    run_job "$RUN/job-$T.textproto" "$W" "$RUN/watch-$T.jsonl" "$RUN/worker-$T"
    IMPL=ringleader; [[ $T != auto ]] && IMPL="ringleader-$T"
    "$PY" bench/common/train_watch.py "$RUN/watch-$T.jsonl" "$IMPL" "$M" "$W" "$GB" \
      "$TOKENS" "$REP" | tagged >> "$OUT"
  done
}

# run_limits: the compute limit at this per-rank batch: a 1-rank job gives
# it the spec and a generation to report progress to. With several ranks,
# also as many loops side by side, sharing the host as the ranks do.
run_limits() {
  if [[ -n $EXAMPLE ]]; then
    example_spec "$RUN/limit.textproto" 1 "$B" auto "$(precision_arg)"
  else
    write_spec "$RUN/limit.textproto" "$ARCH" 1 "$B" 1 AUTO
  fi
  say "compute limit"
  compute_limit compute-limit "$RUN/limit.textproto" 1
  ((W > 1)) && compute_limit compute-limit-concurrent "$RUN/limit.textproto" "$W"
  return 0
}

# run_ddps: PyTorch DDP as a user runs it and with kept memory, from the
# job file Ringleader ran ($RUN/job-auto.textproto).
run_ddps() {
  say "pytorch ddp"
  [[ " $DDPS " == *" plain "* ]] && run_ddp pytorch-ddp
  [[ " $DDPS " == *" kept "* ]] && KEPT_MEMORY=1 run_ddp pytorch-ddp-kept-memory
  # PyTorch with the CNN written as Ringleader runs it (channels-last, ReLU
  # after pooling) and kept memory: what is left is the runtime.
  if [[ " $DDPS " == *" nhwc "* && ($M == cnn || $M == resnet) ]]; then
    KEPT_MEMORY=1 run_ddp pytorch-ddp-nhwc --nhwc
  fi
  return 0
}

# run_all_ddps: run_ddps in each of $M_PRECISIONS, each in its directory.
run_all_ddps() {
  for P in $M_PRECISIONS; do
    RUN="$base/$P"
    run_ddps
  done
}

# run_config: every implementation for configuration ($M, $GB, $W), once in
# each of $M_PRECISIONS, each precision's files in a directory of its own.
run_config() {
  local lines base
  lines=$(wc -l < "$OUT")
  conditions
  B=$((GB / W))
  base="$TMP/$M-$GB-$W-$REP"
  for P in $M_PRECISIONS; do mkdir -p "$base/$P"; done
  # DDP reads the job file Ringleader ran: written first either way.
  if [[ -n $EXAMPLE ]]; then
    for P in $M_PRECISIONS; do
      example_spec "$base/$P/job-auto.textproto" "$W" "$B" auto "$(precision_arg)"
    done
  fi
  ((REP % 2)) || run_all_ddps
  start_coordinator "$base"
  for P in $M_PRECISIONS; do
    RUN="$base/$P"
    run_ringleader
    run_limits
  done
  kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true
  ((REP % 2)) && run_all_ddps
  tail -n +$((lines + 2)) "$OUT" | cut -c1-160
}

# The example workloads run $REPEATS times (default 3), the built-ins once,
# each repeat going through every configuration; the tables take medians.
max_repeats=1
for M in $MODELS; do
  case $M in
    mlp|cnn) ;;
    resnet|gpt) prepare_example "$M"; max_repeats=${REPEATS:-3} ;;
    *) echo "unknown model $M (mlp, cnn, resnet, gpt)" >&2; exit 2 ;;
  esac
done
: > "$OUT"
for REP in $(seq "$max_repeats"); do
  for M in $MODELS; do
    EXAMPLE=; TOKENS=1; M_REPEATS=${REPEATS:-1}
    case $M in
      mlp) ARCH=MODEL_ARCH_MLP; EPOCHS=$EPOCHS_MLP; LIMIT=(--steps=100 --rounds=3) ;;
      cnn) ARCH=MODEL_ARCH_CNN; EPOCHS=$EPOCHS_CNN; LIMIT=(--steps=20 --rounds=3) ;;
      resnet|gpt)
        EXAMPLE=1; EPOCHS=1; LIMIT=(--steps=20 --rounds=1 --warmup=10)
        M_REPEATS=${REPEATS:-3}
        JOBFILE=$(ls examples/$M/*.textproto)
        PER_RANK=$(sed -n 's/^batch_size: *//p' "$JOBFILE")
        [[ $M == gpt ]] && TOKENS=$(sed -n 's/^ *block_size: *//p' "$JOBFILE") ;;
    esac
    ((REP > M_REPEATS)) && continue
    # "default": the job files' own precision, lines untagged.
    M_PRECISIONS=default
    if [[ -n $EXAMPLE ]]; then
      M_WORLDS="${WORLDS:-1 2}"; M_BATCHES="${BATCHES:-$((2 * PER_RANK))}"
      M_TRANSPORTS="${TRANSPORTS:-auto}"
      M_PRECISIONS="${PRECISIONS:-${PRECISION:-default}}"
    else
      M_WORLDS="${WORLDS:-1 2 3}"; M_BATCHES="${BATCHES:-128 512}"
      M_TRANSPORTS="${TRANSPORTS:-auto gloo}"
    fi
    for GB in $M_BATCHES; do
      for W in $M_WORLDS; do
        run_config
      done
    done
  done
done
"$PY" bench/training/train_summary.py "$OUT" "$PLOT"

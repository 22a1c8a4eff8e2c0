#!/usr/bin/env bash
# What a worker's death costs, with the two recovery paths side by side in
# one run (issue 19, point 5). Real binaries (-c opt): a coordinator with its
# defaults (3 s lease), three ringleader-workers (--threads=1, CPU) per job,
# each job with a checkpoint every $EVERY optimizer steps (background writes,
# the default) to $CKPT_DIR, in two modes:
#   memory  the default: the survivors recover from each other's memory
#           (worker/train/peer_recovery.h); the checkpoint is not read;
#   disk    --recover_from_peers=false on every worker: the new generation
#           reloads the newest checkpoint (the path before issue 19).
# Workers log every batch's sample ids with the step they go into
# (GLOG_vmodule=trainer=1); every figure below comes from those lines'
# timestamps (glog, microseconds, the same clock as the script's kill time),
# the "generation G: rank R of W" lines and the resume lines ("recovers from
# rank R's memory at epoch E step S offset O" / "resumes from checkpoint N
# (...) at epoch E step S offset O", as tests/integration/worker_logs.cc
# parses them); bench/recovery/recovery_row.py turns one run into a JSON line.
# Parts ($PARTS, in this order):
#   kills     the built-in MLP on the full Fashion-MNIST (the README's demo
#             job: SGD 0.05, momentum 0.9, batch 64 per rank, seed 42;
#             $EPOCHS epochs), min_workers 2 and max_workers 3: no
#             replacement, the job goes on with the two survivors. One
#             fault-free run, then $KILLS runs per mode, each with one kill -9
#             of a random worker at a random optimizer step, uniform over the
#             fault-free run's steps after those of its first $WARM_S s and
#             before its last 10% (seeded: $SEED; the same steps and victims
#             in both modes). Per kill: optimizer steps lost (the highest step any
#             rank of the killed generation completed, before or after the
#             kill, minus the step the next generation resumed from), time
#             from the kill to the next completed optimizer step (the next
#             generation's first step), and the final test accuracy against
#             the fault-free run's.
#   goodput   the same job with epochs enough to outlast $DURATION s: a
#             kill -9 of a random worker every $INTERVAL s and a replacement
#             worker started right after each kill, until $DURATION s after
#             the first 3-rank step. Goodput: samples of the optimizer steps
#             kept (each step of the final lineage once, counted from the
#             logged sample ids of the generation that trained it; redone
#             steps excluded) per second over the window, against (a) a
#             fault-free run of the same job for $FF_DURATION s in this
#             script and (b) the same run's own steady rate inside its
#             3-rank generations (robust to load drift on a shared machine).
#   examples  $EXAMPLE_KILLS kills each of the example workloads
#             (examples/resnet, examples/gpt on bench/common/lib.sh's subsets, one
#             epoch, min_workers 2), memory mode, plus one fault-free run.
#   bench/recovery/recovery_bench.sh [PARTS]
# Defaults: PARTS "kills goodput examples", MODES "memory disk", KILLS 20,
# SEED 1, EPOCHS 2, DURATION 600, INTERVAL 30, FF_DURATION 120, EVERY 50,
# EXAMPLE_KILLS 3, EXAMPLES "resnet gpt", KILL_WAIT_S 120 (how long a
# killed job may take to end before it is recorded as it stands); LAST_CALL_MS sets the MLP jobs'
# rendezvous_last_call_ms (unset: the job default, 1 s). Writes $RESULTS (default
# bench/results/recovery.jsonl; APPEND=1 appends to it), then the tables
# (bench/recovery/recovery_summary.py).
set -euo pipefail
cd "$(dirname "$0")/../.."
PARTS="${1:-${PARTS:-kills goodput examples}}"
MODES="${MODES:-memory disk}"
KILLS="${KILLS:-20}"
SEED="${SEED:-1}"
EPOCHS="${EPOCHS:-2}"
WARM_S="${WARM_S:-1}"
DURATION="${DURATION:-600}"
INTERVAL="${INTERVAL:-30}"
FF_DURATION="${FF_DURATION:-120}"
EVERY="${EVERY:-50}"
BATCH="${BATCH:-64}"
EXAMPLE_KILLS="${EXAMPLE_KILLS:-3}"
EXAMPLES="${EXAMPLES:-resnet gpt}"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker
OUT="${RESULTS:-bench/results/recovery.jsonl}"
TMP="$(mktemp -d)"
CKPT="$(mktemp -d "${CKPT_DIR:-/var/tmp}/ringleader-recovery-bench.XXXXXX")"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$CKPT"; [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"' EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GLOG_vmodule=trainer=1
now() { date +%s.%N; }

# mlp_spec FILE EPOCHS: the README's demo job on 2 to 3 workers.
mlp_spec() {
  cat > "$1" <<SPEC
name: "recovery-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: $2
batch_size: $BATCH
min_workers: 2
max_workers: 3
seed: 42
max_restarts: 100
progress_every_steps: 20
SPEC
  if [[ -n ${LAST_CALL_MS:-} ]]; then
    echo "rendezvous_last_call_ms: $LAST_CALL_MS" >> "$1"
  fi
}

# add_checkpoints FILE RUN: a checkpoint every $EVERY steps into a fresh
# directory of RUN's.
add_checkpoints() {
  mkdir -p "$CKPT/$2"
  printf 'checkpoint_dir: "%s"\ncheckpoint_every_steps: %s\n' "$CKPT/$2" \
    "$EVERY" >> "$1"
}

# example_kill_spec FILE: example $M for 2 to 3 workers, one epoch.
example_kill_spec() {
  example_spec "$1" 3 "$PER_RANK" auto
  sed -i 's/^min_workers:.*/min_workers: 2/; s/^max_workers:.*/max_workers: 3/' "$1"
  grep -q '^min_workers' "$1" || echo "min_workers: 2" >> "$1"
  grep -q '^max_workers' "$1" || echo "max_workers: 3" >> "$1"
  echo "max_restarts: 100" >> "$1"
}

# start_worker LOG: one worker of $MODE in the background; appends its pid
# to WPIDS.
start_worker() {
  local flags=(--coordinator="$TARGET" --threads=1 --max_jobs=1)
  [[ $MODE == disk ]] && flags+=(--recover_from_peers=false)
  "$BIN/worker/ringleader-worker" "${flags[@]}" >"$1" 2>&1 &
  WPIDS+=($!)
}

# wait_world3 RUN TIMEOUT_S: waits until a worker log of RUN shows a step of
# a 3-rank generation; prints the time it saw it.
wait_world3() {
  "$PY" - "$1" "$2" <<'PY'
import glob, re, sys, time
run, limit = sys.argv[1], float(sys.argv[2])
rank3 = re.compile(r"generation (\d+): rank \d+ of 3$")
end = time.time() + limit
while time.time() < end:
    for path in glob.glob(f"{run}/worker-*.log"):
        gens = set()
        for line in open(path, errors="replace"):
            m = rank3.search(line)
            if m:
                gens.add(m.group(1))
            elif "samples generation=" in line and \
                    line.split("samples generation=")[1].split()[0] in gens:
                print(f"{time.time():.6f}")
                sys.exit(0)
    time.sleep(0.05)
sys.exit(1)
PY
}

# wait_step RUN STEP LIMIT_S: waits until a worker of RUN logs a batch of
# optimizer step STEP or later (polled every 20 ms, reading only what was
# appended); exit 1 after LIMIT_S s.
wait_step() {
  "$PY" - "$1" "$2" "$3" <<'PY'
import glob, re, sys, time
run, target, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
step = re.compile(r"samples generation=\d+ rank=\d+ epoch=\d+ step=(\d+)")
offsets = {}
end = time.time() + limit
while time.time() < end:
    for path in glob.glob(f"{run}/worker-*.log"):
        with open(path, errors="replace") as f:
            f.seek(offsets.get(path, 0))
            text = f.read()
        cut = text.rfind("\n") + 1  # A partial last line is read again.
        offsets[path] = offsets.get(path, 0) + len(text[:cut].encode())
        for m in step.finditer(text[:cut]):
            if int(m.group(1)) >= target:
                sys.exit(0)
    time.sleep(0.02)
sys.exit(1)
PY
}

# start_run NAME SPEC_WRITER...: a coordinator, the job, three workers and a
# watch, in $TMP/NAME (RUN). The watch ends with the job.
start_run() {
  RUN="$TMP/$1"
  shift
  mkdir -p "$RUN"
  start_coordinator "$RUN"
  "$@" "$RUN/job.textproto"
  JOB=$("$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$RUN/job.textproto")
  WPIDS=()
  for r in 1 2 3; do start_worker "$RUN/worker-$r.log"; done
  "$BIN/cli/ringctl" --coordinator="$TARGET" --output=json watch "$JOB" \
    >"$RUN/watch.jsonl" 2>/dev/null &
  WATCH=$!
}

# end_run: waits (bounded) for the job to end, then stops what is left.
end_run() {
  local limit=$1
  for _ in $(seq $((limit * 10))); do
    kill -0 "$WATCH" 2>/dev/null || break
    sleep 0.1
  done
  kill "$WATCH" 2>/dev/null || true
  for _ in $(seq 100); do
    local alive=0
    for p in "${WPIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && break
    sleep 0.1
  done
  for p in "${WPIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  wait "${WPIDS[@]}" "$WATCH" 2>/dev/null || true
  kill "$COORD" 2>/dev/null || true
  wait "$COORD" 2>/dev/null || true
}

# row KIND [ARGS...]: recovery_row.py's line for $RUN to $OUT.
row() {
  "$PY" bench/recovery/recovery_row.py "$@" >> "$OUT" || echo "no result for $RUN" >&2
  tail -n 1 "$OUT" | cut -c1-240 >&2
}

# fault_free NAME SPEC_WRITER...: one run without kills; sets TRAIN_S (its
# training time, from its first 3-rank step to the job's end) and
# TRAIN_STEPS (its last optimizer step).
fault_free() {
  local name=$1
  shift
  echo "[$(date +%T)] $name: fault-free" >&2
  start_run "$name" "$@"
  local t0
  t0=$(wait_world3 "$RUN" 300) || { echo "$name never ran at 3 ranks" >&2; end_run 5; return 1; }
  end_run 1800
  # To the last logged batch: the end of training, before the final
  # evaluation and the exits.
  TRAIN_S=$("$PY" - "$RUN" "$t0" <<'PY'
import glob, sys
sys.path.insert(0, "bench")
from recovery_row import glog_time
last = max(glog_time(l) for p in glob.glob(f"{sys.argv[1]}/worker-*.log")
           for l in open(p, errors="replace") if "samples generation=" in l)
print(last - float(sys.argv[2]))
PY
)
  TRAIN_STEPS=$(cat "$RUN"/worker-*.log | sed -n 's/.*samples generation=[0-9]* rank=[0-9]* epoch=[0-9]* step=\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
  row fault_free --run "$RUN" --model "$M" --mode none --train_s "$TRAIN_S"
}

# kill_run NAME U VICTIM SPEC_WRITER...: a run whose worker VICTIM (1-3) is
# killed at fraction U of the fault-free run's optimizer steps, after the
# steps of its first $WARM_S s and before its last 10%: by step, not by
# time, so a run faster or slower than the fault-free one is still killed
# while it trains.
kill_run() {
  local name=$1 u=$2 victim=$3 target tk
  shift 3
  target=$("$PY" -c 'import sys; u, w, T, N = map(float, sys.argv[1:]); ws = N * w / T; print(round(ws + u * (0.9 * N - ws)))' \
    "$u" "$WARM_S" "$TRAIN_S" "$TRAIN_STEPS")
  echo "[$(date +%T)] $name: $MODE, kill worker $victim at $u (step $target)" >&2
  start_run "$name" "$@"
  wait_step "$RUN" "$target" 300 || { echo "$name never reached step $target" >&2; end_run 5; return 0; }
  tk=$(now)
  kill -9 "${WPIDS[$((victim - 1))]}" 2>/dev/null || true
  # Bounded: a job that has not ended by then is recorded as it stands.
  end_run "${KILL_WAIT_S:-120}"
  row kill --run "$RUN" --model "$M" --mode "$MODE" --kill_time "$tk" \
    --victim "$victim" --fault_free "$FF_ROW"
}

# moments N: N lines "U VICTIM" from the seeded RNG.
moments() {
  "$PY" -c 'import random, sys
rng = random.Random(int(sys.argv[2]))
for _ in range(int(sys.argv[1])):
    print(f"{rng.random():.4f} {rng.randint(1, 3)}")' "$1" "$SEED"
}

part_kills() {
  M=mlp
  local spec
  spec() { mlp_spec "$1" "$EPOCHS"; add_checkpoints "$1" "$(basename "$(dirname "$1")")"; }
  MODE=memory
  fault_free mlp-fault-free spec || return 0
  FF_ROW="$(tail -n 1 "$OUT")"
  local i=0
  while read -r u victim; do
    i=$((i + 1))
    for MODE in $MODES; do kill_run "mlp-$MODE-$i" "$u" "$victim" spec; done
  done < <(moments "$KILLS")
}

# goodput_run NAME KILL_EVERY: a run of $DURATION s (or $FF_DURATION s
# without kills) from its first 3-rank step, killing a random worker every
# KILL_EVERY s (0: none) and starting a replacement after each kill.
goodput_run() {
  local name=$1 every=$2 t0 tend k victim n=3 tk kills=()
  local dur=$DURATION
  [[ $every == 0 ]] && dur=$FF_DURATION
  echo "[$(date +%T)] $name: $MODE, $dur s, a kill every $every s" >&2
  spec() { mlp_spec "$1" 1000; add_checkpoints "$1" "$(basename "$(dirname "$1")")"; }
  start_run "$name" spec
  t0=$(wait_world3 "$RUN" 300) || { echo "$name never ran at 3 ranks" >&2; end_run 5; return 0; }
  tend=$("$PY" -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "$t0" "$dur")
  local rng_seed=$SEED
  LIVE=("${WPIDS[@]}")
  if [[ $every != 0 ]]; then
    for ((k = 1; k * every < dur; ++k)); do
      sleep "$("$PY" -c 'import sys, time; print(max(0.0, float(sys.argv[1]) + float(sys.argv[2]) - time.time()))' "$t0" $((k * every)))"
      # One of the three live workers (LIVE: the replacements take the
      # places of the killed).
      victim=$("$PY" -c 'import random, sys; print(random.Random(int(sys.argv[1]) * 1000 + int(sys.argv[2])).randint(0, 2))' "$rng_seed" "$k")
      tk=$(now)
      kill -9 "${LIVE[$victim]}" 2>/dev/null || true
      kills+=("$tk")
      n=$((n + 1))
      start_worker "$RUN/worker-$n.log"
      LIVE[$victim]=${WPIDS[-1]}
    done
  fi
  sleep "$("$PY" -c 'import sys, time; print(max(0.0, float(sys.argv[1]) - time.time()))' "$tend")"
  tend=$(now)
  "$BIN/cli/ringctl" --coordinator="$TARGET" cancel "$JOB" >/dev/null 2>&1 || true
  end_run 60
  local kill_list
  kill_list=$(IFS=,; echo "${kills[*]:-}")
  row goodput --run "$RUN" --model mlp --mode "$MODE" --start "$t0" --end "$tend" \
    --kills "$kill_list" --interval "$every" ${GOODPUT_FF:+--fault_free "$GOODPUT_FF"}
}

part_goodput() {
  MODE=memory
  GOODPUT_FF=""
  goodput_run goodput-fault-free 0
  GOODPUT_FF="$(tail -n 1 "$OUT")"
  for MODE in $MODES; do goodput_run "goodput-$MODE" "$INTERVAL"; done
}

part_examples() {
  MODE=memory
  for M in $EXAMPLES; do
    prepare_example "$M"
    PER_RANK=$(sed -n 's/^batch_size: *//p' examples/$M/*.textproto)
    fault_free "$M-fault-free" example_kill_spec || continue
    FF_ROW="$(tail -n 1 "$OUT")"
    local i=0
    while read -r u victim; do
      i=$((i + 1))
      kill_run "$M-memory-$i" "$u" "$victim" example_kill_spec
    done < <(moments "$EXAMPLE_KILLS")
  done
}

[[ -n ${APPEND:-} ]] || : > "$OUT"
"$PY" -c 'import json, os, sys, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
print(json.dumps({"conditions": {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                  "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg(),
                  "parts": sys.argv[1], "every": int(sys.argv[2]), "modes": sys.argv[3]}}))' "$PARTS" "$EVERY" "$MODES" >> "$OUT"
for P in $PARTS; do
  case $P in
    kills) part_kills ;;
    goodput) part_goodput ;;
    examples) part_examples ;;
    *) echo "unknown part $P (kills, goodput, examples)" >&2; exit 2 ;;
  esac
done
"$PY" bench/recovery/recovery_summary.py "$OUT"

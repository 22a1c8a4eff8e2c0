#!/usr/bin/env bash
# Buckets in flight (ddp.buckets_in_flight: Gloo lanes, each its own TCP
# full mesh and thread) side by side in one run, K for each K in $IN_FLIGHT,
# per link (lib.sh's set_link: lo, both "hosts" on 127.0.0.1; veth, each in a
# network namespace of its own joined by a veth pair; the coordinator on the
# first):
#   allreduce  2 ranks (ringleader-allreduce-peer, one per host) time steps
#              of $BUCKETS float32 all-reduces of each size in $SIZES, issued
#              together then waited for, as the DDP Reducer issues a step's
#              buckets;
#   train      2 real ringleader-workers (-c opt, --threads=1) training each
#              model in $MODELS (mlp, cnn: Fashion-MNIST, global batch $GB,
#              one epoch) over Gloo, per bucket setting in $BUCKET_SETS
#              (default: DDP's 1 MiB first bucket and 25 MiB cap; small: a
#              4 KiB first bucket and 16 KiB cap, i.e. many small buckets).
#              samples/s as in train_bench.sh (first epoch after 20 steps).
# Within a repeat the K values run one after the other (each repeat in
# another rotation of $IN_FLIGHT); the tables give medians over $REPEATS and
# the ratio to K=1 (taken within each repeat, then the median). Delay between the hosts is the
# cross-host benchmark's (issue 18); this one shows the lanes at work and
# that they cost nothing where there is no latency to hide.
#   bench/allreduce/inflight_bench.sh [LINKS]
# Defaults: LINKS "lo veth" (veth needs root), IN_FLIGHT "1 2 3", BUCKETS 16,
# SIZES "4096,65536,1048576", MODELS "mlp", BUCKET_SETS "default small",
# GB 128, REPEATS 3, PARTS "allreduce train". Writes $RESULTS (default
# bench/results/inflight.jsonl), then the tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
LINKS="${1:-${LINKS:-lo veth}}"
IN_FLIGHT="${IN_FLIGHT:-1 2 3}"
BUCKETS="${BUCKETS:-16}"
SIZES="${SIZES:-4096,65536,1048576}"
MODELS="${MODELS:-mlp}"
BUCKET_SETS="${BUCKET_SETS:-default small}"
GB="${GB:-128}"
REPEATS="${REPEATS:-3}"
PARTS="${PARTS:-allreduce train}"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/allreduce:ringleader-allreduce-peer
OUT="${RESULTS:-bench/results/inflight.jsonl}"
TMP="$(mktemp -d)"
NS_A="rli$$a" NS_B="rli$$b" IP_A=198.18.214.1 IP_B=198.18.214.2
NETNS=
trap cleanup_netns_run EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# tag KEY=VALUE...: stdin's JSON lines with the fields added (numbers as
# numbers).
tag() {
  "$PY" -c 'import json, sys
extra = {}
for kv in sys.argv[1:]:
    k, v = kv.split("=", 1)
    try:
        v = int(v)
    except ValueError:
        pass
    extra[k] = v
for line in sys.stdin:
    if line.strip():
        r = json.loads(line)
        r.update(extra)
        print(json.dumps(r))' "$@"
}

# start_coord RUN: a coordinator on host A. Sets COORD and TARGET.
start_coord() {
  "${A_RUN[@]}" "$BIN/coordinator/ringleader-coordinator" \
    --listen="$ADDR_A:0" --state="$1/state.db" --port_file="$1/port" \
    >"$1/coord.log" 2>&1 &
  COORD=$!
  for _ in $(seq 100); do [[ -s "$1/port" ]] && break; sleep 0.1; done
  [[ -s "$1/port" ]] || { cat "$1/coord.log" >&2; return 1; }
  TARGET="$ADDR_A:$(cat "$1/port")"
}

stop_coord() { kill "$COORD" 2>/dev/null; wait "$COORD" 2>/dev/null || true; }

# run_allreduce LINK K: one all-reduce job, a peer on each host.
run_allreduce() {
  local run="$TMP/ar-$1-$2-$REP"
  mkdir -p "$run"
  echo "[$(date +%T)] allreduce $1 K=$2 (repeat $REP)" >&2
  start_coord "$run"
  cat > "$run/job.textproto" <<SPEC
name: "allreduce-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 64 synthetic_test_size: 8 }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.1 }
epochs: 1
batch_size: 8
min_workers: 2
max_workers: 2
SPEC
  "${A_RUN[@]}" "$BIN/cli/ringctl" --coordinator="$TARGET" submit \
    --file="$run/job.textproto" >/dev/null
  local peer=(--coordinator="$TARGET" --transport=gloo --sizes="$SIZES"
    --buckets="$BUCKETS" --buckets_in_flight="$2" --seconds_per_size=2)
  timeout 600 "${A_RUN[@]}" "$BIN/bench/allreduce/ringleader-allreduce-peer" "${peer[@]}" \
    --address="$ADDR_A" >"$run/a.out" 2>"$run/a.err" &
  local a=$!
  timeout 600 "${B_RUN[@]}" "$BIN/bench/allreduce/ringleader-allreduce-peer" "${peer[@]}" \
    --address="$ADDR_B" >"$run/b.out" 2>"$run/b.err" &
  local b=$!
  wait "$a" "$b" || echo "allreduce $1 K=$2: a peer failed (see $run)" >&2
  stop_coord
  cat "$run/a.out" "$run/b.out" |
    tag part=allreduce link="$1" repeat="$REP" >> "$OUT"
}

# write_spec FILE ARCH K BUCKET_SET
write_spec() {
  local buckets=""
  [[ $4 == small ]] && buckets="first_bucket_bytes: 4096 bucket_cap_bytes: 16384"
  cat > "$1" <<SPEC
name: "inflight-bench"
model { arch: $2 }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $((GB / 2))
min_workers: 2
max_workers: 2
seed: 1
progress_every_steps: 10
progress_min_interval_ms: 100
ddp { cpu_transport: CPU_TRANSPORT_GLOO buckets_in_flight: $3 $buckets }
SPEC
}

# run_train LINK K BUCKET_SET: one training job, a worker on each host.
run_train() {
  local run="$TMP/tr-$M-$1-$2-$3-$REP"
  mkdir -p "$run"
  echo "[$(date +%T)] train $M $1 K=$2 buckets $3 (repeat $REP)" >&2
  start_coord "$run"
  write_spec "$run/job.textproto" "$ARCH" "$2" "$3"
  local job
  job=$("${A_RUN[@]}" "$BIN/cli/ringctl" --coordinator="$TARGET" submit \
    --file="$run/job.textproto")
  timeout 900 "${A_RUN[@]}" "$BIN/worker/ringleader-worker" \
    --coordinator="$TARGET" --address="$ADDR_A" --threads=1 --max_jobs=1 \
    >"$run/worker-a.log" 2>&1 &
  local wa=$!
  timeout 900 "${B_RUN[@]}" "$BIN/worker/ringleader-worker" \
    --coordinator="$TARGET" --address="$ADDR_B" --threads=1 --max_jobs=1 \
    >"$run/worker-b.log" 2>&1 &
  local wb=$!
  timeout 900 "${A_RUN[@]}" "$BIN/cli/ringctl" --coordinator="$TARGET" \
    --output=json watch "$job" > "$run/watch.jsonl" 2>/dev/null || true
  wait "$wa" "$wb" || true
  stop_coord
  "$PY" bench/common/train_watch.py "$run/watch.jsonl" "ringleader-gloo" "$M" 2 \
    "$GB" 1 "$REP" | tag part=train link="$1" buckets_in_flight="$2" \
    bucket_set="$3" >> "$OUT"
  tail -n 1 "$OUT" | cut -c1-200 >&2
}

: > "$OUT"
"$PY" -c 'import json, os, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
print(json.dumps({"conditions": {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                  "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg()}}))' >> "$OUT"
# rotated N: $IN_FLIGHT rotated left N times, so each K takes each place in
# the order over the repeats (a machine whose load drifts favours no K).
rotated() {
  local ks=($IN_FLIGHT) n=$1 i
  for ((i = 0; i < ${#ks[@]}; ++i)); do
    echo -n "${ks[(i + n) % ${#ks[@]}]} "
  done
}

for REP in $(seq "$REPEATS"); do
  ORDER=$(rotated $((REP - 1)))
  for LINK in $LINKS; do
    set_link "$LINK"
    if [[ " $PARTS " == *" allreduce "* ]]; then
      for K in $ORDER; do run_allreduce "$LINK" "$K"; done
    fi
    if [[ " $PARTS " == *" train "* ]]; then
      for M in $MODELS; do
        case $M in
          mlp) ARCH=MODEL_ARCH_MLP ;;
          cnn) ARCH=MODEL_ARCH_CNN ;;
          *) echo "unknown model $M (mlp, cnn)" >&2; exit 2 ;;
        esac
        for S in $BUCKET_SETS; do
          for K in $ORDER; do run_train "$LINK" "$K" "$S"; done
        done
      done
    fi
  done
done
"$PY" bench/allreduce/inflight_summary.py "$OUT"

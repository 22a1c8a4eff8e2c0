#!/usr/bin/env bash
# Gradient compression (ddp.gradient_compression: none, fp16, bf16) side by
# side in one run: 2 real ringleader-workers (-c opt, --threads=1) training
# on Fashion-MNIST with Gloo over TCP between them (cpu_transport GLOO), per
# link:
#   lo     both workers and the coordinator on 127.0.0.1 (what the other
#          benchmarks' rl-gloo is);
#   veth   each worker in a network namespace of its own, joined by a veth
#          pair, no rate limit (the coordinator in the first one);
#   RATE   the same veth pair with a token-bucket limit on both ends
#          (tc qdisc tbf rate RATE), e.g. 1gbit, 500mbit: what a network
#          slower than this host's memory looks like.
# The namespaces are this script's own (rlc<pid>a/b, addresses from the
# benchmarking range 198.18.0.0/15, no default route) and are deleted on
# exit; every link but lo needs root. Each link's TCP rate is measured first
# (bench/common/tcp_probe.py, one stream, 64 MiB).
#
# For each model, link and repeat the three compressions run one after the
# other (each a fresh coordinator and 2 workers). samples/s: as in
# train_bench.sh (first epoch after 20 warm-up steps); the ratio to none is
# taken within a repeat, the table shows medians. The accuracy cost: the
# final test accuracy and loss of each job. Per step, from rank 0's timeline
# (steps 21 to 200): bytes all-reduced and the time the step waited for the
# last buckets after backward (allreduce_wait).
#   bench/allreduce/compression_bench.sh [MODELS] [LINKS]
# Defaults: MODELS "mlp cnn", LINKS "lo veth 1gbit 200mbit"; REPEATS (3), GB (global
# batch, 128), EPOCHS_MLP (3), EPOCHS_CNN (2), SEEDS (the jobs' seeds, "1":
# several give the accuracy cost's spread over initializations and data
# orders). Writes $RESULTS (default bench/results/compression.jsonl), then
# the tables.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp cnn}}"
LINKS="${2:-${LINKS:-lo veth 1gbit 200mbit}}"
REPEATS="${REPEATS:-3}"
GB="${GB:-128}"
EPOCHS_MLP="${EPOCHS_MLP:-3}"
EPOCHS_CNN="${EPOCHS_CNN:-2}"
COMPRESSIONS="${COMPRESSIONS:-none fp16 bf16}"
SEEDS="${SEEDS:-1}"
PY=/usr/bin/python3
DATA=/usr/share/datasets/fashion-mnist
. bench/common/lib.sh
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker
OUT="${RESULTS:-bench/results/compression.jsonl}"
TMP="$(mktemp -d)"
NS_A="rlc$$a" NS_B="rlc$$b" IP_A=198.18.213.1 IP_B=198.18.213.2
NETNS=
trap cleanup_netns_run EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# probe_link LINK: the link's measured TCP rate, one JSON line.
probe_link() {
  rm -f "$TMP/probe-port"
  timeout 120 "${B_RUN[@]}" "$PY" bench/common/tcp_probe.py serve "$ADDR_B" \
    "$TMP/probe-port" &
  local server=$!
  for _ in $(seq 100); do [[ -s "$TMP/probe-port" ]] && break; sleep 0.1; done
  timeout 120 "${A_RUN[@]}" "$PY" bench/common/tcp_probe.py send "$ADDR_B" \
    "$TMP/probe-port" "$1" >> "$OUT"
  wait "$server" || true
}

# write_spec FILE ARCH EPOCHS COMPRESSION TIMELINE_DIR
write_spec() {
  cat > "$1" <<SPEC
name: "compression-bench"
model { arch: $2 }
dataset { format: DATASET_FORMAT_IDX path: "$DATA" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: $3
batch_size: $((GB / 2))
min_workers: 2
max_workers: 2
seed: $SEED
progress_every_steps: 10
progress_min_interval_ms: 100
timeline_dir: "$5"
timeline_steps: 200
evaluate_every_epoch: true
ddp { cpu_transport: CPU_TRANSPORT_GLOO gradient_compression: GRADIENT_COMPRESSION_${4^^} }
SPEC
}

# run_job LINK COMPRESSION: one job on a fresh coordinator (host A) and two
# workers (hosts A and B); its line appended to $OUT.
run_job() {
  local run="$TMP/$M-$1-$2-$REP-$SEED"
  mkdir -p "$run"
  echo "[$(date +%T)] $M $1 $2 (repeat $REP, seed $SEED)" >&2
  "${A_RUN[@]}" "$BIN/coordinator/ringleader-coordinator" \
    --listen="$ADDR_A:0" --state="$run/state.db" --port_file="$run/port" \
    >"$run/coord.log" 2>&1 &
  local coord=$!
  for _ in $(seq 100); do [[ -s "$run/port" ]] && break; sleep 0.1; done
  [[ -s "$run/port" ]] || { cat "$run/coord.log" >&2; return 1; }
  local target="$ADDR_A:$(cat "$run/port")"
  write_spec "$run/job.textproto" "$ARCH" "$EPOCHS" "$2" "$run/tl"
  local job
  job=$("${A_RUN[@]}" "$BIN/cli/ringctl" --coordinator="$target" submit --file="$run/job.textproto")
  timeout 900 "${A_RUN[@]}" "$BIN/worker/ringleader-worker" \
    --coordinator="$target" --address="$ADDR_A" --threads=1 --max_jobs=1 \
    >"$run/worker-a.log" 2>&1 &
  local wa=$!
  timeout 900 "${B_RUN[@]}" "$BIN/worker/ringleader-worker" \
    --coordinator="$target" --address="$ADDR_B" --threads=1 --max_jobs=1 \
    >"$run/worker-b.log" 2>&1 &
  local wb=$!
  timeout 900 "${A_RUN[@]}" "$BIN/cli/ringctl" --coordinator="$target" \
    --output=json watch "$job" > "$run/watch.jsonl" 2>/dev/null || true
  wait "$wa" "$wb" || true
  kill "$coord" 2>/dev/null; wait "$coord" 2>/dev/null || true
  "$PY" bench/common/train_watch.py "$run/watch.jsonl" "ringleader-gloo" "$M" 2 \
    "$GB" 1 "$REP" > "$run/row.json"
  "$PY" bench/allreduce/compression_row.py "$run/row.json" "$run/tl" "$1" "$2" \
    "$SEED" >> "$OUT"
  tail -n 1 "$OUT" | cut -c1-200 >&2
}

: > "$OUT"
"$PY" -c 'import json, os, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
print(json.dumps({"conditions": {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                  "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg()}}))' >> "$OUT"
for LINK in $LINKS; do
  set_link "$LINK"
  probe_link "$LINK"
done
for REP in $(seq "$REPEATS"); do
  for M in $MODELS; do
    case $M in
      mlp) ARCH=MODEL_ARCH_MLP; EPOCHS=$EPOCHS_MLP ;;
      cnn) ARCH=MODEL_ARCH_CNN; EPOCHS=$EPOCHS_CNN ;;
      *) echo "unknown model $M (mlp, cnn)" >&2; exit 2 ;;
    esac
    for LINK in $LINKS; do
      set_link "$LINK"
      for SEED in $SEEDS; do
        for C in $COMPRESSIONS; do run_job "$LINK" "$C"; done
      done
    done
  done
done
"$PY" bench/allreduce/compression_summary.py "$OUT"

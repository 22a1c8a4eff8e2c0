#!/usr/bin/env bash
# Training across emulated hosts with added one-way delay (issue 18 point 5):
# the coordinator and WORKERS workers each on a "host" of its own
# (bench/crosshost/hosts.sh: a network namespace on a shared bridge, a private IPC
# namespace and /dev/shm, so the workers' AUTO transport is Gloo over TCP),
# every host's ingress held DELAY ms by bench/crosshost/netdelay (this kernel has no
# netem), so a round trip between hosts takes 2 x DELAY more.
#
# Per repeat, per delay, per model (mlp: the built-in MLP on a Fashion-MNIST
# subset; resnet, gpt: the example workloads as train_bench.sh runs them,
# from their job files): Ringleader (real coordinator and workers, -c opt,
# --threads=1) and PyTorch DDP over Gloo (bench/training/train_ddp.py, one rank per
# host, the same model, global batch, optimizer and data, DDP's default 25
# MiB buckets, glibc malloc keeping freed memory as the worker has it), back
# to back, in alternating order from repeat to repeat. At the delays in AXIS_DELAYS,
# Ringleader again with each of the knobs that may win throughput back (one
# at a time, the rest at their defaults):
#   bucket=SIZE      first_bucket_bytes = bucket_cap_bytes = SIZE (default
#                    1 MiB first, 25 MiB after: one bucket for the MLP and
#                    the ResNet, two for the GPT); skipped where the default
#                    run all-reduced a single bucket no larger than SIZE;
#   compression=C    ddp.gradient_compression (fp16, bf16);
#   [bucket=SIZE,]inflight=N   ddp.buckets_in_flight = N (Gloo lanes), at
#                    each of INFLIGHT_BUCKETS ("default": the default
#                    buckets; skipped where the default run all-reduced one
#                    bucket, nothing to overlap); only when the field is in
#                    proto/ringleader/v1/job.proto, else the axis is skipped
#                    with a message. Where it exists, "default" is the
#                    field's default (0).
# samples/s (tokens/s for the GPT): over the epoch after 20 warm-up steps
# (train_watch.py for Ringleader, train_ddp.py for DDP). Ringleader jobs also
# record rank 0's timeline: buckets and bytes all-reduced per step and the
# wait for the last buckets after backward. Each delay starts with the link
# probes (bench/common/tcp_probe.py from worker 1 to worker 2: TCP round trip,
# one stream's rate), and the raw link (no delay line) is probed once.
#   bench/crosshost/crosshost_bench.sh [MODELS] [DELAYS]
# Defaults: MODELS "mlp resnet gpt", DELAYS "0 2 20" (ms one way; 0 goes
# through the delay line too; "none" runs without it, to see its own cost), AXIS_DELAYS "2 20", REPEATS 2, WORKERS 2,
# BUCKETS "256KiB 25MiB", COMPRESSIONS "fp16 bf16", INFLIGHT "1 2 4" at
# INFLIGHT_BUCKETS "256KiB" (each may be empty: no such variants); per-rank
# batches 64 (MLP, as train_bench.sh's global 128 on 2 ranks), 64 (ResNet)
# and 16 (GPT), the job files'; subsets
# for 100 steps (MLP_TRAIN 12800 samples) and 50 (RESNET_TRAIN 6400,
# GPT_TRAIN_TOKENS 102401) per epoch at 2 workers, which keeps the default
# run near 30 minutes on 2 busy cores. Needs root. Writes $RESULTS (default
# bench/results/crosshost.jsonl), then the tables (crosshost_summary.py).
# HOST_SYSCTLS (e.g. "net.ipv4.tcp_slow_start_after_idle=0") are set in
# every host's namespace, for what-ifs about the hosts' TCP.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODELS="${1:-${MODELS:-mlp resnet gpt}}"
DELAYS="${2:-${DELAYS:-0 2 20}}"
AXIS_DELAYS="${AXIS_DELAYS:-2 20}"
REPEATS="${REPEATS:-2}"
WORKERS="${WORKERS:-2}"
BUCKETS="${BUCKETS-256KiB 25MiB}"
COMPRESSIONS="${COMPRESSIONS-fp16 bf16}"
INFLIGHT="${INFLIGHT-1 2 4}"
INFLIGHT_BUCKETS="${INFLIGHT_BUCKETS-256KiB}"
HOST_SYSCTLS="${HOST_SYSCTLS:-}"
MLP_TRAIN="${MLP_TRAIN:-12800}" MLP_TEST="${MLP_TEST:-1000}"
RESNET_TRAIN="${RESNET_TRAIN:-6400}" RESNET_TEST="${RESNET_TEST:-1000}"
GPT_TRAIN_TOKENS="${GPT_TRAIN_TOKENS:-102401}" GPT_TEST_TOKENS="${GPT_TEST_TOKENS:-16385}"
PY=/usr/bin/python3
. bench/common/lib.sh
. bench/crosshost/hosts.sh
need_root bench/crosshost/crosshost_bench.sh
[[ $WORKERS =~ ^[2-9]$ ]] || { echo "WORKERS must be 2..9, got '$WORKERS'" >&2; exit 2; }
for d in $DELAYS $AXIS_DELAYS; do  # AXIS_DELAYS="" runs no axes
  [[ $d =~ ^([0-9]+([.][0-9]+)?|none)$ ]] ||
    { echo "delays are ms >= 0 or none, got '$d'" >&2; exit 2; }
done
for m in $MODELS; do
  [[ $m =~ ^(mlp|resnet|gpt)$ ]] || { echo "unknown model $m (mlp, resnet, gpt)" >&2; exit 2; }
done
build_opt //coordinator:ringleader-coordinator //cli:ringctl \
  //worker:ringleader-worker //bench/crosshost/netdelay:netdelay
OUT="${RESULTS:-bench/results/crosshost.jsonl}"
TMP="$(mktemp -d)"
chmod 755 "$TMP"
cleanup() {
  kill $(jobs -p) 2>/dev/null || true
  delete_hosts
  wait 2>/dev/null || true
  [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"
}
trap cleanup EXIT
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

INFLIGHT_OK=
if grep -q '\bbuckets_in_flight\b' proto/ringleader/v1/job.proto; then
  INFLIGHT_OK=1
else
  echo "skipping the buckets-in-flight axis: DdpSpec.buckets_in_flight is not in" \
    "proto/ringleader/v1/job.proto on this branch" >&2
fi

# bytes SIZE: 256KiB, 25MiB or a plain byte count, in bytes.
bytes() {
  case $1 in
    *KiB) echo $((${1%KiB} << 10)) ;;
    *MiB) echo $((${1%MiB} << 20)) ;;
    *) echo $(($1)) ;;
  esac
}

# ddp_fields VARIANT: the DdpSpec fields of a variant (default, bucket=SIZE,
# compression=C, inflight=N, comma-separated), one FIELD=VALUE a line.
ddp_fields() {
  local knob
  [[ $1 == default ]] && return 0
  for knob in ${1//,/ }; do
    case $knob in
      bucket=*) local b; b=$(bytes "${knob#bucket=}")
        echo "first_bucket_bytes=$b"; echo "bucket_cap_bytes=$b" ;;
      compression=*) local c="${knob#compression=}"
        echo "gradient_compression=GRADIENT_COMPRESSION_${c^^}" ;;
      inflight=*) echo "buckets_in_flight=${knob#inflight=}" ;;
      *) echo "unknown variant knob $knob" >&2; return 1 ;;
    esac
  done
}

# axis_variants: the Ringleader variants run at AXIS_DELAYS.
axis_variants() {
  local v=() x
  for x in $BUCKETS; do v+=("bucket=$x"); done
  for x in $COMPRESSIONS; do v+=("compression=$x"); done
  if [[ -n $INFLIGHT_OK ]]; then
    local b
    for b in $INFLIGHT_BUCKETS; do
      for x in $INFLIGHT; do
        if [[ $b == default ]]; then v+=("inflight=$x"); else v+=("bucket=$b,inflight=$x"); fi
      done
    done
  fi
  echo "${v[@]}"
}

# job_spec FILE VARIANT TIMELINE: the job for $M on $WORKERS ranks at global
# batch $GB with VARIANT's DdpSpec fields, one epoch, AUTO transport.
job_spec() {
  local fields=() f
  while read -r f; do [[ -n $f ]] && fields+=("$f"); done < <(ddp_fields "$2")
  if [[ $M == mlp ]]; then
    cat > "$1" <<SPEC
name: "crosshost-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_IDX path: "$TMP/mlp" shuffle: true }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $((GB / WORKERS))
min_workers: $WORKERS
max_workers: $WORKERS
seed: 1
progress_every_steps: 10
progress_min_interval_ms: 100
evaluate_every_epoch: true
timeline_dir: "$3"
timeline_steps: 200
ddp { cpu_transport: CPU_TRANSPORT_AUTO $(for f in "${fields[@]}"; do printf '%s: %s ' "${f%%=*}" "${f#*=}"; done)}
SPEC
  else
    local args=()
    for f in "${fields[@]}"; do args+=(--ddp "$f"); done
    "$PY" bench/common/example_job.py examples/$M/*.textproto "$1" --data "$TMP/$M" \
      --world "$WORKERS" --batch $((GB / WORKERS)) --epochs 1 --transport auto \
      --timeline "$3" "${args[@]}"
  fi
}

# say WHAT: a timestamped progress line on stderr.
say() { echo "[$(date +%T)] repeat $REP, ${D} ms, $M: $*" >&2; }

# tag_row ROW [crosshost_row.py args...]: ROW tagged with this run's
# configuration, appended to $OUT.
tag_row() {
  local row="$1"; shift
  "$PY" bench/crosshost/crosshost_row.py "$row" "$@" delay_ms="$D" repeat="$REP" \
    workers="$WORKERS" >> "$OUT"
  tail -n 1 "$OUT" | cut -c1-200 >&2
}

# run_ringleader VARIANT: a fresh coordinator on host c, the job, a worker
# per worker host; its line appended to $OUT.
run_ringleader() {
  local v="$1" run="$TMP/r$REP-d$D-$M-rl-${1//[=,]/-}" i pids=()
  mkdir -p "$run"
  say "ringleader $v"
  on_host c "$BIN/coordinator/ringleader-coordinator" \
    --listen="${HOST_IP[c]}:0" --state="$run/state.db" \
    --port_file="$run/port" >"$run/coord.log" 2>&1 &
  local coord=$!
  for _ in $(seq 100); do [[ -s $run/port ]] && break; sleep 0.1; done
  [[ -s $run/port ]] || { cat "$run/coord.log" >&2; return 1; }
  local target="${HOST_IP[c]}:$(cat "$run/port")" job
  job_spec "$run/job.textproto" "$v" "$run/tl"
  job=$(on_host c "$BIN/cli/ringctl" --coordinator="$target" submit \
    --file="$run/job.textproto")
  for i in $(seq "$WORKERS"); do
    on_host "w$i" timeout 600 "$BIN/worker/ringleader-worker" \
      --coordinator="$target" --address="${HOST_IP[w$i]}" --threads=1 \
      --max_jobs=1 >"$run/worker-$i.log" 2>&1 &
    pids+=($!)
  done
  on_host c timeout 600 "$BIN/cli/ringctl" --coordinator="$target" \
    --output=json watch "$job" >"$run/watch.jsonl" 2>/dev/null || true
  wait "${pids[@]}" || true
  kill "$coord" 2>/dev/null; wait "$coord" 2>/dev/null || true
  "$PY" bench/common/train_watch.py "$run/watch.jsonl" ringleader "$M" "$WORKERS" \
    "$GB" "$TOKENS" "$REP" >"$run/row.json" || true
  tag_row "$run/row.json" --timeline "$run/tl" variant="$v"
  [[ $v == default ]] && DEFAULT_ROW=$(tail -n 1 "$OUT")
  return 0
}

# same_as_default VARIANT: true when the default run at this delay
# all-reduced one bucket per step and VARIANT cannot change that: bucket=SIZE
# with SIZE at least that bucket's bytes (the same bucket plan), or
# inflight=N at the default buckets (one bucket, nothing to overlap).
same_as_default() {
  local size=0
  case $1 in
    bucket=*,*) return 1 ;;
    bucket=*) size=$(bytes "${1#bucket=}") ;;
    inflight=*) ;;
    *) return 1 ;;
  esac
  "$PY" -c 'import json, sys
r, size = json.loads(sys.argv[1]), int(sys.argv[2])
sys.exit(0 if r.get("buckets_per_step") == 1 and
         0 < r.get("bytes_per_step", 0) <= (size or float("inf")) else 1)' \
    "${DEFAULT_ROW:-{\}}" "$size"
}

# run_ddp: PyTorch DDP, rank r on worker host r+1 (rank 0 the master, on a
# port of its own per run), glibc malloc told to keep freed memory (the
# setting ringleader-worker applies itself, worker/malloc_tuning.h: without
# it eager PyTorch spends 2.2-2.4x the time on the ResNet's step refaulting
# activation buffers, bench/README.md, so the comparison would be about the
# allocator rather than the network); rank 0's line appended to $OUT.
run_ddp() {
  local run="$TMP/r$REP-d$D-$M-ddp" r pids=() data=()
  mkdir -p "$run"
  say "pytorch ddp"
  DDP_PORT=$((DDP_PORT + 1))
  if [[ $M == mlp ]]; then
    data=(--fashion_dir "$TMP/mlp")
  else
    job_spec "$run/job.textproto" default "$run/tl"
    data=(--job "$run/job.textproto")
  fi
  for r in $(seq 0 $((WORKERS - 1))); do
    on_host "w$((r + 1))" env GLOO_SOCKET_IFNAME=eth0 \
      MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 \
      timeout 600 "$PY" bench/training/train_ddp.py --model "$M" --world "$WORKERS" \
      --global_batch "$GB" --epochs 1 --skip_eval \
      --impl pytorch-ddp-kept-memory --repeat "$REP" --rank "$r" \
      --master "${HOST_IP[w1]}:$DDP_PORT" "${data[@]}" \
      >"$run/rank$r.json" 2>"$run/rank$r.log" &
    pids+=($!)
  done
  wait "${pids[@]}" || echo "pytorch ddp $M at $D ms: a rank failed (see $run)" >&2
  tag_row "$run/rank0.json" variant=default
}

# probe_links LABEL: TCP round trip and one stream's rate from worker 1 to
# worker 2, appended to $OUT as {"rtt_probe": ...} and {"link_probe": ...}.
probe_links() {
  local mode server
  for mode in rtt send; do
    rm -f "$TMP/probe-port"
    on_host w2 timeout 120 "$PY" bench/common/tcp_probe.py \
      "$([[ $mode == rtt ]] && echo echo || echo serve)" "${HOST_IP[w2]}" \
      "$TMP/probe-port" &
    server=$!
    for _ in $(seq 100); do [[ -s $TMP/probe-port ]] && break; sleep 0.1; done
    on_host w1 timeout 120 "$PY" bench/common/tcp_probe.py "$mode" "${HOST_IP[w2]}" \
      "$TMP/probe-port" "$1" | "$PY" -c 'import json, sys
r = json.loads(sys.stdin.read())
next(iter(r.values())).update(delay_ms=sys.argv[1], repeat=int(sys.argv[2]))
print(json.dumps(r))' "$1" "$REP" >> "$OUT"
    wait "$server" || true
  done
}

# stop_delays: the delay lines stop; their counters appended to $OUT.
stop_delays() {
  local h
  for h in "${HOSTS[@]}"; do
    [[ -n ${DELAY_PID[$h]:-} ]] || continue
    stop_delay "$h"
    "$PY" -c 'import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
r["netdelay"].update(host=sys.argv[2], repeat=int(sys.argv[3]))
print(json.dumps(r))' "$TMP/netdelay-$h.log" "$h" "$REP" >> "$OUT" ||
      echo "netdelay on $h left no counters" >&2
  done
}

# set_delay D: every host's ingress through a fresh netdelay holding D ms
# ("none": no delay line at all).
set_delay() {
  local h
  stop_delays
  [[ $1 == none ]] && return 0
  for h in "${HOSTS[@]}"; do start_delay "$h" "$1" "$TMP/netdelay-$h.log"; done
}

# run_pair: Ringleader and DDP at this delay, the order alternating.
run_pair() {
  if ((REP % 2)); then run_ringleader default; run_ddp
  else run_ddp; run_ringleader default; fi
}

hosts=(c=1)
for i in $(seq "$WORKERS"); do hosts+=("w$i=$((10 + i))"); done
make_hosts "rlx$$" 198.18.214 "${hosts[@]}"
for h in "${HOSTS[@]}"; do
  for s in $HOST_SYSCTLS; do ip netns exec "${HOST_NS[$h]}" sysctl -qw "$s"; done
done
for M in $MODELS; do prepare_example "$M"; done
: > "$OUT"
"$PY" -c 'import json, os, sys, time
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
            if l.startswith("model name")), "?")
print(json.dumps({"conditions": {"time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                  "cpu": cpu, "cores": os.cpu_count(), "loadavg": os.getloadavg(),
                  "workers": int(sys.argv[1]), "delays_ms": sys.argv[2].split(),
                  "repeats": int(sys.argv[3]), "inflight_axis": sys.argv[4] == "1",
                  "commit": sys.argv[5], "host_sysctls": sys.argv[6].split()}}))' \
  "$WORKERS" "$DELAYS" "$REPEATS" "${INFLIGHT_OK:-0}" \
  "$(git rev-parse HEAD 2>/dev/null || echo unknown)" "$HOST_SYSCTLS" >> "$OUT"
REP=1 D=raw M=-
probe_links raw
DDP_PORT=29500
for REP in $(seq "$REPEATS"); do
  for D in $DELAYS; do
    [[ $D == none ]] && continue  # the raw probe above
    set_delay "$D"
    probe_links "$D"
  done
  # Each model's delays back to back, so that its ratios to 0 ms compare
  # jobs minutes apart on this shared machine, not a whole repeat apart.
  for M in $MODELS; do
    # Per-rank batches: train_bench.sh's MLP (128 over 2 ranks) and the
    # example job files'.
    TOKENS=1 GB=$((64 * WORKERS))
    if [[ $M == gpt ]]; then
      TOKENS=$(sed -n 's/^ *block_size: *//p' examples/gpt/*.textproto)
      GB=$((16 * WORKERS))
    fi
    for D in $DELAYS; do
      set_delay "$D"
      run_pair
      if [[ " $AXIS_DELAYS " == *" $D "* ]]; then
        for v in $(axis_variants); do
          if same_as_default "$v"; then
            say "$v skipped: the default all-reduces one bucket, which $v does not change"
            continue
          fi
          run_ringleader "$v"
        done
      fi
      delays_alive
    done
  done
done
stop_delays
"$PY" bench/crosshost/crosshost_summary.py "$OUT"

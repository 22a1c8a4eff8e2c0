# Shared by the benchmark scripts that drive the real binaries. Source it from
# the repository root.

# Optimized binaries (-c opt, also .bazelrc's default; said here so that the
# figures never depend on it), built without moving the bazel-bin symlink
# other builds use. Sets BIN to their directory.
build_opt() {
  local opt=(-c opt --symlink_prefix=/)
  bazel build "${opt[@]}" "$@" >/dev/null 2>&1 ||
    { echo "bazel build -c opt $* failed (run it to see why)" >&2; return 1; }
  BIN="$(bazel info "${opt[@]}" bazel-bin 2>/dev/null)"
}

# start_coordinator DIR: a coordinator on a free loopback port with its state
# and log in DIR. Sets COORD (its pid) and TARGET (host:port).
start_coordinator() {
  local dir="$1"
  "$BIN/coordinator/ringleader-coordinator" --listen=127.0.0.1:0 \
    --state="$dir/state.db" --port_file="$dir/port" >"$dir/coord.log" 2>&1 &
  COORD=$!
  for _ in $(seq 100); do [[ -s "$dir/port" ]] && break; sleep 0.1; done
  [[ -s "$dir/port" ]] || { echo "coordinator did not start" >&2; cat "$dir/coord.log" >&2; return 1; }
  TARGET="127.0.0.1:$(cat "$dir/port")"
}

# run_job FILE WORKERS WATCH LOGS [SUBMIT FLAGS...]: submits FILE (plus any
# `ringctl submit` flags, and those in $SUBMIT_FLAGS, e.g.
# --balance_batches) to $TARGET, starts WORKERS real workers
# (--threads=1, one job each, plus the flags in $WORKER_FLAGS; worker r
# pinned to the r-th CPU of $WORKER_CPUS when set, e.g. "0 1"; $WORKER_BIN
# in place of this tree's worker when set, e.g. another commit's; logs
# LOGS-1.log ...), writes `ringctl watch
# --output=json` of the job to WATCH until it ends, and waits for the
# workers. Sets JOB. The benchmarks summarize WATCH with train_watch.py.
run_job() {
  local file="$1" workers="$2" watch="$3" logs="$4" pids=() r
  shift 4
  # shellcheck disable=SC2086 # $SUBMIT_FLAGS: words, none with spaces.
  JOB=$("$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$file" "$@" ${SUBMIT_FLAGS:-})
  local cpus=(${WORKER_CPUS:-})
  for r in $(seq "$workers"); do
    local pin=()
    ((${#cpus[@]})) && pin=(taskset -c "${cpus[(r - 1) % ${#cpus[@]}]}")
    # shellcheck disable=SC2086 # $WORKER_FLAGS: words, none with spaces.
    "${pin[@]}" "${WORKER_BIN:-$BIN/worker/ringleader-worker}" --coordinator="$TARGET" --threads=1 \
      --max_jobs=1 ${WORKER_FLAGS:-} >"$logs-$r.log" 2>&1 &
    pids+=($!)
  done
  "$BIN/cli/ringctl" --coordinator="$TARGET" --output=json watch "$JOB" \
    >"$watch" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}

# limit_loops N JOBFILE OUT [FLAGS...]: N ringleader-compute-limit processes
# side by side (batch $B), each in a 1-rank job of its own submitted from
# JOBFILE to $TARGET, their measured loops started together once all warmed
# up (ready and go files in $RUN); loop i writes OUT-i.json and OUT-i.log,
# "{i}" in FLAGS becomes i, and loop i is pinned to the i-th CPU of
# $WORKER_CPUS when set (as run_job pins worker i). Returns non-zero when a
# loop failed.
limit_loops() {
  local n="$1" job="$2" out="$3" pids=() i
  shift 3
  local cpus=(${WORKER_CPUS:-})
  rm -f "$RUN"/ready-* "$RUN/go"
  for i in $(seq "$n"); do
    "$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$job" >/dev/null
  done
  for i in $(seq "$n"); do
    local sync=() pin=()
    ((n > 1)) && sync=(--ready_file="$RUN/ready-$i" --go_file="$RUN/go")
    ((${#cpus[@]})) && pin=(taskset -c "${cpus[(i - 1) % ${#cpus[@]}]}")
    "${pin[@]}" "$BIN/bench/training/ringleader-compute-limit" --coordinator="$TARGET" \
      --batch="$B" "${@//\{i\}/$i}" "${sync[@]}" >"$out-$i.json" 2>"$out-$i.log" &
    pids+=($!)
  done
  if ((n > 1)); then
    for _ in $(seq 3000); do
      (($(ls "$RUN"/ready-* 2>/dev/null | wc -l) == n)) && break
      kill -0 "${pids[@]}" 2>/dev/null || break
      sleep 0.1
    done
    touch "$RUN/go"
  fi
  wait "${pids[@]}"
}

# The example workloads (examples/resnet, examples/gpt) for the benchmarks
# that train them; need $PY, $TMP and the subset sizes $RESNET_TRAIN,
# $RESNET_TEST, $GPT_TRAIN_TOKENS, $GPT_TEST_TOKENS (and for mlp
# $MLP_TRAIN, $MLP_TEST).
# The subsets' sizes default to train_bench.sh's, unless the script (before
# it sources this file) or the caller set others.
: "${RESNET_TRAIN:=12800}" "${RESNET_TEST:=1000}"
: "${GPT_TRAIN_TOKENS:=204801}" "${GPT_TEST_TOKENS:=16385}"
# prepare_example M: examples/M/prepare.py into $TMP/M, cut to the subset;
# for mlp, the first samples of Fashion-MNIST's IDX files (the built-in
# MLP's dataset) into $TMP/mlp.
prepare_example() {
  local dir="$TMP/$1"
  [[ -d $dir ]] && return 0
  mkdir -p "$dir"
  case $1 in
    mlp)
      "$PY" - "$dir" "$MLP_TRAIN" "$MLP_TEST" <<'PY'
import gzip, sys
out, counts = sys.argv[1], {"train": int(sys.argv[2]), "t10k": int(sys.argv[3])}
for split, n in counts.items():
    for kind, dims in (("images-idx3", 3), ("labels-idx1", 1)):
        name = f"{split}-{kind}-ubyte.gz"
        raw = gzip.open(f"/usr/share/datasets/fashion-mnist/{name}").read()
        head = 4 + 4 * dims
        per = 1
        for i in range(1, dims):
            per *= int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big")
        n = min(n, int.from_bytes(raw[4:8], "big"))
        with gzip.open(f"{out}/{name}", "wb", compresslevel=1) as f:
            f.write(raw[:4] + n.to_bytes(4, "big") + raw[8:head] + raw[head:head + n * per])
PY
      ;;
    resnet)
      "$PY" examples/resnet/prepare.py --out "$dir" --limit-train "$RESNET_TRAIN" \
        --limit-test "$RESNET_TEST" >"$dir/prepare.log" ;;
    gpt)
      "$PY" examples/gpt/prepare.py --out "$dir" >"$dir/prepare.log"
      # Raw uint16 tokens: the first N of each split.
      truncate -s $((2 * GPT_TRAIN_TOKENS)) "$dir/train.bin"
      truncate -s $((2 * GPT_TEST_TOKENS)) "$dir/test.bin" ;;
  esac
}

# example_spec FILE WORKERS BATCH TRANSPORT [PRECISION]: the example job M's
# file for this configuration, one epoch, its data in $TMP/$M; with RECIPE
# set, the training recipe of a modern DDP script for M (example_job.py's
# RECIPES: nanoGPT's for the GPT, torchvision's for the ResNet).
example_spec() {
  local extra=()
  [[ -n ${5:-} ]] && extra=(--precision "$5")
  if [[ -n ${RECIPE:-} ]]; then
    case $M in
      gpt) extra+=(--recipe nanogpt) ;;
      resnet) extra+=(--recipe torchvision) ;;
    esac
  fi
  "$PY" bench/common/example_job.py examples/$M/*.textproto "$1" --data "$TMP/$M" \
    --world "$2" --batch "$3" --epochs 1 --transport "$4" "${extra[@]}"
}

# Two emulated hosts for the benchmarks that run Gloo across a link: network
# namespaces $NS_A and $NS_B (the caller names them after its pid) joined by a
# veth pair, addresses $IP_A and $IP_B (from the benchmarking range
# 198.18.0.0/15), no default route, nothing in the root namespace. The caller
# sets NETNS= and calls delete_netns on exit.
# make_netns: creates them, once (root only).
make_netns() {
  [[ -n $NETNS ]] && return 0
  [[ $EUID -eq 0 ]] || { echo "links other than lo need root (network namespaces)" >&2; exit 2; }
  NETNS=1
  ip netns add "$NS_A"
  ip netns add "$NS_B"
  ip link add "$NS_A" type veth peer name "$NS_B"
  ip link set "$NS_A" netns "$NS_A"
  ip link set "$NS_B" netns "$NS_B"
  ip -n "$NS_A" addr add "$IP_A/30" dev "$NS_A"
  ip -n "$NS_B" addr add "$IP_B/30" dev "$NS_B"
  for ns in "$NS_A" "$NS_B"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$ns" up
  done
}

# set_link LINK: where the two "hosts" run (A_RUN, B_RUN: command prefixes)
# and their addresses (ADDR_A, ADDR_B). LINK: lo (both on 127.0.0.1, no
# namespace), veth (the pair, no limit), or a rate (tc tbf on both ends of
# the pair, e.g. 1gbit).
set_link() {
  if [[ $1 == lo ]]; then
    A_RUN=() B_RUN=() ADDR_A=127.0.0.1 ADDR_B=127.0.0.1
    return 0
  fi
  make_netns
  A_RUN=(ip netns exec "$NS_A") B_RUN=(ip netns exec "$NS_B")
  ADDR_A=$IP_A ADDR_B=$IP_B
  for ns in "$NS_A" "$NS_B"; do
    ip netns exec "$ns" tc qdisc del dev "$ns" root 2>/dev/null || true
    if [[ $1 != veth ]]; then
      ip netns exec "$ns" tc qdisc add dev "$ns" root tbf rate "$1" \
        burst 256kb latency 50ms
    fi
  done
}

# delete_netns: removes make_netns's namespaces, if it made them.
delete_netns() {
  if [[ -n ${NETNS:-} ]]; then
    ip netns del "$NS_A" 2>/dev/null || true
    ip netns del "$NS_B" 2>/dev/null || true
  fi
}

# cleanup_netns_run: the EXIT trap of a script that made namespaces with
# make_netns: stops its background jobs, then removes the namespaces and
# $TMP (kept with KEEP_TMP=1).
cleanup_netns_run() {
  kill $(jobs -p) 2>/dev/null || true
  wait 2>/dev/null || true
  delete_netns
  [[ -n "${KEEP_TMP:-}" ]] || rm -rf "$TMP"
}

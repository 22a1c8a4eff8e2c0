# Emulated hosts for the cross-host benchmark (bench/crosshost/crosshost_bench.sh):
# each "host" a network namespace of its own with one interface (eth0) on a
# bridge that lives in a namespace of its own, addresses from the
# benchmarking range 198.18.0.0/15, no default route, nothing attached to
# the root namespace. Processes run on a host with a private IPC namespace
# and /dev/shm (on_host), so that nothing sees another host's shared memory
# and the workers' transport is Gloo over TCP. A host's ingress can be
# delayed in user space (start_delay: bench/crosshost/netdelay on an NFQUEUE; this
# kernel has no netem). Needs root; source it from the repository root,
# after bench/common/lib.sh (build_opt sets BIN).

declare -A HOST_NS HOST_IP DELAY_PID
HOSTS=()
HOSTS_PREFIX=

# need_root WHAT: stop with a clear message unless root.
need_root() {
  [[ $EUID -eq 0 ]] && return 0
  echo "$1 needs root: it makes network namespaces, a bridge and packet-filter rules" >&2
  exit 2
}

# make_hosts PREFIX SUBNET NAME=HOSTBYTE...: the bridge namespace PREFIX-br
# and a host namespace PREFIX-NAME at SUBNET.HOSTBYTE/24 per argument, e.g.
# make_hosts rlx123 198.18.214 c=1 w1=11. Sets HOSTS, HOST_NS, HOST_IP.
make_hosts() {
  HOSTS_PREFIX="$1"
  local subnet="$2" arg name ns br="$1-br"
  shift 2
  ip netns add "$br"
  ip -n "$br" link set lo up
  ip -n "$br" link add br0 type bridge
  ip -n "$br" link set br0 up
  for arg in "$@"; do
    name="${arg%%=*}" ns="$HOSTS_PREFIX-${arg%%=*}"
    HOSTS+=("$name") HOST_NS[$name]="$ns" HOST_IP[$name]="$subnet.${arg#*=}"
    ip netns add "$ns"
    ip link add eth0 netns "$ns" type veth peer name "p-$name" netns "$br"
    ip -n "$br" link set "p-$name" master br0 up
    ip -n "$ns" addr add "${HOST_IP[$name]}/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
  done
}

# on_host NAME CMD...: CMD on host NAME with a private IPC namespace and
# /dev/shm. The pid stays CMD's (every step execs), so `kill $!` reaches it.
on_host() {
  local ns="${HOST_NS[$1]}"
  shift
  ip netns exec "$ns" unshare --ipc --mount --propagation private \
    sh -c 'mount -t tmpfs -o size=1g,mode=1777 ringleader-shm /dev/shm && exec "$@"' \
    on_host "$@"
}

# start_delay NAME DELAY_MS LOG: host NAME's ingress (all but loopback)
# through netdelay, holding each packet DELAY_MS; its counters go to LOG
# when stopped. Real-time priority when allowed: the emulated wire must not
# wait for the hosts' training threads for a core.
start_delay() {
  local name="$1" ns="${HOST_NS[$1]}" ready="$3.ready" prio=()
  rm -f "$ready"
  chrt -f 10 true 2>/dev/null && prio=(chrt -f 10)
  ip netns exec "$ns" "${prio[@]}" "$BIN/bench/crosshost/netdelay/netdelay" --queue=0 \
    --delay_ms="$2" --ready_file="$ready" >"$3" 2>&1 &
  DELAY_PID[$name]=$!
  for _ in $(seq 100); do [[ -s $ready ]] && break; sleep 0.1; done
  [[ -s $ready ]] || { echo "netdelay on $name did not start:" >&2; cat "$3" >&2; return 1; }
  # Queued packets wait for netdelay; with none bound the kernel drops
  # them, so a dead delay line cannot go unnoticed as an undelayed link.
  ip netns exec "$ns" iptables -C INPUT ! -i lo -j NFQUEUE --queue-num 0 2>/dev/null ||
    ip netns exec "$ns" iptables -A INPUT ! -i lo -j NFQUEUE --queue-num 0
}

# stop_delay NAME: netdelay on host NAME ends (it accepts what it holds and
# prints its counters); the queue rule goes too.
stop_delay() {
  local pid="${DELAY_PID[$1]:-}"
  [[ -n $pid ]] || return 0
  ip netns exec "${HOST_NS[$1]}" iptables -D INPUT ! -i lo -j NFQUEUE --queue-num 0 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "DELAY_PID[$1]"
}

# delays_alive: every running netdelay is still there.
delays_alive() {
  local name
  for name in "${!DELAY_PID[@]}"; do
    kill -0 "${DELAY_PID[$name]}" 2>/dev/null || { echo "netdelay on $name died" >&2; return 1; }
  done
}

# delete_hosts: stops the delay lines and deletes every namespace made.
delete_hosts() {
  local name
  for name in "${!DELAY_PID[@]}"; do stop_delay "$name"; done
  for name in "${HOSTS[@]}"; do ip netns del "${HOST_NS[$name]}" 2>/dev/null || true; done
  [[ -n $HOSTS_PREFIX ]] && ip netns del "$HOSTS_PREFIX-br" 2>/dev/null || true
}

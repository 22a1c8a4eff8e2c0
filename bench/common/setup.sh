#!/bin/bash
# What the benchmarks need beyond scripts/setup.sh: matplotlib for the plots
# (Debian's, for /usr/bin/python3); for the cross-host benchmark
# (bench/crosshost/crosshost_bench.sh) the namespace, bridge and packet-filter tools:
# iproute2 (ip, bridge), iptables (its NFQUEUE target feeds bench/crosshost/netdelay;
# this kernel has no nft `queue` statement) and util-linux's unshare and
# chrt; and mate-backgrounds' photographs for the image loader benchmark
# (bench/training/image_bench.sh). Run as root (or with sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=()
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || missing+=(python3-matplotlib)
# mate-backgrounds: photographs at their native sizes for bench/training/image_bench.sh.
for p in iproute2 iptables util-linux mate-backgrounds; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  $SUDO apt-get update
  $SUDO apt-get install -y "${missing[@]}"
fi

#!/bin/bash
# What the benchmarks need beyond scripts/setup.sh: matplotlib for the plots
# (Debian's, for /usr/bin/python3). Run as root (or with sudo).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  $SUDO apt-get update
  $SUDO apt-get install -y python3-matplotlib
fi

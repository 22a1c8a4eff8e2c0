#!/usr/bin/env bash
# Installs everything Ringleader needs from Debian's packages (run as root;
# uses sudo when not). Idempotent: a machine that has them skips the install.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-platforms
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libgoogle-glog-dev
  libtorch-dev libopenblas0-pthread libgloo-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3 zlib1g-dev libsystemd-dev
  libcpp-httplib-dev libcli11-dev nlohmann-json3-dev
  dataset-fashion-mnist python3-torch python3-numpy fortunes
  clang libclang-rt-dev
  openssl
  python3-yaml systemd
  iproute2 nftables
  libnetfilter-queue-dev
  slurm-wlm munge
)

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"

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
  libjpeg62-turbo-dev libspng-dev python3-torchvision python3-pil
  python3-grpcio python3-protobuf python3-tqdm python3-pytest python3-xxhash
  clang libclang-rt-dev
  openssl
  python3-yaml systemd
  iproute2 nftables
  libnetfilter-queue-dev
  slurm-wlm munge
  chromium chromium-driver
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

# The Python package (python/ringleader): its gRPC stubs generated from
# proto/ (git-ignored; regenerated on import when a .proto changes), and a
# .pth file in Debian's site directory for local installs, so
# `/usr/bin/python3 -c "import ringleader"` works from any directory.
repo="$(cd "$(dirname "$0")/.." && pwd)"
/usr/bin/python3 "$repo/python/ringleader/_stubs.py"
site_dir="${RINGLEADER_SITE_DIR:-$(/usr/bin/python3 -c \
  'import site; print(site.getsitepackages()[0])')}"
pth="$site_dir/ringleader.pth"
if [[ "$(cat "$pth" 2>/dev/null)" != "$repo/python" ]]; then
  $SUDO mkdir -p "$site_dir"
  echo "$repo/python" | $SUDO tee "$pth" >/dev/null
fi
# addsitedir reads the .pth as the interpreter's start does.
(cd / && /usr/bin/python3 -c "import site; site.addsitedir('$site_dir'); \
  import ringleader") ||
  { echo "setup: import ringleader failed"; exit 1; }
echo "setup: import ringleader works (python/ringleader, via $pth)"

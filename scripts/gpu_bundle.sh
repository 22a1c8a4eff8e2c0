#!/usr/bin/env bash
# Prepares, on a development machine (Bazel, Debian 12 packages), what
# scripts/gpu_check.sh needs on the GPU machine, which has neither: writes
# gpu_bundle/ (ignored by git), to be sent with the run tool's carry.
#   bash scripts/gpu_bundle.sh
# Contents (gpu_bundle/README.txt says the same):
#   manifest/cuda/*.json  per target of scripts/gpu_check_targets, Bazel's own
#                         compile units and link line (scripts/gpu_manifest.py)
#                         of the graph a CUDA LibTorch selects (NCCL backend);
#   manifest/cpu/*.json   the same for the graph built here (the rehearsal);
#   gen/                  the generated proto sources (bazel-bin/proto/...);
#   include/              the headers of every Debian package those units
#                         include (gRPC, Protobuf, Abseil, Gloo, glog, ...);
#   lib/                  the libraries their link lines name (-lgrpc++ ...),
#                         with the SONAME and the linker's name, and their
#                         dependencies, glibc and the C++ runtime excepted;
#   lib-stdcxx/           Debian's libstdc++ and libgcc_s (used on the GPU
#                         machine only where its own are older);
#   glibc/                Debian's glibc (loader, libc, libm, ...), to run
#                         through where the GPU machine's glibc is older;
#   bin/                  ringleader-coordinator and ringctl (-c opt; no
#                         LibTorch), the tests' and jobs' control plane;
#   data/                 small subsets of the three workloads (mlp: IDX
#                         Fashion-MNIST; resnet, gpt: prepare.py's output);
#   info.json             glibc the bundle needs, the commit, the sizes.
# The CUDA graph is read with a stand-in LibTorch (an empty directory whose
# lib/libtorch_cuda.so exists: tools/libtorch_configure.bzl's test), for
# `bazel aquery` only; nothing is built against it, and the next Bazel command
# without RINGLEADER_LIBTORCH reconfigures the normal LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
B=$ROOT/gpu_bundle
PY=/usr/bin/python3 # Debian's, with python3-torch 1.13 and numpy
# The control plane, built and carried as is.
BUNDLED_BINARIES=(//coordinator:ringleader-coordinator //cli:ringctl)
# Subset sizes: one short epoch each on the GPU (and on 2 CPU cores here).
MLP_TRAIN=${MLP_TRAIN:-12800} MLP_TEST=${MLP_TEST:-2000}
RESNET_TRAIN=${RESNET_TRAIN:-6400} RESNET_TEST=${RESNET_TEST:-1000}
GPT_TRAIN_TOKENS=${GPT_TRAIN_TOKENS:-204801} GPT_TEST_TOKENS=${GPT_TEST_TOKENS:-16385}
# What the tree plus the bundle may weigh (the run tool carries 64 MiB).
LIMIT_MB=56

log() { echo "gpu_bundle: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The targets of scripts/gpu_check_targets as "KIND LABEL" lines.
read_targets() {
  grep -v '^\s*\(#\|$\)' scripts/gpu_check_targets
}

# aquery_manifests DIR [bazel flags...]: one manifest per target into DIR.
aquery_manifests() {
  local dir="$1" kind label name
  shift
  mkdir -p "$dir"
  while read -r kind label; do
    name=${label##*:}
    if ! bazel aquery -c opt "$@" \
      "mnemonic(\"CppCompile|CppLink\", deps($label))" --output=jsonproto \
      --include_param_files >"$B/tmp/aquery.json" 2>"$B/tmp/aquery.err"; then
      # A target that exists only in the other graph (a CUDA-only test in
      # the CPU graph) is left out of this one, said so.
      log "$label: not in this graph ($(tail -1 "$B/tmp/aquery.err")); skipped in $dir"
      continue
    fi
    python3 scripts/gpu_manifest.py "$B/tmp/aquery.json" "$label" "$kind" "$dir/$name.json"
  done < <(read_targets)
}

# A LibTorch directory that tools/libtorch_configure.bzl takes for a CUDA one.
make_fake_libtorch() {
  local f="$B/tmp/fake-libtorch"
  mkdir -p "$f/include/ATen" "$f/include/torch/csrc/api/include/torch" "$f/lib" \
    "$f/share/cmake/Torch" "$f/include/c10/macros"
  touch "$f/include/ATen/ATen.h" "$f/include/torch/csrc/api/include/torch/torch.h"
  # What the configure rule may read: a pip build's c10 macros (no
  # C10_USE_GLOG) and version. gpu_check.sh decides both from the real one.
  echo '#define C10_BUILD_SHARED_LIBS' >"$f/include/c10/macros/cmake_macros.h"
  printf '#define TORCH_VERSION_MAJOR 2\n#define TORCH_VERSION_MINOR 11\n#define TORCH_VERSION_PATCH 0\n' \
    >"$f/include/torch/csrc/api/include/torch/version.h"
  for l in torch torch_cpu torch_cuda c10 c10_cuda; do touch "$f/lib/lib$l.so"; done
  echo 'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=1")' >"$f/share/cmake/Torch/TorchConfig.cmake"
  echo "$f"
}

build_and_describe() {
  # Built here: the targets of the CPU graph (a CUDA-only test is not one).
  local labels=() kind label
  while read -r kind label; do
    if bazel query "$label" >/dev/null 2>&1; then
      labels+=("$label")
    else
      log "$label: not in the CPU graph; only its CUDA manifest is made (if it exists there)"
    fi
  done < <(read_targets)
  log "bazel build -c opt ${labels[*]} ${BUNDLED_BINARIES[*]}"
  bazel build -c opt "${labels[@]}" "${BUNDLED_BINARIES[@]}" >"$B/tmp/build.log" 2>&1 ||
    { tail -30 "$B/tmp/build.log" >&2; die "bazel build failed"; }
  log "manifests of the CPU graph (the rehearsal)"
  aquery_manifests "$B/manifest/cpu"
  log "manifests of the CUDA graph (stand-in LibTorch; aquery only)"
  local fake
  fake=$(make_fake_libtorch)
  RINGLEADER_LIBTORCH=$fake aquery_manifests "$B/manifest/cuda"
  # Back to the normal configuration (re-runs the repository rule).
  bazel build -c opt --nobuild //worker:ringleader-worker >/dev/null 2>&1 || true
  grep -q cuda_backend_nccl.cc "$B/manifest/cuda/ringleader-worker.json" ||
    die "the CUDA graph's worker has no cuda_backend_nccl.cc: did tools/*.bzl change how TORCH_CUDA is chosen?"
  if grep -q cuda_backend_nccl.cc "$B/manifest/cpu/ringleader-worker.json"; then
    die "the CPU graph's worker has the NCCL backend: is RINGLEADER_LIBTORCH set?"
  fi
}

copy_generated() {
  local bin
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  mkdir -p "$B/gen/proto/ringleader/v1"
  # -p: their times stay Bazel's, and the headers' (below) Debian's, so
  # that a build dir reused with a new bundle only rebuilds what changed.
  cp -p "$bin"/proto/ringleader/v1/*.pb.{h,cc} "$B/gen/proto/ringleader/v1/"
  chmod u+w -R "$B/gen"
}

# The Debian packages whose headers the units include: read from the
# dependency files Bazel wrote for the objects of the CPU graph, less glibc's,
# the compiler's and LibTorch's (the GPU machine has its own).
copy_headers() {
  local bin
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  python3 - "$bin" "$B"/manifest/cpu/*.json >"$B/tmp/headers.txt" <<'PY'
import json, os, sys
bin_dir, headers = sys.argv[1], set()
for m in sys.argv[2:]:
    for u in json.load(open(m))["units"]:
        d = os.path.join(bin_dir, u["obj"].replace("@GEN@/", "")[:-2] + ".d")
        if os.path.exists(d):
            words = open(d).read().replace("\\\n", " ").split()
            headers.update(w for w in words if w.startswith("/usr/include/"))
print("\n".join(sorted(headers)))
PY
  local pkgs
  pkgs=$(xargs -r dpkg -S <"$B/tmp/headers.txt" 2>/dev/null | cut -d: -f1 | tr ',' '\n' |
    sed 's/ //g' | sort -u |
    grep -v -x -E 'libc6-dev(:amd64)?|linux-libc-dev(:amd64)?|libstdc\+\+-[0-9]+-dev(:amd64)?|libtorch-dev(:amd64)?|libgcc-[0-9]+-dev(:amd64)?' || true)
  log "headers of: $(echo $pkgs)"
  echo "$pkgs" >"$B/tmp/header-packages.txt"
  local p f
  for p in $pkgs; do
    dpkg -L "$p" | grep '^/usr/include/' | while read -r f; do
      [[ -f $f ]] || continue
      mkdir -p "$B/include/$(dirname "${f#/usr/include/}")"
      cp -pL "$f" "$B/include/${f#/usr/include/}"
    done
  done
}

# is_excluded SONAME: glibc, the C++ runtime, LibTorch and CUDA are not
# carried in lib/ (the GPU machine has LibTorch, CUDA and NCCL of its own).
is_glibc() { [[ $1 =~ ^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|ld-linux-x86-64)\.so ]]; }
is_cxxrt() { [[ $1 =~ ^(libstdc\+\+|libgcc_s)\.so ]]; }
is_gpu_side() { [[ $1 =~ ^(libtorch|libc10|libnccl|libcudart|libcuda)[._] ]]; }

# copy_lib PATH: PATH into the bundle (lib/, lib-stdcxx/ or glibc/) under its
# SONAME, plus the linker's name (libfoo.so), then its dependencies.
copy_lib() {
  local path="$1" soname dest base
  soname=$(objdump -p "$path" 2>/dev/null | awk '/SONAME/ {print $2}')
  [[ -n $soname ]] || soname=$(basename "$path")
  is_gpu_side "$soname" && return 0
  dest=lib
  is_cxxrt "$soname" && dest=lib-stdcxx
  is_glibc "$soname" && dest=glibc
  [[ -e $B/$dest/$soname ]] && return 0
  mkdir -p "$B/$dest"
  cp -L "$path" "$B/$dest/$soname"
  base=${soname%%.so*}.so
  [[ $dest == lib && $base != "$soname" ]] && ln -sf "$soname" "$B/$dest/$base"
  [[ $dest == glibc ]] && return 0
  local dep
  while read -r dep; do copy_lib "$dep"; done < <(ldd "$path" | awk '$3 ~ /^\// {print $3}')
}

# The libraries the link lines name, and the carried binaries' libraries.
copy_libs() {
  local l f
  for l in $(python3 -c 'import json, sys
for m in sys.argv[1:]:
    for a in json.load(open(m))["link"]:
        if a.startswith("-l"): print(a[2:])' "$B"/manifest/*/*.json | sort -u); do
    is_glibc "lib$l.so" || is_cxxrt "lib$l.so" || is_gpu_side "lib$l.so" && continue
    f=$(gcc -print-file-name="lib$l.so")
    if [[ $f == /* && -e $f ]]; then
      copy_lib "$(readlink -f "$f")"
    else
      # Only a static archive (Debian's GoogleTest): carried as is.
      f=$(gcc -print-file-name="lib$l.a")
      [[ $f == /* && -e $f ]] || die "-l$l: neither lib$l.so nor lib$l.a found"
      mkdir -p "$B/lib" && cp -L "$f" "$B/lib/"
    fi
  done
  local bin label
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  mkdir -p "$B/bin"
  for label in "${BUNDLED_BINARIES[@]}"; do
    f="$bin/$(echo "${label#//}" | tr : /)"
    cp "$f" "$B/bin/" && chmod u+w "$B/bin/$(basename "$f")"
    while read -r l; do copy_lib "$l"; done < <(ldd "$f" | awk '$3 ~ /^\// {print $3}')
  done
  # The glibc set a fallback run needs, whether or not a link named it.
  for l in ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 \
    libresolv.so.2; do
    copy_lib "/lib/x86_64-linux-gnu/$l"
  done
  copy_lib "$(gcc -print-file-name=libstdc++.so.6)"
  copy_lib "$(gcc -print-file-name=libgcc_s.so.1)"
}

prepare_data() {
  local d="$B/data"
  mkdir -p "$d"
  # bench/common/lib.sh's prepare_example writes into $TMP/M.
  (
    TMP=$d
    . bench/common/lib.sh
    prepare_example mlp
    prepare_example resnet
    prepare_example gpt
  )
  rm -f "$d"/*/prepare.log
}

# glibc_needed DIR...: the newest GLIBC_x.y a carried shared object needs.
glibc_needed() {
  find "$@" -type f ! -name '*.a' -exec objdump -T {} + 2>/dev/null |
    grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -u -V | tail -1 || true
}

# info.json (what glibc the bundle needs, the commit, the sizes), then the
# compressed bundle, which is what travels.
write_info() {
  # Debian's libstdc++ alone needs 2.36 (arc4random); it is only used where
  # the GPU machine's own is older, hence a figure of its own.
  local need need_cxx
  need=$(glibc_needed "$B/lib" "$B/bin")
  need_cxx=$(glibc_needed "$B/lib-stdcxx")
  local size_tree size_bundle
  size_tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1)
  size_bundle=$(du -sb "$B" | cut -f1)
  python3 - "$B/info.json" "$need" "$need_cxx" "$(git rev-parse HEAD)" "$size_tree" \
    "$size_bundle" "$(tr '\n' ' ' <"$B/tmp/header-packages.txt")" <<'PY'
import json, sys, time
out, need, need_cxx, commit, tree, bundle, pkgs = sys.argv[1:8]
json.dump({"glibc_needed": need, "glibc_needed_by_libstdcxx": need_cxx, "commit": commit,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "debian_glibc": "2.36", "tree_bytes": int(tree), "bundle_bytes": int(bundle),
           "header_packages": pkgs.split()}, open(out, "w"), indent=1)
PY
  rm -rf "$B/tmp"
  log "compressing to $B.tar.xz (what travels)"
  tar -C "$ROOT" -cf - gpu_bundle | xz -T2 -6 >"$B.tar.xz"
  local size_xz
  size_xz=$(stat -c %s "$B.tar.xz")
  log "needs glibc >= $need ($need_cxx with Debian's libstdc++); tree $((size_tree / 1048576)) MiB," \
    "bundle $((size_bundle / 1048576)) MiB, compressed $((size_xz / 1048576)) MiB"
  ((size_tree + size_xz < LIMIT_MB * 1048576)) ||
    die "tree + gpu_bundle.tar.xz over $LIMIT_MB MiB: make the data subsets smaller"
}

main() {
  local start=$SECONDS
  rm -rf "$B" "$B.tar.xz"
  mkdir -p "$B/tmp"
  build_and_describe
  copy_generated
  log "headers"
  copy_headers
  log "libraries"
  copy_libs
  log "data"
  prepare_data
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >"$B/README.txt"
  write_info
  log "done in $((SECONDS - start)) s: $B"
}

main "$@"

#!/usr/bin/env bash
# The GPU check (issue 20), in one call on a machine the run tool lends: one
# GPU, a pip PyTorch with CUDA at its python3, nvcc, CMake/ninja, no Bazel,
# no Debian packages, no network. Prepare here first:
#   bash scripts/gpu_bundle.sh      # writes gpu_bundle/ and gpu_bundle.tar.xz
# then the run tool: carry=["gpu_bundle.tar.xz"], command
#   bash scripts/gpu_check.sh
# It writes $OUT/gpu_check.log and $OUT/gpu_check.json (and the tests' XML).
# Steps, each bounded by `timeout` and recorded (ok/failed/skipped, seconds);
# a failed step does not stop the ones that do not need it:
#   env      LibTorch, NCCL, cudart, compiler, glibc of this machine; stops
#            early, with the reason, on a pre-C++11-ABI LibTorch;
#   unpack   gpu_bundle.tar.xz, if gpu_bundle/ is not there;
#   build    the targets of scripts/gpu_check_targets from the bundle's
#            manifests (Bazel's compile units and link lines) with ninja,
#            against this LibTorch, NCCL and cudart (scripts/gpu_ninja.py);
#   test:*   each GoogleTest target, with its XML;
#   allreduce  bench's all-reduce peer at world size 1 on cuda:0 (NCCL);
#   train:*  one short job of each workload (built-in MLP on Fashion-MNIST,
#            TorchScript ResNet, TorchScript GPT) on cuda:0 through the
#            carried coordinator and ringctl; `ringctl get` says how it ended.
# --rehearse (or REHEARSE=1): the same steps on a development machine without
# a GPU: the CPU graph's manifests, Debian's CPU LibTorch, /usr/local/cuda's
# NCCL (for the tests, which skip without a GPU), --device=cpu, smaller sizes,
# -O0 (GPU_CHECK_OPT overrides); and one more step, cuda-compile, compiles
# the CUDA graph's own units (cuda_backend_nccl.cc ...) against Debian's
# LibTorch headers without linking them. It cannot cover: the CUDA graph's
# link, a pip LibTorch's headers and LOG/CHECK macros, the GPU machine's
# compiler and glibc, anything that runs on a GPU.
# Environment: OUT (default ./gpu_check_out), JOBS (ninja -j; default the
# cores), BUDGET_S (the whole run, default 560 s, 3000 s in the rehearsal:
# every step's timeout is cut to what is left), WORK (scratch; default a
# fresh /tmp directory).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MODE=gpu
[[ ${1:-} == --rehearse || ${REHEARSE:-0} == 1 ]] && MODE=rehearse
OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
WORK=${WORK:-$(mktemp -d /tmp/gpu_check.XXXXXX)}
mkdir -p "$WORK"
B=$ROOT/gpu_bundle
LOG=$OUT/gpu_check.log
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1
START=$SECONDS
# The rehearsal compiles on 2 shared cores: a budget of its own.
BUDGET_S=${BUDGET_S:-$([[ $MODE == gpu ]] && echo 560 || echo 3000)}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN)}
PY=$(command -v python3)

# The workloads' batch sizes and the all-reduce sizes. The GPU's: 1 KiB ..
# 256 MiB; the rehearsal's stop at 4 MiB (2 shared cores).
if [[ $MODE == gpu ]]; then
  SIZES=1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456
  DEVICE=cuda:0 JOB_DEVICE=DEVICE_KIND_CUDA MLP_BATCH=256 RESNET_BATCH=128 GPT_BATCH=32
  OPT=${GPU_CHECK_OPT:-} GRAPH=cuda
  # One GPU, one rank: the jobs still all-reduce every bucket through NCCL
  # (DdpSpec.communicate_alone), so training runs the whole GPU path.
  ALONE=true
else
  SIZES=1024,16384,262144,4194304
  DEVICE=cpu JOB_DEVICE=DEVICE_KIND_CPU MLP_BATCH=128 RESNET_BATCH=64 GPT_BATCH=16
  OPT=${GPU_CHECK_OPT:--O0} GRAPH=cpu
  ALONE=false
fi

# ---------------------------------------------------------------- helpers --

log() { echo "[gpu_check $(date -u +%H:%M:%S) +$((SECONDS - START))s] $*"; }

# Every step's outcome, one line each: NAME STATUS SECONDS NOTE.
STEPS=$WORK/steps.tsv
: >"$STEPS"
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4//$'\n'/ }" >>"$STEPS"; }

# left S: S, or less if the run's budget (less 15 s for the report) is nearer.
left() {
  local rest=$((BUDGET_S - (SECONDS - START) - 15))
  ((rest < 1)) && rest=1
  echo $(($1 < rest ? $1 : rest))
}

# step NAME TIMEOUT_S COMMAND...: runs a function under the budget, records
# ok or failed (with its exit status: 124 is a timeout) and its seconds.
# Returns the command's status, so that a dependent step can be skipped.
step() {
  local name="$1" limit t0 rc=0
  limit=$(left "$2")
  shift 2
  log "step $name (at most ${limit}s)"
  t0=$SECONDS
  STEP_NOTE=""
  STEP_LIMIT=$limit "$@" || rc=$?
  if ((rc == 0)); then
    record "$name" ok $((SECONDS - t0)) "$STEP_NOTE"
  else
    ((rc == 124)) && STEP_NOTE="timed out after ${limit}s. $STEP_NOTE"
    record "$name" failed $((SECONDS - t0)) "exit $rc. $STEP_NOTE"
    log "step $name failed (exit $rc) $STEP_NOTE"
  fi
  return $rc
}
skip() { record "$1" skipped 0 "$2"; log "step $1 skipped: $2"; }

# RUN: the prefix that runs a binary built here or carried: the carried
# libraries first, and the carried glibc's loader where this machine's glibc
# is older than the bundle's libraries need (set by check_runtime).
RUN=()
run_bin() { "${RUN[@]}" "$@"; }

# Background processes this script started, ended on exit by their ids
# (and waited for by id: a bare `wait` would also wait for the log's tee,
# which only ends when this script does).
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# ----------------------------------------------------------------- steps --

# The pip PyTorch's LibTorch, and where NCCL, cudart and the CUDA headers
# are as the Bazel build would find them (tools/find_cuda_libs.py, the same
# search: beside the LibTorch first, then nvcc's toolkit). Sets TORCH_DIR,
# NCCL_DIR, TORCH_INCLUDES, TORCH_LIBS, CUDA_INCLUDES, CUDA_LIBS,
# TORCH_CXXFLAGS and STD_FLAG.
detect_gpu_env() {
  local info torch abi versions
  info=$(timeout "$STEP_LIMIT" "$PY" -c 'import os, torch
print(os.path.dirname(torch.__file__))
print(int(torch.compiled_with_cxx11_abi()))
print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.device_count())') ||
    { STEP_NOTE="python3 cannot import torch"; return 1; }
  { read -r torch; read -r abi; read -r versions; } <<<"$info"
  if [[ $abi != 1 ]]; then
    STEP_NOTE="this PyTorch uses the pre-C++11 ABI: Debian's gRPC/Abseil cannot link with it"
    return 1
  fi
  local toolkit=""
  command -v nvcc >/dev/null && toolkit=$(dirname "$(dirname "$(command -v nvcc)")")
  local found
  found=$("$PY" tools/find_cuda_libs.py --libtorch "$torch" ${toolkit:+--cuda "$toolkit"} |
    "$PY" -c 'import json, sys
a = json.load(sys.stdin)
if a.get("error") or not a["has_nccl"]:
    print("ERROR", a.get("error", "no NCCL found")); sys.exit()
for lib in ("nccl", "cudart"):
    print(a[lib]["lib_dir"], a[lib]["lib"])
print(" ".join("-isystem " + d for d in a["include_dirs"]))') ||
    { STEP_NOTE="tools/find_cuda_libs.py failed"; return 1; }
  local nccl_dir nccl_lib cudart_dir cudart_lib
  { read -r nccl_dir nccl_lib; read -r cudart_dir cudart_lib; read -r CUDA_INCLUDES; } <<<"$found"
  [[ $nccl_dir == ERROR ]] && { STEP_NOTE="$nccl_lib"; return 1; }
  log "torch at $torch ($versions); NCCL $nccl_dir/$nccl_lib; cudart $cudart_dir/$cudart_lib"
  TORCH_INCLUDES="-isystem $torch/include -isystem $torch/include/torch/csrc/api/include"
  TORCH_LIBS="-L$torch/lib -Wl,-rpath,$torch/lib -Wl,--push-state,--no-as-needed -ltorch_cuda -lc10_cuda -ltorch -ltorch_cpu -lc10 -Wl,--pop-state"
  CUDA_LIBS="-L$nccl_dir -Wl,-rpath,$nccl_dir -L$cudart_dir -Wl,-rpath,$cudart_dir -l:$nccl_lib -l:$cudart_lib"
  # Torch 2.x defines its own LOG/CHECK unless it was built with glog
  # (Debian's 1.13 was): common/logging.h then takes c10's (issue 20 point 9).
  TORCH_CXXFLAGS=""
  if ! grep -q '^#define C10_USE_GLOG' "$torch/include/c10/macros/cmake_macros.h" 2>/dev/null; then
    TORCH_CXXFLAGS="-DRINGLEADER_C10_OWN_LOGGING"
  fi
  TORCH_DIR=$torch NCCL_DIR=$nccl_dir
  # The C++ standard this LibTorch's headers need: Bazel compiles C++17;
  # a LibTorch whose CMake config asks for C++20 gets it (the last -std
  # wins). GPU_CHECK_STD (e.g. c++20) forces one.
  STD_FLAG=""
  if [[ -n ${GPU_CHECK_STD:-} ]]; then
    STD_FLAG=-std=$GPU_CHECK_STD
  elif grep -qsE 'CXX_STANDARD 20|cxx_std_20|std=c\+\+20' "$torch"/share/cmake/Torch/*.cmake; then
    STD_FLAG=-std=c++20
  fi
  [[ -n $STD_FLAG ]] && log "compiling with $STD_FLAG (this LibTorch's headers)"
  log_torch_exports "$torch"
}

# Whether this LibTorch exports copies of libraries the bundle carries (the
# link puts LibTorch last for that reason; gpu_ninja.py says why).
log_torch_exports() {
  local lib sym
  for lib in libtorch_cpu.so libc10.so; do
    timeout 10 nm -DC --defined-only "$1/lib/$lib" >"$WORK/nm.txt" 2>/dev/null || true
    for sym in gloo:: google::protobuf absl:: google::LogMessage gflags::; do
      log "$lib exports $(grep -c "$sym" "$WORK/nm.txt") symbols matching $sym"
    done
  done
}

# Where this machine's LibTorch, NCCL, cudart and compiler are; writes
# $WORK/env.json. The rehearsal's: Debian's CPU LibTorch and /usr/local/cuda.
detect_env() {
  if [[ $MODE == gpu ]]; then
    detect_gpu_env || return 1
  else
    TORCH_INCLUDES="-isystem /usr/include/torch/csrc/api/include"
    TORCH_LIBS="-ltorch -ltorch_cpu -lc10"
    CUDA_INCLUDES="-isystem /usr/local/cuda/include"
    CUDA_LIBS="-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lnccl -lcudart"
    TORCH_CXXFLAGS=""
    TORCH_DIR=/usr/lib/x86_64-linux-gnu NCCL_DIR=/usr/local/cuda
  fi
  local cxx=${CXX:-g++}
  CXX_PATH=$(command -v "$cxx") || { STEP_NOTE="no C++ compiler ($cxx)"; return 1; }
  "$PY" - "$WORK/env.json" "$MODE" "$TORCH_DIR" "$NCCL_DIR" "$("$cxx" -dumpfullversion)" \
    "$(getconf GNU_LIBC_VERSION | awk '{print $2}')" \
    "$(nvidia-smi -L 2>/dev/null | head -1 || true)" "$(uname -r)" <<'PY'
import json, sys
keys = ["mode", "torch_dir", "nccl_dir", "gcc", "glibc", "gpu", "kernel"]
json.dump(dict(zip(keys, sys.argv[2:])), open(sys.argv[1], "w"), indent=1)
PY
}

# The bundle: unpacked from gpu_bundle.tar.xz with Python's tarfile (this
# machine may lack xz and zstd).
unpack_bundle() {
  if [[ -d $B/manifest ]]; then
    STEP_NOTE="gpu_bundle/ present"
    return 0
  fi
  [[ -f $B.tar.xz ]] || { STEP_NOTE="neither gpu_bundle/ nor gpu_bundle.tar.xz: run scripts/gpu_bundle.sh and carry it"; return 1; }
  timeout "$STEP_LIMIT" "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
    "$B.tar.xz" "$ROOT" || { STEP_NOTE="cannot unpack gpu_bundle.tar.xz"; return 1; }
  if command -v git >/dev/null && git rev-parse HEAD >/dev/null 2>&1; then
    local made
    made=$("$PY" -c 'import json; print(json.load(open("gpu_bundle/info.json"))["commit"])')
    [[ $made == "$(git rev-parse HEAD)" ]] ||
      STEP_NOTE="bundle made at $made, tree at $(git rev-parse HEAD): rerun gpu_bundle.sh if sources were added"
  fi
}

# max_version LIB PREFIX: the newest PREFIX_x.y.z symbol version LIB defines.
max_version() {
  { strings "$1" 2>/dev/null || true; } | grep -o "^$2_[0-9.]*$" | sed "s/^$2_//" | sort -V | tail -1
}

# glibc and libstdc++: whether the carried libraries load here. Sets
# RUN_LIBS (the run-time library path), LINK_FLAGS and LOADER.
check_runtime() {
  local have need need_cxx
  have=$(getconf GNU_LIBC_VERSION | awk '{print $2}')
  { read -r need; read -r need_cxx; } < <("$PY" -c 'import json
i = json.load(open("gpu_bundle/info.json"))
print(i["glibc_needed"]); print(i["glibc_needed_by_libstdcxx"])') || true
  [[ -n $need && -n $need_cxx ]] ||
    { STEP_NOTE="gpu_bundle/info.json lacks glibc_needed: rerun scripts/gpu_bundle.sh"; return 1; }
  # libstdc++: the newer of this machine's and Debian's, for the objects
  # compiled here and the carried libraries both need theirs.
  local mine deb use_deb=0
  mine=$(max_version "$("${CXX:-g++}" -print-file-name=libstdc++.so.6)" GLIBCXX)
  deb=$(max_version "$B/lib-stdcxx/libstdc++.so.6" GLIBCXX)
  if [[ $(printf '%s\n%s\n' "$deb" "$mine" | sort -V | tail -1) == "$deb" && $deb != "$mine" ]]; then
    use_deb=1
    [[ $(printf '%s\n%s\n' "$need" "$need_cxx" | sort -V | tail -1) == "$need_cxx" ]] && need=$need_cxx
  fi
  RUN_LIBS=$B/lib
  LINK_FLAGS="-L$B/lib -Wl,-rpath,$B/lib"
  LOADER=""
  if [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -1) != "$need" ]]; then
    # The carried libraries need a newer glibc: link without checking their
    # references against this one, and run everything through the carried
    # loader and libc (backward compatible with what was compiled here).
    LOADER=$B/glibc/ld-linux-x86-64.so.2
    # (LibTorch, NCCL and cudart come through the binaries' rpaths.)
    RUN_LIBS=$B/glibc:$B/lib
    ((use_deb)) && RUN_LIBS=$B/glibc:$B/lib-stdcxx:$B/lib
    LINK_FLAGS+=" -Wl,--allow-shlib-undefined"
    STEP_NOTE="glibc $have < $need the bundle needs: running through the carried loader (untested path)"
  fi
  if ((use_deb)) && [[ -z $LOADER ]]; then
    RUN_LIBS=$B/lib-stdcxx:$RUN_LIBS
    LINK_FLAGS="-L$B/lib-stdcxx -Wl,-rpath,$B/lib-stdcxx $LINK_FLAGS"
    STEP_NOTE+=" libstdc++ here GLIBCXX_$mine < Debian's $deb: carried one first."
  fi
  STEP_NOTE+=" glibc $have (bundle needs $need), GLIBCXX here $mine, Debian's $deb"
  if [[ -n $LOADER ]]; then
    RUN=("$LOADER" --library-path "$RUN_LIBS")
  else
    RUN=(env "LD_LIBRARY_PATH=$RUN_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
  # The carried control plane must start, or nothing after the build can run.
  run_bin "$B/bin/ringctl" --help >/dev/null ||
    { STEP_NOTE+=" the carried ringctl does not start"; return 1; }
}

# The targets, with ninja from the manifests (the CUDA graph's on a GPU).
build_targets() {
  local manifests=("$B"/manifest/$GRAPH/*.json)
  # A step's function runs under `||`, where set -e is off: each command
  # that matters says so itself.
  # (--flag=VALUE: the values start with a dash.)
  "$PY" scripts/gpu_ninja.py --out="$WORK/build.ninja" --build="$WORK/build" \
    --gen="$B/gen" --cxx="$CXX_PATH" --system-includes="-isystem $B/include" \
    --torch-includes="$TORCH_INCLUDES" --cuda-includes="$CUDA_INCLUDES" \
    --torch-libs="$TORCH_LIBS" --cuda-libs="$CUDA_LIBS" --ldflags="$LINK_FLAGS" \
    --cxxflags="-D_GLIBCXX_USE_CXX11_ABI=1 ${STD_FLAG:-}" --torch-cxxflags="${TORCH_CXXFLAGS:-}" \
    --opt="$OPT" --torch-libs-last "${manifests[@]}" || { STEP_NOTE="gpu_ninja.py failed"; return 1; }
  # -k 0: build every target that can be built, so that one broken unit
  # leaves the others' steps to run.
  local rc=0
  timeout "$STEP_LIMIT" ninja -f "$WORK/build.ninja" -k 0 -j "$JOBS" >"$WORK/ninja.log" 2>&1 || rc=$?
  grep -E '^FAILED|error:' "$WORK/ninja.log" | head -40 || true
  tail -3 "$WORK/ninja.log"
  STEP_NOTE="$(grep -c '^FAILED' "$WORK/ninja.log" || true) failed edges; built: $(ls "$WORK/build/bin" 2>/dev/null | tr '\n' ' ')"
  # Where the third-party headers came from (ninja's record of every
  # unit's includes): only the C library's, the kernel's, the C++
  # library's and LibTorch's may come from /usr/include.
  local system
  system=$(ninja -f "$WORK/build.ninja" -t deps 2>/dev/null |
    grep -oE '^\s+/usr/include/[^/]+/' | sed -E 's#^\s+/usr/include/##; s#/$##' | sort -u |
    grep -vxE 'c\+\+|x86_64-linux-gnu|linux|asm-generic|asm|arpa|net|netinet|rpc|sys|bits|ATen|c10|torch|caffe2' |
    tr '\n' ' ' || true)
  STEP_NOTE+="; other headers from /usr/include: ${system:-none}"
  # The whole compiler output comes back where the build failed.
  ((rc == 0)) || cp "$WORK/ninja.log" "$OUT/ninja.log"
  return $rc
}

# Rehearsal only: every unit of the CUDA graph's manifests compiled here
# (no link: Debian's LibTorch has no CUDA), against Debian's headers, the
# one generated c10/cuda header they lack (the compile check's), and
# /usr/local/cuda. The units both graphs share are up to date already (the
# extra directory goes with the CUDA headers so that their commands match).
compile_cuda_graph() {
  "$PY" scripts/gpu_ninja.py --out="$WORK/build-cuda.ninja" --build="$WORK/build" \
    --gen="$B/gen" --cxx="$CXX_PATH" --system-includes="-isystem $B/include" \
    --torch-includes="$TORCH_INCLUDES" \
    --cuda-includes="$CUDA_INCLUDES -isystem tests/worker/device/compile_check" \
    --cxxflags="-D_GLIBCXX_USE_CXX11_ABI=1" \
    --opt="$OPT" "$B"/manifest/cuda/*.json || { STEP_NOTE="gpu_ninja.py failed"; return 1; }
  # The units whose sources only the CUDA graph has (cuda_backend_nccl.cc,
  # ...): the others were compiled by the build step (here with the CUDA
  # headers' directory added, as every dependent of @local_cuda has it).
  local objects=() rc=0
  mapfile -t objects < <("$PY" - "$WORK/build" "$B"/manifest/cpu/*.json -- "$B"/manifest/cuda/*.json <<'PY'
import json, os, sys
args = sys.argv[2:]
cpu, cuda = args[:args.index("--")], args[args.index("--") + 1:]
seen = {u["src"] for m in cpu for u in json.load(open(m))["units"]}
for m in cuda:
    for u in json.load(open(m))["units"]:
        if u["src"] not in seen:
            seen.add(u["src"])
            print(os.path.join(sys.argv[1], "obj", u["obj"][len("@GEN@/"):]))
PY
)
  ((${#objects[@]})) || { STEP_NOTE="the CUDA graph has no units of its own"; return 1; }
  timeout "$STEP_LIMIT" ninja -f "$WORK/build-cuda.ninja" -k 0 -j "$JOBS" "${objects[@]}" \
    >"$WORK/ninja-cuda.log" 2>&1 || rc=$?
  grep -E '^FAILED|error:' "$WORK/ninja-cuda.log" | head -20 || true
  STEP_NOTE="${#objects[@]} units of the CUDA graph only: $(printf '%s\n' "${objects[@]}" |
    sed 's#.*/##' | tr '\n' ' ')"
  return $rc
}

# run_test NAME: a GoogleTest binary, its XML into $OUT.
run_test() {
  local name="$1" rc=0
  timeout "$STEP_LIMIT" "${RUN[@]}" "$WORK/build/bin/$name" --gtest_output=xml:"$OUT/$name.xml" ||
    rc=$?
  STEP_NOTE=$("$PY" - "$OUT/$name.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    r = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print(f"no XML ({e})"); sys.exit()
cases = r.iter("testcase")
skipped = sum(1 for c in r.iter("testcase") if c.get("result") == "skipped" or c.find("skipped") is not None)
print(f"tests={r.get('tests')} failures={r.get('failures')} errors={r.get('errors')} skipped={skipped}")
PY
)
  return $rc
}

# start_coordinator: the carried coordinator on a free loopback port.
start_coordinator() {
  mkdir -p "$WORK/coord"
  run_bin "$B/bin/ringleader-coordinator" --listen=127.0.0.1:0 \
    --state="$WORK/coord/state.db" --port_file="$WORK/coord/port" >"$WORK/coord/log" 2>&1 &
  PIDS+=($!)
  local i
  for i in $(seq 100); do [[ -s $WORK/coord/port ]] && break; sleep 0.1; done
  [[ -s $WORK/coord/port ]] || { cat "$WORK/coord/log"; STEP_NOTE="coordinator did not start"; return 1; }
  TARGET=127.0.0.1:$(cat "$WORK/coord/port")
}
ringctl() { run_bin "$B/bin/ringctl" --coordinator="$TARGET" "$@"; }

# The all-reduce peer (bench/allreduce/allreduce_bench.sh's job) at world size 1.
allreduce() {
  cat >"$WORK/allreduce.textproto" <<SPEC
name: "allreduce-bench"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 64 synthetic_test_size: 8 }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.1 }
epochs: 1
batch_size: 8
min_workers: 1
max_workers: 1
device: $JOB_DEVICE
SPEC
  ringctl submit --file="$WORK/allreduce.textproto" >/dev/null ||
    { STEP_NOTE="ringctl submit failed"; return 1; }
  local rc=0
  timeout "$STEP_LIMIT" "${RUN[@]}" "$WORK/build/bin/ringleader-allreduce-peer" \
    --coordinator="$TARGET" --sizes="$SIZES" --device="$DEVICE" --transport=shm \
    --seconds_per_size=0.5 >"$WORK/allreduce.jsonl" 2>"$WORK/allreduce.err" || rc=$?
  cat "$WORK/allreduce.jsonl"
  tail -5 "$WORK/allreduce.err"
  STEP_NOTE="$(grep -c busbw "$WORK/allreduce.jsonl" || true) sizes measured"
  return $rc
}

# job_spec WORKLOAD FILE: one short epoch of the workload on one worker.
job_spec() {
  local w="$1" file="$2" data=$B/data/$1
  case $w in
    mlp)
      cat >"$file" <<SPEC
name: "gpu-check-mlp"
model { arch: MODEL_ARCH_MLP }
dataset { format: DATASET_FORMAT_IDX path: "$data" shuffle: true }
ddp { communicate_alone: $ALONE }
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 1
batch_size: $MLP_BATCH
min_workers: 1
max_workers: 1
seed: 42
progress_every_steps: 10
evaluate_every_epoch: true
SPEC
      ;;
    resnet | gpt)
      local batch=$RESNET_BATCH
      [[ $w == gpt ]] && batch=$GPT_BATCH
      "$PY" bench/common/example_job.py examples/$w/*.textproto "$file" --data "$data" \
        --world 1 --batch "$batch" --epochs 1 --ddp "communicate_alone=$ALONE"
      ;;
  esac
  echo "device: $JOB_DEVICE" >>"$file"
}

# train WORKLOAD: a worker on $DEVICE, the job submitted and watched to its
# end, then `ringctl get` (JSON) into $WORK/jobs/WORKLOAD.json.
train() {
  local w="$1" spec=$WORK/jobs/$1.textproto job rc=0
  mkdir -p "$WORK/jobs"
  job_spec "$w" "$spec" || { STEP_NOTE="no job file"; return 1; }
  job=$(ringctl submit --file="$spec") || { STEP_NOTE="ringctl submit failed"; return 1; }
  run_bin "$WORK/build/bin/ringleader-worker" --coordinator="$TARGET" --device="$DEVICE" \
    --max_jobs=1 --threads="$([[ $MODE == gpu ]] && echo 4 || echo 2)" \
    >"$WORK/jobs/$w-worker.log" 2>&1 &
  local worker=$!
  PIDS+=($worker)
  # JSON lines: the report reads the ranks' progress reports (step, time)
  # for steps/s and samples/s, as bench/common/train_watch.py does.
  timeout "$STEP_LIMIT" "${RUN[@]}" "$B/bin/ringctl" --coordinator="$TARGET" --output=json \
    watch "$job" >"$WORK/jobs/$w-watch.jsonl" 2>"$WORK/jobs/$w-watch.err" || rc=$?
  tail -3 "$WORK/jobs/$w-watch.err"
  ringctl --output=json get "$job" >"$WORK/jobs/$w.json" 2>/dev/null || true
  if ((rc != 0)); then
    ringctl cancel "$job" >/dev/null 2>&1 || true
    tail -20 "$WORK/jobs/$w-worker.log"
  fi
  kill "$worker" 2>/dev/null || true
  wait "$worker" 2>/dev/null || true
  STEP_NOTE=$("$PY" -c 'import json, sys
j = json.load(open(sys.argv[1])); p = j.get("progress", {})
print(j.get("state"), "step", p.get("step"), "of", p.get("totalSteps"), "loss",
      p.get("finalTrainLoss", p.get("loss")), "accuracy", p.get("testAccuracy"), j.get("message", ""))' \
    "$WORK/jobs/$w.json" 2>/dev/null || echo "no job JSON")
  log "$w: $STEP_NOTE"
  return $rc
}

# The report: $OUT/gpu_check.json from the steps and their outputs.
report() {
  "$PY" scripts/gpu_check_report.py --work "$WORK" --out "$OUT/gpu_check.json" \
    --mode "$MODE" --seconds $((SECONDS - START)) || log "the report failed"
  log "wrote $OUT/gpu_check.json and $LOG"
}

main() {
  log "mode $MODE, budget ${BUDGET_S}s, ninja -j$JOBS, scratch $WORK"
  if ! step env 90 detect_env; then
    report
    return 1
  fi
  step unpack 120 unpack_bundle || { report; return 1; }
  step runtime 30 check_runtime || { report; return 1; }
  local built=1
  step build "$([[ $MODE == gpu ]] && echo 330 || echo 2400)" build_targets || built=0
  [[ $MODE == rehearse ]] && { step cuda-compile 900 compile_cuda_graph || true; }
  local kind label name
  while read -r kind label; do
    [[ $kind == test ]] || continue
    name=${label##*:}
    if [[ -x $WORK/build/bin/$name ]]; then
      step "test:$name" 90 run_test "$name" || true
    elif [[ ! -f $B/manifest/$GRAPH/$name.json ]]; then
      skip "test:$name" "not in the $GRAPH graph's manifests (gpu_bundle.sh said why)"
    else
      skip "test:$name" "not built"
    fi
  done < <(grep -v '^\s*\(#\|$\)' scripts/gpu_check_targets)
  if ! step coordinator 20 start_coordinator; then
    report
    return 1
  fi
  if [[ -x $WORK/build/bin/ringleader-allreduce-peer ]]; then
    step allreduce 90 allreduce || true
  else
    skip allreduce "peer not built"
  fi
  local w
  for w in mlp resnet gpt; do
    if [[ -x $WORK/build/bin/ringleader-worker ]]; then
      step "train:$w" "$([[ $MODE == gpu ]] && echo 100 || echo 240)" train "$w" || true
    else
      skip "train:$w" "worker not built"
    fi
  done
  ((built)) || log "the build failed: see $WORK/ninja.log (first errors above)"
  report
  # The exit status says whether every step passed (the JSON says which not).
  ! grep -q $'\tfailed\t' "$STEPS"
}

main "$@"

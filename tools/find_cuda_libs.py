#!/usr/bin/env python3
"""Finds the NCCL and CUDA runtime a build links, for tools/cuda_configure.bzl.

The repository rule runs this with the settings and turns the JSON it prints
into @local_cuda; tools/find_cuda_libs_test.py runs it on fake layouts. Only
the standard library, so any python3 on the machine runs it.

NCCL, first found wins (a directory counts when it has include/nccl.h and
libnccl.so or a versioned libnccl.so.N in one of its library directories):
  1. --nccl (RINGLEADER_NCCL_PATH): DIR/include, DIR/lib or DIR/lib64;
  2. a pip LibTorch's wheels: --libtorch SITE/torch -> SITE/nvidia/nccl;
  3. the CUDA root (RINGLEADER_CUDA_PATH): include/, lib64/ or lib/;
  4. the system: /usr/include with /usr/lib/{x86_64,aarch64}-linux-gnu.
The CUDA runtime likewise, from a pip LibTorch's own wheels first
(SITE/nvidia/cu13 for CUDA 13, whose wheels share one directory;
SITE/nvidia/cuda_runtime for CUDA 12), then the CUDA root, then the system:
the binary must load the libcudart and libnccl that libtorch_cuda.so loads.

A LibTorch with CUDA (lib/libtorch_cuda.so) needs both and the headers that
ATen/cuda/CUDAContext.h includes; without them the answer is an error, never
a silent CPU-only build. A CPU LibTorch without NCCL is fine: has_nccl false.

--root prefixes the fixed system paths (/usr, /usr/local/cuda), so tests
build a fake machine in a temporary directory.
"""
import argparse
import glob
import json
import os
import sys

# Headers the CUDA code includes, directly or through LibTorch's and NCCL's:
# nccl.h includes cuda_runtime.h and cuda_fp16.h, which includes <nv/target>
# (CCCL's); ATen/cuda/CUDAContextLight.h includes cuBLAS, cuBLASLt, cuSPARSE
# and cuSOLVER's.
BASE_HEADERS = ["nccl.h", "cuda_runtime.h"]
TORCH_CUDA_HEADERS = ["cuda_fp16.h", "nv/target", "cublas_v2.h", "cublasLt.h",
                      "cusparse.h", "cusolverDn.h"]
SYSTEM_LIB_DIRS = ["usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu",
                   "usr/lib"]


def find_lib(dirs, stem):
    """(dir, file name) of libSTEM.so, else its shortest versioned name."""
    for d in dirs:
        if os.path.isfile(os.path.join(d, "lib%s.so" % stem)):
            return d, "lib%s.so" % stem
        versioned = sorted(glob.glob(os.path.join(d, "lib%s.so.[0-9]*" % stem)),
                           key=lambda p: (len(p), p))
        if versioned:
            return d, os.path.basename(versioned[0])
    return None


def candidate(source, include, lib_dirs):
    return {"source": source, "include": include, "lib_dirs": lib_dirs}


def locate(candidates, header, stem):
    """The first candidate with HEADER and libSTEM, as a result dict."""
    for c in candidates:
        if not os.path.isfile(os.path.join(c["include"], header)):
            continue
        lib = find_lib(c["lib_dirs"], stem)
        if lib:
            return {"source": c["source"], "include": c["include"],
                    "lib_dir": lib[0], "lib": lib[1]}
    return None


def describe(candidates):
    return "; ".join("%s (%s)" % (c["include"], ", ".join(c["lib_dirs"]))
                     for c in candidates)


def pip_site(libtorch):
    """SITE when LIBTORCH is SITE/torch next to NVIDIA's wheels."""
    site = os.path.dirname(libtorch)
    return site if libtorch and os.path.isdir(os.path.join(site, "nvidia")) else None


def torch_lib_dirs(root, libtorch):
    if libtorch:
        return [os.path.join(libtorch, "lib")]
    return [os.path.join(root, d) for d in SYSTEM_LIB_DIRS]


def resolve(root, libtorch, cuda, nccl_setting):
    libtorch = libtorch.rstrip("/")
    cuda = cuda or os.path.join(root, "usr/local/cuda")
    system_include = os.path.join(root, "usr/include")
    system_libs = [os.path.join(root, d) for d in SYSTEM_LIB_DIRS]
    site = pip_site(libtorch)
    torch_cuda = any(os.path.isfile(os.path.join(d, "libtorch_cuda.so"))
                     for d in torch_lib_dirs(root, libtorch))
    answer = {"torch_cuda": torch_cuda, "pip_site": site, "has_nccl": False,
              "nccl": None, "cudart": None, "include_dirs": [],
              "headers": {}}

    cuda_root = candidate("cuda", os.path.join(cuda, "include"),
                          [os.path.join(cuda, "lib64"), os.path.join(cuda, "lib")])
    system = candidate("system", system_include, system_libs)
    if nccl_setting:
        nccl_setting = nccl_setting.rstrip("/")
        setting = candidate("setting", os.path.join(nccl_setting, "include"),
                            [os.path.join(nccl_setting, "lib"),
                             os.path.join(nccl_setting, "lib64")])
        answer["nccl"] = locate([setting], "nccl.h", "nccl")
        if answer["nccl"] is None:
            # A setting that names nothing usable is a mistake, not a fallback.
            answer["error"] = ("RINGLEADER_NCCL_PATH=%s has no include/nccl.h with "
                               "libnccl.so* in lib/ or lib64/" % nccl_setting)
            return answer
    nccl_candidates = []
    cudart_candidates = []
    if site:
        nvidia = os.path.join(site, "nvidia")
        nccl_candidates.append(candidate("pip", os.path.join(nvidia, "nccl/include"),
                                         [os.path.join(nvidia, "nccl/lib")]))
        for wheel in ("cu13", "cuda_runtime"):
            cudart_candidates.append(candidate(
                "pip", os.path.join(nvidia, wheel, "include"),
                [os.path.join(nvidia, wheel, "lib")]))
    nccl_candidates += [cuda_root, system]
    cudart_candidates += [cuda_root, system]
    if answer["nccl"] is None:
        answer["nccl"] = locate(nccl_candidates, "nccl.h", "nccl")
    answer["cudart"] = locate(cudart_candidates, "cuda_runtime.h", "cudart")

    torch_desc = "the LibTorch at %s" % libtorch if libtorch else "Debian's LibTorch"
    if torch_cuda and answer["nccl"] is None:
        answer["error"] = (
            "%s has CUDA (libtorch_cuda.so) but NCCL was not found. Searched: %s. "
            "Set RINGLEADER_NCCL_PATH to the directory holding include/nccl.h and "
            "lib/libnccl.so*." % (torch_desc, describe(nccl_candidates)))
        return answer
    if torch_cuda and answer["cudart"] is None:
        answer["error"] = (
            "%s has CUDA (libtorch_cuda.so) but the CUDA runtime (cuda_runtime.h "
            "with libcudart.so*) was not found. Searched: %s. Set "
            "RINGLEADER_CUDA_PATH to a CUDA toolkit." % (torch_desc,
                                                        describe(cudart_candidates)))
        return answer
    if answer["nccl"] is None or answer["cudart"] is None:
        return answer  # CPU LibTorch: builds without the NCCL backend.
    resolve_headers(answer, site, cuda_root, system_include, torch_cuda, torch_desc)
    return answer


def resolve_headers(answer, site, cuda_root, system_include, torch_cuda, torch_desc):
    """Fills answer's headers and include_dirs, or its error when a CUDA
    LibTorch lacks one; has_nccl once every header is found."""
    # Each header from the first directory that has it, in this order, so
    # the headers come from the same place as the libraries where they can.
    include_candidates = [answer["nccl"]["include"], answer["cudart"]["include"],
                          os.path.join(answer["cudart"]["include"], "cccl")]
    if site:
        include_candidates += [os.path.join(site, "nvidia", w, "include")
                               for w in ("cublas", "cusparse", "cusolver",
                                         "cuda_cccl")]
    include_candidates += [cuda_root["include"],
                           os.path.join(cuda_root["include"], "cccl"),
                           system_include]
    missing = []
    for header in BASE_HEADERS + TORCH_CUDA_HEADERS:
        found = next((d for d in include_candidates
                      if os.path.isfile(os.path.join(d, header))), None)
        if found is None:
            missing.append(header)
            continue
        answer["headers"][header] = found
        # The compiler searches the system's own directory anyway; adding it
        # with -isystem would break libstdc++'s #include_next.
        if found != system_include and found not in answer["include_dirs"]:
            answer["include_dirs"].append(found)
    answer["include_dirs"].sort(key=include_candidates.index)
    if torch_cuda and missing:
        answer["error"] = ("%s has CUDA, but these CUDA headers were not found: %s. "
                           "Searched: %s." % (torch_desc, ", ".join(missing),
                                              ", ".join(include_candidates)))
        return
    answer["has_nccl"] = True


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="/",
                        help="prefix of /usr and /usr/local/cuda (tests)")
    parser.add_argument("--libtorch", default="",
                        help="RINGLEADER_LIBTORCH; empty: Debian's LibTorch")
    parser.add_argument("--cuda", default="",
                        help="RINGLEADER_CUDA_PATH; empty: ROOT/usr/local/cuda")
    parser.add_argument("--nccl", default="", help="RINGLEADER_NCCL_PATH")
    args = parser.parse_args(argv)
    answer = resolve(args.root, args.libtorch, args.cuda, args.nccl)
    json.dump(answer, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

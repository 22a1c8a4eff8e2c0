"""Repository rule that finds the CUDA runtime and NCCL the build links.

Generates @local_cuda with:
  //:defs.bzl  HAS_NCCL (bool), used by BUILD files to include GPU targets;
               CUDA_ROOT; NCCL_SOURCE (where NCCL came from);
  //:cuda      a cc_library over cudart + NCCL (empty where not found).

The search is tools/find_cuda_libs.py's (tested on fake layouts by
tools/find_cuda_libs_test.py); its settings:
  RINGLEADER_NCCL_PATH  a directory with include/nccl.h and lib/libnccl.so*;
  RINGLEADER_LIBTORCH   the LibTorch (tools/libtorch_configure.bzl): a pip
                        install's NCCL and CUDA runtime wheels come first;
  RINGLEADER_CUDA_PATH  the CUDA toolkit (default /usr/local/cuda).
A LibTorch with CUDA but no NCCL fails here; a CPU LibTorch without NCCL
builds everything else cleanly.
"""

def _cuda_configure_impl(ctx):
    env = ctx.os.environ
    root = env.get("RINGLEADER_CUDA_PATH", "/usr/local/cuda")
    python = ctx.which("python3")
    if python == None:
        fail("cuda_configure: python3 is needed to run tools/find_cuda_libs.py")
    result = ctx.execute([
        python,
        ctx.path(Label("//tools:find_cuda_libs.py")),
        "--cuda=" + root,
        "--libtorch=" + env.get("RINGLEADER_LIBTORCH", ""),
        "--nccl=" + env.get("RINGLEADER_NCCL_PATH", ""),
    ])
    if result.return_code != 0:
        fail("cuda_configure: tools/find_cuda_libs.py failed:\n" + result.stderr)
    found = json.decode(result.stdout)
    if "error" in found:
        fail("cuda_configure: " + found["error"])
    has_nccl = found["has_nccl"]
    ctx.file("defs.bzl", "HAS_NCCL = %s\nCUDA_ROOT = \"%s\"\nNCCL_SOURCE = \"%s\"\n" % (
        has_nccl,
        root,
        found["nccl"]["source"] if has_nccl else "",
    ))
    if not has_nccl:
        ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])
cc_library(name = "cuda")
""")
        return

    # Headers are declared (through symlinks) so Bazel's inclusion check
    # accepts them; only the C runtime API's part of each directory.
    hdrs = []
    includes = []
    for i, d in enumerate(found["include_dirs"]):
        link = "include_%d" % i
        ctx.symlink(d, link)
        includes.append(link)
        hdrs += [link + p for p in ["/*.h", "/*.hpp", "/crt/**", "/nv/**", "/nccl_device/**"]]

    # By file name (-l:): pip's wheels have only the versioned libnccl.so.2
    # and libcudart.so.13. The rpaths make the binary load these copies,
    # the ones the chosen LibTorch was built against.
    linkopts = []
    for lib in [found["nccl"], found["cudart"]]:
        for opt in ["-L" + lib["lib_dir"], "-Wl,-rpath," + lib["lib_dir"]]:
            if opt not in linkopts:
                linkopts.append(opt)
    linkopts += ["-l:" + found["nccl"]["lib"], "-l:" + found["cudart"]["lib"]]
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

# NCCL: {nccl} ({nccl_source}); CUDA runtime: {cudart} ({cudart_source}).
cc_library(
    name = "cuda",
    hdrs = glob({hdrs}),
    includes = {includes},
    linkopts = {linkopts},
)
""".format(
        nccl = found["nccl"]["lib_dir"] + "/" + found["nccl"]["lib"],
        nccl_source = found["nccl"]["source"],
        cudart = found["cudart"]["lib_dir"] + "/" + found["cudart"]["lib"],
        cudart_source = found["cudart"]["source"],
        hdrs = repr(hdrs),
        includes = repr(includes),
        linkopts = repr(linkopts),
    ))

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["RINGLEADER_CUDA_PATH", "RINGLEADER_LIBTORCH", "RINGLEADER_NCCL_PATH"],
    local = True,
)

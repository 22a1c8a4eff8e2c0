"""Repository rule that detects CUDA + NCCL on the host.

Generates @local_cuda with:
  //:defs.bzl  HAS_NCCL (bool), used by BUILD files to include GPU targets;
  //:cuda      a cc_library over cudart + nccl (empty where not found).
The path comes from RINGLEADER_CUDA_PATH (default /usr/local/cuda), so a
machine without the toolkit builds everything else cleanly.
"""

def _cuda_configure_impl(ctx):
    root = ctx.os.environ.get("RINGLEADER_CUDA_PATH", "/usr/local/cuda")
    has_nccl = ctx.path(root + "/include/nccl.h").exists and (
        ctx.path(root + "/include/cuda_runtime.h").exists
    )
    ctx.file("defs.bzl", "HAS_NCCL = %s\nCUDA_ROOT = \"%s\"\n" % (has_nccl, root))
    if has_nccl:
        # Headers are declared (through a symlink) so Bazel's inclusion check
        # accepts them; only the C runtime API's part of the toolkit.
        ctx.symlink(root + "/include", "include")
        build = """
package(default_visibility = ["//visibility:public"])
cc_library(
    name = "cuda",
    hdrs = glob(["include/*.h", "include/*.hpp", "include/crt/**", "include/nv/**", "include/nccl_device/**"]),
    includes = ["include"],
    linkopts = [
        "-L{root}/lib64",
        "-L{root}/lib",
        "-Wl,-rpath,{root}/lib64",
        "-Wl,-rpath,{root}/lib",
        "-lnccl",
        "-lcudart",
    ],
)
""".format(root = root)
    else:
        build = """
package(default_visibility = ["//visibility:public"])
cc_library(name = "cuda")
"""
    ctx.file("BUILD", build)

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["RINGLEADER_CUDA_PATH"],
    local = True,
)

"""Repository rule that selects the LibTorch the build uses.

Generates @libtorch with:
  //:defs.bzl  TORCH_CUDA (bool: the LibTorch has CUDA kernels) and
               TORCH_ROOT, used by BUILD files to pick the GPU backend;
  //:torch     a cc_library with LibTorch's headers and libraries.

RINGLEADER_LIBTORCH selects it:
  unset    Debian's CPU build (libtorch-dev: headers under /usr/include,
           libraries in the multiarch directory);
  a path   an unpacked LibTorch distribution (the directory holding include/
           and lib/, as downloaded from pytorch.org or built from source),
           typically a CUDA one. It must use the C++11 ABI, because gRPC,
           Protobuf and Abseil come from Debian and are built with it.
"""

_DEBIAN_API_INCLUDE = "/usr/include/torch/csrc/api/include"
_DEBIAN_LIB_DIRS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]

def _fail(msg):
    fail("RINGLEADER_LIBTORCH: " + msg)

def _find_lib(ctx, dirs, name):
    for d in dirs:
        if ctx.path(d + "/lib" + name + ".so").exists:
            return d
    return None

def _check_cxx11_abi(ctx, root):
    # LibTorch's CMake config records the ABI it was built with.
    config = ctx.path(root + "/share/cmake/Torch/TorchConfig.cmake")
    if config.exists and "_GLIBCXX_USE_CXX11_ABI=0" in ctx.read(config):
        _fail(("%s is a pre-C++11-ABI LibTorch; it cannot link with Debian's " +
               "gRPC and Abseil. Use the cxx11 ABI build of LibTorch.") % root)

def _libtorch_configure_impl(ctx):
    root = ctx.os.environ.get("RINGLEADER_LIBTORCH", "").rstrip("/")
    if root == "":
        # Debian: the ATen/c10/torch headers sit in /usr/include already; only
        # the C++ frontend's directory needs adding, through a symlink so the
        # headers are declared and Bazel's inclusion check accepts them.
        if not ctx.path(_DEBIAN_API_INCLUDE + "/torch/torch.h").exists:
            _fail("unset, and Debian's libtorch-dev is not installed " +
                  "(scripts/setup.sh installs it)")
        lib_dir = _find_lib(ctx, _DEBIAN_LIB_DIRS, "torch")
        if lib_dir == None:
            _fail("unset, and libtorch.so was not found in " + ", ".join(_DEBIAN_LIB_DIRS))
        ctx.symlink(_DEBIAN_API_INCLUDE, "api_include")
        hdrs = 'glob(["api_include/**"])'
        includes = '["api_include"]'
        lib_dirs = []
        description = "Debian's LibTorch (" + lib_dir + ")"
    else:
        if not ctx.path(root + "/include/ATen/ATen.h").exists:
            _fail("%s has no include/ATen/ATen.h; point it at an unpacked LibTorch" % root)
        if not ctx.path(root + "/lib/libtorch.so").exists:
            _fail("%s has no lib/libtorch.so; point it at an unpacked LibTorch" % root)
        _check_cxx11_abi(ctx, root)
        ctx.symlink(root + "/include", "include")
        hdrs = 'glob(["include/**"])'
        includes = '["include", "include/torch/csrc/api/include"]'
        lib_dir = root + "/lib"
        lib_dirs = [lib_dir]
        description = "LibTorch at " + root

    has_cuda = ctx.path(lib_dir + "/libtorch_cuda.so").exists
    linkopts = []
    for d in lib_dirs:
        linkopts += ["-L" + d, "-Wl,-rpath," + d]
    if has_cuda:
        # Nothing references libtorch_cuda's symbols directly: its static
        # initializers register the CUDA kernels and allocator, so it must be
        # linked even though --as-needed would drop it.
        linkopts += ["-Wl,--no-as-needed", "-ltorch_cuda", "-lc10_cuda", "-Wl,--as-needed"]
    linkopts += ["-ltorch", "-ltorch_cpu", "-lc10"]

    ctx.file("defs.bzl", "TORCH_CUDA = %s\nTORCH_ROOT = \"%s\"\nTORCH_DESCRIPTION = \"%s\"\n" % (
        has_cuda,
        root,
        description + (", with CUDA" if has_cuda else ", CPU only"),
    ))
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

# {description}
cc_library(
    name = "torch",
    hdrs = {hdrs},
    includes = {includes},
    linkopts = {linkopts},
)
""".format(
        description = description,
        hdrs = hdrs,
        includes = includes,
        linkopts = repr(linkopts),
    ))

libtorch_configure = repository_rule(
    implementation = _libtorch_configure_impl,
    environ = ["RINGLEADER_LIBTORCH"],
    local = True,
)

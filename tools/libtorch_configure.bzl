"""Repository rule that selects the LibTorch the build uses.

Generates @libtorch with:
  //:defs.bzl  TORCH_CUDA (bool: the LibTorch has CUDA kernels) and
               TORCH_ROOT, used by BUILD files to pick the GPU backend;
               TORCH_GLOG (bool: c10 logs through glog) and TORCH_VERSION;
  //:torch     a cc_library with LibTorch's headers and libraries. Where c10
               has its own LOG/CHECK macros (torch 2.x from pip or
               pytorch.org: C10_USE_GLOG undefined) it defines
               RINGLEADER_C10_OWN_LOGGING for common/logging.h. It also
               compiles a check that <torch/version.h> as the compiler finds
               it is the chosen LibTorch's (Debian's sit in /usr/include).

RINGLEADER_LIBTORCH selects it:
  unset    Debian's CPU build (libtorch-dev: headers under /usr/include,
           libraries in the multiarch directory);
  a path   an unpacked LibTorch distribution (the directory holding include/
           and lib/, as downloaded from pytorch.org or built from source),
           typically a CUDA one. It must use the C++11 ABI, because gRPC,
           Protobuf and Abseil come from Debian and are built with it.
"""

_DEBIAN_INCLUDE = "/usr/include"
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

def _c10_uses_glog(ctx, include):
    # c10/util/Logging.h picks logging_is_google_glog.h or
    # logging_is_not_google_glog.h on this generated macro.
    macros = ctx.path(include + "/c10/macros/cmake_macros.h")
    if not macros.exists:
        _fail("%s has no c10/macros/cmake_macros.h" % include)
    for line in ctx.read(macros).splitlines():
        if [w for w in line.replace("\t", " ").split(" ") if w][:2] == ["#define", "C10_USE_GLOG"]:
            return True
    return False

def _torch_version(ctx, api_include):
    header = ctx.path(api_include + "/torch/version.h")
    if not header.exists:
        _fail("%s has no torch/version.h" % api_include)
    version = {}
    for line in ctx.read(header).splitlines():
        words = [w for w in line.replace("\t", " ").split(" ") if w]
        if len(words) == 3 and words[0] == "#define" and words[1] in [
            "TORCH_VERSION_MAJOR",
            "TORCH_VERSION_MINOR",
            "TORCH_VERSION_PATCH",
        ]:
            version[words[1]] = int(words[2])
    if len(version) != 3:
        _fail("cannot read the version from " + str(header))
    return version

# Compiled with every LibTorch consumer. Debian's 1.13 headers sit in
# /usr/include, which the compiler searches after the chosen LibTorch's
# directories: this fails the build when <torch/version.h> comes from anywhere
# but the chosen LibTorch (its directories missing or not first). A header the
# chosen LibTorch lacks and Debian's has would still be taken from Debian's.
_VERSION_CHECK = """#include <torch/version.h>

#include "expected_torch_version.h"

static_assert(TORCH_VERSION_MAJOR == RINGLEADER_EXPECTED_TORCH_VERSION_MAJOR &&
                  TORCH_VERSION_MINOR == RINGLEADER_EXPECTED_TORCH_VERSION_MINOR &&
                  TORCH_VERSION_PATCH == RINGLEADER_EXPECTED_TORCH_VERSION_PATCH,
              "<torch/version.h> is not the chosen LibTorch's (see "
              "tools/libtorch_configure.bzl): another LibTorch's headers, "
              "such as Debian's in /usr/include, come first");
"""

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
        include = _DEBIAN_INCLUDE
        api_include = _DEBIAN_API_INCLUDE
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
        include = root + "/include"
        api_include = include + "/torch/csrc/api/include"
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

    glog = _c10_uses_glog(ctx, include)
    version = _torch_version(ctx, api_include)
    version_string = "%d.%d.%d" % (
        version["TORCH_VERSION_MAJOR"],
        version["TORCH_VERSION_MINOR"],
        version["TORCH_VERSION_PATCH"],
    )
    ctx.file("defs.bzl", "\n".join([
        "TORCH_CUDA = %s" % has_cuda,
        "TORCH_ROOT = \"%s\"" % root,
        "TORCH_DESCRIPTION = \"%s\"" % (description + (", with CUDA" if has_cuda else ", CPU only")),
        "TORCH_GLOG = %s" % glog,
        "TORCH_VERSION = \"%s\"" % version_string,
        "",
    ]))
    ctx.file("expected_torch_version.h", "".join([
        "#define RINGLEADER_EXPECTED_%s %d\n" % (k, version[k])
        for k in sorted(version)
    ]))
    ctx.file("torch_version_check.cc", _VERSION_CHECK)
    ctx.file("BUILD", """
package(default_visibility = ["//visibility:public"])

# {description}, {version}, c10 logging through {logging}.
cc_library(
    name = "torch",
    deps = [
        ":libtorch",
        ":version_check",
    ],
)

cc_library(
    name = "libtorch",
    hdrs = {hdrs},
    defines = {defines},
    includes = {includes},
    linkopts = {linkopts},
    visibility = ["//visibility:private"],
)

cc_library(
    name = "version_check",
    srcs = ["torch_version_check.cc"],
    hdrs = ["expected_torch_version.h"],
    deps = [":libtorch"],
    visibility = ["//visibility:private"],
)
""".format(
        description = description,
        version = version_string,
        logging = "glog" if glog else "its own macros",
        hdrs = hdrs,
        defines = repr([] if glog else ["RINGLEADER_C10_OWN_LOGGING"]),
        includes = includes,
        linkopts = repr(linkopts),
    ))

libtorch_configure = repository_rule(
    implementation = _libtorch_configure_impl,
    environ = ["RINGLEADER_LIBTORCH"],
    local = True,
)

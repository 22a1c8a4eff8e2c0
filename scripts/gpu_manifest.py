"""Turns `bazel aquery --output=jsonproto` of one target into a build manifest.

scripts/gpu_bundle.sh runs it here (where Bazel is) so that scripts/gpu_check.sh
can compile, on a machine without Bazel, exactly the translation units Bazel
would, with Bazel's own flags and link line:

    gpu_manifest.py AQUERY_JSON LABEL KIND OUT_JSON

AQUERY_JSON: `bazel aquery -c opt 'mnemonic("CppCompile|CppLink", deps(LABEL))'
--output=jsonproto --include_param_files`. KIND: binary or test.

OUT_JSON holds the target's name, kind, its compile units (source, object, and
Bazel's compiler arguments with the paths that only exist here replaced by
placeholders) and its link arguments in Bazel's order. Placeholders, filled in
by scripts/gpu_ninja.py on the machine that builds:
  @GEN@             Bazel's bin directory (the generated proto sources travel
                    in the bundle's gen/);
  @TORCH_INCLUDES@  the LibTorch headers (one marker where Bazel put them);
  @CUDA_INCLUDES@   the CUDA toolkit and NCCL headers;
  @TORCH_LIBS@      LibTorch's libraries (-ltorch ... and, with CUDA,
                    -ltorch_cuda -lc10_cuda), at the position of Bazel's;
  @CUDA_LIBS@       cudart and NCCL, at the position of Bazel's -lnccl.
Only the standard library is used.
"""
import json
import re
import sys

# Arguments the builder re-creates itself (dependency files, output, input),
# or that name tools of this machine.
_DROP_WITH_VALUE = {"-MF", "-o", "-c"}
_DROP = {"-MD", "-fuse-ld=gold", "-B/usr/bin", "-pass-exit-codes"}
_TORCH_LIBS = {"-ltorch", "-ltorch_cpu", "-lc10", "-ltorch_cuda", "-lc10_cuda"}
_CUDA_LIBS = {"-lnccl", "-lcudart"}
# The same named otherwise: -l:libnccl.so.2, or a library's path.
_CUDA_LIB_RE = re.compile(r"^(-l:|/.*/)lib(nccl|cudart)(_static)?\.(so|a)(\.[0-9.]+)?$")
_TORCH_LIB_RE = re.compile(r"^(-l:|/.*/)lib(torch|torch_cpu|torch_cuda|c10|c10_cuda)\.so(\.[0-9.]+)?$")
_PLACEHOLDERS = {"@TORCH_INCLUDES@", "@CUDA_INCLUDES@"}
# Defines that depend on the LibTorch: the builder sets them from the one it
# has (tools/libtorch_configure.bzl decides them from this machine's), so
# the stand-in LibTorch of the CUDA graph decides nothing.
_BUILDER_DEFINES = {"-DRINGLEADER_C10_OWN_LOGGING"}


def _bin_dir(path):
    """bazel-out/k8-opt/bin/x -> @GEN@/x (any configuration name)."""
    return re.sub(r"^bazel-out/[^/]+/bin(?=/|$)", "@GEN@", path)


def _include_dir(path):
    """A -I/-iquote/-isystem directory as the builder sees it, or None to drop.

    external/libtorch and external/local_cuda are this machine's LibTorch and
    CUDA (through the repository rules' symlinks): the builder puts the other
    machine's in their place. external/bazel_tools has nothing we include.
    """
    path = _bin_dir(path)
    m = re.match(r"^(@GEN@/)?external/([^/]+)", path)
    if m:
        return {"libtorch": "@TORCH_INCLUDES@", "local_cuda": "@CUDA_INCLUDES@"}.get(m.group(2))
    return path


def compile_args(args):
    """Bazel's compiler arguments without the compiler, I/O and tool paths."""
    out = []
    it = iter(args[1:])
    for a in it:
        if a in _DROP_WITH_VALUE:
            next(it)
        elif a in _DROP or a.startswith("-frandom-seed=") or a in _BUILDER_DEFINES:
            continue
        elif a in ("-iquote", "-isystem", "-I") or a.startswith("-I"):
            d = _include_dir(next(it) if a in ("-iquote", "-isystem", "-I") else a[2:])
            if d in _PLACEHOLDERS:
                if d not in out:
                    out.append(d)  # the builder's own flags, placed once
            elif d is not None:
                out += ["-I" + d] if a.startswith("-I") else [a, d]
        else:
            out.append(a)
    return out


def link_args(args):
    """Bazel's link arguments: objects (and --start-lib groups) and flags."""
    out = []
    it = iter(args)
    for a in it:
        if a == "-o":
            next(it)
        elif a in _DROP or a.startswith("@"):  # tools, and the params file
            continue
        elif a in _TORCH_LIBS or _TORCH_LIB_RE.match(a):
            if "@TORCH_LIBS@" not in out:
                out.append("@TORCH_LIBS@")
        elif a in _CUDA_LIBS or _CUDA_LIB_RE.match(a):
            if "@CUDA_LIBS@" not in out:
                out.append("@CUDA_LIBS@")
        elif re.match(r"^(-L|-Wl,-rpath,)/", a):
            continue  # this machine's LibTorch/CUDA directories
        elif a in ("-Wl,--no-as-needed", "-Wl,--as-needed") and out and out[-1] in (
                "@TORCH_LIBS@", "-Wl,--no-as-needed"):
            continue  # the torch_cuda bracket, which @TORCH_LIBS@ re-creates
        else:
            out.append(_bin_dir(a))
    # A bracket opened before the torch libraries and left dangling.
    while "-Wl,--no-as-needed" in out and out.index("-Wl,--no-as-needed") + 1 < len(out) \
            and out[out.index("-Wl,--no-as-needed") + 1] == "@TORCH_LIBS@":
        out.pop(out.index("-Wl,--no-as-needed"))
    return out


def drop_external(link):
    """The link without objects of external repositories, and empty groups.

    Those are units the repository rules generate (such as a check that the
    chosen LibTorch's headers come first); their sources exist only in
    Bazel's output base. The builder puts its include paths itself.
    """
    out = [a for a in link if not (a.endswith(".o") and a.startswith("@GEN@/external/"))]
    while True:
        pairs = [i for i in range(len(out) - 1)
                 if out[i] == "-Wl,--start-lib" and out[i + 1] == "-Wl,--end-lib"]
        if not pairs:
            return out
        del out[pairs[0]:pairs[0] + 2]


def main():
    aquery, label, kind, out_path = sys.argv[1:5]
    data = json.load(open(aquery))
    name = label.split(":")[-1]
    links = []
    for a in data.get("actions", []):
        if a["mnemonic"] != "CppLink":
            continue
        args = a["paramFiles"][0]["arguments"] if a.get("paramFiles") else a["arguments"][1:]
        if "-o" in args and args[args.index("-o") + 1].endswith("/" + label.split("//")[1].replace(":", "/")):
            links.append(args)
    if len(links) != 1:
        sys.exit(f"{label}: expected one link action for the binary, found {len(links)}")
    link = drop_external(link_args(links[0]))
    objects = {a for a in link if a.endswith(".o")}
    units = []
    for a in data["actions"]:
        if a["mnemonic"] != "CppCompile":
            continue
        args = a["arguments"]
        obj = _bin_dir(args[args.index("-o") + 1])
        if obj not in objects:
            continue  # the .pic.o twin, or a header-parse action
        units.append({"src": _bin_dir(args[args.index("-c") + 1]), "obj": obj,
                      "args": compile_args(args)})
    missing = objects - {u["obj"] for u in units}
    if missing:
        sys.exit(f"{label}: objects without a compile action: {sorted(missing)}")
    units.sort(key=lambda u: u["obj"])
    json.dump({"label": label, "name": name, "kind": kind, "units": units, "link": link},
              open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()

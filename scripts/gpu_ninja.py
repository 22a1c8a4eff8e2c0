"""Writes a build.ninja from the manifests scripts/gpu_manifest.py made.

scripts/gpu_check.sh runs it on the machine that builds (no Bazel there):

    gpu_ninja.py --out build.ninja --build DIR --gen DIR --cxx CXX \
        [--torch-includes FLAGS] [--cuda-includes FLAGS] [--system-includes FLAGS] \
        [--torch-libs FLAGS] [--cuda-libs FLAGS] [--ldflags FLAGS] \
        [--cxxflags FLAGS] [--torch-cxxflags FLAGS] [--opt LEVEL] MANIFEST...

Each manifest's compile units become objects under --build (one per object,
however many targets share it), each --start-lib group of Bazel's link line a
static archive (what the group stands for), and the target a binary
--build/bin/NAME. FLAGS are shell words (split with shlex).
  --system-includes  the bundle's Debian headers: before LibTorch's, so that
                     a header both ship (Gloo's) is the one the carried
                     library was built with;
  --cxxflags         added to every unit (e.g. -D_GLIBCXX_USE_CXX11_ABI=1);
  --torch-cxxflags   added to the units that include LibTorch only;
  --opt              replaces Bazel's -O2 (e.g. -O0 for a quick rehearsal);
  --torch-libs-last  LibTorch's libraries after every other library rather
                     than where Bazel puts them: the dynamic linker binds a
                     symbol to the first library that defines it, and a pip
                     LibTorch may export its own copies of Gloo and Protobuf;
                     ours (and Debian's libraries') must bind to Debian's.
Only the standard library is used.
"""
import argparse
import json
import os
import shlex


def ninja_escape(word):
    return word.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def shell_join(words):
    # Ninja passes the command to /bin/sh; $ is escaped for ninja afterwards.
    return " ".join(shlex.quote(w) for w in words).replace("$", "$$")


class Builder:
    def __init__(self, opts):
        self.o = opts
        self.objects = {}  # object path -> (source, args)
        self.archives = {}  # archive path -> [objects]
        self.binaries = []  # (path, inputs, link words)

    def path(self, p):
        """@GEN@/x: an object under --build/obj, or a generated source in --gen."""
        if p.startswith("@GEN@/"):
            rest = p[len("@GEN@/"):]
            return os.path.join(self.o.build, "obj", rest) if rest.endswith(".o") \
                else os.path.join(self.o.gen, rest)
        return p

    def compile_words(self, args):
        words, torch = [], "@TORCH_INCLUDES@" in args
        system_done = False
        for a in args:
            if a == "@GEN@":
                words.append(self.o.gen)
            elif a.startswith("@GEN@/"):
                words.append(os.path.join(self.o.gen, a[len("@GEN@/"):]))
            elif a == "@TORCH_INCLUDES@":
                if not system_done:
                    words += shlex.split(self.o.system_includes)
                    system_done = True
                words += shlex.split(self.o.torch_includes)
            elif a == "@CUDA_INCLUDES@":
                words += shlex.split(self.o.cuda_includes)
            elif a == "-O2" and self.o.opt:
                words.append(self.o.opt)
            elif a.startswith("-I@"):
                words.append("-I" + self.path(a[2:]))
            else:
                words.append(a)
        if not system_done:
            words += shlex.split(self.o.system_includes)
        words += shlex.split(self.o.cxxflags)
        if torch:
            words += shlex.split(self.o.torch_cxxflags)
        return words

    def add(self, manifest):
        for u in manifest["units"]:
            obj = self.path(u["obj"])
            entry = (self.path(u["src"]), self.compile_words(u["args"]))
            if self.objects.setdefault(obj, entry) != entry:
                raise SystemExit(f"{obj}: two targets compile it differently")
        inputs, words, group = [], [], None
        for a in manifest["link"]:
            if a == "-Wl,--start-lib":
                group = []
            elif a == "-Wl,--end-lib":
                # Bazel's (gold's) archive-in-place: an archive named as
                # Bazel names the library, pkg/_objs/LIB/x.o -> pkg/libLIB.a.
                first = group[0]
                pkg, lib = first.split("/_objs/")[0], first.split("/_objs/")[1].split("/")[0]
                archive = os.path.join(pkg, "lib" + lib + ".a")
                self.archives.setdefault(archive, group)
                inputs.append(archive)
                words.append(archive)
                group = None
            elif a.endswith(".o"):
                (group if group is not None else words).append(self.path(a))
                if group is None:
                    inputs.append(self.path(a))
            elif a == "@TORCH_LIBS@":
                if not self.o.torch_libs_last:
                    words += shlex.split(self.o.torch_libs)
            elif a == "@CUDA_LIBS@":
                words += shlex.split(self.o.cuda_libs)
            else:
                words.append(a)
        if self.o.torch_libs_last and "@TORCH_LIBS@" in manifest["link"]:
            words += shlex.split(self.o.torch_libs)
        out = os.path.join(self.o.build, "bin", manifest["name"])
        self.binaries.append((out, inputs, words + shlex.split(self.o.ldflags)))

    def write(self, path):
        lines = [
            "# Generated by scripts/gpu_ninja.py; do not edit.",
            # Ninja's log and deps there, not in the tree; two files with the
            # same --build share them (an object built with the same command
            # is up to date for both).
            f"builddir = {ninja_escape(self.o.build)}",
            "rule cxx",
            f"  command = {shlex.quote(self.o.cxx)} $args -MD -MF $out.d -c $in -o $out",
            "  depfile = $out.d",
            "  deps = gcc",
            "  description = CXX $in",
            "rule ar",
            "  command = rm -f $out && ar rcs $out $in",
            "  description = AR $out",
            "rule link",
            f"  command = {shlex.quote(self.o.cxx)} -o $out $args",
            "  description = LINK $out",
        ]
        for obj, (src, args) in sorted(self.objects.items()):
            lines += [f"build {ninja_escape(obj)}: cxx {ninja_escape(src)}",
                      f"  args = {shell_join(args)}"]
        for archive, objs in sorted(self.archives.items()):
            lines.append(f"build {ninja_escape(archive)}: ar " +
                         " ".join(ninja_escape(o) for o in objs))
        # `ninja objects`: compile every unit, link nothing.
        lines.append("build objects: phony " +
                     " ".join(ninja_escape(o) for o in sorted(self.objects)))
        for out, inputs, words in self.binaries:
            lines += [f"build {ninja_escape(out)}: link | " +
                      " ".join(ninja_escape(i) for i in inputs),
                      f"  args = {shell_join(words)}"]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--build", required=True)
    p.add_argument("--gen", required=True)
    p.add_argument("--cxx", default="g++")
    for flag in ("torch-includes", "cuda-includes", "system-includes", "torch-libs",
                 "cuda-libs", "ldflags", "cxxflags", "torch-cxxflags", "opt"):
        p.add_argument("--" + flag, default="")
    p.add_argument("--torch-libs-last", action="store_true")
    p.add_argument("manifests", nargs="+")
    opts = p.parse_args()
    b = Builder(opts)
    for m in opts.manifests:
        b.add(json.load(open(m)))
    b.write(opts.out)
    print(f"{opts.out}: {len(b.objects)} compile units, {len(b.archives)} archives, "
          f"{len(b.binaries)} binaries")


if __name__ == "__main__":
    main()

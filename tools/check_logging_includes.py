#!/usr/bin/env python3
"""Checks that the tree compiles with either kind of c10 logging.

Debian's LibTorch 1.13 logs through glog; torch 2.x from pip or pytorch.org
defines its own LOG/CHECK/VLOG, which clash with glog's in a translation unit
that includes both (common/logging.h says more). This machine has only the
first kind, so these checks stand in for a build against the second:

  shim_picks_c10_or_glog   the preprocessor, run on common/logging.h with
      RINGLEADER_C10_OWN_LOGGING defined, includes c10/util/Logging.h and
      not glog/logging.h itself; without it, glog/logging.h;
  torch_units_use_the_shim   no translation unit (each .cc under
      coordinator, worker, common, cli, bench, tests, fuzz) whose includes,
      followed through the repository's own headers, reach LibTorch's
      headers also reaches glog/logging.h other than through the shim;
  torch_units_use_c10s_macros   those units, and the repository headers
      they include, use only the glog macros c10 also defines.
What it cannot show: that torch 2.x's headers compile with our code; only a
build against such a LibTorch does (scripts/gpu_check.sh on a GPU machine).

Usage: tools/check_logging_includes.py [--xml FILE]  (from the repo root;
scripts/test.sh runs it and counts each check as a case).
"""
import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

SHIM = "common/logging.h"
SOURCE_DIRS = ("coordinator/", "worker/", "common/", "cli/", "bench/", "tests/",
               "fuzz/")
TORCH_PREFIXES = ("torch/", "ATen/", "c10/", "caffe2/")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
# glog macros and names that c10/util/logging_is_not_google_glog.h lacks.
GLOG_ONLY = re.compile(
    r"\b(CHECK_(?:EQ|NE|LT|LE|GT|GE|NOTNULL|STREQ|STRNE|STRCASEEQ|STRCASENE|"
    r"DOUBLE_EQ|NEAR|ERR)|DCHECK_\w+|PCHECK|D?PLOG\w*|LOG_EVERY_\w+|LOG_FIRST_N|"
    r"LOG_IF_EVERY_N|VLOG_EVERY_N|LOG_STRING|LOG_TO_\w+|SYSLOG\w*|google::(?!protobuf\b)\w+)\b")
LOG_SEVERITY = re.compile(r"\b(?:LOG|LOG_IF|DLOG)\(\s*(\w+)")
C10_SEVERITIES = {"INFO", "WARNING", "ERROR", "FATAL"}
class Tree:
    def __init__(self, files):
        self.includes = {}
        for path in files:
            with open(path, errors="replace") as f:
                self.includes[path] = INCLUDE.findall(f.read())

    def closure(self, unit):
        seen, todo = {unit}, [unit]
        while todo:
            for inc in self.includes[todo.pop()]:
                if inc in self.includes and inc not in seen and inc != SHIM:
                    seen.add(inc)
                    todo.append(inc)
        return seen

    def reaches_torch(self, files):
        return any(inc.startswith(TORCH_PREFIXES) and inc not in self.includes
                   for f in files for inc in self.includes[f])


def strip_comments(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def shim_includes(define):
    """The #include directives common/logging.h itself runs, in order."""
    # -dI keeps each #include in the output, after line markers that say
    # which file it is in; an include guard cannot hide one (as with -H).
    run = subprocess.run(["c++", "-std=c++17", "-E", "-dI", "-x", "c++", SHIM] + define,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    if run.returncode != 0:
        raise RuntimeError("preprocessing %s %s failed:\n%s" % (SHIM, define, run.stderr))
    current, found = None, []
    for line in run.stdout.splitlines():
        marker = re.match(r'# \d+ "([^"]+)"', line)
        if marker:
            current = marker.group(1)
        elif current == SHIM and line.startswith("#include"):
            found.append(line.split(None, 1)[1].strip('<>"'))
    return found


def shim_case():
    want = {"-DRINGLEADER_C10_OWN_LOGGING": ["c10/util/Logging.h"], "": ["glog/logging.h"]}
    problems = []
    for define, expected in sorted(want.items()):
        try:
            got = shim_includes([define] if define else [])
        except RuntimeError as e:
            return str(e)
        if got != expected:
            problems.append("%s RINGLEADER_C10_OWN_LOGGING, %s includes %s, not only %s"
                            % ("with" if define else "without", SHIM, got, expected))
    return "; ".join(problems) or None


def torch_units(tree):
    return {u: c for u in sorted(tree.includes) if u.endswith(".cc")
            for c in [tree.closure(u)] if tree.reaches_torch(c)}


def shim_use_cases(tree, units):
    wrong = {u: sorted(f for f in c if "glog/logging.h" in tree.includes[f])
             for u, c in units.items()}
    wrong = {u: fs for u, fs in wrong.items() if fs}
    bad = ["%s (glog/logging.h from %s)" % (u, ", ".join(fs))
           for u, fs in sorted(wrong.items())]
    return ("LibTorch units that include glog/logging.h instead of %s: %s"
            % (SHIM, "; ".join(bad))) if bad else None


def macro_case(tree, units):
    found = set()
    for files in units.values():
        for f in files:
            with open(f, errors="replace") as src:
                text = strip_comments(src.read())
            for m in GLOG_ONLY.finditer(text):
                found.add("%s: %s" % (f, m.group(1)))
            for m in LOG_SEVERITY.finditer(text):
                if m.group(1) not in C10_SEVERITIES:
                    found.add("%s: LOG(%s)" % (f, m.group(1)))
    if found:
        return "glog-only logging in LibTorch units: " + "; ".join(sorted(found))
    return None


def write_junit(path, results):
    suite = ET.Element("testsuite", name="logging_includes", tests=str(len(results)))
    for name, kind, message in results:
        case = ET.SubElement(suite, "testcase", classname="LoggingIncludes", name=name)
        if kind:
            ET.SubElement(case, kind, message=message[:200]).text = message
    root = ET.Element("testsuites")
    root.append(suite)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--xml", default="")
    args = parser.parse_args(argv)
    files = subprocess.run(["git", "ls-files", "--", "*.cc", "*.h"], check=True,
                           stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    tree = Tree([f for f in files if f.startswith(SOURCE_DIRS) and os.path.exists(f)])
    units = torch_units(tree)
    use = shim_use_cases(tree, units)
    results = [("shim_picks_c10_or_glog", None, shim_case()),
               ("torch_units_use_the_shim", None, use),
               ("torch_units_use_c10s_macros", None, macro_case(tree, units))]
    results = [(n, "failure" if m else None, m or "") for n, _, m in results]
    for name, kind, message in results:
        print("[%s] %s%s" % ({"failure": "FAIL", "skipped": "SKIP"}.get(kind, " OK "),
                             name, ": " + message if message else ""))
    print("%d LibTorch translation units checked" % len(units))
    if args.xml:
        os.makedirs(os.path.dirname(args.xml) or ".", exist_ok=True)
        write_junit(args.xml, results)
    return 1 if any(kind == "failure" for _, kind, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

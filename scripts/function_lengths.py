#!/usr/bin/env python3
"""Lists the functions longer than a limit in the C++ sources (issue 33,
point 7: no function over about 80 lines in coordinator/, worker/, cli/,
common/).

A brace-matching scan, not a parser: comments, string and character literals
and preprocessor lines are blanked, then every `{` is classified by the text
before it (back to the previous `;`, `{` or `}`): namespace, class, struct,
union, enum and extern blocks are scopes; a block whose header holds a `(`
and that opens outside any function is a function (its lambdas and inner
blocks count towards it); anything else (an initializer, a table) is not
counted. A function's length is its lines from the line of its name to its
closing brace, both included.

  python3 scripts/function_lengths.py                 # coordinator worker cli common, over 80
  python3 scripts/function_lengths.py --limit 60 worker/train
  python3 scripts/function_lengths.py --check         # exit 1 when any is over
  python3 scripts/function_lengths.py --xml FILE      # also one JUnit case (scripts/test.sh)

Prints `LINES  FILE:LINE  NAME`, longest first.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

DEFAULT_DIRS = ("coordinator", "worker", "cli", "common")
SCOPE_RE = re.compile(r"\b(namespace|class|struct|union|enum|extern)\b")
NAME_RE = re.compile(r"((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*|operator\s*\S+)\s*(?:<[^()]*>)?\s*\($")


def blank(text):
    """The text with comments, literals and preprocessor lines replaced by
    spaces, newlines kept, so that offsets and line numbers still hold."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor line, with its continuations.
            j = i
            while j < n and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "\n":
            at_line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j == -1 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j == -1 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end == -1 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + (c if j - i >= 2 else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, last line) of each function defined in path."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    stack = []  # per open brace: "scope", "function" or "block"
    header_start = 0
    fn_start = None
    for i, c in enumerate(text):
        if c in ";":
            if not stack or stack[-1] == "scope":
                header_start = i + 1
        elif c == "{":
            header = text[header_start:i]
            in_function = "function" in stack
            if in_function:
                stack.append("block")
            elif SCOPE_RE.search(header) and "(" not in header.split("{")[0][:header.find(SCOPE_RE.search(header).group(0))]:
                stack.append("scope")
            elif "(" in header and "=" not in header.split("(")[0]:
                stack.append("function")
                paren = header.find("(")
                m = NAME_RE.search(header[: paren + 1].rstrip())
                name = m.group(1) if m else header.strip().split("(")[0][-40:]
                name_at = header_start + (m.start(1) if m else 0)
                fn_start = (re.sub(r"\s+", " ", name), text.count("\n", 0, name_at) + 1)
            else:
                stack.append("block")
            header_start = i + 1
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                found.append((fn_start[0], fn_start[1], text.count("\n", 0, i) + 1))
            if not stack or stack[-1] == "scope":
                header_start = i + 1
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="*", default=list(DEFAULT_DIRS))
    p.add_argument("--limit", type=int, default=80, help="longest allowed, in lines")
    p.add_argument("--check", action="store_true", help="exit 1 when any function is over the limit")
    p.add_argument("--xml", default="",
                   help="write one JUnit case, failed when any function is over (implies --check)")
    p.add_argument("--exclude", action="append", default=["cli/spec_flag_table.cc"],
                   help="files not scanned (the flag tables); repeatable")
    args = p.parse_args()
    files = []
    for root in args.paths:
        if os.path.isfile(root):
            files.append(root)
            continue
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if n.endswith((".cc", ".h"))]
    rows = []
    for path in sorted(files):
        if os.path.normpath(path) in {os.path.normpath(e) for e in args.exclude}:
            continue
        for name, first, last in functions(path):
            length = last - first + 1
            if length > args.limit:
                rows.append((length, path, first, name))
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    for length, path, first, name in rows:
        print(f"{length:5d}  {path}:{first}  {name}")
    print(f"{len(rows)} function(s) over {args.limit} lines", file=sys.stderr)
    if args.xml:
        write_junit(args.xml, args.limit, rows)
    return 1 if (args.check or args.xml) and rows else 0


def write_junit(path, limit, rows):
    suite = ET.Element("testsuite", name="function_lengths", tests="1")
    case = ET.SubElement(suite, "testcase", classname="FunctionLengths",
                         name=f"no_function_over_{limit}_lines")
    if rows:
        message = "; ".join(f"{p}:{first} {name} ({n} lines)" for n, p, first, name in rows)
        ET.SubElement(case, "failure", message=message[:200]).text = message
    root = ET.Element("testsuites")
    root.append(suite)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Sums test cases over JUnit test.xml files: Bazel's (GoogleTest) and
pytest's (python/tests, scripts/python_tests.sh), which share the format: a
<testcase> per case, with a <failure> or <error> child when it failed (pytest
also writes <error> for a failed fixture) and <skipped> when it was skipped.

Prints "N passed, N failed[, N skipped]" and exits 1 if any case failed or a
test target left no readable result (a crash before GoogleTest wrote XML).
Takes one or more directories (default bazel-testlogs); scripts/test.sh also
passes the one where scripts/fuzz.sh and the other checks wrote theirs.
"""
import pathlib
import sys
import xml.etree.ElementTree as ET


def main(roots: list) -> int:
    passed = failed = skipped = 0
    xmls = [xml for root in roots
            for xml in sorted(pathlib.Path(root).rglob("test.xml"))]
    for xml in xmls:
        try:
            tree = ET.parse(xml)
        except ET.ParseError:
            print(f"unreadable result: {xml}", file=sys.stderr)
            failed += 1
            continue
        cases = tree.getroot().iter("testcase")
        found = False
        for case in cases:
            found = True
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                print(f"FAILED: {case.get('classname')}.{case.get('name')}",
                      file=sys.stderr)
            elif case.find("skipped") is not None or case.get("result") == "skipped":
                skipped += 1
            else:
                passed += 1
        if not found:
            # Bazel writes a one-case XML for a target that crashed.
            failed += 1
            print(f"no test cases in {xml}", file=sys.stderr)
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["bazel-testlogs"]))

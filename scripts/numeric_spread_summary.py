#!/usr/bin/python3
"""The table of scripts/numeric_spread.sh's rows: per bounded quantity, its
values over OpenBLAS kernel families (seed offset 0) and over seeds (the
CPU's own kernels), min, max and spread, and how many runs failed a test."""
import collections
import json
import sys


def main(path: str) -> int:
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by_name = collections.OrderedDict()
    for r in rows:
        by_name.setdefault(r["name"], []).append(r)
    print("| quantity | runs | over families (min .. max) | over seeds "
          "(min .. max) | all (min .. max) | spread | runs failed |")
    print("|---|---|---|---|---|---|---|")
    for name, rs in by_name.items():
        fam = [r["value"] for r in rs if r["seed_offset"] == 0]
        seeds = [r["value"] for r in rs if r["family"] == "default"]
        vals = [r["value"] for r in rs]
        fmt = lambda xs: f"{min(xs):.4g} .. {max(xs):.4g}" if xs else "-"
        print(f"| {name} | {len(rs)} | {fmt(fam)} | {fmt(seeds)} | {fmt(vals)} "
              f"| {max(vals) - min(vals):.4g} | "
              f"{sum(1 for r in rs if not r['passed'])} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  "bench/results/numeric_spread.jsonl"))

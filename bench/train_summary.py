"""Table of bench/train_bench.sh's results, with the compute limit and ratios."""
import json
import os
import sys
from collections import defaultdict

CORES = os.cpu_count() or 1


def main(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    by = defaultdict(dict)
    for r in rows:
        by[(r["model"], r["global_batch"], r["world"])][r["impl"]] = r
    print(f"{'model':>5} {'batch':>5} {'ranks':>5} {'ringleader':>11} {'ddp':>9} "
          f"{'rl/ddp':>6} {'limit':>9} {'rl/limit':>8}   (samples/s; {CORES} cores)")
    for (model, gb, world) in sorted(by):
        d = by[(model, gb, world)]
        rl = d.get("ringleader", {}).get("samples_per_s", 0)
        ddp = d.get("pytorch-ddp", {}).get("samples_per_s", 0)
        one = by.get((model, gb, 1), {}).get("ringleader", {}).get("samples_per_s", 0)
        limit = one * min(world, CORES)
        print(f"{model:>5} {gb:>5} {world:>5} {rl:>11.0f} {ddp:>9.0f} "
              f"{(rl / ddp if ddp else float('nan')):>6.2f} {limit:>9.0f} "
              f"{(rl / limit if limit else float('nan')):>8.2f}")


if __name__ == "__main__":
    main(sys.argv[1])

"""Tables of bench/allreduce/inflight_bench.sh's results (JSON lines): per link, the
step time of $BUCKETS all-reduces and the training rate for each number of
buckets in flight K, medians over repeats, and each K's ratio to K=1 (taken
within a repeat, then the median).
    inflight_summary.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict


def human(n):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"


def fmt_ratio(r):
    """Median ratio and its range over repeats."""
    if r is None:
        return f"{'-':>17}"
    return f"{r[0]:5.2f} ({r[1]:.2f}..{r[2]:.2f})"


def table(rows, key, value, higher_is_better):
    """rows grouped by key(r) -> {K: [values per repeat]}, and ratios to K=1
    within each repeat."""
    by = defaultdict(lambda: defaultdict(dict))  # key -> repeat -> K -> value
    for r in rows:
        by[key(r)][r.get("repeat", 1)][r["buckets_in_flight"]] = value(r)
    out = {}
    for k, reps in by.items():
        ks = sorted({kk for rep in reps.values() for kk in rep})
        med = {kk: statistics.median([rep[kk] for rep in reps.values() if kk in rep])
               for kk in ks}
        ratio = {}
        for kk in ks:
            rs = [rep[kk] / rep[1] if higher_is_better else rep[1] / rep[kk]
                  for rep in reps.values() if kk in rep and 1 in rep and rep[1] > 0 and rep[kk] > 0]
            ratio[kk] = (statistics.median(rs), min(rs), max(rs)) if rs else None
        out[k] = (ks, med, ratio, len(reps))
    return out


def main(path):
    rows = []
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if "conditions" in r:
            print("conditions:", json.dumps(r["conditions"]))
            continue
        rows.append(r)
    ar = [r for r in rows if r.get("part") == "allreduce"]
    if ar:
        buckets = ar[0].get("buckets", 1)
        what = (f"{buckets} float32 all-reduces issued together, then waited"
                if buckets > 1 else "one blocking float32 all-reduce at a time")
        print(f"\nAll-reduce steps: {what}; 2 ranks over Gloo. Median step time "
              "(ms); speedup = K=1's time / K's")
        t = table(ar, lambda r: (r["link"], r["bytes"]), lambda r: r["median_s"], False)
        ks = sorted({k for v in t.values() for k in v[0]})
        print(f"{'link':>6} {'bucket':>10} " +
              " ".join(f"{'K=' + str(k) + ' ms':>9}" for k in ks) + " " +
              " ".join(f"{'x K=' + str(k) + ' (range)':>17}" for k in ks if k != 1) + "  repeats")
        for (link, size) in sorted(t, key=lambda x: (x[0] != "lo", x[0], x[1])):
            _, med, ratio, n = t[(link, size)]
            print(f"{link:>6} {human(size):>10} " +
                  " ".join(f"{med[k] * 1e3:9.3f}" if k in med else f"{'-':>9}" for k in ks) + " " +
                  " ".join(fmt_ratio(ratio.get(k)) for k in ks if k != 1) +
                  f"  {n}")
    tr = [r for r in rows if r.get("part") == "train" and r.get("samples_per_s")]
    if tr:
        print("\nTraining, 2 workers over Gloo: samples/s (median); ratio = K's / K=1's")
        t = table(tr, lambda r: (r["link"], r["model"], r["bucket_set"]),
                  lambda r: r["samples_per_s"], True)
        ks = sorted({k for v in t.values() for k in v[0]})
        print(f"{'link':>6} {'model':>6} {'buckets':>8} " +
              " ".join(f"{'K=' + str(k):>8}" for k in ks) + " " +
              " ".join(f"{'x K=' + str(k) + ' (range)':>17}" for k in ks if k != 1) + "  repeats")
        for key in sorted(t, key=lambda x: (x[0] != "lo",) + x):
            _, med, ratio, n = t[key]
            link, model, bset = key
            print(f"{link:>6} {model:>6} {bset:>8} " +
                  " ".join(f"{med[k]:8.0f}" if k in med else f"{'-':>8}" for k in ks) + " " +
                  " ".join(fmt_ratio(ratio.get(k)) for k in ks if k != 1) +
                  f"  {n}")


if __name__ == "__main__":
    main(sys.argv[1])

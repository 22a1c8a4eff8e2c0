"""Tables of bench/allreduce/compression_bench.sh's results (results/compression.jsonl).

Per model and link: samples/s of each compression (median over repeats),
fp16/none and bf16/none (each ratio taken within a repeat, whose three jobs
ran back to back; median, min..max), gradient bytes all-reduced per step,
and the mean time a step waited for its last buckets after backward. Then
the accuracy cost: each compression's final test accuracy and loss (per
epoch in the JSON) per seed, which do not depend on the link or the repeat
(Gloo sums the same values in the same order on every link), their mean
over seeds and each seed's difference to none.
    compression_summary.py RESULTS.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

COMPRESSIONS = ("none", "fp16", "bf16")


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def last(xs):
    return xs[-1] if isinstance(xs, list) and xs else None


def print_accuracy(model, runs):
    """Final test accuracy and loss per compression and seed (the same on
    every link and repeat: said if not), their mean over seeds, and each
    seed's difference to none."""
    final = defaultdict(dict)  # compression -> seed -> (accuracy, loss)
    mismatch = False
    for (m, _), reps in runs.items():
        if m != model:
            continue
        for (_, seed), by_c in reps.items():
            for c, r in by_c.items():
                got = (last(r.get("test_accuracy")), last(r.get("test_loss")))
                if None in got:
                    continue
                mismatch = mismatch or final[c].get(seed, got) != got
                final[c][seed] = got
    seeds = sorted(final.get("none", {}))
    print(f"\n{model}: accuracy cost, final test accuracy / loss over "
          f"{len(seeds)} seed(s){' (runs of one seed differ!)' if mismatch else ''}")
    for c in COMPRESSIONS:
        if c not in final:
            continue
        vals = [final[c][s] for s in seeds if s in final[c]]
        line = (f"  {c:>5}: accuracy {statistics.mean(v[0] for v in vals):.4f} "
                f"({min(v[0] for v in vals):.4f}..{max(v[0] for v in vals):.4f}), "
                f"loss {statistics.mean(v[1] for v in vals):.4f} "
                f"({min(v[1] for v in vals):.4f}..{max(v[1] for v in vals):.4f})")
        if c != "none":
            da = [final[c][s][0] - final["none"][s][0] for s in seeds if s in final[c]]
            dl = [final[c][s][1] - final["none"][s][1] for s in seeds if s in final[c]]
            line += (f"; minus none: accuracy {statistics.mean(da):+.4f} "
                     f"({min(da):+.4f}..{max(da):+.4f}), loss "
                     f"{statistics.mean(dl):+.4f} ({min(dl):+.4f}..{max(dl):+.4f})")
        print(line)


def main(path):
    runs, probes, links = defaultdict(dict), {}, []
    for line in open(path):
        r = json.loads(line)
        if "link_probe" in r:
            probes[r["link_probe"]["link"]] = r["link_probe"]["mbit_per_s"]
        elif "compression" in r:
            key = (r["model"], r["link"])
            rep = (r["repeat"], r.get("seed", 1))
            runs[key].setdefault(rep, {})[r["compression"]] = r
            if r["link"] not in links:
                links.append(r["link"])
    print("links (one TCP stream, Mbit/s): " + ", ".join(
        f"{k} {v:,.0f}" for k, v in probes.items()))
    for model in sorted({m for m, _ in runs}):
        print(f"\n{model} (samples/s, global batch {next(iter(runs[(model, links[0])].values()))['none']['global_batch']}, "
              "2 ranks over Gloo; medians of repeats)")
        print(f"{'link':>8} {'none':>8} {'fp16':>8} {'bf16':>8} "
              f"{'fp16/none':>14} {'bf16/none':>14} {'MB/step':>12} "
              f"{'wait ms':>17}")
        for link in links:
            reps = runs.get((model, link), {})
            rate = {c: median([rep[c]["samples_per_s"] for rep in reps.values()
                               if c in rep]) for c in COMPRESSIONS}
            cols = []
            for c in ("fp16", "bf16"):
                ratios = [rep[c]["samples_per_s"] / rep["none"]["samples_per_s"]
                          for rep in reps.values()
                          if c in rep and "none" in rep
                          and rep["none"]["samples_per_s"]]
                cols.append(f"{fmt(median(ratios), '.2f')} "
                            f"({fmt(min(ratios), '.2f') if ratios else '-'}.."
                            f"{fmt(max(ratios), '.2f') if ratios else '-'})")
            mb = [median([rep[c].get("bytes_per_step") for rep in reps.values()
                          if c in rep]) for c in ("none", "fp16")]
            wait = [median([rep[c].get("allreduce_wait_ms")
                            for rep in reps.values() if c in rep])
                    for c in COMPRESSIONS]
            print(f"{link:>8} {fmt(rate['none'], '8.0f')} {fmt(rate['fp16'], '8.0f')} "
                  f"{fmt(rate['bf16'], '8.0f')} {cols[0]:>14} {cols[1]:>14} "
                  f"{fmt(mb[0] and mb[0] / 1e6, '.2f'):>5} /{fmt(mb[1] and mb[1] / 1e6, '.2f'):>5} "
                  f"{' / '.join(fmt(w, '.1f') for w in wait):>17}")
        print_accuracy(model, runs)

if __name__ == "__main__":
    main(sys.argv[1])

"""Tables of bench/compression_bench.sh's results (results/compression.jsonl).

Per model and link: samples/s of each compression (median over repeats),
fp16/none and bf16/none (each ratio taken within a repeat, whose three jobs
ran back to back; median, min..max), gradient bytes all-reduced per step,
and the mean time a step waited for its last buckets after backward. Then
the accuracy cost: each compression's final test accuracy and loss (per
epoch in the JSON), which do not depend on the link: Gloo sums the same
values in the same order on every link.
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


def main(path):
    runs, probes, links = defaultdict(dict), {}, []
    for line in open(path):
        r = json.loads(line)
        if "link_probe" in r:
            probes[r["link_probe"]["link"]] = r["link_probe"]["mbit_per_s"]
        elif "compression" in r:
            key = (r["model"], r["link"])
            runs[key].setdefault(r["repeat"], {})[r["compression"]] = r
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
        print(f"\n{model}: accuracy cost (final test accuracy, test loss; "
              "min..max over links and repeats)")
        for c in COMPRESSIONS:
            accs = [last(rep[c].get("test_accuracy")) for (m, _), reps in runs.items()
                    if m == model for rep in reps.values() if c in rep]
            losses = [last(rep[c].get("test_loss")) for (m, _), reps in runs.items()
                      if m == model for rep in reps.values() if c in rep]
            accs = [a for a in accs if a is not None]
            losses = [x for x in losses if x is not None]
            if accs:
                print(f"  {c:>5}: accuracy {min(accs):.4f}..{max(accs):.4f}, "
                      f"loss {min(losses):.4f}..{max(losses):.4f} ({len(accs)} runs)")


if __name__ == "__main__":
    main(sys.argv[1])

"""Table and plot of bench/training/train_bench.sh's results (bench/results/train.jsonl).

Ratios: Ringleader (shared memory on one host) over PyTorch DDP as a user
runs it, over DDP with glibc malloc keeping freed memory, and over the
compute limit; time to 85% test accuracy for both. "lim/ddp" is the compute
limit over DDP: the most any implementation of the same arithmetic on the
same kernels could get over DDP in that configuration (where it is below
1.5, a 1.5x-DDP target cannot be met there). "rl/nhwc" (CNN) is Ringleader
over DDP with the CNN written as Ringleader's worker runs it on CPU
(channels-last, ReLU after pooling) and kept memory: the runtime alone; for
the ResNet, over DDP with kept memory and channels-last images, as the
worker hands them to a convolutional model.

For the example workloads (resnet, gpt) a table per workload, in samples/s,
or tokens/s for the language model: ranks, Ringleader, DDP (the example's
eager model) as a user runs it and with kept memory (km), the compute limit
(one rank's step loop times the ranks: W free cores) and, at several ranks,
the concurrent limit (W step loops side by side on the host as it was),
with each ratio taken within a repeat (the implementations of one repeat ran
minutes apart, the repeats further apart) and its median over repeats
(min..max for rl/ddp and rl/km, the issue's 1.2x target). Rates are medians over repeats. Lines tagged with a
precision (train_bench.sh's PRECISION / PRECISIONS) make a table per
precision, and with both, bf16 over fp32 for each implementation (within a
repeat, medians).
    train_summary.py RESULTS.jsonl [PLOT.png]
"""
import json
import statistics
import sys
from collections import defaultdict

EXAMPLES = ("resnet", "gpt")


# Untagged lines (the job files' own precision), then fp32, then bf16.
PRECISIONS = ("", "fp32", "bf16")


def config_order(key):
    """(model, global batch, ranks, precision) in table and plot order."""
    return key[:3] + (PRECISIONS.index(key[3]),)


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def rate(r):
    """tokens/s where the samples are token windows, else samples/s."""
    return r.get("tokens_per_s", r.get("samples_per_s")) if r else None


def median(xs):
    xs = [x for x in xs if x]
    return statistics.median(xs) if xs else None


class Config:
    """One (model, global batch, ranks): its rows by implementation and repeat."""

    def __init__(self):
        self.rows = defaultdict(dict)  # impl -> repeat -> row

    def add(self, r):
        self.rows[r["impl"]][r.get("repeat", 1)] = r

    def __contains__(self, impl):
        return impl in self.rows

    def get(self, impl, field="samples_per_s"):
        """The median over repeats of a field of an implementation's rows."""
        vals = [r.get(field) for r in self.rows.get(impl, {}).values()]
        vals = [v for v in vals if v is not None]
        if not vals:
            return None
        if all(isinstance(v, (int, float)) for v in vals):
            return statistics.median(vals)
        return vals[0]

    def rate(self, impl):
        return median([rate(r) for r in self.rows.get(impl, {}).values()])

    def ratios(self, a, b):
        """a / b within each repeat that has both."""
        ra, rb = self.rows.get(a, {}), self.rows.get(b, {})
        return [rate(ra[k]) / rate(rb[k]) for k in sorted(ra)
                if k in rb and rate(ra[k]) and rate(rb[k])]

    def ratio(self, a, b):
        return median(self.ratios(a, b))


def example_tables(by, conditions):
    for model in EXAMPLES:
        for precision in sorted({k[3] for k in by if k[0] == model}, key=PRECISIONS.index):
            keys = sorted(k for k in by if k[0] == model and k[3] == precision)
            example_table(by, conditions, model, precision, keys)
        precision_table(by, model)


def spread_of(ratios):
    """"min..max" of the ratios, "-" for none."""
    return f"{min(ratios):.2f}..{max(ratios):.2f}" if ratios else "-"


def example_table(by, conditions, model, precision, keys):
    """The table of one example workload in one precision."""
    tokens = any("tokens_per_s" in r for k in keys for rs in by[k].rows.values()
                 for r in rs.values())
    repeats = max(len(rs) for k in keys for rs in by[k].rows.values())
    loads = [c["loadavg"][0] for c in conditions if c.get("model") == model]
    recipe = any(c.get("recipe") for c in conditions if c.get("model") == model)
    label = " ".join(x for x in (model, precision, "recipe" if recipe else "") if x)
    print(f"{label} ({'tokens/s' if tokens else 'samples/s'}; global batch "
          f"{', '.join(sorted({str(k[1]) for k in keys}))}; medians of {repeats} "
          f"repeat{'s' if repeats > 1 else ''}"
          + (f"; 1-min load {min(loads):.1f} to {max(loads):.1f} at the starts" if loads
             else "") + "):")
    print(f"{'ranks':>5} {'ringleader':>10} {'ddp':>9} {'rl/ddp':>6} {'(min..max)':>11} "
          f"{'ddp-km':>9} {'rl/km':>6} {'(min..max)':>11} {'limit':>9} {'rl/lim':>6} {'lim/ddp':>7} "
          f"{'lim-conc':>9} {'rl/conc':>7} {'rl/nhwc':>7}")
    for key in keys:
        d = by[key]
        spread = spread_of(d.ratios("ringleader", "pytorch-ddp"))
        spread_km = spread_of(d.ratios("ringleader", "pytorch-ddp-kept-memory"))
        print(f"{key[2]:>5} {fmt(d.rate('ringleader'), '10.0f')} "
              f"{fmt(d.rate('pytorch-ddp'), '9.0f')} "
              f"{fmt(d.ratio('ringleader', 'pytorch-ddp'), '6.2f')} {spread:>11} "
              f"{fmt(d.rate('pytorch-ddp-kept-memory'), '9.0f')} "
              f"{fmt(d.ratio('ringleader', 'pytorch-ddp-kept-memory'), '6.2f')} "
              f"{spread_km:>11} {fmt(d.rate('compute-limit'), '9.0f')} "
              f"{fmt(d.ratio('ringleader', 'compute-limit'), '6.2f')} "
              f"{fmt(d.ratio('compute-limit', 'pytorch-ddp'), '7.2f')} "
              f"{fmt(d.rate('compute-limit-concurrent'), '9.0f')} "
              f"{fmt(d.ratio('ringleader', 'compute-limit-concurrent'), '7.2f')} "
              f"{fmt(d.ratio('ringleader', 'pytorch-ddp-nhwc'), '7.2f')}")
    loss_line(by, model, keys)


def loss_line(by, model, keys):
    """That both trained the same model: the mean training loss over the
    epoch, and the test metric after it (accuracy, or loss in nats per
    token), medians over repeats. After one short epoch the ResNet's test
    accuracy still swings with BatchNorm's running statistics."""
    metric = "test_accuracy" if model == "resnet" else "test_loss"
    parts = []
    for key in keys:
        d = by[key]
        last = lambda impl, f: median([(r.get(f) or [None])[-1]
                                       for r in d.rows.get(impl, {}).values()])
        parts.append(
            f"{key[2]} rank{'s' if key[2] > 1 else ''}: ringleader "
            f"{fmt(d.get('ringleader', 'train_loss'), '.3f')} / "
            f"{fmt(last('ringleader', metric), '.3f')}, ddp "
            f"{fmt(d.get('pytorch-ddp', 'train_loss'), '.3f')} / "
            f"{fmt(last('pytorch-ddp', metric), '.3f')}")
    print(f"  train loss / test {'accuracy' if model == 'resnet' else 'loss'}: "
          + "; ".join(parts))


PRECISION_IMPLS = (("ringleader", "ringleader"), ("pytorch-ddp", "ddp"),
                   ("pytorch-ddp-kept-memory", "ddp-km"), ("compute-limit", "limit"))


def precision_table(by, model):
    """bf16 over fp32 of each implementation, where both ran: the ratio
    within each repeat, its median."""
    keys = sorted(k for k in by if k[0] == model and k[3] == "bf16"
                  and (k[0], k[1], k[2], "fp32") in by)
    if not keys:
        return
    print(f"{model}: bf16 / fp32 (medians over repeats)")
    print(f"{'ranks':>5} " + " ".join(f"{short:>10}" for _, short in PRECISION_IMPLS))
    for key in keys:
        bf, fp = by[key].rows, by[key[:3] + ("fp32",)].rows
        cells = []
        for impl, _ in PRECISION_IMPLS:
            a, b = bf.get(impl, {}), fp.get(impl, {})
            cells.append(median([rate(a[k]) / rate(b[k]) for k in a
                                 if k in b and rate(a[k]) and rate(b[k])]))
        print(f"{key[2]:>5} " + " ".join(fmt(c, "10.2f") for c in cells))


def builtin_table(builtin):
    if not builtin:
        return
    print(f"{'model':>5} {'batch':>5} {'ranks':>5} {'ringleader':>10} {'rl-gloo':>8} "
          f"{'ddp':>7} {'rl/ddp':>6} {'ddp-km':>7} {'rl/km':>6} {'limit':>7} "
          f"{'rl/lim':>6} {'lim/ddp':>7} {'rl/nhwc':>7} {'rl t85':>6} {'ddp t85':>7}"
          "   (samples/s; t85 in s)")
    for key in sorted(builtin):
        d = builtin[key]
        get = d.get
        rl, gl, ddp, km, lim = (get("ringleader"), get("ringleader-gloo"), get("pytorch-ddp"),
                                get("pytorch-ddp-kept-memory"), get("compute-limit"))
        print(f"{key[0]:>5} {key[1]:>5} {key[2]:>5} {fmt(rl, '10.0f')} {fmt(gl, '8.0f')} "
              f"{fmt(ddp, '7.0f')} {fmt(d.ratio('ringleader', 'pytorch-ddp'), '6.2f')} "
              f"{fmt(km, '7.0f')} "
              f"{fmt(d.ratio('ringleader', 'pytorch-ddp-kept-memory'), '6.2f')} "
              f"{fmt(lim, '7.0f')} {fmt(d.ratio('ringleader', 'compute-limit'), '6.2f')} "
              f"{fmt(d.ratio('compute-limit', 'pytorch-ddp'), '7.2f')} "
              f"{fmt(d.ratio('ringleader', 'pytorch-ddp-nhwc'), '7.2f')} "
              f"{fmt(get('ringleader', 'seconds_to_85'), '6.1f')} "
              f"{fmt(get('pytorch-ddp', 'seconds_to_85'), '7.1f')}")
    costs = [(k, d.rows["compute-limit"]) for k, d in sorted(builtin.items())
             if "compute-limit" in d]
    if costs:
        # The default schedule (worker/progress_schedule.h): every 10th step,
        # at most once per 100 ms.
        print("progress reporting (measured on every step; cost at the default of every "
              "10 steps, at most once per 100 ms):")
        for (model, gb, w, _), rows in costs:
            c = rows[min(rows)]
            per_report_ms = c["reporting_cpu_ms_per_step"] - c["cpu_ms_per_step"]
            step_s = c["per_rank_batch"] / c["per_rank_samples_per_s"]
            reports_per_step = min(1 / 10, step_s / 0.1)
            print(f"  {model} per-rank batch {c['per_rank_batch']}: {c['report_cpu_us']:.0f} us CPU "
                  f"per report, {1e3 * step_s:.2f} ms steps, "
                  f"{100 * per_report_ms * reports_per_step / c['cpu_ms_per_step']:.2f}% of a "
                  f"step's CPU at the default schedule")


def plot(by, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("python3-matplotlib missing: no plot")
        return
    impls = ["compute-limit", "compute-limit-concurrent", "ringleader", "ringleader-gloo",
             "pytorch-ddp-nhwc", "pytorch-ddp-kept-memory", "pytorch-ddp"]
    keys = sorted(by, key=config_order)
    models = [m for m in ("mlp", "cnn") + EXAMPLES if any(k[0] == m for k in keys)]
    titles = {"mlp": "MLP on Fashion-MNIST", "cnn": "CNN on Fashion-MNIST",
              "resnet": "ResNet (TorchScript) on Fashion-MNIST 3x32x32",
              "gpt": "byte-level GPT (TorchScript) on fortunes"}
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.5), squeeze=False)
    for ax, model in zip(axes[0], models):
        ks = [k for k in keys if k[0] == model]
        shown = [i for i in impls if any(i in by[k] for k in ks)]
        tokens = any("tokens_per_s" in r for k in ks for rs in by[k].rows.values()
                     for r in rs.values())
        width = 0.8 / len(shown)
        for i, impl in enumerate(shown):
            ax.bar([j + i * width for j in range(len(ks))],
                   [by[k].rate(impl) or 0 for k in ks], width,
                   label=impl, color=f"C{impls.index(impl)}")
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(ks))])
        ax.set_xticklabels([f"batch {k[1]}\n{k[2]} rank{'s' if k[2] > 1 else ''}"
                            + (f"\n{k[3]}" if k[3] else "") for k in ks])
        ax.set_ylabel("training tokens/s" if tokens else "training samples/s")
        ax.set_title(f"{titles[model]}, 2 cores", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


def main(path, png=None):
    by, conditions = defaultdict(Config), []
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if "conditions" in r:
            conditions.append(r["conditions"])
            continue
        by[(r["model"], r["global_batch"], r["world"], r.get("precision", ""))].add(r)
    example_tables(by, conditions)
    builtin_table({k: v for k, v in by.items() if k[0] not in EXAMPLES})
    if png:
        plot(by, png)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)

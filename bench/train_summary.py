"""Table and plot of bench/train_bench.sh's results (bench/results/train.jsonl).

Ratios: Ringleader (shared memory on one host) over PyTorch DDP as a user
runs it, over DDP with glibc malloc keeping freed memory, and over the
compute limit; time to 85% test accuracy for both. "lim/ddp" is the compute
limit over DDP: the most any implementation of the same arithmetic on the
same kernels could get over DDP in that configuration (where it is below
1.5, a 1.5x-DDP target cannot be met there). "rl/nhwc" (CNN) is Ringleader
over DDP with the CNN written as Ringleader's worker runs it on CPU
(channels-last, ReLU after pooling) and kept memory: the runtime alone.
    train_summary.py RESULTS.jsonl [PLOT.png]
"""
import json
import sys
from collections import defaultdict


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else "-"


def main(path, png=None):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    by = defaultdict(dict)
    for r in rows:
        by[(r["model"], r["global_batch"], r["world"])][r["impl"]] = r
    print(f"{'model':>5} {'batch':>5} {'ranks':>5} {'ringleader':>10} {'rl-gloo':>8} "
          f"{'ddp':>7} {'rl/ddp':>6} {'ddp-km':>7} {'rl/km':>6} {'limit':>7} "
          f"{'rl/lim':>6} {'lim/ddp':>7} {'rl/nhwc':>7} {'rl t85':>6} {'ddp t85':>7}"
          "   (samples/s; t85 in s)")
    for key in sorted(by):
        d = by[key]
        get = lambda impl, f="samples_per_s": d.get(impl, {}).get(f)
        rl, gl, ddp, km, lim = (get("ringleader"), get("ringleader-gloo"), get("pytorch-ddp"),
                                get("pytorch-ddp-kept-memory"), get("compute-limit"))
        ratio = lambda a, b: a / b if a and b else None
        print(f"{key[0]:>5} {key[1]:>5} {key[2]:>5} {fmt(rl, '10.0f')} {fmt(gl, '8.0f')} "
              f"{fmt(ddp, '7.0f')} {fmt(ratio(rl, ddp), '6.2f')} {fmt(km, '7.0f')} "
              f"{fmt(ratio(rl, km), '6.2f')} {fmt(lim, '7.0f')} {fmt(ratio(rl, lim), '6.2f')} "
              f"{fmt(ratio(lim, ddp), '7.2f')} "
              f"{fmt(ratio(rl, get('pytorch-ddp-nhwc')), '7.2f')} "
              f"{fmt(get('ringleader', 'seconds_to_85'), '6.1f')} "
              f"{fmt(get('pytorch-ddp', 'seconds_to_85'), '7.1f')}")
    costs = [(k, d["compute-limit"]) for k, d in sorted(by.items()) if "compute-limit" in d]
    if costs:
        # The default schedule (worker/progress_schedule.h): every 10th step,
        # at most once per 100 ms.
        print("progress reporting (measured on every step; cost at the default of every "
              "10 steps, at most once per 100 ms):")
        for (model, gb, w), c in costs:
            per_report_ms = c["reporting_cpu_ms_per_step"] - c["cpu_ms_per_step"]
            step_s = c["per_rank_batch"] / c["per_rank_samples_per_s"]
            reports_per_step = min(1 / 10, step_s / 0.1)
            print(f"  {model} per-rank batch {c['per_rank_batch']}: {c['report_cpu_us']:.0f} us CPU "
                  f"per report, {1e3 * step_s:.2f} ms steps, "
                  f"{100 * per_report_ms * reports_per_step / c['cpu_ms_per_step']:.2f}% of a "
                  f"step's CPU at the default schedule")
    if png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("python3-matplotlib missing: no plot")
            return
        impls = ["compute-limit", "ringleader", "ringleader-gloo", "pytorch-ddp-nhwc",
                 "pytorch-ddp-kept-memory", "pytorch-ddp"]
        keys = sorted(by)
        fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
        for ax, model in zip(axes, ["mlp", "cnn"]):
            ks = [k for k in keys if k[0] == model]
            shown = [i for i in impls if any(i in by[k] for k in ks)]
            if not shown:  # A run of the other model only.
                ax.set_visible(False)
                continue
            width = 0.8 / len(shown)
            for i, impl in enumerate(shown):
                ax.bar([j + i * width for j in range(len(ks))],
                       [by[k].get(impl, {}).get("samples_per_s", 0) for k in ks], width,
                       label=impl, color=f"C{impls.index(impl)}")
            ax.set_xticks([j + 0.4 - width / 2 for j in range(len(ks))])
            ax.set_xticklabels([f"batch {k[1]}\n{k[2]} rank{'s' if k[2] > 1 else ''}" for k in ks])
            ax.set_ylabel("training samples/s")
            ax.set_title(f"{model.upper()} on Fashion-MNIST, 2 cores")
            ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png, dpi=110)
        print(f"plot: {png}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)

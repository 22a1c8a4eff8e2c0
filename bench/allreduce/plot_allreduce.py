"""Table and plot of bench/allreduce/allreduce_bench.sh's results (JSON lines)."""
import json
import sys
from collections import defaultdict


def human(n):
    for unit in ["B", "KiB", "MiB", "GiB"]:
        if n < 1024:
            return f"{n:g} {unit}"
        n /= 1024
    return f"{n:g} TiB"


def main(path, png):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    by = defaultdict(dict)
    for r in rows:
        by[(r["world"], r["bytes"])][r["impl"]] = r
    impls = {i for d in by.values() for i in d}
    # CPU runs compare with torch's Gloo, GPU runs (DEVICE=cuda) with its NCCL.
    if "ringleader-nccl" in impls:
        ours, torch_impl = ["ringleader-nccl"], "torch-nccl"
    else:
        ours, torch_impl = ["ringleader-shm", "ringleader-gloo"], "torch-gloo"
    short = lambda k: k.replace("ringleader-", "rl-")
    print(f"{'world':>5} {'size':>10} " + " ".join(f"{short(k):>8}" for k in ours) +
          f" {'torch':>8} " + " ".join(f"{short(k)[3:] + '/torch':>10}" for k in ours) +
          "   (busbw GB/s; median of timed iterations)")
    for (world, size) in sorted(by):
        d = by[(world, size)]
        bw = {k: d[k]["busbw_gbps"] for k in ours + [torch_impl] if k in d}
        t = bw.get(torch_impl)
        ratio = lambda k: f"{bw[k] / t:.2f}" if k in bw and t else "-"
        cell = lambda k: f"{bw[k]:.3f}" if k in bw else "-"
        print(f"{world:>5} {human(size):>10} " + " ".join(f"{cell(k):>8}" for k in ours) +
              f" {cell(torch_impl):>8} " + " ".join(f"{ratio(k):>10}" for k in ours))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("python3-matplotlib missing: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for world in sorted({w for w, _ in by}):
        for impl, style in [("ringleader-shm", "-o"), ("ringleader-gloo", "-.^"),
                            ("ringleader-nccl", "-o"), ("torch-gloo", "--s"),
                            ("torch-nccl", "--s")]:
            pts = sorted((s, d[impl]["busbw_gbps"]) for (w, s), d in by.items()
                         if w == world and impl in d)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                        label=f"{impl}, {world} ranks")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title("All-reduce, float32 sum" +
                 (" (GPUs, NCCL)" if "ringleader-nccl" in impls else " on 127.0.0.1"))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f"plot: {png}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Table and plot of bench/allreduce_bench.sh's results (JSON lines)."""
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
    print(f"{'world':>5} {'size':>10} {'ringleader busbw':>17} {'torch busbw':>12} "
          f"{'ratio':>6}   (GB/s; median of timed iterations)")
    for (world, size) in sorted(by):
        d = by[(world, size)]
        a, b = d.get("ringleader-gloo"), d.get("torch-gloo")
        if not a or not b:
            continue
        ratio = a["busbw_gbps"] / b["busbw_gbps"] if b["busbw_gbps"] else float("nan")
        print(f"{world:>5} {human(size):>10} {a['busbw_gbps']:>17.3f} "
              f"{b['busbw_gbps']:>12.3f} {ratio:>6.2f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("python3-matplotlib missing: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for world in sorted({w for w, _ in by}):
        for impl, style in [("ringleader-gloo", "-o"), ("torch-gloo", "--s")]:
            pts = sorted((s, d[impl]["busbw_gbps"]) for (w, s), d in by.items()
                         if w == world and impl in d)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                        label=f"{impl}, {world} ranks")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("bus bandwidth (GB/s)")
    ax.set_title("All-reduce on 127.0.0.1, float32 sum")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f"plot: {png}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

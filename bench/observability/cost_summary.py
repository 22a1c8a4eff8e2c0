"""Tables of bench/observability/cost_bench.sh's results.

    cost_summary.py RESULTS.jsonl

Training: samples/s with issue 36's observability off and on, per repeat, and
on/off per pair (median, min, max). Coordinator: CPU seconds and peak memory
with the simulated ranks' telemetry off and on. Flood: peak memory against the
job log's documented bounds.
"""
import json
import statistics
import sys

LOG_BYTES_PER_RANK = 512 << 10  # --log_bytes_per_rank's default.
LOG_LINES_PER_RANK = 2000  # --log_lines_per_rank's default.
LOG_TOTAL_BYTES = 256 << 20  # --log_total_bytes's default.
# What LogStore::Cost adds to a line's text (coordinator/log_store.cc), with
# the simulated workers' host and worker id: about 330 + 40 bytes.
LINE_OVERHEAD = 370


def spread(values):
    """'median (min-max)' of `values`."""
    return (f"{statistics.median(values):.3f} "
            f"({min(values):.3f}-{max(values):.3f})")


def by_repeat(rows, key):
    """{repeat: {mode: row}} of the rows whose `key` matches."""
    out = {}
    for r in rows:
        if key(r):
            out.setdefault(r["repeat"], {})[r["mode"]] = r
    return out


def train_table(rows):
    models = sorted({r["model"] for r in rows if r["part"] == "train"})
    if not models:
        return
    print("\nTraining throughput, 2 ranks, samples/s (off | on | on/off):")
    print(f"{'model':8} {'repeat':>6} {'off':>10} {'on':>10} {'on/off':>8}")
    for m in models:
        ratios = []
        pairs = by_repeat(rows, lambda r: r["part"] == "train" and r["model"] == m)
        for rep, p in sorted(pairs.items()):
            off, on = p.get("off"), p.get("on")
            if not off or not on or not off["samples_per_s"]:
                print(f"{m:8} {rep:>6}  incomplete")
                continue
            ratio = on["samples_per_s"] / off["samples_per_s"]
            ratios.append(ratio)
            print(f"{m:8} {rep:>6} {off['samples_per_s']:>10.1f} "
                  f"{on['samples_per_s']:>10.1f} {ratio:>8.3f}")
        if ratios:
            print(f"{m:8} on/off median (min-max): {spread(ratios)}")


def coordinator_table(rows):
    pairs = by_repeat(rows, lambda r: r["part"] == "coordinator")
    if not pairs:
        return
    print("\nCoordinator with simulated ranks, telemetry off | on:")
    print(f"{'repeat':>6} {'cpu off s':>10} {'cpu on s':>10} {'on/off':>7} "
          f"{'peak off MiB':>13} {'peak on MiB':>12}")
    ratios = []
    for rep, p in sorted(pairs.items()):
        off, on = p.get("off"), p.get("on")
        if not off or not on:
            continue
        ratio = on["coordinator_cpu_s"] / max(off["coordinator_cpu_s"], 1e-9)
        ratios.append(ratio)
        print(f"{rep:>6} {off['coordinator_cpu_s']:>10.2f} "
              f"{on['coordinator_cpu_s']:>10.2f} {ratio:>7.3f} "
              f"{off['coordinator_hwm_mib']:>13.1f} {on['coordinator_hwm_mib']:>12.1f}")
        for r in (off, on):
            if r["simworkers_exit"] != 0:
                print(f"  ({r['mode']}: the simulated workers exited "
                      f"{r['simworkers_exit']})")
    if ratios:
        any_row = next(iter(pairs.values()))
        any_row = any_row.get("on") or any_row.get("off")
        print(f"{any_row['ranks']} ranks, {any_row['steps']} steps: CPU on/off "
              f"median (min-max) {spread(ratios)}")


def parts_table(rows):
    """Each part alone against off, from the repeats that ran it."""
    off = {r["repeat"]: r for r in rows
           if r["part"] == "coordinator" and r["mode"] == "off"}
    alone = [r for r in rows if r["part"] == "coordinator"
             and r["mode"] in ("phases", "history", "logs") and r["repeat"] in off]
    if not alone:
        return
    print("\nCoordinator CPU, each part alone against off (same repeat):")
    for r in alone:
        base = off[r["repeat"]]["coordinator_cpu_s"]
        print(f"{r['mode']:>8}: {r['coordinator_cpu_s']:.2f} s against {base:.2f} s "
              f"({r['coordinator_cpu_s'] / max(base, 1e-9):.3f}), peak "
              f"{r['coordinator_hwm_mib']:.1f} MiB")


def flood_table(rows):
    floods = [r for r in rows if r["part"] == "flood"]
    if not floods:
        return
    print("\nJob log flood (each rank sends far more than its ring holds):")
    for r in floods:
        flags = r["flags"]
        line_bytes = int(flags.split("--log_line_bytes=")[1].split()[0])
        # The limits count a line's memory: its text and the rest.
        per_line = line_bytes + LINE_OVERHEAD
        per_rank = min(LOG_BYTES_PER_RANK, LOG_LINES_PER_RANK * per_line)
        bound = min(LOG_TOTAL_BYTES, r["ranks"] * per_rank) / (1 << 20)
        print(f"{line_bytes:>5}-byte lines, {r['ranks']} ranks: peak "
              f"{r['coordinator_hwm_mib']:.1f} MiB, end {r['coordinator_rss_mib']:.1f} "
              f"MiB; the rings' bound {bound:.1f} MiB; coordinator CPU "
              f"{r['coordinator_cpu_s']:.1f} s")


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    train_table(rows)
    coordinator_table(rows)
    parts_table(rows)
    flood_table(rows)


if __name__ == "__main__":
    main(sys.argv[1])

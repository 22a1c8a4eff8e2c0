#!/usr/bin/python3
"""Plots bench/results/control_plane.json to bench/results/control_plane.png.

Run with Debian's /usr/bin/python3 (python3-matplotlib, see bench/common/setup.sh).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "results", "control_plane.json")
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "results", "control_plane.png")
with open(src) as f:
    data = json.load(f)
rows = data["sizes"]
# One row per (N, barrier protocol); older files have no "barrier" (unary).
by_proto = {}
for r in rows:
    by_proto.setdefault(r.get("barrier", "unary"), []).append(r)
sizes = by_proto.get("stream", rows)  # Rendezvous is the same protocol.
n = [s["n"] for s in sizes]

fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
a.plot(n, [s["rendezvous_s"] for s in sizes], "o-", label="Ringleader: first join to all ranks")
a.plot(n, [s["register_s"] for s in sizes], "s--", label="Ringleader: register all")
a.plot([4000], [10], "r^", markersize=9, label="TorchElastic, 4,000 hosts, after O(n) fix (10 s)")
a.plot([4000], [373], "rv", markersize=9, label="TorchElastic before the fix (373 s)")
a.axhline(2, color="gray", linestyle=":", label="target at 4096: 2 s")
a.set_xscale("log", base=2)
a.set_yscale("log")
a.set_xlabel("workers N")
a.set_ylabel("seconds")
a.set_title("Rendezvous, min = max = N")
a.legend(fontsize=7)
a.grid(True, which="both", alpha=0.3)

styles = {"shared": ("o-", "s-"), "stream": ("o--", "s--"), "unary": ("o:", "s:")}
for proto, rs in sorted(by_proto.items()):
    m = [r["n"] for r in rs]
    p50, p99 = styles.get(proto, ("o-", "s-"))
    color = {"shared": "C0", "stream": "C1", "unary": "C2"}.get(proto)
    b.plot(m, [r["barrier_p50_ms"] for r in rs], p50, color=color, label="%s: p50 (per rank)" % proto)
    b.plot(m, [r["barrier_p99_ms"] for r in rs], p99, color=color, alpha=0.5, label="%s: p99 (per rank)" % proto)
b.axhline(2, color="gray", linestyle=":", label="target at 256: 2 ms")
b.set_xscale("log", base=2)
b.set_yscale("log")
b.set_xlabel("workers N")
b.set_ylabel("ms after the last arrival")
b.set_title("Barrier release")
b.legend(fontsize=7)
b.grid(True, which="both", alpha=0.3)

fig.suptitle("Control plane, %s, %s (median of %d runs)" % (data["machine"], data["date"], data["repeats"]), fontsize=9)
fig.tight_layout()
fig.savefig(dst, dpi=110)
print("wrote", dst)

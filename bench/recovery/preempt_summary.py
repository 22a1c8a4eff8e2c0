#!/usr/bin/python3
"""The table of bench/recovery/preempt_bench.sh's rows: per workload and mode, trials,
steps lost (target 0), SIGTERM-to-exit (mean, max), the final checkpoint's
size and write time."""
import json
import statistics
import sys


def main(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    groups = {}
    for r in rows:
        groups.setdefault((r.get("workload"), r.get("mode"),
                           r.get("path", "bare")), []).append(r)
    print("| workload | mode | path | trials | failed | steps lost (max) | "
          "SIGTERM to exit, mean / max (s) | checkpoint (MB) | write (s) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (w, m, p), rs in sorted(groups.items()):
        # A trial whose signal came after the job's last step began measured
        # no preemption: neither a failure nor a figure.
        rs = [r for r in rs if not r.get("finished_before_preemption")]
        ok = [r for r in rs if "error" not in r and
              r.get("final_state") == "JOB_STATE_SUCCEEDED"]
        lost = [r.get("steps_lost", 0) for r in ok]
        exits = [e for r in ok for e in r.get("exit_s", [])]
        mb = [r["checkpoint_bytes"] / 1e6 for r in ok if r.get("checkpoint_bytes")]
        write = [w_ for r in ok for w_ in r.get("checkpoint_write_s", [])]
        fmt = lambda xs, f: f(xs) if xs else float("nan")
        print(f"| {w} | {m} | {p} | {len(rs)} | {len(rs) - len(ok)} | "
              f"{max(lost) if lost else '-'} | "
              f"{fmt(exits, statistics.mean):.2f} / {fmt(exits, max):.2f} | "
              f"{fmt(mb, statistics.mean):.2f} | {fmt(write, statistics.mean):.3f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/preempt.jsonl")

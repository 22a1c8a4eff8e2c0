"""The tables of bench/recovery/recovery_bench.sh from its JSON lines.

kills: per model and mode, over the runs with one kill -9 each: optimizer
steps lost (median, max), seconds from the kill to the next completed
optimizer step (median, max) and, of that, to the next generation's first
"generation G: rank" line and to its resume line (medians), where the new
generation resumed from (memory / disk / start: no checkpoint yet), and the
final test accuracy against the fault-free run's (median, lowest and highest
delta, in points, and how many runs were no more than 0.5 points below it). goodput: per mode, samples/s of the steps kept over the window,
against the fault-free run's and against the run's own steady rate inside
its 3-rank generations; steps lost per kill and seconds to the next step
(medians, max).
    recovery_summary.py RESULTS.jsonl
"""
import collections
import json
import statistics
import sys


def med_max(xs, fmt="{:.2f}"):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{fmt.format(statistics.median(xs))} / {fmt.format(max(xs))}"


def main(path):
    rows, conds = [], []
    for line in open(path):
        r = json.loads(line)
        (conds if "conditions" in r else rows).append(r.get("conditions", r))
    for c in conds:
        print(f"# {c['time']}, {c['cpu']}, {c['cores']} cores, load "
              f"{c['loadavg'][0]:.1f}; parts {c['parts']}; a checkpoint every {c['every']} steps")
    kills = collections.defaultdict(list)
    ff = {}
    for r in rows:
        if r["kind"] == "kill":
            kills[(r["model"], r["mode"])].append(r)
        elif r["kind"] == "fault_free":
            ff[r["model"]] = r
    if kills:
        print("\nkill -9 of one of 3 workers, job goes on with 2 (median / max)")
        print(f"{'model':7} {'mode':7} {'kills':>5} {'steps lost':>11} {'s to next step':>15} "
              f"{'s to gen':>9} {'s to resume':>12} {'resumed from':>22} "
              f"{'acc ff':>7} {'acc delta pts med/min/max':>26} {'>= -0.5':>8}")
        for (m, mode), rs in sorted(kills.items(), key=lambda kv: (
                ["mlp", "resnet", "gpt"].index(kv[0][0]), kv[0][1])):
            ok = [r for r in rs if "error" not in r and r.get("final_state") == "JOB_STATE_SUCCEEDED"]
            src = collections.Counter(r.get("resumed_from") for r in ok)
            deltas = [r["accuracy_delta_points"] for r in ok if "accuracy_delta_points" in r]
            acc_ff = ff.get(m, {}).get("test_accuracy")
            acc_s = f"{100 * acc_ff:7.2f}" if acc_ff is not None else f"{'-':>7}"
            d_s = (f"{statistics.median(deltas):+.2f} / {min(deltas):+.2f} / {max(deltas):+.2f}"
                   if deltas else "-")
            within = f"{sum(d >= -0.5 for d in deltas)}/{len(deltas)}"
            print(f"{m:7} {mode:7} {len(ok):>2}/{len(rs):<2} "
                  f"{med_max([r['steps_lost'] for r in ok], '{:.0f}'):>11} "
                  f"{med_max([r['s_to_next_step'] for r in ok]):>15} "
                  f"{statistics.median([r['s_to_generation'] for r in ok if r.get('s_to_generation') is not None] or [0]):9.2f} "
                  f"{statistics.median([r['s_to_resume'] for r in ok if r.get('s_to_resume') is not None] or [0]):12.2f} "
                  f"{', '.join(f'{k} {v}' for k, v in sorted(src.items())):>22} "
                  f"{acc_s} {d_s:>26} {within:>8}")
    good = [r for r in rows if r["kind"] == "goodput" and r.get("kills")]
    if good:
        print("\ngoodput: a kill -9 every INTERVAL s, a replacement started after each")
        print(f"{'mode':7} {'s':>5} {'kills':>5} {'samples/s':>10} {'fault-free':>11} "
              f"{'steady':>8} {'goodput/ff':>11} {'goodput/steady':>15} "
              f"{'steps lost med/max':>19} {'s to next step med/max':>23}")
        for r in good:
            rec = [x for x in r["recoveries"] if "error" not in x]
            gff = f"{100 * r['goodput_vs_fault_free']:10.1f}%" if "goodput_vs_fault_free" in r else f"{'-':>11}"
            gst = f"{100 * r['goodput_vs_steady']:14.1f}%" if "goodput_vs_steady" in r else f"{'-':>15}"
            print(f"{r['mode']:7} {r['seconds']:5.0f} {r['kills']:5d} {r['samples_per_s']:10.0f} "
                  f"{r.get('fault_free_samples_per_s', 0):11.0f} {r['steady_samples_per_s'] or 0:8.0f} "
                  f"{gff} {gst} {med_max([x['steps_lost'] for x in rec], '{:.0f}'):>19} "
                  f"{med_max([x['s_to_next_step'] for x in rec]):>23}")


if __name__ == "__main__":
    main(*sys.argv[1:])

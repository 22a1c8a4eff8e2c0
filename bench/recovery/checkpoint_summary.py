"""The table of bench/recovery/checkpoint_bench.sh from its JSON lines.

Per model and mode: ms per optimizer step (median over repeats), the overhead
per step against `none` of the same repeat (then the median), the time one
checkpoint held the training thread (the Checkpointer's count) and, for the
background mode, how many times the synchronous overhead and hold are its.
    checkpoint_summary.py RESULTS.jsonl
"""
import json
import statistics
import sys


def main(path):
    rows, cond = {}, None
    for line in open(path):
        r = json.loads(line)
        if "conditions" in r:
            cond = r["conditions"]
            continue
        if not r.get("samples_per_s"):
            continue
        ms = 1000.0 * r["global_batch"] / r["samples_per_s"]
        rows[(r["model"], r["mode"], r["repeat"])] = (ms, r)
    if cond:
        print(f"# {cond['time']}, {cond['cpu']}, {cond['cores']} cores, "
              f"load {cond['loadavg'][0]:.1f}; a checkpoint every {cond['every']} steps")
    print(f"{'model':8} {'mode':11} {'ms/step':>8} {'overhead ms/step':>17} "
          f"{'held ms/ckpt':>13} {'sync/bg overhead':>17} {'sync/bg held':>13}")
    models = sorted({k[0] for k in rows}, key=["mlp", "resnet", "gpt"].index)
    for m in models:
        over, held_med = {}, {}
        for mode in ("none", "sync", "background"):
            reps = sorted(k[2] for k in rows if k[0] == m and k[1] == mode)
            if not reps:
                continue
            step = statistics.median(rows[(m, mode, k)][0] for k in reps)
            diffs = [rows[(m, mode, k)][0] - rows[(m, "none", k)][0]
                     for k in reps if (m, "none", k) in rows]
            over[mode] = statistics.median(diffs) if diffs else None
            held = [rows[(m, mode, k)][1]["blocked_ms"] / rows[(m, mode, k)][1]["saves"]
                    for k in reps if rows[(m, mode, k)][1].get("saves")]
            held_med[mode] = statistics.median(held) if held else None
            held_s = f"{held_med[mode]:13.2f}" if held else f"{'-':>13}"
            over_s = f"{over[mode]:17.3f}" if mode != "none" and over[mode] is not None else f"{'-':>17}"
            ratio = ""
            if mode == "background" and over.get("sync") is not None and over[mode]:
                ratio = f"{over['sync'] / over[mode]:16.1f}x" if over[mode] > 0 else f"{'bg <= none':>17}"
            held_ratio = ""
            if mode == "background" and held_med.get("sync") and held_med[mode]:
                held_ratio = f"{held_med['sync'] / held_med[mode]:12.1f}x"
            print(f"{m:8} {mode:11} {step:8.2f} {over_s} {held_s} {ratio:>17} {held_ratio:>13}")


if __name__ == "__main__":
    main(*sys.argv[1:])

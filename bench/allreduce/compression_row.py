"""One job of bench/allreduce/compression_bench.sh as a JSON line: train_watch.py's row
plus the link, the compression and what rank 0's timeline says of steps 21 to
200 (after warm-up; the timeline keeps the first 200):
  bytes_per_step     gradient bytes all-reduced per optimizer step;
  buckets_per_step   all-reduces (buckets) per optimizer step;
  allreduce_wait_ms  mean time a step waited, after backward, for its last
                     buckets (communication not hidden behind backward);
  step_ms            mean wall time of a step, from its first event (data
                     wait) to its last (optimizer).
    compression_row.py ROW.json TIMELINE_DIR LINK COMPRESSION SEED
"""
import glob
import json
import statistics
import sys

FIRST_STEP, LAST_STEP = 21, 200


def timeline_stats(trace_dir):
    paths = glob.glob(f"{trace_dir}/*-rank0.trace.json")
    if not paths:
        return {}
    events = [e for e in json.load(open(paths[0]))["traceEvents"]
              if e.get("ph") == "X"
              and FIRST_STEP <= e["args"].get("step", 0) <= LAST_STEP]
    steps = {}
    for e in events:
        s = steps.setdefault(e["args"]["step"],
                             {"bytes": 0, "buckets": 0, "wait": 0, "lo": e["ts"], "hi": 0})
        if e["name"] == "allreduce":
            s["bytes"] += e["args"].get("bytes", 0)
            s["buckets"] += 1
        if e["name"] == "allreduce_wait":
            s["wait"] += e["dur"]
        if e.get("cat") == "compute":
            s["lo"] = min(s["lo"], e["ts"])
            s["hi"] = max(s["hi"], e["ts"] + e["dur"])
    if not steps:
        return {}
    return {
        "timeline_steps": len(steps),
        "bytes_per_step": statistics.median(s["bytes"] for s in steps.values()),
        "buckets_per_step": statistics.median(s["buckets"] for s in steps.values()),
        "allreduce_wait_ms": statistics.mean(s["wait"] for s in steps.values()) / 1e3,
        "step_ms": statistics.mean(s["hi"] - s["lo"] for s in steps.values()) / 1e3,
    }


def main(row_path, trace_dir, link, compression, seed):
    row = json.load(open(row_path))
    row.update(link=link, compression=compression, seed=int(seed),
               **timeline_stats(trace_dir))
    print(json.dumps(row))


if __name__ == "__main__":
    main(*sys.argv[1:6])

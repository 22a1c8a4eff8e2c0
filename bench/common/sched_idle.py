#!/usr/bin/env python3
"""Where the CPUs went idle while ranks were oversubscribed.

Reads `perf script -F tid,pid,cpu,time,event,trace` output of the
sched:sched_switch and sched:sched_wakeup (and, optionally,
sched:sched_migrate_task) tracepoints recorded with `perf record -a`, takes
the --ranks busiest threads whose name starts with --comm as the ranks'
training threads, and prints per thread its CPU time per CPU and its
migrations, then every CPU's idle time split three ways:

  balance  a CPU was idle while a training thread was runnable and waiting
           for a CPU elsewhere: the scheduler did not move it in time;
  tail     a CPU was idle while a training thread ran and none waited: the
           rest of the step could not be split;
  all-wait no training thread ran or waited (a collective, the loader).

  perf record -e sched:sched_switch -e sched:sched_wakeup \\
      -e sched:sched_migrate_task -a -o sched.data -- sleep 4
  perf script -i sched.data -F tid,pid,cpu,time,event,trace |
      bench/common/sched_idle.py --ranks 3
"""
import argparse
import collections
import json
import re
import sys

LINE = re.compile(r"\s*(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s+(.*)")
FIELD = re.compile(r"(\w+)=(\S+)")


def parse(lines):
    """Yields (time, cpu, event, fields) for the sched tracepoints."""
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        _, _, cpu, t, event, trace = m.groups()
        yield float(t), int(cpu), event.rsplit(":", 1)[-1], dict(
            FIELD.findall(trace))


def initial_state(events):
    """What ran on each CPU, and where each thread was, when the trace began:
    read from each one's first event (a CPU's first switch names what it
    ran; a thread first switched out was running, first switched in without
    a wakeup was queued, first woken was asleep)."""
    running, threads = {}, {}
    for _, cpu, event, f in events:
        if event == "sched_switch":
            running.setdefault(cpu, f["prev_pid"])
            threads.setdefault(f["prev_pid"], ("running", cpu))
            threads.setdefault(f["next_pid"], ("waiting", cpu))
        elif event == "sched_wakeup":
            threads.setdefault(f["pid"], ("sleeping", None))
    return running, threads


def busiest(events, start, comm, count):
    """The `count` threads named comm* with the most CPU time; `start` is
    initial_state(events)."""
    running = dict(start[0])
    since = {cpu: events[0][0] for cpu in running}
    names = {}
    busy = collections.Counter()
    for t, cpu, event, f in events:
        if event != "sched_switch":
            continue
        busy[running[cpu]] += t - since[cpu]
        running[cpu], since[cpu] = f["next_pid"], t
        names[f["prev_pid"]] = f["prev_comm"]
        names[f["next_pid"]] = f["next_comm"]
    ranked = [p for p, _ in busy.most_common()
              if names.get(p, "").startswith(comm)]
    return ranked[:count]


def account(events, start, threads):
    running, first = dict(start[0]), start[1]
    # pid -> (state, cpu): running on cpu, queued on cpu, or sleeping.
    state = {p: first.get(p, ("sleeping", None)) for p in threads}
    per_cpu = collections.defaultdict(float)  # (pid, cpu) -> seconds
    migrations = collections.Counter()
    idle = collections.Counter()
    last = events[0][0]
    for t, cpu, event, f in events:
        dt = t - last
        last = t
        for c, pid in running.items():
            if pid in threads:
                per_cpu[(pid, c)] += dt
            elif pid == "0":
                # A thread queued on this idle CPU is about to run here
                # (the wake-up's latency), not waiting for a balance.
                if any(s == "waiting" and q != c for s, q in state.values()):
                    idle["balance"] += dt
                elif any(s == "running" for s, _ in state.values()):
                    idle["tail"] += dt
                else:
                    idle["all-wait"] += dt
        if event == "sched_switch":
            prev, nxt = f["prev_pid"], f["next_pid"]
            if prev in threads:
                preempted = f["prev_state"].startswith("R")
                state[prev] = ("waiting", cpu) if preempted else (
                    "sleeping", None)
            if nxt in threads:
                state[nxt] = ("running", cpu)
            running[cpu] = nxt
        elif event == "sched_wakeup" and f["pid"] in threads:
            if state[f["pid"]][0] == "sleeping":
                state[f["pid"]] = ("waiting", int(f["target_cpu"]))
        elif event == "sched_migrate_task" and f["pid"] in threads:
            migrations[f["pid"]] += 1
            if state[f["pid"]][0] == "waiting":
                state[f["pid"]] = ("waiting", int(f["dest_cpu"]))
    return per_cpu, migrations, idle


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, required=True,
                    help="training threads to follow (one per rank)")
    ap.add_argument("--comm", default="ringleader-work",
                    help="thread name prefix (perf truncates names to 15)")
    ap.add_argument("--json", action="store_true", help="one JSON line")
    args = ap.parse_args()
    events = list(parse(sys.stdin))
    if not events:
        sys.exit("sched_idle: no sched tracepoint events on stdin")
    start = initial_state(events)
    threads = busiest(events, start, args.comm, args.ranks)
    if len(threads) < args.ranks:
        sys.exit(f"sched_idle: found {len(threads)} threads named "
                 f"{args.comm}*, expected {args.ranks}")
    per_cpu, migrations, idle = account(events, start, set(threads))
    span = events[-1][0] - events[0][0]
    cpus = sorted({c for _, c in per_cpu} | {e[1] for e in events})
    result = {
        "seconds": round(span, 3),
        "cpus": len(cpus),
        "threads": {
            p: {"cpu_s": round(sum(per_cpu[(p, c)] for c in cpus), 3),
                "migrations": migrations[p]} for p in threads},
        "idle_s": {k: round(idle[k], 3)
                   for k in ("balance", "tail", "all-wait")},
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{span:.2f} s on {len(cpus)} CPUs")
    for p in threads:
        where = " ".join(f"cpu{c} {per_cpu[(p, c)]:.2f}" for c in cpus)
        print(f"  thread {p}: {result['threads'][p]['cpu_s']:.2f} s CPU "
              f"({where}), {migrations[p]} migrations")
    capacity = span * len(cpus)
    for k, v in result["idle_s"].items():
        print(f"  idle ({k}): {v:.2f} s = {100 * v / capacity:.1f}% of the "
              f"CPUs' time")


if __name__ == "__main__":
    main()

"""One run of bench/recovery/recovery_bench.sh as a JSON line, from its worker logs.

The workers run with GLOG_vmodule=trainer=1, so every batch logs
"samples generation=G rank=R epoch=E step=S ids=..." when it starts: S is
the optimizer step the batch goes into, so the line of step S+1 on a rank
also marks (to within microseconds) when that rank completed step S. The
other lines read: "generation G: rank R of W" (worker_daemon.cc) and the
resume lines that tests/integration/worker_logs.cc's ParseResumeLines reads
("recovers from rank R's memory at epoch E step S offset O", "resumes from
checkpoint N (...) at epoch E step S offset O"). Times are glog's (local
time, microseconds) on the same clock as the script's kill time.
    recovery_row.py fault_free --run DIR --model M --mode none --train_s T
    recovery_row.py kill --run DIR --model M --mode MODE --kill_time T
        --victim V --fault_free JSON
    recovery_row.py goodput --run DIR --model M --mode MODE --start T
        --end T --kills T,T,... --interval S [--fault_free JSON]
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys

SAMPLES = re.compile(r"samples generation=(\d+) rank=(\d+) epoch=(\d+) step=(\d+) ids=([\d,]+)")
RANK = re.compile(r"generation (\d+): rank (\d+) of (\d+)$")
MEMORY = re.compile(r"recovers from rank \d+'s memory at epoch (\d+) step (\d+) offset (\d+)")
FILE = re.compile(r"resumes from checkpoint (\d+) \(.*\) at epoch (\d+) step (\d+) offset (\d+)")


def glog_time(line):
    """'I20261204 09:10:54.275192 ...' as seconds since the epoch."""
    try:
        t = datetime.datetime.strptime(line[1:25], "%Y%m%d %H:%M:%S.%f")
    except ValueError:
        return None
    return t.timestamp()


class Gen:
    def __init__(self, number):
        self.number = number
        self.world = None
        self.start = None           # first "generation G: rank" line
        self.resume = None          # (step, "memory" | "disk", time)
        self.lines = {}             # step -> [(time, rank, n_ids)]
        self._completed = None

    def completed(self):
        """{step: first time some rank completed it} (its next step's line),
        for the steps this generation trained: the line of its first step
        marks the end of its recovery, not a step."""
        if self._completed is None:
            start = self.resumed_at()
            self._completed = {step - 1: min(t for t, _, _ in entries)
                               for step, entries in self.lines.items()
                               if step - 1 > start}
        return self._completed

    def first_time(self):
        return min(t for e in self.lines.values() for t, _, _ in e)

    def first_step(self):
        return min(self.lines) if self.lines else None

    def resumed_at(self):
        if self.resume is not None:
            return self.resume[0]
        return self.first_step() - 1 if self.lines else None


def parse(run):
    gens = {}
    for path in sorted(glob.glob(os.path.join(run, "worker-*.log"))):
        current = None
        for line in open(path, errors="replace"):
            m = SAMPLES.search(line)
            if m:
                g = gens.setdefault(int(m.group(1)), Gen(int(m.group(1))))
                g.lines.setdefault(int(m.group(4)), []).append(
                    (glog_time(line), int(m.group(2)), m.group(5).count(",") + 1))
                continue
            m = RANK.search(line)
            if m:
                current = gens.setdefault(int(m.group(1)), Gen(int(m.group(1))))
                current.world = int(m.group(3))
                t = glog_time(line)
                if current.start is None or t < current.start:
                    current.start = t
                continue
            for regex, kind, step_group in ((MEMORY, "memory", 2), (FILE, "disk", 3)):
                m = regex.search(line)
                if m and current is not None and current.resume is None:
                    current.resume = (int(m.group(step_group)), kind, glog_time(line))
    return [gens[k] for k in sorted(gens)]


def final_accuracy(run):
    acc, state = None, None
    for line in open(os.path.join(run, "watch.jsonl"), errors="replace"):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        job = j.get("job", j)
        state = job.get("state", state)
        evals = job.get("progress", {}).get("evaluations", [])
        if evals:
            acc = evals[-1].get("testAccuracy", acc)
    return acc, state


def recovery_after(gens, tk):
    """Figures of the recovery from a kill at tk."""
    before = [g for g in gens if g.lines and g.first_time() <= tk]
    if not before:
        return {"error": "no step before the kill"}
    old = before[-1]
    after = [g for g in gens if g.number > old.number and g.lines]
    completed_old = old.completed()
    highest = max(completed_old) if completed_old else old.resumed_at()
    highest_at_kill = max([s for s, t in completed_old.items() if t <= tk], default=old.resumed_at())
    out = {"old_generation": old.number, "old_world": old.world,
           "highest_step_at_kill": highest_at_kill, "highest_step": highest}
    if not after:
        return dict(out, error="no generation trained after the kill")
    new = after[0]
    resumed = new.resumed_at()
    done = new.completed()
    first = min(done) if done else None
    out.update(new_generation=new.number, new_world=new.world, resumed_step=resumed,
               resumed_from=new.resume[1] if new.resume else "start",
               steps_lost=highest - resumed,
               s_to_generation=(new.start - tk) if new.start else None,
               s_to_resume=(new.resume[2] - tk) if new.resume else None,
               s_to_next_step=(done[first] - tk) if first is not None else None)
    return out


def samples_kept(gens, start, end):
    """Samples of the optimizer steps kept, completed in [start, end]: each
    step of the final lineage once, from the generation that trained it
    (the last one that resumed before it), counted from its logged ids."""
    trained = [g for g in gens if g.lines]
    trained = [g for g in trained if g.first_time() <= end]
    last = trained[-1]
    final = max(s for s, t in last.completed().items() if t <= end)
    total = 0
    first_step = None
    owners = {}
    for g in trained:  # later generations overwrite: the last that trained s
        for s in g.lines:
            if g.resumed_at() < s:
                owners[s] = g
    for s in range(1, final + 1):
        owner = owners.get(s)
        if owner is None:
            continue
        done_at = owner.completed().get(s)
        if done_at is None and s == final:
            done_at = end
        if done_at is None or done_at < start:
            continue
        first_step = first_step or s
        total += sum(n for _, _, n in owner.lines[s])
    return total, first_step, final


def steady_rate(gens, start, end, world=3, warm=10):
    """Samples/s inside the generations of `world` ranks, after `warm` steps
    of each: the run's own rate between failures."""
    samples, seconds = 0, 0.0
    for g in gens:
        if g.world != world or not g.lines:
            continue
        done = {s: t for s, t in g.completed().items() if start <= t <= end}
        steps = sorted(s for s in done if s > g.resumed_at() + warm)
        if len(steps) < 2:
            continue
        samples += sum(n for s in steps[1:] for _, _, n in g.lines[s])
        seconds += done[steps[-1]] - done[steps[0]]
    return samples / seconds if seconds > 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["fault_free", "kill", "goodput"])
    ap.add_argument("--run", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--train_s", type=float)
    ap.add_argument("--kill_time", type=float)
    ap.add_argument("--victim", type=int)
    ap.add_argument("--fault_free")
    ap.add_argument("--start", type=float)
    ap.add_argument("--end", type=float)
    ap.add_argument("--kills", default="")
    ap.add_argument("--interval", type=float)
    a = ap.parse_args()
    gens = parse(a.run)
    acc, state = final_accuracy(a.run)
    row = {"kind": a.kind, "model": a.model, "mode": a.mode, "run": os.path.basename(a.run),
           "final_state": state, "test_accuracy": acc,
           "generations": [[g.number, g.world, g.resumed_at(),
                            g.resume[1] if g.resume else "start",
                            max(g.lines) if g.lines else None] for g in gens]}
    ff = json.loads(a.fault_free) if a.fault_free else None
    if a.kind == "fault_free":
        row["train_s"] = a.train_s
    elif a.kind == "kill":
        row.update(victim=a.victim, kill_time=a.kill_time, **recovery_after(gens, a.kill_time))
        if ff and ff.get("test_accuracy") is not None and acc is not None:
            row["fault_free_accuracy"] = ff["test_accuracy"]
            row["accuracy_delta_points"] = 100.0 * (acc - ff["test_accuracy"])
    else:
        kills = [float(k) for k in a.kills.split(",") if k]
        samples, first, final = samples_kept(gens, a.start, a.end)
        rate = samples / (a.end - a.start)
        row.update(start=a.start, end=a.end, seconds=a.end - a.start, kills=len(kills),
                   interval=a.interval, samples_kept=samples, final_step=final,
                   samples_per_s=rate, steady_samples_per_s=steady_rate(gens, a.start, a.end),
                   recoveries=[recovery_after(gens, tk) for tk in kills])
        if ff:
            row["fault_free_samples_per_s"] = ff["samples_per_s"]
            row["goodput_vs_fault_free"] = rate / ff["samples_per_s"]
        if row["steady_samples_per_s"]:
            row["goodput_vs_steady"] = rate / row["steady_samples_per_s"]
    print(json.dumps(row))


if __name__ == "__main__":
    sys.exit(main())

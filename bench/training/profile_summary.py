"""The tables of bench/training/profile_bench.sh: where each workload's step goes.

From the JSON lines the benchmark wrote (one per rank of the job, one per
limit loop: each a ringleader.step_profile result plus the step measured
from throughput), for each configuration (model, precision, ranks), medians
over the repeats (with the spread, min..max, of the shares):

- step: the job's step measured from its progress reports (global batch over
  samples/s); err: its ranks' mean timeline step over the same steps of the
  epoch against it (the breakdown must add up within 2%);
- conc: the concurrent compute limit's step (one loop per rank side by side,
  their summed rate: the harmonic mean of the loops' steps) and conc/step;
  with the limit run before and after the job (phase 0 and 1), each limit
  figure is the mean of the two runs';
- sync: the synchronous limit, the slowest loop's step: what a step that
  waits for every rank can reach where the cores run at different speeds,
  and sync/step (--json only: lock supersedes it);
- lock: the lockstep limit, the loops made to wait for one another every
  step (ringleader.step_profile.lockstep_ms: each step's slowest loop, from
  their timelines), so each CPU's step-to-step variation is paid as a
  synchronous job pays it; lock/step against the job's timeline step (the
  same clock). Where even the lockstep limit is below a target, no
  synchronous step with an even split reaches it;
- lockb: the same with the batch split by the loops' speeds (lockstep_ms
  by_speed: balance_batches at its best), which leaves only the
  step-to-step variation: where it is below a target, no synchronous step
  reaches it however it splits (printed in place of sync; --json has both);
- the gap, part by part: the job's mean part minus the limit loops' mean part
  (ms per step); they add up to the job's timeline step minus the loops';
- coord: the coordinator's CPU while the job ran, as a share of the host's
  CPUs (taken from the ranks; the limit's loops ran beside an idle one).

With --compare OTHER, instead: per configuration, the median over the
repeats of this impl's step over OTHER's (both measured in the same repeat)
and the medians of their parts' differences.

    profile_summary.py RESULTS.jsonl [--impl ringleader] [--json] [--compare OTHER]
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict

PARTS = ("data_wait", "forward", "backward", "peer_wait", "exposed_allreduce", "buffer_sync",
         "clip_and_optimizer", "checkpoint_and_eval", "other")
SHORT = ("data", "fwd", "bwd", "peer", "ar", "bufs", "clip+opt", "ckpt", "other")


def load(path):
    """{(model, precision, world): {repeat: {impl: [lines]}}}."""
    runs = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                r = json.loads(line)
                runs[(r["model"], r["precision"], r["world"])][r["repeat"]][r["impl"]].append(r)
    return runs


def mean_parts(lines):
    return {p: statistics.mean(r["parts_ms"].get(p, 0.0) for r in lines) for p in PARTS}


def limit_figures(limit):
    """(conc, sync, lock, lockb) of the limit's loops: per run of them (a phase:
    before the job, after it; older results have one), then the mean over
    the runs, so the job is held against the limit around it."""
    phases = defaultdict(list)
    for r in limit:
        phases[r.get("phase", 0)].append(r)
    concs, syncs, locks, lockbs = [], [], [], []
    for loops in phases.values():
        steps = [r["measured_step_ms"] for r in loops]
        concs.append(len(steps) / sum(1.0 / s for s in steps))
        syncs.append(max(steps))
        # The lockstep limit, on the loops' timelines (as the job's timeline
        # step relates to its measured one); older results lack it.
        locks.append(loops[0].get("lockstep_ms", max(steps)))
        lockbs.append(loops[0].get("lockstep_by_speed_ms", locks[-1]))
    return tuple(statistics.mean(x) for x in (concs, syncs, locks, lockbs))


def repeat_figures(job, limit):
    """One repeat's figures, or None when a side is missing."""
    if not job or not limit:
        return None
    measured = job[0]["measured_step_ms"]
    conc, sync, lock, lockb = limit_figures(limit)
    jp, lp = mean_parts(job), mean_parts(limit)
    timeline = statistics.mean(r["step_ms"] for r in job)
    return {"step": measured, "timeline": timeline, "err": timeline / measured - 1.0,
            "conc": conc, "sync": sync, "conc_share": conc / measured,
            "sync_share": sync / measured, "lock": lock, "lock_share": lock / timeline,
            "lockb": lockb, "lockb_share": lockb / timeline,
            "gap": timeline - statistics.mean(r["step_ms"] for r in limit),
            "parts": {p: jp[p] - lp[p] for p in PARTS},
            "allreduce_ms": statistics.mean(r["allreduce_ms"] for r in job),
            "coordinator": job[0].get("coordinator_cpu_share", 0.0)}


def summarize(repeats):
    """Medians over the repeats' figures, the shares' spreads, the count."""
    med = lambda k: statistics.median(f[k] for f in repeats)  # noqa: E731
    out = {k: med(k) for k in ("step", "timeline", "conc", "sync", "conc_share",
                               "sync_share", "lock", "lock_share", "lockb",
                               "lockb_share", "gap",
                               "allreduce_ms", "coordinator")}
    out["err_max"] = max(abs(f["err"]) for f in repeats)
    out["conc_spread"] = (min(f["conc_share"] for f in repeats),
                          max(f["conc_share"] for f in repeats))
    out["sync_spread"] = (min(f["sync_share"] for f in repeats),
                          max(f["sync_share"] for f in repeats))
    for k in ("lock", "lockb"):
        out[f"{k}_spread"] = (min(f[f"{k}_share"] for f in repeats),
                              max(f[f"{k}_share"] for f in repeats))
    out["parts"] = {p: statistics.median(f["parts"][p] for f in repeats) for p in PARTS}
    out["repeats"] = len(repeats)
    return out


def format_rows(rows):
    head = (f"{'model':6} {'prec':4} {'W':>1} {'n':>1} {'step':>7} {'err':>5} {'conc':>7} "
            f"{'conc/step':>16} {'lock':>7} {'lock/step':>16} {'lockb':>7} "
            f"{'lockb/step':>16} {'gap':>6} |"
            + "".join(f"{s:>7}" for s in SHORT) + f"{'coord':>7}")
    out = [head]
    for (model, prec, world), r in rows:
        c, k, b = r["conc_spread"], r["lock_spread"], r["lockb_spread"]
        out.append(
            f"{model:6} {prec:4} {world:>1} {r['repeats']:>1} {r['step']:7.2f} "
            f"{100 * r['err_max']:4.1f}% {r['conc']:7.2f} "
            f"{r['conc_share']:5.3f} ({c[0]:.2f}..{c[1]:.2f}) {r['lock']:7.2f} "
            f"{r['lock_share']:5.3f} ({k[0]:.2f}..{k[1]:.2f}) {r['lockb']:7.2f} "
            f"{r['lockb_share']:5.3f} ({b[0]:.2f}..{b[1]:.2f}) {r['gap']:+6.2f} |"
            + "".join(f"{r['parts'][p]:+7.2f}" for p in PARTS)
            + f"{100 * r['coordinator']:6.1f}%")
    return "\n".join(out)


def compare(runs, impl, other):
    """Lines of impl against other, configuration by configuration."""
    out = [f"{impl} against {other}: step ratio (median, min..max over repeats), "
           "then the parts' differences (ms, medians)",
           f"{'model':6} {'prec':4} {'W':>1} {'n':>1} {'ratio':>18} |"
           + "".join(f"{s:>7}" for s in SHORT)]
    for (model, prec, world), by_repeat in sorted(runs.items()):
        pairs = [(by_repeat[r][impl], by_repeat[r][other]) for r in sorted(by_repeat)
                 if by_repeat[r].get(impl) and by_repeat[r].get(other)]
        if not pairs:
            continue
        ratios = [a[0]["measured_step_ms"] / b[0]["measured_step_ms"] for a, b in pairs]
        diffs = [{p: mean_parts(a)[p] - mean_parts(b)[p] for p in PARTS} for a, b in pairs]
        out.append(f"{model:6} {prec:4} {world:>1} {len(pairs):>1} {statistics.median(ratios):6.3f} "
                   f"({min(ratios):.3f}..{max(ratios):.3f}) |"
                   + "".join(f"{statistics.median(d[p] for d in diffs):+7.2f}" for p in PARTS))
    return "\n".join(out)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--impl", default="ringleader", help="the job lines' impl")
    parser.add_argument("--json", action="store_true", help="one JSON object per configuration")
    parser.add_argument("--compare", metavar="OTHER", help="the impl to compare --impl with")
    args = parser.parse_args(argv)
    if args.compare:
        print(compare(load(args.results), args.impl, args.compare))
        return 0
    rows = []
    for key, by_repeat in sorted(load(args.results).items()):
        figures = [f for rep in sorted(by_repeat)
                   if (f := repeat_figures(by_repeat[rep].get(args.impl),
                                           by_repeat[rep].get("limit")))]
        if figures:
            rows.append((key, summarize(figures)))
    if not rows:
        print(f"no configuration has both {args.impl} and limit lines", file=sys.stderr)
        return 1
    if args.json:
        for (model, prec, world), r in rows:
            print(json.dumps({"model": model, "precision": prec, "world": world, **r}))
        return 0
    print("ms per step, medians of n repeats (spread min..max); err: the largest |timeline "
          "step / measured step - 1|; gap: the job's timeline step minus the limit loops', "
          "split by part (job part minus limit part)")
    print(format_rows(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

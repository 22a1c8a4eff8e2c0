"""One Ringleader run of bench/train_bench.sh, from `ringctl watch` JSON lines.

samples/s: the global batch times the slowest rank's optimizer steps per
second, each rank's from its own progress reports in the first epoch (step 20
or later) and the coordinator's receive times of them. (Pairing the job's
step, the minimum over ranks, with the newest report time of any rank made a
rank that had already reported a later step stretch the window: up to 20%
low at 4 ms steps.) seconds_to_85: from the job entering RUNNING to the
coordinator holding the first epoch evaluation at or above 85% test accuracy.
    train_watch.py WATCH.jsonl IMPL MODEL WORLD GLOBAL_BATCH
"""
import json
import sys


def main(path, impl, model, world, gb):
    per_rank, running_ms, evals, state = {}, None, [], None
    for line in open(path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        job = j.get("job", j)
        state = job.get("state")
        p = job.get("progress", {})
        if state == "JOB_STATE_RUNNING" and running_ms is None:
            running_ms = int(job.get("updateTimeMs", 0))
        if state == "JOB_STATE_RUNNING":
            for r in p.get("ranks", []):
                step, epoch = int(r.get("step", 0)), int(r.get("epoch", 0))
                if epoch == 0 and step >= 20 and not r.get("finished"):
                    per_rank.setdefault(int(r.get("rank", 0)), {})[step] = \
                        int(r.get("reportTimeMs", 0))
        evals = p.get("evaluations", evals)
    rates = []
    for reports in per_rank.values():
        (s0, t0), (s1, t1) = min(reports.items()), max(reports.items())
        if s1 > s0 and t1 > t0:
            rates.append((s1 - s0) * gb / ((t1 - t0) / 1000.0))
    rate = min(rates) if len(rates) == world else 0.0
    points = sum(len(r) for r in per_rank.values())
    accs = [e.get("testAccuracy", 0.0) for e in evals]
    to_85 = None
    for e in evals:
        if e.get("testAccuracy", 0.0) >= 0.85 and running_ms is not None:
            to_85 = (int(e["timeMs"]) - running_ms) / 1000.0
            break
    print(json.dumps({"impl": impl, "model": model, "world": world,
                      "global_batch": gb, "samples_per_s": rate,
                      "test_accuracy": accs, "seconds_to_85": to_85,
                      "final_state": state, "reports": points}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))

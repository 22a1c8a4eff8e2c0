"""One Ringleader run of bench/train_bench.sh, from `ringctl watch` JSON lines.

samples/s: the slowest rank's optimizer steps times the global batch over the
coordinator's clock, from its first progress report past step 20 to its last
one in the first epoch. seconds_to_85: from the job entering RUNNING to the
coordinator holding the first epoch evaluation at or above 85% test accuracy.
    train_watch.py WATCH.jsonl IMPL MODEL WORLD GLOBAL_BATCH
"""
import json
import sys


def main(path, impl, model, world, gb):
    points, running_ms, evals, state = [], None, [], None
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
        step, epoch = int(p.get("step", 0)), int(p.get("epoch", 0))
        if state == "JOB_STATE_RUNNING" and step >= 20 and epoch == 0:
            # When the coordinator received the newest of the ranks' reports.
            t = max([int(r.get("reportTimeMs", 0)) for r in p.get("ranks", [])] or [0])
            points.append((t, step))
        evals = p.get("evaluations", evals)
    rate = 0.0
    if len(points) >= 2 and points[-1][0] > points[0][0]:
        (t0, s0), (t1, s1) = points[0], points[-1]
        rate = (s1 - s0) * gb / ((t1 - t0) / 1000.0)
    accs = [e.get("testAccuracy", 0.0) for e in evals]
    to_85 = None
    for e in evals:
        if e.get("testAccuracy", 0.0) >= 0.85 and running_ms is not None:
            to_85 = (int(e["timeMs"]) - running_ms) / 1000.0
            break
    print(json.dumps({"impl": impl, "model": model, "world": world,
                      "global_batch": gb, "samples_per_s": rate,
                      "test_accuracy": accs, "seconds_to_85": to_85,
                      "final_state": state, "reports": len(points)}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))

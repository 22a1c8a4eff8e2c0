"""One Ringleader run of bench/training/train_bench.sh, from `ringctl watch` JSON lines.

samples/s: the global batch times the slowest rank's optimizer steps per
second, each rank's from its own progress reports in the first epoch (step 20
or later, before the job's last step: it has no next step to bound it in a
timeline, and trails the epoch's end) and the coordinator's receive times of
them. (Pairing the job's step, the minimum over ranks, with the newest report
time of any rank made a rank that had already reported a later step stretch
the window: up to 20% low at 4 ms steps.) window_steps: the slowest rank's
first and last reported steps used, so a profile of the timelines can average
the same steps (`ringleader.step_profile --steps FIRST+1:LAST`: `ringctl
watch` shows a report every few tens of ms, and the MLP's steps 21 to the end
came out 2% off its steps 71 to 400). seconds_to_85: from the job entering
RUNNING to the coordinator holding the first epoch evaluation at or above 85%
test accuracy.
tokens_per_s: samples/s times TOKENS_PER_SAMPLE (a language model's block
size), when given and above 1. REPEAT numbers the benchmark's repeat (1).
    train_watch.py WATCH.jsonl IMPL MODEL WORLD GLOBAL_BATCH [TOKENS_PER_SAMPLE [REPEAT]]
"""
import json
import sys


def main(path, impl, model, world, gb, tokens_per_sample=1, repeat=1):
    per_rank, running_ms, evals, state, train_loss = {}, None, [], None, None
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
                total = int(r.get("totalSteps", 0))
                # Not the job's last step: it has no next step to bound it
                # in a timeline.
                if (epoch == 0 and step >= 20 and not r.get("finished")
                        and (not total or step < total)):
                    per_rank.setdefault(int(r.get("rank", 0)), {})[step] = \
                        int(r.get("reportTimeMs", 0))
        evals = p.get("evaluations", evals)
        train_loss = p.get("finalTrainLoss", train_loss)
    rates = []
    for reports in per_rank.values():
        (s0, t0), (s1, t1) = min(reports.items()), max(reports.items())
        if s1 > s0 and t1 > t0:
            rates.append(((s1 - s0) * gb / ((t1 - t0) / 1000.0), [s0, s1]))
    rate, window = min(rates) if len(rates) == world else (0.0, None)
    points = sum(len(r) for r in per_rank.values())
    accs = [e.get("testAccuracy", 0.0) for e in evals]
    losses = [m.get("value") for e in evals for m in e.get("metrics", [])
              if m.get("name") == "loss"]
    to_85 = None
    for e in evals:
        if e.get("testAccuracy", 0.0) >= 0.85 and running_ms is not None:
            to_85 = (int(e["timeMs"]) - running_ms) / 1000.0
            break
    out = {"impl": impl, "model": model, "world": world,
           "global_batch": gb, "samples_per_s": rate,
           "test_accuracy": accs, "seconds_to_85": to_85,
           "final_state": state, "reports": points, "repeat": repeat}
    if window:
        out["window_steps"] = window
    if losses:
        out["test_loss"] = losses
    if train_loss is not None:
        out["train_loss"] = train_loss
    if tokens_per_sample > 1:
        out.update(tokens_per_sample=tokens_per_sample, tokens_per_s=rate * tokens_per_sample)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
         *(int(a) for a in sys.argv[6:8]))

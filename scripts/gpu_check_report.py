"""gpu_check.json from what scripts/gpu_check.sh left in its scratch directory.

    gpu_check_report.py --work DIR --out FILE --mode gpu|rehearse --seconds N

Reads DIR/steps.tsv (step, ok|failed|skipped, seconds, note), DIR/env.json,
the tests' XML (in the directory of FILE), DIR/allreduce.jsonl (the peer's
lines) and DIR/jobs/*.json (`ringctl --output=json get`). Writes:
  environment  the machine (LibTorch, NCCL, gcc, glibc, GPU);
  steps        [{name, status, seconds, note}] in order;
  tests        {target: {tests, failures, errors, skipped}};
  allreduce    [{bytes, median_s, algbw_gbps, busbw_gbps}] at world 1 (nccl-
               tests' bus bandwidth is algbw * 2(n-1)/n: 0 at world size 1,
               so algbw is the figure a single GPU gives);
  jobs         {workload: {state, message, steps, total_steps, epoch,
               final_train_loss, test_accuracy, test_metrics, seconds}} as
               `ringctl get` reports them (seconds: create to last update),
               and steps_per_sec, samples_per_sec (tokens_per_sec for the
               GPT) from the progress reports `ringctl watch` streamed.
Only the standard library is used (the GPU machine's python3 may lack more).
"""
import argparse
import glob
import json
import os
import xml.etree.ElementTree as ET


def read_steps(path):
    steps = []
    if os.path.exists(path):
        for line in open(path):
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 3:
                steps.append({"name": parts[0], "status": parts[1], "seconds": int(parts[2]),
                              "note": parts[3].strip() if len(parts) > 3 else ""})
    return steps


def read_tests(out_dir):
    tests = {}
    for xml_path in sorted(glob.glob(os.path.join(out_dir, "*.xml"))):
        try:
            root = ET.parse(xml_path).getroot()
        except ET.ParseError as e:
            tests[os.path.basename(xml_path)[:-4]] = {"error": str(e)}
            continue
        cases = list(root.iter("testcase"))
        skipped = [c.get("name") for c in cases
                   if c.get("result") == "skipped" or c.find("skipped") is not None]
        failed = [c.get("name") for c in cases if c.find("failure") is not None]
        tests[os.path.basename(xml_path)[:-4]] = {
            "tests": len(cases), "failures": len(failed), "errors": int(root.get("errors", 0)),
            "skipped": len(skipped), "passed": len(cases) - len(failed) - len(skipped),
            "failed_cases": failed, "skipped_cases": skipped}
    return tests


def read_allreduce(path):
    rows = []
    if os.path.exists(path):
        for line in open(path):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            rows.append({k: r.get(k) for k in ("impl", "world", "bytes", "iters", "median_s",
                                                 "algbw_gbps", "busbw_gbps")})
    return rows


def throughput(watch_path, batch):
    """steps/s and samples/s from `ringctl --output=json watch` lines.

    Rank 0's progress reports (step, the coordinator's receive time) from
    step 10 (after warm-up: CUDA context, cuDNN autotuning, the first
    allocations) to its last report before finishing, as bench/common/train_watch.py
    measures; None where there are fewer than two such reports.
    """
    reports = {}
    if not os.path.exists(watch_path):
        return None, None
    for line in open(watch_path):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        job = j.get("job", j)
        if job.get("state") != "JOB_STATE_RUNNING":
            continue
        for r in job.get("progress", {}).get("ranks", []):
            step = int(r.get("step", 0))
            if int(r.get("rank", 0)) == 0 and step >= 10 and not r.get("finished"):
                reports[step] = int(r.get("reportTimeMs", 0))
    if len(reports) < 2:
        return None, None
    (s0, t0), (s1, t1) = min(reports.items()), max(reports.items())
    if t1 <= t0:
        return None, None
    steps_per_s = (s1 - s0) / ((t1 - t0) / 1000.0)
    return steps_per_s, steps_per_s * batch if batch else None


def read_jobs(jobs_dir):
    jobs = {}
    for path in sorted(glob.glob(os.path.join(jobs_dir, "*.json"))):
        name = os.path.basename(path)[:-5]
        try:
            j = json.load(open(path))
        except ValueError:
            jobs[name] = {"state": "unknown (no `ringctl get` JSON)"}
            continue
        p = j.get("progress", {})
        spec = j.get("spec", {})
        batch = int(spec.get("batchSize", 0)) * int(j.get("worldSize", 1) or 1)
        block = int(spec.get("dataset", {}).get("blockSize", 0))
        steps_per_s, samples_per_s = throughput(
            os.path.join(jobs_dir, name + "-watch.jsonl"), batch)
        created, updated = int(j.get("createTimeMs", 0)), int(j.get("updateTimeMs", 0))
        jobs[name] = {
            "state": j.get("state"), "message": j.get("message", ""),
            "epoch": int(p.get("epoch", 0)), "steps": int(p.get("step", 0)),
            "total_steps": int(p.get("totalSteps", 0)),
            "final_train_loss": p.get("finalTrainLoss"), "last_loss": p.get("loss"),
            "test_accuracy": p.get("testAccuracy"), "test_metrics": p.get("testMetrics"),
            "global_batch": batch, "steps_per_sec": steps_per_s,
            "samples_per_sec": samples_per_s,
            "tokens_per_sec": samples_per_s * block if samples_per_s and block else None,
            "seconds": (updated - created) / 1000.0 if created and updated else None,
        }
    return jobs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--mode", required=True)
    p.add_argument("--seconds", type=int, required=True)
    a = p.parse_args()
    env_path = os.path.join(a.work, "env.json")
    steps = read_steps(os.path.join(a.work, "steps.tsv"))
    report = {
        "mode": a.mode,
        "seconds": a.seconds,
        # ok: no step failed (a skipped one says why in its note).
        "ok": bool(steps) and all(s["status"] != "failed" for s in steps),
        "steps_failed": sum(s["status"] == "failed" for s in steps),
        "steps_skipped": sum(s["status"] == "skipped" for s in steps),
        "environment": json.load(open(env_path)) if os.path.exists(env_path) else {},
        "steps": steps,
        "tests": read_tests(os.path.dirname(os.path.abspath(a.out))),
        "allreduce": read_allreduce(os.path.join(a.work, "allreduce.jsonl")),
        "jobs": read_jobs(os.path.join(a.work, "jobs")),
    }
    with open(a.out, "w") as f:
        json.dump(report, f, indent=1)
    for s in steps:
        print(f"{s['name']:<34} {s['status']:<8} {s['seconds']:>4}s  {s['note'][:110]}")


if __name__ == "__main__":
    main()

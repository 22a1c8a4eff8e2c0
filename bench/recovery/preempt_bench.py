#!/usr/bin/python3
"""Preemption, measured (issue 34, point 4): not a timed test.

Each trial runs one job on a fresh coordinator and three real workers
(--threads=1, CPU), sends SIGTERM at a random optimizer step, and follows
the job to its end:
  whole  SIGTERM to every worker: the job must go PREEMPTED with rank 0's
         checkpoint; three new workers then resume it to SUCCEEDED;
  one    SIGTERM to one random worker of three: the other two go on.
Per trial (one JSON line): the step the signal came at, the step every rank
stopped after (the highest any rank completed), the step the next
generation resumed at, steps lost (the difference; target 0), each
signalled worker's time from SIGTERM to exit, and for `whole` the final
checkpoint's size and write time (the "final checkpoint ... written and
committed in" line). Issue 48: the first three workers start as a deployment path starts them
(PATH, tests/deploy/as_shipped.py), with its command line and environment
(no OPENBLAS_NUM_THREADS, OpenBLAS at its default pool), and are stopped as
its platform stops them:
  bare     the README's worker command, SIGTERM to the process;
  systemd  deploy/systemd/ringleader-worker-cpu@.service's ExecStart and
           environment, KillSignal= then SIGKILL after TimeoutStopSec=;
  pid1     the CPU pod's container (deploy/k8s/overlays/cpu), PID 1 of its
           own PID namespace, SIGTERM from outside it, SIGKILL after
           terminationGracePeriodSeconds.
The workers that resume the job are bare ones. Usage (from
bench/recovery/preempt_bench.sh, which builds -c opt binaries and the data):
  preempt_bench.py BIN_DIR WORKLOAD SPEC_FILE MODE TRIALS SEED OUT.jsonl [PATH]
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tests", "deploy"))
import as_shipped  # noqa: E402

POLL_S = 0.1
JOB_TIMEOUT_S = 1800


def ringctl(bin_dir, target, *args):
    out = subprocess.run([f"{bin_dir}/cli/ringctl", f"--coordinator={target}",
                          "--output=json", *args], capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"ringctl {' '.join(args)}: {out.stderr}")
    return out.stdout.strip()


def snake(v):
    """ringctl's JSON (protobuf's lowerCamelCase names) with snake_case."""
    if isinstance(v, dict):
        return {re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), k):
                snake(x) for k, x in v.items()}
    if isinstance(v, list):
        return [snake(x) for x in v]
    return v


def get(bin_dir, target, job):
    return snake(json.loads(ringctl(bin_dir, target, "get", job)))


def wait_for(bin_dir, target, job, until, timeout_s=JOB_TIMEOUT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        j = get(bin_dir, target, job)
        if until(j):
            return j
        if j.get("state") in ("JOB_STATE_FAILED", "JOB_STATE_CANCELLED"):
            raise RuntimeError(f"job {job} {j.get('state')}: {j.get('message')}")
        time.sleep(POLL_S)
    raise TimeoutError(f"job {job}: {j.get('state')} after {timeout_s} s")


def step_of(j):
    return int(j.get("progress", {}).get("step", 0) or 0)


def launch(path, bin_dir, target):
    """The worker as deployment `path` starts it (as_shipped.py)."""
    bins = {"ringleader-coordinator": f"{bin_dir}/coordinator/ringleader-coordinator",
            "ringleader-worker": f"{bin_dir}/worker/ringleader-worker",
            "ringctl": f"{bin_dir}/cli/ringctl"}
    if path == "bare":
        return as_shipped.readme_worker("README.md", target, bins)
    if path == "systemd":
        env_file = (f"RINGLEADER_COORDINATOR={target}\n"
                    "RINGLEADER_ADDRESS=127.0.0.1\n")
        return as_shipped.systemd_unit(
            "deploy/systemd/ringleader-worker-cpu@.service", "0", env_file, bins)
    if path == "pid1":
        for w in as_shipped.k8s_workers(["deploy/k8s/overlays/cpu"],
                                        "deploy/docker/Dockerfile", target, bins):
            return w
    raise ValueError(f"unknown path {path}")


def start_workers(bin_dir, target, logdir, first, n, path="bare"):
    """`n` workers as `path` starts them (each with --max_jobs=1)."""
    runs = []
    for i in range(first, first + n):
        w = launch(path, bin_dir, target)
        w.argv = w.argv + ["--max_jobs=1"]
        runs.append(as_shipped.Running(w, f"{logdir}/worker{i}.log"))
    return runs


def numbers(pattern, text):
    return [int(m) for m in re.findall(pattern, text)]


def trial(bin_dir, workload, spec, mode, rng, out, path="bare"):
    d = tempfile.mkdtemp(prefix="preempt-")
    coord = subprocess.Popen(
        [f"{bin_dir}/coordinator/ringleader-coordinator", "--listen=127.0.0.1:0",
         f"--state={d}/state.db", f"--port_file={d}/port"],
        stdout=open(f"{d}/coord.log", "w"), stderr=subprocess.STDOUT)
    try:
        for _ in range(100):
            if os.path.exists(f"{d}/port") and open(f"{d}/port").read().strip():
                break
            time.sleep(0.1)
        target = "127.0.0.1:" + open(f"{d}/port").read().strip()
        text = open(spec).read() + f'checkpoint_dir: "{d}/ckpt"\n'
        os.makedirs(f"{d}/ckpt")
        with open(f"{d}/job.textproto", "w") as f:
            f.write(text)
        job = ringctl(bin_dir, target, "submit", f"--file={d}/job.textproto")
        job = json.loads(job)["job_id"] if job.startswith("{") else job
        workers = start_workers(bin_dir, target, d, 0, 3, path)
        first = wait_for(
            bin_dir, target, job,
            lambda j: j.get("world_size") == 3 and
            int(j.get("progress", {}).get("total_steps", 0) or 0) > 0)
        total_steps = int(first["progress"]["total_steps"])
        # Uniform over the steps after the first 10% and before the last 10%.
        at = rng.randint(max(2, total_steps // 10), total_steps * 9 // 10)
        wait_for(bin_dir, target, job,
                 lambda j: j.get("world_size") == 3 and step_of(j) >= at)
        victims = workers if mode == "whole" else [rng.choice(workers)]
        t0 = time.monotonic()
        for w in victims:  # At once, as a platform stopping them all.
            os.kill(w.target_pid(), w.launch.stop_signal)
        exits, codes = [], []
        for w in victims:
            try:
                codes.append(w.proc.wait(timeout=w.launch.grace_s))
            except subprocess.TimeoutExpired:  # The platform's SIGKILL.
                w.proc.kill()
                codes.append(w.proc.wait(timeout=60))
            exits.append(time.monotonic() - t0)
        row = {"workload": workload, "mode": mode, "path": path,
               "signal_at_step": at,
               "total_steps": total_steps, "exit_s": exits,
               "exit_codes": codes}
        logs = "".join(open(f"{d}/worker{i}.log").read() for i in range(3))
        stopped = numbers(r"for a preemption at step (\d+)", logs) + \
            numbers(r"stopped after step (\d+)", logs)
        if mode == "whole":
            j = wait_for(bin_dir, target, job,
                         lambda j: j.get("state") in ("JOB_STATE_PREEMPTED",
                                                      "JOB_STATE_SUCCEEDED"),
                         120)
            if j.get("state") == "JOB_STATE_SUCCEEDED":
                # The signal came after the last step's start: the ranks
                # finish the job rather than stop at its end.
                row.update(final_state="JOB_STATE_SUCCEEDED",
                           finished_before_preemption=True, steps_lost=0)
                out.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
                return
            ckpt = j.get("last_checkpoint", {})
            row["checkpoint_step"] = int(ckpt.get("step", 0))
            path = ckpt.get("path", "")
            row["checkpoint_bytes"] = os.path.getsize(path) if path and \
                os.path.exists(path) else 0
            write = re.findall(r"final checkpoint at step \d+ written and "
                               r"committed in ([0-9.]+)(ms|s)", logs)
            row["checkpoint_write_s"] = [float(v) / (1000 if u == "ms" else 1)
                                         for v, u in write]
            row["restarts_after_preemption"] = int(j.get("restarts", 0))
            workers += start_workers(bin_dir, target, d, 3, 3)
        done = wait_for(bin_dir, target, job,
                        lambda j: j.get("state") == "JOB_STATE_SUCCEEDED")
        for w in workers:
            w.proc.wait(timeout=120)
            w.close()
        n = 6 if mode == "whole" else 3
        logs = "".join(open(f"{d}/worker{i}.log").read() for i in range(n))
        resumed = numbers(r"resumes from checkpoint \d+ \(.*?\) at epoch \d+ "
                          r"step (\d+)", logs) + \
            numbers(r"recovers from rank \d+'s memory at epoch \d+ step (\d+)",
                    logs)
        row["stopped_at_step"] = max(stopped) if stopped else None
        row["resumed_at_step"] = max(resumed) if resumed else None
        if stopped and resumed:
            row["steps_lost"] = max(stopped) - max(resumed)
        row["final_state"] = done.get("state")
        row["restarts"] = int(done.get("restarts", 0))
        row["test_accuracy"] = done.get("progress", {}).get("test_accuracy")
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps(row), flush=True)
    finally:
        coord.terminate()
        coord.wait(timeout=30)
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    if len(argv) not in (8, 9):
        print(__doc__, file=sys.stderr)
        return 2
    bin_dir, workload, spec, mode, trials, seed, out_path = argv[1:8]
    path = argv[8] if len(argv) == 9 else "bare"
    rng = random.Random(int(seed))
    with open(out_path, "a") as out:
        for _ in range(int(trials)):
            out_row = {"workload": workload}
            try:
                trial(bin_dir, workload, spec, mode, rng, out, path)
            except Exception as e:  # One failed trial is a row, not the end.
                out_row.update(mode=mode, path=path, error=str(e)[:500])
                out.write(json.dumps(out_row) + "\n")
                print(json.dumps(out_row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

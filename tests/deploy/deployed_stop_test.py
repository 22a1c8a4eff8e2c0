"""Every deployment path stops gracefully, tested as shipped (issue 48).

Each case starts two workers exactly as one deployment file does
(tests/deploy/as_shipped.py: its command line and its environment, none of
the test's; PID 1 of its own PID namespace for the containers, so both are
PID 1 on one host), lets them train a two-worker job on a real
coordinator, then stops both the way the platform does (systemd's
KillSignal= and TimeoutStopSec=, the kubelet's SIGTERM and
terminationGracePeriodSeconds). Each must exit with the status its
platform takes as a clean stop, within the grace, and leave the job
PREEMPTED at a committed checkpoint, no restart spent. The image's CMD (the
coordinator, PID 1 with a network of its own) must drain and exit 0 within
`docker stop`'s 10 s.

Run by deployed_stop_test.sh (Bazel) with the binaries' paths in
$DEPLOY_TEST_BINARIES, from the runfiles root, where deploy/ is.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from typing import Callable, Dict, Iterator, List

import pytest

import as_shipped

DEPLOY = "deploy"
KUSTOMIZATIONS = [f"{DEPLOY}/k8s/base", f"{DEPLOY}/k8s/overlays/cpu",
                  f"{DEPLOY}/k8s/pytorchjob"]
DOCKERFILE = f"{DEPLOY}/docker/Dockerfile"
WORKER_ENV_EXAMPLE = f"{DEPLOY}/systemd/worker.env.example"
POLL_S = 0.05


def binaries() -> Dict[str, str]:
    paths = os.environ["DEPLOY_TEST_BINARIES"].split(":")
    return {os.path.basename(p): os.path.abspath(p) for p in paths}


class Coordinator:
    """A bare coordinator on a free port, and ringctl against it."""

    def __init__(self, workdir: str):
        self.dir = workdir
        self._log = open(f"{workdir}/coordinator.log", "w")
        self.proc = subprocess.Popen(
            [binaries()["ringleader-coordinator"], "--listen=127.0.0.1:0",
             f"--state={workdir}/state.db", f"--port_file={workdir}/port"],
            stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not self._port():
            assert self.proc.poll() is None, self.log()
            time.sleep(POLL_S)
        self.target = f"127.0.0.1:{self._port()}"

    def _port(self) -> str:
        try:
            return open(f"{self.dir}/port").read().strip()
        except OSError:
            return ""

    def log(self) -> str:
        return open(f"{self.dir}/coordinator.log").read()[-4000:]

    def ringctl(self, *args: str) -> str:
        r = subprocess.run([binaries()["ringctl"], f"--coordinator={self.target}",
                            *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"ringctl {args}: {r.stderr}"
        return r.stdout.strip()

    def job(self, job_id: str) -> dict:
        return json.loads(self.ringctl("--output=json", "get", job_id))

    def submit(self, name: str) -> str:
        ckpt = f"{self.dir}/{name}-ckpt"
        os.makedirs(ckpt, exist_ok=True)
        path = f"{self.dir}/{name}.textproto"
        with open(path, "w") as f:
            f.write(job_text(name, ckpt))
        return self.ringctl("submit", f"--file={path}")

    def wait(self, job_id: str, until: Callable[[dict], bool],
             timeout_s: float) -> dict:
        deadline = time.monotonic() + timeout_s
        j = self.job(job_id)
        while not until(j):
            assert j.get("state") not in ("JOB_STATE_FAILED",
                                          "JOB_STATE_CANCELLED"), j
            assert time.monotonic() < deadline, f"{job_id} still {j}"
            time.sleep(POLL_S)
            j = self.job(job_id)
        return j

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self._log.close()


def job_text(name: str, ckpt: str) -> str:
    """An MLP on synthetic data for two workers, long enough to be stopped
    mid-training; max_restarts 0, so a worker that dies fails it."""
    return (f'name: "{name}"\n'
            "model { arch: MODEL_ARCH_MLP }\n"
            "dataset { format: DATASET_FORMAT_SYNTHETIC "
            "synthetic_train_size: 200000 synthetic_test_size: 1000 }\n"
            "optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 }\n"
            "epochs: 2 batch_size: 32 min_workers: 2 max_workers: 2\n"
            "max_restarts: 0 rendezvous_last_call_ms: 0\n"
            "progress_every_steps: 10\n"
            f'checkpoint_dir: "{ckpt}"\n')


def step_of(j: dict) -> int:
    return int(j.get("progress", {}).get("step", 0) or 0)


def launches(target: str) -> Dict[str, as_shipped.Launch]:
    """Every worker launch the deployment files describe."""
    bins = binaries()
    env_file = open(WORKER_ENV_EXAMPLE).read()
    env_file = re.sub(r"(?m)^RINGLEADER_COORDINATOR=.*$",
                      f"RINGLEADER_COORDINATOR={target}", env_file)
    env_file = re.sub(r"(?m)^RINGLEADER_ADDRESS=.*$",
                      "RINGLEADER_ADDRESS=127.0.0.1", env_file)
    out = {
        "systemd-cpu": as_shipped.systemd_unit(
            f"{DEPLOY}/systemd/ringleader-worker-cpu@.service", "0", env_file,
            bins),
        "systemd-gpu": as_shipped.systemd_unit(
            f"{DEPLOY}/systemd/ringleader-worker@.service", "0", env_file,
            bins),
        "bare-readme": as_shipped.readme_worker("README.md", target, bins),
    }
    for launch in as_shipped.k8s_workers(KUSTOMIZATIONS, DOCKERFILE, target,
                                         bins):
        key = "k8s-" + re.sub(r"[^a-z0-9]+", "-",
                              launch.where.split(" ", 1)[1].lower()).strip("-")
        out[key] = launch
    return out


CASES = ["systemd-cpu", "systemd-gpu", "bare-readme",
         "k8s-deploy-k8s-base-statefulset-ringleader-worker",
         "k8s-deploy-k8s-overlays-cpu-statefulset-ringleader-worker",
         "k8s-deploy-k8s-pytorchjob-pytorchjob-fashion-mnist-worker"]


@pytest.fixture(scope="module")
def coordinator() -> Iterator[Coordinator]:
    workdir = tempfile.mkdtemp(prefix="deployed-stop-")
    c = Coordinator(workdir)
    yield c
    c.close()
    shutil.rmtree(workdir, ignore_errors=True)


def test_every_worker_launch_is_covered(coordinator: Coordinator) -> None:
    assert sorted(launches(coordinator.target)) == sorted(CASES)


def preempt_once(c: Coordinator, launch: as_shipped.Launch, name: str,
                 at_step: int = 30, workers: int = 2) -> dict:
    """Starts `workers` as `launch`, stops them all as their platform does
    at `at_step` or later; what happened."""
    needs_root = launch.pid1 and os.geteuid() != 0
    if needs_root:
        pytest.skip("skipped: a PID namespace needs root")
    job = c.submit(name)
    runs = [as_shipped.Running(launch, f"{c.dir}/{name}-{i}.log")
            for i in range(workers)]
    try:
        for run in runs:
            assert run.ready(120), \
                f"{launch.where}: no READY=1\n{tail(c, name)}"
        running = c.wait(job, lambda j: j.get("state") == "JOB_STATE_RUNNING"
                         and step_of(j) >= at_step, 180)
        t0 = time.monotonic()
        for run in runs:  # A node drain, a host shutdown: all at once.
            run.send_stop()
        codes = [run.wait_exit() for run in runs]
        exit_s = time.monotonic() - t0
        assert all(code in launch.ok_exit for code in codes), \
            f"{launch.where}: exits {codes} after {exit_s:.1f} s\n{tail(c, name)}"
        assert exit_s < launch.grace_s
        j = c.wait(job, lambda j: j.get("state") == "JOB_STATE_PREEMPTED", 60)
        assert int(j.get("restarts", 0) or 0) == 0
        ckpt = int(j.get("lastCheckpoint", {}).get("step", 0) or 0)
        assert ckpt >= step_of(running), j
        return {"job": job, "signal_at_step": step_of(running),
                "checkpoint_step": ckpt, "exit_s": exit_s, "exit_codes": codes}
    finally:
        for run in runs:
            run.close()
        # A PREEMPTED job is offered to the next idle worker: the next case's.
        subprocess.run([binaries()["ringctl"], f"--coordinator={c.target}",
                        "cancel", job], capture_output=True, timeout=60)


def tail(c: Coordinator, name: str) -> str:
    """The end of each worker's log of case `name`."""
    out = ""
    for i in range(2):
        try:
            out += f"--- worker {i}\n" + \
                open(f"{c.dir}/{name}-{i}.log").read()[-3000:]
        except OSError:
            pass
    return out


@pytest.mark.parametrize("case", CASES)
def test_a_worker_as_deployed_stops_gracefully(coordinator: Coordinator,
                                               case: str) -> None:
    launch = launches(coordinator.target)[case]
    assert "OPENBLAS_NUM_THREADS" not in launch.env, launch.env
    row = preempt_once(coordinator, launch, case)
    print(case, row)


def test_the_image_cmd_drains_within_docker_stop(tmp_path) -> None:
    if os.geteuid() != 0:
        pytest.skip("skipped: PID and network namespaces need root")
    stage = as_shipped.dockerfile_final_stage(DOCKERFILE)
    state = next(a for a in stage["cmd"] if a.startswith("--state="))
    launch = as_shipped.docker_cmd(
        DOCKERFILE, binaries(), {state: f"--state={tmp_path}/state.db"})
    run = as_shipped.Running(launch, f"{tmp_path}/coordinator.log")
    try:
        deadline = time.monotonic() + 60
        log = ""
        while "coordinator serving on port" not in log:
            assert time.monotonic() < deadline and run.proc.poll() is None, log
            time.sleep(POLL_S)
            log = open(f"{tmp_path}/coordinator.log").read()
        t0 = time.monotonic()
        code = run.stop()
        assert code == 0, open(f"{tmp_path}/coordinator.log").read()[-4000:]
        assert time.monotonic() - t0 < launch.grace_s
    finally:
        run.close()

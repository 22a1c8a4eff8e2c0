"""The daemons as each deployment file starts and stops them (issue 48).

A deployment path is tested as shipped when the process gets exactly the
command line and environment its file gives (not the test's environment)
and is stopped the way its platform stops it:

  systemd   the unit's ExecStart= (%i, ${VAR}), Environment= and
            EnvironmentFile= on systemd's own base environment (PATH, LANG,
            NOTIFY_SOCKET, WATCHDOG_USEC); KillSignal= to the service's
            processes, then SIGKILL after TimeoutStopSec=.
  kubernetes  the container's command, args and env (kustomize's build of
            the overlay), with the image's ENV; the process is PID 1 of its
            own PID namespace, SIGTERM comes from outside it, SIGKILL after
            terminationGracePeriodSeconds.
  docker    the image's CMD and ENV, PID 1, `docker stop`'s SIGTERM and its
            default 10 s before SIGKILL.
  bare      the command the README shows (README.md, "Using it").

GPU files run on CPU: `--device=cuda:N` becomes `--device=cpu`, the one
change. What cannot be reproduced here (User=, the sandboxing directives,
readOnlyRootFilesystem) does not bear on how a signal is taken.
"""
import dataclasses
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from typing import Dict, Iterator, List, Optional, Set

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_deploy  # noqa: E402  (the kustomize build and helpers)

# What systemd gives every service before its own Environment= (systemd.exec(5),
# "Environment variables in spawned processes").
SYSTEMD_BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
    "LANG": "C.UTF-8",
}
# A container's environment before the image's ENV and the pod's env: the
# runtime's PATH and the hostname (Kubernetes adds its service variables).
CONTAINER_BASE_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOSTNAME": "ringleader-test",
}
DOCKER_STOP_TIMEOUT_S = 10.0  # `docker stop`'s default --time.
BINARY_NAMES = ("ringleader-coordinator", "ringleader-worker", "ringctl")


@dataclasses.dataclass
class Launch:
    """One daemon as a deployment file starts it."""
    where: str
    argv: List[str]
    env: Dict[str, str]
    pid1: bool = False                 # PID 1 of its own PID namespace.
    own_network: bool = False          # A network namespace of its own.
    stop_signal: int = signal.SIGTERM
    grace_s: float = 30.0              # Stop signal to SIGKILL.
    ok_exit: Set[int] = dataclasses.field(default_factory=lambda: {0})
    notify: bool = False               # Type=notify: give it NOTIFY_SOCKET.


def _binary(path: str, binaries: Dict[str, str]) -> str:
    name = os.path.basename(path)
    return binaries[name] if name in binaries else path


def _on_cpu(args: List[str]) -> List[str]:
    return ["--device=cpu" if re.fullmatch(r"--device=cuda(:\d+)?", a) else a
            for a in args]


def _expand(text: str, env: Dict[str, str]) -> str:
    """${VAR} (systemd) and $(VAR) (Kubernetes) references."""
    text = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                  lambda m: env.get(m.group(1), ""), text)
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                  lambda m: env.get(m.group(1), m.group(0)), text)


# ---------------------------------------------------------------- systemd


def unit_directives(path: str) -> Dict[str, List[str]]:
    """[Service] directives of a unit file, each with its values in order."""
    out: Dict[str, List[str]] = {}
    section = None
    with open(path) as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith(("#", ";")):
                continue
            if line.startswith("["):
                section = line
                continue
            if section == "[Service]" and "=" in line:
                key, value = line.split("=", 1)
                out.setdefault(key.strip(), []).append(value.strip())
    return out


def env_file(text: str) -> Dict[str, str]:
    """KEY=VALUE lines of an EnvironmentFile (comments and blanks skipped)."""
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            env[key.strip()] = value.strip().strip('"')
    return env


def systemd_unit(unit: str, instance: str, env_file_text: str,
                 binaries: Dict[str, str]) -> Launch:
    """The unit's service for `instance`, its EnvironmentFile= holding
    `env_file_text`."""
    d = unit_directives(unit)
    env = dict(SYSTEMD_BASE_ENV)
    for line in d.get("Environment", []):
        for assignment in shlex.split(line):
            key, value = assignment.split("=", 1)
            env[key] = value
    if d.get("EnvironmentFile"):
        env.update(env_file(env_file_text))
    exec_start = d["ExecStart"][-1].replace("%i", instance)
    argv = [_expand(a, env) for a in shlex.split(exec_start)]
    argv[0] = _binary(argv[0], binaries)
    timeout = check_deploy.seconds(d.get("TimeoutStopSec", ["90s"])[-1], unit)
    kill = d.get("KillSignal", ["SIGTERM"])[-1]
    ok = {0} | {int(c) for v in d.get("SuccessExitStatus", [])
                for c in v.split() if c.isdigit()}
    return Launch(where=f"systemd {os.path.basename(unit).replace('@', '@' + instance)}",
                  argv=_on_cpu(argv), env=env,
                  stop_signal=getattr(signal, kill), grace_s=timeout,
                  ok_exit=ok, notify=d.get("Type", [""])[-1] == "notify")


# ---------------------------------------------------------------- containers


def dockerfile_final_stage(path: str) -> Dict[str, object]:
    """ENV, CMD and ENTRYPOINT of the Dockerfile's last stage."""
    env: Dict[str, str] = {}
    cmd: List[str] = []
    entrypoint: List[str] = []
    stop_signal = "SIGTERM"
    with open(path) as f:
        text = re.sub(r"\\\n", " ", f.read())
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        word = word.upper()
        if word == "FROM":
            env, cmd, entrypoint = {}, [], []
        elif word == "ENV":
            for assignment in shlex.split(rest):
                key, _, value = assignment.partition("=")
                env[key] = value
        elif word in ("CMD", "ENTRYPOINT"):
            value = json.loads(rest) if rest.strip().startswith("[") \
                else ["/bin/sh", "-c", rest]
            if word == "CMD":
                cmd = value
            else:
                entrypoint = value
        elif word == "STOPSIGNAL":
            stop_signal = rest.strip()
    return {"env": env, "cmd": cmd, "entrypoint": entrypoint,
            "stop_signal": stop_signal}


def docker_cmd(dockerfile: str, binaries: Dict[str, str],
               substitute: Dict[str, str]) -> Launch:
    """The image run with no command (`docker run IMAGE`), stopped by
    `docker stop`. `substitute` replaces whole arguments (a state path the
    test owns, a free port)."""
    stage = dockerfile_final_stage(dockerfile)
    argv = list(stage["entrypoint"]) + list(stage["cmd"])
    argv = [substitute.get(a, a) for a in argv]
    argv[0] = _binary(argv[0], binaries)
    env = dict(CONTAINER_BASE_ENV)
    env.update(stage["env"])
    return Launch(where="docker run (the image's CMD)", argv=argv, env=env,
                  pid1=True, own_network=True, stop_signal=getattr(signal, stage["stop_signal"]),
                  grace_s=DOCKER_STOP_TIMEOUT_S)


def k8s_workers(kustomizations: List[str], dockerfile: str,
                coordinator: str, binaries: Dict[str, str]) -> Iterator[Launch]:
    """Every container that runs ringleader-worker in the built
    kustomizations, its coordinator address (a Service name, or the
    PyTorchJob's MASTER_ADDR/MASTER_PORT) pointed at `coordinator`."""
    image_env = dockerfile_final_stage(dockerfile)["env"]
    host, port = coordinator.rsplit(":", 1)
    for kdir in kustomizations:
        for doc in check_deploy.build(kdir):
            for where, spec, _ in check_deploy.pod_specs(doc):
                for c in spec.get("containers", []):
                    argv = list(c.get("command", [])) + list(c.get("args", []))
                    if not argv or os.path.basename(argv[0]) != "ringleader-worker":
                        continue
                    env = dict(CONTAINER_BASE_ENV)
                    env.update(image_env)
                    for e in c.get("env", []):
                        env[e["name"]] = str(e["value"]) if "value" in e \
                            else "127.0.0.1"  # status.podIP
                    if "RINGLEADER_COORDINATOR" in env:
                        env["RINGLEADER_COORDINATOR"] = coordinator
                    elif doc["kind"] == "PyTorchJob":
                        env.update(MASTER_ADDR=host, MASTER_PORT=port,
                                   RANK="1", WORLD_SIZE="2")
                    argv = [_expand(a, env) for a in argv]
                    argv[0] = _binary(argv[0], binaries)
                    code = check_deploy.flag_value(
                        {"args": argv}, "preempted_exit_code")
                    yield Launch(
                        where=f"kubernetes {kdir} {where}", argv=_on_cpu(argv),
                        env=env, pid1=True,
                        grace_s=float(spec.get("terminationGracePeriodSeconds", 30)),
                        ok_exit={int(code) if code else 0})


# ---------------------------------------------------------------- bare


def readme_worker(readme: str, coordinator: str,
                  binaries: Dict[str, str]) -> Launch:
    """The worker command README.md's "Using it" shows, in the environment
    of whoever runs it (the test's, less any BLAS or OpenMP setting)."""
    with open(readme) as f:
        text = f.read()
    m = re.search(r"`(ringleader-worker --coordinator=HOST:PORT[^`]*)`", text)
    if m is None:
        raise AssertionError(f"{readme}: no `ringleader-worker "
                             f"--coordinator=HOST:PORT ...` command")
    argv = shlex.split(m.group(1).replace("HOST:PORT", coordinator))
    argv[0] = binaries["ringleader-worker"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                        "MKL_NUM_THREADS")}
    return Launch(where="bare process (README)", argv=argv, env=env)


# ---------------------------------------------------------------- running


class Running:
    """A started Launch: the process the platform signals, and its exit."""

    def __init__(self, launch: Launch, log_path: str):
        self.launch = launch
        env = dict(launch.env)
        self._notify: Optional[socket.socket] = None
        if launch.notify:
            self._notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            path = log_path + ".notify"
            if os.path.exists(path):
                os.unlink(path)
            self._notify.bind(path)
            env["NOTIFY_SOCKET"] = path
        argv = launch.argv
        if launch.pid1:
            argv = ["/usr/bin/unshare", "--pid", "--fork", "--kill-child"] + \
                (["--net"] if launch.own_network else []) + argv
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT)

    def target_pid(self, timeout_s: float = 10.0) -> int:
        """The daemon's PID as the platform sees it (the namespace's PID 1
        where it runs in one)."""
        if not self.launch.pid1:
            return self.proc.pid
        deadline = time.monotonic() + timeout_s
        path = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        while time.monotonic() < deadline:
            try:
                kids = open(path).read().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.01)
        raise AssertionError(f"{self.launch.where}: unshare started no child")

    def ready(self, timeout_s: float) -> bool:
        """READY=1 on the notify socket (True at once without one)."""
        if self._notify is None:
            return True
        self._notify.settimeout(timeout_s)
        try:
            while True:
                if b"READY=1" in self._notify.recv(4096):
                    return True
        except socket.timeout:
            return False

    def stop(self) -> Optional[int]:
        """The platform's stop: its signal, then SIGKILL after its grace.
        The exit status (negative: killed by that signal), None if even
        SIGKILL left it running."""
        self.send_stop()
        return self.wait_exit()

    def send_stop(self) -> None:
        """The platform's stop signal (systemd follows it with SIGCONT)."""
        os.kill(self.target_pid(), self.launch.stop_signal)
        if self.launch.where.startswith("systemd"):
            os.kill(self.target_pid(), signal.SIGCONT)

    def wait_exit(self) -> Optional[int]:
        """Waits out the platform's grace, then SIGKILL, as after send_stop();
        the exit status as stop() gives it."""
        try:
            return self.proc.wait(timeout=self.launch.grace_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                return None
            return -signal.SIGKILL

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self._log.close()
        if self._notify is not None:
            self._notify.close()

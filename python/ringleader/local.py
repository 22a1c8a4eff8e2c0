"""``LocalCluster``: a coordinator and N workers on this machine.

What ``mp.spawn`` is to a DDP script: the processes of one training run,
started for it and stopped after it. Each worker gets one BLAS and one
LibTorch thread (``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 --threads=1``,
as ``scripts/demo.sh``), so N ranks share the cores without
oversubscribing them. The daemons run in a session of their own (a Ctrl-C
at the terminal reaches Python, which cancels the job, not the daemons
mid-step) and are told to die with the thread that started them, so a
killed Python leaves nothing running either.
"""
from __future__ import annotations

import ctypes
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import weakref
from typing import Dict, List, Optional, Sequence

from . import binaries
from .client import Client
from .errors import ClusterError

CLUSTER_ENV = "RINGLEADER_CLUSTER_DIR"  # Marks the daemons (tests look).
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:  # Runs in the child, between fork and exec.
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _tail(path: pathlib.Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in text[-lines:])


def _deadline_loop(seconds: float, step: float = 0.02):
    """Yields until ``seconds`` have passed, pausing ``step`` between: a
    bounded poll of a condition the caller checks (never a bare sleep)."""
    end = time.monotonic() + seconds
    for _ in range(int(seconds / step) + 2):
        yield
        if time.monotonic() >= end:
            return
        time.sleep(step)


class LocalCluster:
    """A coordinator and ``workers`` worker daemons on this machine.

    Args:
        workers: worker daemons to start, one rank each (0: only the
            coordinator, for workers started elsewhere).
        bin_dir: where ``ringleader-coordinator`` and ``ringleader-worker``
            are (a ``bazel-bin`` or a flat directory). Default:
            ``$RINGLEADER_BIN_DIR``, else this repository's ``bazel-bin``,
            else ``PATH``.
        threads: LibTorch and BLAS threads per worker.
        start_timeout: seconds to wait for the daemons to come up.
        keep_dir: keep the state and log directory after :meth:`stop`.
        coordinator_args: more ``ringleader-coordinator`` flags (TLS,
            ``--auth_token_file``, lease settings...).
        worker_args: more ``ringleader-worker`` flags.

    Example::

        with ringleader.LocalCluster(2) as cluster:
            result = ringleader.fit(model, data, client=cluster.client())

    Leaving the ``with`` block (also by an exception) stops every daemon.
    """

    def __init__(self, workers: int = 2, *, bin_dir: Optional[str] = None,
                 threads: int = 1, start_timeout: float = 60.0,
                 keep_dir: bool = False, coordinator_args: Sequence[str] = (),
                 worker_args: Sequence[str] = ()) -> None:
        if not isinstance(workers, int) or isinstance(workers, bool) or \
                not 0 <= workers <= 256:
            raise ClusterError(f"workers must be an int in [0, 256], not "
                               f"{workers!r}")
        self.coordinator_args = list(coordinator_args)
        self.worker_args = list(worker_args)
        self.workers = workers
        self.threads = int(threads)
        self.start_timeout = float(start_timeout)
        self.keep_dir = keep_dir
        self._paths = binaries.find(
            ["ringleader-coordinator", "ringleader-worker"], bin_dir)
        self._procs: List[subprocess.Popen] = []
        self._workers: List[subprocess.Popen] = []
        self._logs: List = []
        self.dir: Optional[pathlib.Path] = None
        self.address: Optional[str] = None
        self._finalizer: Optional[weakref.finalize] = None

    def _spawn(self, args: List[str], log_name: str,
               env: Dict[str, str]) -> subprocess.Popen:
        assert self.dir is not None
        log = open(self.dir / log_name, "wb")
        self._logs.append(log)
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
            start_new_session=True, preexec_fn=_die_with_parent)
        self._procs.append(proc)
        return proc

    def start(self, wait: bool = True) -> "LocalCluster":
        """Starts the daemons; returns when every worker has registered.

        With ``wait=False`` it returns once the coordinator serves, and
        :meth:`wait_ready` waits for the workers (``fit`` writes the data
        meanwhile).
        """
        if self._procs:
            raise ClusterError("this LocalCluster is already started")
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="ringleader-local-"))
        self._finalizer = weakref.finalize(self, _stop_all, self._procs,
                                           self._logs)
        try:
            self._start_coordinator()
            self._launch_workers()
            if wait:
                self.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        env[CLUSTER_ENV] = str(self.dir)
        one = str(self.threads)
        env.update(OPENBLAS_NUM_THREADS=one, OMP_NUM_THREADS=one,
                   MKL_NUM_THREADS=one)
        return env

    def _start_coordinator(self) -> None:
        assert self.dir is not None
        port_file = self.dir / "port"
        proc = self._spawn([self._paths["ringleader-coordinator"],
                            "--listen=127.0.0.1:0", f"--port_file={port_file}",
                            f"--state={self.dir / 'state.db'}",
                            *self.coordinator_args],
                           "coordinator.log", self._env())
        for _ in _deadline_loop(self.start_timeout):
            if proc.poll() is not None:
                raise ClusterError(
                    f"ringleader-coordinator exited with {proc.returncode}:\n"
                    + _tail(self.dir / "coordinator.log"))
            text = port_file.read_text().strip() if port_file.exists() else ""
            if text.isdigit():
                self.address = f"127.0.0.1:{text}"
                return
        raise ClusterError(f"ringleader-coordinator did not start within "
                           f"{self.start_timeout:g}s")

    def _launch_workers(self) -> None:
        env = self._env()
        self._workers = [self._spawn([self._paths["ringleader-worker"],
                                      f"--coordinator={self.address}",
                                      "--device=cpu",
                                      f"--threads={self.threads}",
                                      *self.worker_args],
                                     f"worker{i}.log", env)
                         for i in range(self.workers)]

    def wait_ready(self) -> None:
        """Returns once every worker has registered with the coordinator;
        ClusterError (with the log's tail) if one exits or time runs out."""
        assert self.dir is not None
        workers = self._workers
        pids = {p.pid for p in workers}
        if not pids:
            return
        with self.client() as client:
            for _ in _deadline_loop(self.start_timeout, 0.05):
                for i, p in enumerate(workers):
                    if p.poll() is not None:
                        raise ClusterError(
                            f"ringleader-worker {i} exited with {p.returncode}:\n"
                            + _tail(self.dir / f"worker{i}.log"))
                if {w.pid for w in client.workers()} >= pids:
                    return
        raise ClusterError(f"{self.workers} workers did not register within "
                           f"{self.start_timeout:g}s (logs in {self.dir})")

    def client(self, **options) -> Client:
        """A :class:`Client` of this cluster's coordinator; ``options`` are
        Client's (``timeout``, ``tls_ca``, ``token``...)."""
        if self.address is None:
            raise ClusterError("the LocalCluster is not started")
        return Client(self.address, **options)

    def stop(self) -> None:
        """Stops every daemon (SIGTERM, then SIGKILL after 10 s) and removes
        the directory of its state and logs. Safe to call twice."""
        if self._finalizer is not None:
            self._finalizer()  # Runs _stop_all once.
        if self.dir is not None and not self.keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.address = None

    def pids(self) -> List[int]:
        """Process ids of the daemons (the coordinator first)."""
        return [p.pid for p in self._procs]

    def __enter__(self) -> "LocalCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"ringleader.LocalCluster(workers={self.workers}, "
                f"address={self.address!r})")


def _stop_all(procs: List[subprocess.Popen], logs: List) -> None:
    """Workers first, so none outlives the coordinator it would look for."""
    for p in reversed(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    end = time.monotonic() + 10.0
    for p in reversed(procs):
        try:
            p.wait(timeout=max(0.1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for log in logs:
        log.close()

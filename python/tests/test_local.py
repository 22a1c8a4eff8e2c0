"""LocalCluster: daemons started for a block and gone after it, always."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import ringleader
from ringleader import binaries
from conftest import REPO, marked_processes


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_daemons_stop_on_an_exception(session_tmp):
    with pytest.raises(RuntimeError, match="boom"):
        with ringleader.LocalCluster(2) as cluster:
            pids = cluster.pids()
            assert set(pids) <= set(marked_processes(str(session_tmp)))
            assert len(cluster.client().workers()) == 2
            raise RuntimeError("boom")
    assert not [p for p in pids if _alive(p)]
    assert cluster.dir is not None and not cluster.dir.exists()


def test_one_blas_thread_per_worker():
    with ringleader.LocalCluster(1) as cluster:
        worker = cluster.pids()[1]
        with open(f"/proc/{worker}/environ", "rb") as f:
            env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
        with open(f"/proc/{worker}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    assert env[b"OPENBLAS_NUM_THREADS"] == env[b"OMP_NUM_THREADS"] == b"1"
    assert b"--threads=1" in args and b"--device=cpu" in args


def test_a_killed_python_leaves_nothing_running(session_tmp):
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(REPO / 'python')!r})
        import ringleader
        c = ringleader.LocalCluster(2).start()
        print(" ".join(map(str, c.pids())), flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script],
                            stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3 and all(_alive(p) for p in pids)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    for _ in range(200):  # PR_SET_PDEATHSIG: the kernel ends them (<= 10 s).
        if not any(_alive(p) for p in pids):
            break
        time.sleep(0.05)
    assert not [p for p in pids if _alive(p)]


def test_missing_daemons_say_the_command_that_builds_them(monkeypatch,
                                                           tmp_path):
    monkeypatch.delenv(binaries.BIN_DIR_ENV, raising=False)
    monkeypatch.setattr(binaries, "REPO_ROOT", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ringleader.ClusterError) as err:
        ringleader.LocalCluster(2)
    message = str(err.value)
    assert "not built" in message
    assert f"cd {tmp_path} && bazel build //coordinator:ringleader-coordinator" \
        " //worker:ringleader-worker //cli:ringctl" in message
    monkeypatch.setenv(binaries.BIN_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(ringleader.ClusterError, match="nowhere"):
        ringleader.LocalCluster(2)


def test_a_flat_bin_dir_and_path_work(monkeypatch, tmp_path):
    real = binaries.find(["ringleader-coordinator", "ringleader-worker"])
    for name, path in real.items():
        os.symlink(path, tmp_path / name)
    assert binaries.find(list(real), str(tmp_path)) == {
        n: str(tmp_path / n) for n in real}
    monkeypatch.delenv(binaries.BIN_DIR_ENV, raising=False)
    monkeypatch.setattr(binaries, "REPO_ROOT", tmp_path / "no-repo")
    monkeypatch.setenv("PATH", str(tmp_path))
    assert binaries.find(list(real)) == {n: str(tmp_path / n) for n in real}


def test_bad_arguments():
    for bad in (-1, 2.5, True, 1000):
        with pytest.raises(ringleader.ClusterError, match="workers"):
            ringleader.LocalCluster(bad)
    with pytest.raises(ringleader.ClusterError, match="not started"):
        ringleader.LocalCluster(1).client()

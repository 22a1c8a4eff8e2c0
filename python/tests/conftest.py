"""Fixtures of the Python package's tests: real daemons, no leftovers.

The daemons come from ``$RINGLEADER_BIN_DIR``, else this checkout's
``bazel-bin`` (``scripts/test.sh`` builds it first). Every daemon a
``LocalCluster`` starts carries ``RINGLEADER_CLUSTER_DIR`` in its
environment, under this session's temporary directory; after each test the
``no_process_left_behind`` fixture fails the test if one is still running
that no shared fixture owns (and kills it).
"""
from __future__ import annotations

import gzip
import os
import pathlib
import signal
import struct
import sys
import tempfile
from typing import Dict, Set, Tuple

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
# This checkout's package, whatever the .pth of scripts/setup.sh points at.
sys.path.insert(0, str(REPO / "python"))

import ringleader  # noqa: E402
from ringleader.local import CLUSTER_ENV  # noqa: E402

FASHION_MNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")
TEST_TIMEOUT_S = 240  # Per test: a hang fails it instead of the whole run.
EXPECTED_PIDS: Set[int] = set()  # Daemons of the shared (module) clusters.


def marked_processes(base: str) -> Dict[int, str]:
    """Live processes whose RINGLEADER_CLUSTER_DIR is under ``base``."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue  # Gone, or not ours to read.
        if state == b"Z":
            continue
        for var in env:
            if var.startswith(CLUSTER_ENV.encode() + b"="):
                value = var.split(b"=", 1)[1].decode(errors="replace")
                if value.startswith(base):
                    found[int(entry)] = value
    return found


@pytest.fixture(scope="session", autouse=True)
def session_tmp(tmp_path_factory) -> pathlib.Path:
    """Every LocalCluster directory of the session lives under one base."""
    base = tmp_path_factory.mktemp("clusters")
    old = os.environ.get("TMPDIR")
    os.environ["TMPDIR"] = str(base)
    tempfile.tempdir = None  # Re-read TMPDIR.
    yield base
    if old is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = old
    tempfile.tempdir = None


@pytest.fixture(autouse=True)
def no_process_left_behind(session_tmp):
    """Fails a test that leaves a daemon running (and ends the daemon)."""
    yield
    leftover = {pid: d for pid, d in marked_processes(str(session_tmp)).items()
                if pid not in EXPECTED_PIDS}
    for pid in leftover:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not leftover, f"daemons left running: {leftover}"


@pytest.fixture(autouse=True)
def time_limit():
    """Bounds every test's time (SIGALRM in the main thread)."""
    def expire(signum, frame):
        raise TimeoutError(f"test ran longer than {TEST_TIMEOUT_S}s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TEST_TIMEOUT_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def cluster():
    """Two workers and a coordinator shared by a module's tests."""
    with ringleader.LocalCluster(2) as c:
        EXPECTED_PIDS.update(c.pids())
        try:
            yield c
        finally:
            EXPECTED_PIDS.difference_update(c.pids())


@pytest.fixture(scope="module")
def coordinator():
    """A coordinator without workers: jobs stay PENDING."""
    with ringleader.LocalCluster(0) as c:
        EXPECTED_PIDS.update(c.pids())
        try:
            yield c
        finally:
            EXPECTED_PIDS.difference_update(c.pids())


def _idx(path: pathlib.Path) -> np.ndarray:
    with gzip.open(path) as f:
        raw = f.read()
    (magic,) = struct.unpack(">i", raw[:4])
    dims = magic & 0xFF
    shape = struct.unpack(f">{dims}i", raw[4:4 + 4 * dims])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)


@pytest.fixture(scope="session")
def fashion_mnist() -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A Fashion-MNIST subset: 4096 train and 1024 test images, float32
    [N, 1, 28, 28] in [0, 1], int64 labels."""
    def split(prefix: str, n: int):
        x = _idx(FASHION_MNIST / f"{prefix}-images-idx3-ubyte.gz")[:n]
        y = _idx(FASHION_MNIST / f"{prefix}-labels-idx1-ubyte.gz")[:n]
        return (x.astype(np.float32)[:, None] / 255.0), y.astype(np.int64)
    x, y = split("train", 4096)
    tx, ty = split("t10k", 1024)
    return x, y, tx, ty


def training_seed(own: int = 0) -> int:
    """The job seed of a test bounded on a trained result: its own, shifted
    by $RINGLEADER_TEST_SEED_OFFSET where scripts/numeric_spread.sh measures
    the spread over seeds (unset in the suite)."""
    return own + int(os.environ.get("RINGLEADER_TEST_SEED_OFFSET", "0") or 0)


def report_numeric(name: str, value: float) -> None:
    """A bounded quantity, as scripts/numeric_spread.sh collects it (pytest
    -s shows it; captured otherwise). To the real stdout: a test that
    reads its own output with capsys would swallow it."""
    sys.__stdout__.write(f"\nNUMERIC {name} {value!r}\n")
    sys.__stdout__.flush()

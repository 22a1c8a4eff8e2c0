"""Ctrl-C in a script running fit cancels the job and says so."""
from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time

import ringleader
from conftest import REPO

SCRIPT = textwrap.dedent("""
    import faulthandler, signal, sys
    # Ctrl-C as a terminal delivers it: a test run started in the background
    # of a non-interactive shell (`cmd &`) passes SIGINT down ignored, and
    # Python then installs no KeyboardInterrupt handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Where it is, should it not exit (the test asks with SIGUSR1).
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.path.insert(0, {python!r})
    import numpy as np
    import torch
    import ringleader
    x = np.random.default_rng(0).random((2048, 32), dtype=np.float32)
    y = (x.sum(1) > 16).astype(np.int64)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 2))
    ringleader.fit(model, (x, y), epochs=10000, batch_size=8,
                   client={address!r}, data_dir={data_dir!r})
""")


def _lines(stream, out: "queue.Queue[str]") -> None:
    for line in iter(stream.readline, ""):
        out.put(line)
    out.put("")


def _wait_for(lines: "queue.Queue[str]", prefix: str, seen: list,
              seconds: float) -> str:
    """The first line starting with ``prefix`` (with "", the end: ""),
    read within ``seconds``; every line read is appended to ``seen``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            line = lines.get(timeout=max(0.01, end - time.monotonic()))
        except queue.Empty:
            break
        seen.append(line)
        if line == "" or (prefix and line.startswith(prefix)):
            return line
    raise AssertionError(f"no line starting {prefix!r} in: {''.join(seen)}")


def test_sigint_cancels_the_running_job(cluster, tmp_path):
    script = SCRIPT.format(python=str(REPO / "python"),
                           address=cluster.address, data_dir=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", script],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, lines),
                     daemon=True).start()
    seen: list = []
    try:
        line = _wait_for(lines, "submitted job ", seen, 120)
        assert line, "".join(seen)
        job_id = line.split()[2]
        with cluster.client() as c:
            for _ in range(600):  # Until it trains: at most 60 s.
                job = c.get(job_id)
                if ringleader.state_name(job) == "RUNNING" and job.progress.step:
                    break
                time.sleep(0.1)
            assert ringleader.state_name(job) == "RUNNING", job
            proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGUSR1)  # Its threads' stacks.
                try:  # faulthandler names the signalled thread last.
                    _wait_for(lines, "Current thread", seen, 10)
                except AssertionError:
                    pass  # No dump: what it printed still says something.
                proc.kill()
                _wait_for(lines, "", seen, 10)
                raise AssertionError("fit did not exit within 60 s of SIGINT; "
                                     "its stderr and stacks:\n" + "".join(seen))
            assert code != 0
            final = c.get(job_id)
        _wait_for(lines, "", seen, 10)  # "": drain it to the end.
        assert ringleader.state_name(final) == "CANCELLED", final.message
        assert f"ringleader: interrupted; cancelled job {job_id}" in "".join(seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not os.path.exists(f"/proc/{proc.pid}/status") or \
        "zombie" not in open(f"/proc/{proc.pid}/status").read()

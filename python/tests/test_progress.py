"""What fit shows: tqdm on a terminal, paced lines off one."""
from __future__ import annotations

import io

from ringleader import progress
from ringleader.v1 import job_pb2


def snapshot(state, step=0, total=100, loss=0.5, evaluations=(), final=False):
    job = job_pb2.Job(job_id="j-1", state=state, world_size=2)
    job.spec.epochs, job.spec.batch_size = 2, 32
    p = job.progress
    p.step, p.total_steps, p.loss = step, total, loss
    p.samples_per_sec = 640.0 if step else 0.0
    p.epoch = 1 if step >= total // 2 else 0
    for epoch, acc in evaluations:
        e = p.evaluations.add(epoch=epoch)
        e.metrics.add(name="accuracy", value=acc)
        e.metrics.add(name="loss", value=1.0 - acc)
    if final:
        p.has_final_metrics, p.final_train_loss = True, 0.25
        p.test_metrics.add(name="accuracy", value=0.9)
        p.test_metrics.add(name="loss", value=0.3)
    return job


RUNNING = job_pb2.JOB_STATE_RUNNING


def test_lines_off_a_terminal_are_paced():
    out = io.StringIO()
    d = progress.Display(file=out, tty=False)
    d.update(snapshot(job_pb2.JOB_STATE_PENDING))
    for step in range(1, 10):  # Within a second: one line, then quarters.
        d.update(snapshot(RUNNING, step=step))
    d.update(snapshot(RUNNING, step=30))
    d.update(snapshot(RUNNING, step=55, evaluations=[(1, 0.8)]))
    final = snapshot(job_pb2.JOB_STATE_SUCCEEDED, step=100,
                     evaluations=[(1, 0.8), (2, 0.9)], final=True)
    d.update(final)
    d.close(final)
    lines = out.getvalue().splitlines()
    assert lines[0] == "PENDING epoch 1/2   0.0% 0/100"
    assert lines[1].startswith("RUNNING epoch 1/2   1.0% 1/100 loss 0.5000 "
                               "640.0 samples/s ETA ")
    assert any(line.startswith("RUNNING epoch 1/2  30.0% 30/100") for line in lines)
    assert "evaluated epoch 1: accuracy 80.00%, test_loss 0.2" in lines
    assert not any("epoch 2:" in line for line in lines)  # The summary's.
    assert lines[-2] == "job j-1 SUCCEEDED"
    assert lines[-1] == "final train_loss 0.25, accuracy 90.00%, test_loss 0.3"
    assert len(lines) <= 8


def test_a_bar_on_a_terminal():
    out = io.StringIO()
    d = progress.Display(file=out, tty=True)
    d.update(snapshot(RUNNING, step=40))
    d.update(snapshot(RUNNING, step=60, evaluations=[(1, 0.75)]))
    d.close(snapshot(job_pb2.JOB_STATE_SUCCEEDED, step=100, final=True))
    text = out.getvalue()
    assert "j-1 RUNNING" in text and "60/100" in text and "loss=0.5000" in text
    assert "evaluated epoch 1: accuracy 75.00%" in text
    assert "final train_loss 0.25" in text


def test_disabled_shows_nothing():
    out = io.StringIO()
    d = progress.Display(enabled=False, file=out, tty=False)
    d.update(snapshot(RUNNING, step=5))
    d.close(snapshot(job_pb2.JOB_STATE_SUCCEEDED, final=True))
    assert out.getvalue() == ""


def test_metrics_are_keyed_as_ringctl_names_them():
    job = snapshot(job_pb2.JOB_STATE_SUCCEEDED, evaluations=[(1, 0.5)], final=True)
    assert progress.evaluations(job) == [
        {"epoch": 1, "accuracy": 0.5, "test_loss": 0.5}]
    assert progress.final_metrics(job) == {
        "train_loss": 0.25, "accuracy": 0.9, "test_loss": 0.3}


def test_a_preempted_job_is_shown_with_why_and_is_not_final():
    from ringleader import client
    job = snapshot(job_pb2.JOB_STATE_PREEMPTED, step=40)
    job.message = "generation 1 preempted: rank 0 committed a checkpoint"
    assert not client.is_final(job)
    assert client.state_name(job) == "PREEMPTED"
    assert progress.status_line(job).endswith(
        "(generation 1 preempted: rank 0 committed a checkpoint)")
    out = io.StringIO()
    d = progress.Display(file=out, tty=False)
    d.update(snapshot(RUNNING, step=30))
    d.update(job)
    assert "PREEMPTED" in out.getvalue()


def stalled(rank=2, phase=job_pb2.WORKER_PHASE_DATA_LOADING, silent_ms=0,
            waited_ms=12300, phase_ms=12400):
    job = snapshot(RUNNING, step=10)
    w = job.waiting_for
    w.waited_ms, w.wait_phase, w.step = waited_ms, \
        job_pb2.WORKER_PHASE_ALLREDUCE_WAIT, 4711
    w.rank, w.worker_id, w.host = rank, f"w{rank}", "h3"
    w.phase, w.phase_ms, w.silent_ms = phase, phase_ms, silent_ms
    return job


def test_waiting_line_is_ringctls():
    assert progress.waiting_for_line(snapshot(RUNNING, step=3)) == ""
    assert progress.waiting_for_line(stalled()) == (
        "waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3): "
        "data loading for 12.4 s")
    assert progress.waiting_for_line(
        stalled(phase=job_pb2.WORKER_PHASE_FORWARD, silent_ms=3100)) == (
        "waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3): "
        "no heartbeat for 3.1 s, last seen in forward")


def test_display_prints_the_waiting_line_once_per_change():
    out = io.StringIO()
    d = progress.Display(file=out, tty=False)
    d.update(stalled(waited_ms=2000))
    d.update(stalled(waited_ms=3000))  # Only the times grew.
    d.update(stalled(phase=job_pb2.WORKER_PHASE_FORWARD))
    d.update(snapshot(RUNNING, step=11))
    lines = [ln for ln in out.getvalue().splitlines() if "rank 2" in ln]
    assert lines == [
        "waiting 2.0 s in all-reduce of step 4711 for rank 2 (host h3): "
        "data loading for 12.4 s",
        "waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3): "
        "forward for 12.4 s",
        "the wait for rank 2 ended",
    ]

"""What ``fit`` shows while a job runs, as ``ringctl watch`` shows it.

On a terminal, a tqdm bar over the job's optimizer steps with the loss,
samples/s and tqdm's ETA; off a terminal (a log, a pipe, a notebook's
captured output) one line when the state changes, or when the step does
and a second has passed or another quarter of the steps is done
(``cli/progress_format.h``'s LogLinePacer), so a log does not get a line
per rank's report. Each per-epoch evaluation prints once, on a line of its
own; the end prints the final state and metrics.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Any, Dict, List, Optional, TextIO

from .client import is_final, state_name
from .v1 import job_pb2

Job = job_pb2.Job


def metric_key(name: str) -> str:
    """The key a metric has in ``Result.metrics``: the test split's loss is
    ``test_loss`` (``ringctl get`` prints it as "test loss")."""
    return "test_loss" if name == "loss" else name


def format_metric(name: str, value: float) -> str:
    if name.endswith("accuracy"):
        return f"{100.0 * value:.2f}%"
    if abs(value) >= 1e4:
        return f"{value:.0f}"
    return f"{value:.4g}"


def format_metrics(metrics: Dict[str, float]) -> str:
    return ", ".join(f"{k} {format_metric(k, v)}" for k, v in metrics.items()
                     if k != "epoch")


# How ``ringctl`` words a worker's phase (``common/waiting_for_line.cc``).
PHASE_WORDS: Dict[int, str] = {
    job_pb2.WORKER_PHASE_UNSPECIFIED: "an unknown phase",
    job_pb2.WORKER_PHASE_IDLE: "idle",
    job_pb2.WORKER_PHASE_RENDEZVOUS: "rendezvous",
    job_pb2.WORKER_PHASE_DATA_LOADING: "data loading",
    job_pb2.WORKER_PHASE_FORWARD: "forward",
    job_pb2.WORKER_PHASE_BACKWARD: "backward",
    job_pb2.WORKER_PHASE_ALLREDUCE_WAIT: "all-reduce wait",
    job_pb2.WORKER_PHASE_BUFFER_SYNC: "buffer sync",
    job_pb2.WORKER_PHASE_OPTIMIZER: "optimizer",
    job_pb2.WORKER_PHASE_CHECKPOINT: "checkpoint",
    job_pb2.WORKER_PHASE_RECOVERY: "recovery",
    job_pb2.WORKER_PHASE_EVALUATION: "evaluation",
}


def phase_words(phase: int) -> str:
    """"data loading" for WORKER_PHASE_DATA_LOADING; a value this package
    does not know by its enum name."""
    if phase in PHASE_WORDS:
        return PHASE_WORDS[phase]
    try:
        return job_pb2.WorkerPhase.Name(phase).lower()
    except ValueError:
        return str(phase)


def waiting_for_line(job: Job) -> str:
    """The rank the job's ranks wait for, as ``ringctl get`` says it:
    ``waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3): data
    loading for 12.4 s``; "" while no rank waits past the threshold."""
    if not job.HasField("waiting_for"):
        return ""
    w = job.waiting_for
    collective = ("all-reduce"
                  if w.wait_phase == job_pb2.WORKER_PHASE_ALLREDUCE_WAIT
                  else "a collective"
                  if w.wait_phase == job_pb2.WORKER_PHASE_UNSPECIFIED
                  else phase_words(w.wait_phase))
    line = f"waiting {w.waited_ms / 1000:.1f} s in {collective}"
    if w.step > 0:
        line += f" of step {w.step}"
    line += f" for rank {w.rank}"
    if w.host:
        line += f" (host {w.host})"
    if w.silent_ms > 0:
        line += (f": no heartbeat for {w.silent_ms / 1000:.1f} s, "
                 f"last seen in {phase_words(w.phase)}")
    else:
        line += f": {phase_words(w.phase)} for {w.phase_ms / 1000:.1f} s"
    return line


def evaluation_dict(e: job_pb2.EpochEvaluation) -> Dict[str, float]:
    out: Dict[str, float] = {"epoch": int(e.epoch)}
    if not e.metrics:
        out["accuracy"] = e.test_accuracy
    for m in e.metrics:
        out[metric_key(m.name)] = m.value
    return out


def eta_seconds(job: Job) -> Optional[float]:
    """Time left from the reported samples/s (ringctl's EstimateEta)."""
    p = job.progress
    if p.total_steps <= 0 or p.samples_per_sec <= 0:
        return None
    per_step = job.spec.batch_size * max(job.spec.gradient_accumulation_steps,
                                         1) * max(job.world_size, 1)
    return max(0, p.total_steps - p.step) * per_step / p.samples_per_sec


def human_duration(seconds: float) -> str:
    s = int(math.ceil(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def status_line(job: Job) -> str:
    """``RUNNING epoch 1/3 40.0% 120/300 loss 0.4123 1534 samples/s ETA 12s``."""
    p = job.progress
    parts = [state_name(job)]
    if p.total_steps > 0:
        parts.append(f"epoch {min(p.epoch + 1, job.spec.epochs)}/{job.spec.epochs}")
        parts.append(f"{100.0 * p.step / p.total_steps:5.1f}% "
                     f"{p.step}/{p.total_steps}")
    if p.step > 0:
        parts.append(f"loss {p.loss:.4f}")
    if p.samples_per_sec > 0:
        parts.append(f"{p.samples_per_sec:.1f} samples/s")
    eta = eta_seconds(job)
    if eta is not None and not is_final(job):
        parts.append(f"ETA {human_duration(eta)}")
    if job.state in (job_pb2.JOB_STATE_RESTARTING,
                     job_pb2.JOB_STATE_PREEMPTED) and job.message:
        parts.append(f"({job.message.splitlines()[0][:200]})")
    return " ".join(parts)


class LinePacer:
    """Which updates get a line off a terminal (ringctl's LogLinePacer)."""

    def __init__(self, min_interval: float = 1.0) -> None:
        self.min_interval = min_interval
        self._state: Optional[int] = None
        self._step = 0
        self._quarter = 0
        self._at = 0.0

    def due(self, job: Job, now: float) -> bool:
        p = job.progress
        quarter = min(4, max(0, p.step) * 4 // p.total_steps) \
            if p.total_steps > 0 else 0
        due = self._state is None or job.state != self._state
        if not due and p.step != self._step:
            due = (now - self._at >= self.min_interval or now < self._at
                   or quarter > self._quarter)
        if due:
            self._state, self._step, self._quarter, self._at = \
                job.state, p.step, quarter, now
        return due


class Display:
    """Draws one job's snapshots; ``enabled=False`` draws nothing."""

    def __init__(self, enabled: bool = True, file: Optional[TextIO] = None,
                 tty: Optional[bool] = None) -> None:
        self.file = file or sys.stderr
        self.enabled = enabled
        self.tty = self.file.isatty() if tty is None else tty
        self._bar: Any = None
        self._pacer = LinePacer()
        self._evaluations = 0
        self._state: Optional[int] = None
        self._waiting: Any = None  # What the last waiting line was about.

    def write(self, line: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.write(line, file=self.file)
        else:
            print(line, file=self.file, flush=True)

    def update(self, job: Job) -> None:
        if not self.enabled:
            return
        self._show_evaluations(job)
        self._show_waiting(job)
        if self.tty:
            self._draw_bar(job)
        elif self._pacer.due(job, time.monotonic()):
            self.write(status_line(job))
        self._state = job.state

    def _show_evaluations(self, job: Job) -> None:
        evaluations = job.progress.evaluations
        end = len(evaluations)
        if is_final(job) and job.progress.has_final_metrics and end > 0:
            end -= 1  # The final one is the summary's.
        for e in evaluations[self._evaluations:end]:
            self.write(f"evaluated epoch {e.epoch}: "
                       f"{format_metrics(evaluation_dict(e))}")
        self._evaluations = max(self._evaluations, end)

    def _show_waiting(self, job: Job) -> None:
        """The waiting line when it appears, or names another rank, phase or
        step (not when only its times grow); a line when the wait ends."""
        w = job.waiting_for if job.HasField("waiting_for") else None
        key = None if w is None else (w.rank, w.worker_id, w.phase,
                                      w.silent_ms > 0, w.wait_phase, w.step)
        if key == (None if self._waiting is None else self._waiting[0]):
            return
        if w is None:
            self.write(f"the wait for rank {self._waiting[1]} ended")
        else:
            self.write(waiting_for_line(job))
        self._waiting = None if w is None else (key, w.rank)

    def _draw_bar(self, job: Job) -> None:
        from tqdm.auto import tqdm
        p = job.progress
        if self._state is not None and job.state != self._state and \
                job.state in (job_pb2.JOB_STATE_RESTARTING,
                              job_pb2.JOB_STATE_PREEMPTED):
            self.write(f"job {job.job_id} {state_name(job)}: {job.message}")
        desc = f"{job.job_id} {state_name(job)}"
        if p.total_steps > 0:
            desc += f" epoch {min(p.epoch + 1, job.spec.epochs)}/{job.spec.epochs}"
        if self._bar is None:
            self._bar = tqdm(total=p.total_steps or None, unit="step",
                             desc=desc, file=self.file, dynamic_ncols=True)
        bar = self._bar
        if p.total_steps and bar.total != p.total_steps:
            bar.total = p.total_steps
        bar.set_description(desc, refresh=False)
        postfix: Dict[str, str] = {}
        if p.step > 0:
            postfix["loss"] = f"{p.loss:.4f}"
        if p.samples_per_sec > 0:
            postfix["samples/s"] = f"{p.samples_per_sec:.0f}"
        bar.set_postfix(postfix, refresh=False)
        bar.update(max(0, p.step - bar.n))  # Also redraws.

    def close(self, job: Optional[Job] = None) -> None:
        """Ends the bar; with the final ``job``, prints its summary."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if job is None or not self.enabled:
            return
        self.write(f"job {job.job_id} {state_name(job)}"
                   + (f": {job.message.splitlines()[0]}" if job.message else ""))
        if job.progress.has_final_metrics:
            final: Dict[str, float] = {"train_loss": job.progress.final_train_loss}
            for m in job.progress.test_metrics:
                final[metric_key(m.name)] = m.value
            self.write(f"final {format_metrics(final)}")


def final_metrics(job: Job) -> Dict[str, float]:
    """``train_loss`` and every test metric of a finished job."""
    p = job.progress
    out: Dict[str, float] = {}
    if p.has_final_metrics:
        out["train_loss"] = p.final_train_loss
        for m in p.test_metrics:
            out[metric_key(m.name)] = m.value
    return out


def evaluations(job: Job) -> List[Dict[str, float]]:
    return [evaluation_dict(e) for e in job.progress.evaluations]

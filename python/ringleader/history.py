"""A job's training curves as typed records: what :meth:`Client.history`
returns (``ringctl get JOB --history`` prints the same series).

The coordinator keeps one point per training report of rank 0, at most
``max_points`` per job (its ``--history_points``, 1000 by default): past
that the series is thinned evenly, its first and latest points always
kept, and ``stride`` says how many reports one point stands for.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List

from .v1 import history_pb2, job_pb2


@dataclasses.dataclass(frozen=True)
class RankSample:
    """One rank's values at a point: those of its latest report."""

    rank: int
    step: int
    loss: float
    step_time_ms: float
    data_wait_share: float  # Of its window's wall time, in [0, 1].


@dataclasses.dataclass(frozen=True)
class HistoryPoint:
    """The job at one optimizer step (rank 0's report of it)."""

    step: int
    epoch: int  # 0-based: the epoch the step is in.
    time_ms: int  # When the coordinator had it, Unix milliseconds.
    loss: float  # Mean over the ranks' latest windows.
    learning_rate: float  # The rate the step used.
    grad_norm: float  # Mean over the ranks; 0 before one was measured.
    samples_per_sec: float  # Sum over the ranks.
    generation: int
    ranks: List[RankSample]


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The test split's metrics after ``epoch`` epochs (1-based), pooled
    over every rank's shard, by name (``accuracy``, ``loss``, ...)."""

    epoch: int
    time_ms: int
    metrics: Dict[str, float]


@dataclasses.dataclass(frozen=True)
class JobHistory:
    """A job's series, in step order, and its per-epoch evaluations."""

    job_id: str
    state: str  # "RUNNING", "SUCCEEDED", ...
    points: List[HistoryPoint]
    evaluations: List[Evaluation]
    stride: int  # Reports of rank 0 per point (1 until thinned).
    max_points: int

    def steps(self) -> List[int]:
        return [p.step for p in self.points]

    def losses(self) -> List[float]:
        return [p.loss for p in self.points]


def _point(p: history_pb2.HistoryPoint) -> HistoryPoint:
    return HistoryPoint(
        step=p.step, epoch=p.epoch, time_ms=p.time_ms, loss=p.loss,
        learning_rate=p.learning_rate, grad_norm=p.grad_norm,
        samples_per_sec=p.samples_per_sec, generation=p.generation,
        ranks=[RankSample(rank=r.rank, step=r.step, loss=r.loss,
                          step_time_ms=r.step_time_ms,
                          data_wait_share=r.data_wait_share)
               for r in p.ranks])


def from_response(resp: history_pb2.JobHistoryResponse) -> JobHistory:
    """The typed records of a GetJobHistory response."""
    state = job_pb2.JobState.Name(resp.state).replace("JOB_STATE_", "") \
        if resp.state in job_pb2.JobState.values() else str(resp.state)
    return JobHistory(
        job_id=resp.job_id, state=state,
        points=[_point(p) for p in resp.points],
        evaluations=[Evaluation(epoch=e.epoch, time_ms=e.time_ms,
                                metrics={m.name: m.value for m in e.metrics})
                     for e in resp.evaluations],
        stride=max(1, resp.stride), max_points=resp.max_points)

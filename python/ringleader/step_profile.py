"""Where a job's optimizer step goes, from the timelines its workers wrote.

A job submitted with ``timeline_dir`` has each rank write
``<timeline_dir>/<job_id>-rank<R>.trace.json`` (Chrome Trace Event Format):
on the rank's compute track one span per phase of each step (``data_wait``,
``forward``, ``backward``, ``allreduce_wait``, ``buffer_sync``,
``grad_norm`` or ``clip_grad_norm``, ``optimizer``, and ``checkpoint`` or
``evaluation`` where they fall), on its communication track one
``allreduce`` per gradient bucket. This module splits each rank's mean step
into those parts::

    python3 -m ringleader.step_profile /tmp/tl/JOB-rank*.trace.json
    python3 -m ringleader.step_profile /tmp/tl --job JOB --limit-ms 41.2

Method: a step is the time from the start of one ``forward`` to the start of
the next, so the steps tile the training loop without gaps; every compute
span that starts inside a step counts toward it, by its kind; what no span
covers (building progress reports, the loop itself, allocator work between
spans) is ``other``, so the parts add up to the step exactly. The first
``skip`` steps (warm-up: allocator growth, first-touch of the buffers) and
the last (it has no next forward) are left out; or, with ``steps=(first,
last)``, exactly the optimizer steps numbered first to last (each span's
``args.step``), e.g. the window a throughput figure was measured over. ``allreduce_wait`` is the
all-reduce that backward did not hide (the *exposed* all-reduce); the
communication track gives the whole all-reduce time besides, so the overlap
shows. Given the timelines of several ranks of one job (``profile_job``), the
part of each rank's ``allreduce_wait`` that passed before the last rank
reached that step's all-reduce (the start of its own wait) is ``peer_wait``:
waiting for a slower rank, which no communication could shorten; the rest
stays ``exposed_allreduce``. This compares wall clocks across ranks, so it
holds where they share one (ranks on one host, or hosts whose clocks agree to
well under a step). With ``limit_ms`` (the step time of the same model with no
communication, e.g. bench/training's ``ringleader-compute-limit``) the gap
to it is printed too.
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import pathlib
import statistics
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

# Compute-track span names, grouped into the parts a step is split into.
PARTS: Dict[str, Sequence[str]] = {
    "data_wait": ("data_wait",),
    "forward": ("forward",),
    "backward": ("backward",),
    "peer_wait": (),  # Carved out of allreduce_wait across ranks (profile_job).
    "exposed_allreduce": ("allreduce_wait",),
    "buffer_sync": ("buffer_sync",),
    "clip_and_optimizer": ("grad_norm", "clip_grad_norm", "optimizer"),
    "checkpoint_and_eval": ("checkpoint", "evaluation"),
}
PART_OF = {name: part for part, names in PARTS.items() for name in names}
OTHER = "other"
COMPUTE_TID = 1  # worker/timeline/timeline.h: Track::kCompute.
COMM_TID = 2  # Track::kComm.
MAX_FILE_BYTES = 512 << 20  # A timeline of 200 steps is a few MB.


@dataclass
class Span:
    """One complete ("X") event of a timeline."""

    name: str
    tid: int
    start_us: int
    dur_us: int
    step: int = -1  # args.step: the optimizer step it belongs to.


@dataclass
class RankProfile:
    """One rank's mean step, split into parts (milliseconds)."""

    rank: int
    path: str
    steps: int  # Steps averaged (after the skipped ones).
    step_ms: float  # Mean step time.
    step_ms_p50: float
    parts_ms: Dict[str, float] = field(default_factory=dict)  # Incl. OTHER.
    allreduce_ms: float = 0.0  # Whole all-reduce time per step (comm track).

    def overlapped_allreduce_ms(self) -> float:
        """All-reduce time per step that ran while the compute track worked
        (the comm track's time, which includes waiting for peers, less the
        compute track's waits for it)."""
        waited = self.parts_ms["exposed_allreduce"] + self.parts_ms["peer_wait"]
        return max(0.0, self.allreduce_ms - waited)


def _bad(path: str, why: str) -> ValueError:
    return ValueError(f"{path}: not a Ringleader timeline: {why}")


def load_spans(path: str) -> Tuple[int, List[Span]]:
    """(rank, [Span]) of timeline file ``path``; ValueError when malformed."""
    size = os.path.getsize(path)
    if size > MAX_FILE_BYTES:
        raise _bad(path, f"{size} bytes is over the {MAX_FILE_BYTES} a timeline holds")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise _bad(path, f"invalid JSON ({e})") from None
    events = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise _bad(path, "no traceEvents list")
    rank = (doc.get("otherData") or {}).get("rank")
    spans: List[Span] = []
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            args = e.get("args")
            step = args.get("step", -1) if isinstance(args, dict) else -1
            span = Span(str(e["name"]), int(e["tid"]), int(e["ts"]), int(e["dur"]),
                        int(step))
        except (KeyError, TypeError, ValueError):
            raise _bad(path, f"event {i} lacks an integer ts, dur or tid") from None
        if span.dur_us < 0:
            raise _bad(path, f"event {i} has a negative duration")
        spans.append(span)
        if rank is None:
            rank = e.get("pid")
    if not isinstance(rank, int):
        raise _bad(path, "no rank (otherData.rank or an event's pid)")
    return rank, spans


Window = Tuple[int, int]  # Optimizer steps first..last, inclusive.


def _step_starts(spans: List[Span]) -> List[int]:
    return sorted(s.start_us for s in spans
                  if s.tid == COMPUTE_TID and s.name == "forward")


def _window_starts(path: str, spans: List[Span], window: Window) -> List[int]:
    """The forwards' starts of steps first..last+1 (the next forward ends
    step last); ValueError when the timeline lacks one of them."""
    first, last = window
    if not 1 <= first <= last:
        raise ValueError(f"steps {first}:{last}: need 1 <= first <= last")
    # A step's first forward starts it: with gradient accumulation each
    # micro-batch's forward carries the same step.
    by_step: Dict[int, int] = {}
    for s in spans:
        if s.tid == COMPUTE_TID and s.name == "forward":
            by_step[s.step] = min(by_step.get(s.step, s.start_us), s.start_us)
    missing = [k for k in range(first, last + 2) if k not in by_step]
    if missing:
        held = f"{min(by_step)}..{max(by_step)}" if by_step else "none"
        raise ValueError(f"{path}: steps {first}:{last} need the forwards of steps "
                         f"{first}..{last + 1}; the timeline holds {held} and lacks "
                         f"{missing[0]} (timeline_steps)")
    return [by_step[k] for k in range(first, last + 2)]


def _part_sums(spans: List[Span], starts: List[int], first: int,
               last_arrival: Optional[Dict[int, int]] = None) -> List[Dict[str, float]]:
    """Per step (from index ``first``), the compute spans' time by part (us).

    ``last_arrival``: per optimizer step, when the last rank began waiting
    for its all-reduce; this rank's wait before then is ``peer_wait``.
    """
    steps = [dict.fromkeys(PARTS, 0.0) for _ in range(len(starts) - 1 - first)]
    for s in spans:
        if s.tid != COMPUTE_TID:
            continue
        k = bisect.bisect_right(starts, s.start_us) - 1 - first
        if 0 <= k < len(steps):
            part = PART_OF.get(s.name)
            if part is None:
                continue
            if s.name == "allreduce_wait" and last_arrival and s.step in last_arrival:
                peer = min(s.dur_us, max(0, last_arrival[s.step] - s.start_us))
                steps[k]["peer_wait"] += peer
                steps[k][part] += s.dur_us - peer
            else:
                steps[k][part] += s.dur_us
    return steps


def _arrivals(spans: List[Span]) -> Dict[int, int]:
    """Per optimizer step, when this rank began waiting for its all-reduce."""
    return {s.step: s.start_us for s in spans
            if s.tid == COMPUTE_TID and s.name == "allreduce_wait" and s.step >= 0}


def _allreduce_per_step(spans: List[Span], begin: int, end: int, steps: int) -> float:
    """Mean all-reduce time (ms) per step of the comm-track spans in [begin, end)."""
    total = sum(s.dur_us for s in spans
                if s.tid == COMM_TID and s.name == "allreduce" and begin <= s.start_us < end)
    return total / steps / 1000.0


def profile_rank(path: str, skip: int = 5,
                 last_arrival: Optional[Dict[int, int]] = None,
                 steps: Optional[Window] = None) -> RankProfile:
    """The mean step of the rank whose timeline is ``path``.

    Raises ValueError when the file is not a timeline or holds fewer than
    ``skip + 2`` steps (too few to average after the warm-up). ``steps``:
    the optimizer steps (first, last) to average, in place of ``skip``;
    ValueError when the timeline lacks one. ``last_arrival`` splits
    ``peer_wait`` out (see ``profile_job``).
    """
    rank, spans = load_spans(path)
    return _profile_spans(path, rank, spans, skip, last_arrival, steps)


def profile_job(paths: Sequence[str], skip: int = 5,
                steps: Optional[Window] = None) -> List[RankProfile]:
    """The mean step of each rank of one job, from its ranks' timelines.

    With two or more ranks, each rank's wait for a step's all-reduce is split
    into ``peer_wait`` (until the last rank began its own wait) and
    ``exposed_allreduce`` (the rest). Steps that some rank's timeline lacks
    are not split. ``steps`` as ``profile_rank``'s. Raises ValueError as
    ``profile_rank``, and when two files hold the same rank.
    """
    loaded = [(path, *load_spans(path)) for path in paths]
    ranks = [rank for _, rank, _ in loaded]
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"two timelines hold the same rank ({sorted(ranks)}): "
                         "give one job's files (--job)")
    last: Optional[Dict[int, int]] = None
    if len(loaded) > 1:
        per_rank = [_arrivals(spans) for _, _, spans in loaded]
        common = set.intersection(*(set(a) for a in per_rank))
        last = {step: max(a[step] for a in per_rank) for step in common}
    return [_profile_spans(path, rank, spans, skip, last, steps)
            for path, rank, spans in loaded]


def _step_durations_us(path: str, starts: List[int], skip: int) -> List[int]:
    """The steps' durations (us) after the first ``skip``, from the starts
    of their forwards (the last step has no next forward); ValueError when
    ``skip`` is negative or leaves no step."""
    if skip < 0:
        raise ValueError(f"skip must be >= 0, got {skip}")
    if len(starts) < skip + 2:
        raise ValueError(f"{path}: {len(starts)} steps recorded; at least {skip + 2} "
                         f"are needed to skip {skip} and average one (timeline_steps)")
    return [starts[i + 1] - starts[i] for i in range(skip, len(starts) - 1)]


def _profile_spans(path: str, rank: int, spans: List[Span], skip: int,
                   last_arrival: Optional[Dict[int, int]],
                   window: Optional[Window] = None) -> RankProfile:
    if window is None:
        starts = _step_starts(spans)
    else:
        starts, skip = _window_starts(path, spans, window), 0
    durations = _step_durations_us(path, starts, skip)
    per_step = _part_sums(spans, starts, skip, last_arrival)
    n = len(durations)
    parts_ms: Dict[str, float] = {}
    for part in PARTS:
        parts_ms[part] = sum(step[part] for step in per_step) / n / 1000.0
    step_ms = sum(durations) / n / 1000.0
    # The worker's compute spans follow one another without nesting, so
    # what they leave of the step is the time no span covered.
    parts_ms[OTHER] = step_ms - sum(parts_ms.values())
    return RankProfile(rank=rank, path=path, steps=n, step_ms=step_ms,
                       step_ms_p50=statistics.median(durations) / 1000.0,
                       parts_ms=parts_ms,
                       allreduce_ms=_allreduce_per_step(spans, starts[skip], starts[-1], n))


def step_durations_ms(path: str, skip: int = 5) -> List[float]:
    """Each step's duration (ms) in timeline ``path``, in order, after the
    first ``skip`` (the last step, which has no next forward, left out).
    Raises ValueError as ``profile_rank``."""
    _, spans = load_spans(path)
    return [d / 1000.0 for d in _step_durations_us(path, _step_starts(spans), skip)]


def lockstep_ms(paths: Sequence[str], skip: int = 5, by_speed: bool = False) -> float:
    """The mean step of loops made to wait for one another at every step.

    ``paths``: the timelines of loops that ran side by side without
    communicating (the compute limit's, one per rank). A synchronous job
    steps at its slowest rank's pace *each step*, not at the slowest loop's
    mean: step i costs the longest of the loops' i-th steps, so the
    step-to-step variation of each CPU is paid too. Pairing the loops' steps
    by index takes each loop's variation as independent of the others' (what
    a real barrier would meet where the CPUs' stalls are); the mean over the
    steps all loops have is what no communication could beat with an even
    split. ``by_speed``: as if each step's batch were split by the loops'
    mean speeds (``balance_batches`` at its best: a loop's share of the
    work proportional to its rate, its step time to its share), which
    takes away the loops' lasting difference and leaves their step-to-step
    variation: step i costs the concurrent step (the loops' harmonic mean)
    times the largest of the loops' i-th steps over their own means.
    Raises ValueError as ``step_durations_ms``, and for no paths.
    """
    if not paths:
        raise ValueError("no timelines")
    loops = [step_durations_ms(p, skip) for p in paths]
    n = min(len(d) for d in loops)
    if not by_speed:
        return sum(max(d[i] for d in loops) for i in range(n)) / n
    means = [sum(d[:n]) / n for d in loops]
    concurrent = len(loops) / sum(1.0 / m for m in means)
    return concurrent * sum(max(d[i] / m for d, m in zip(loops, means))
                            for i in range(n)) / n


def timeline_files(paths: Sequence[str], job: Optional[str] = None) -> List[str]:
    """The timeline files named by ``paths`` (files, or directories to search)."""
    out: List[str] = []
    for p in paths:
        path = pathlib.Path(p)
        if path.is_dir():
            pattern = f"{job}-rank*.trace.json" if job else "*-rank*.trace.json"
            out.extend(str(f) for f in sorted(path.glob(pattern)))
        elif path.exists():
            out.append(str(path))
        else:
            raise ValueError(f"{p}: no such file or directory")
    if not out:
        raise ValueError(f"no timeline files in {', '.join(paths)}"
                         + (f" for job {job}" if job else ""))
    return out


def format_profiles(profiles: List[RankProfile], limit_ms: Optional[float] = None) -> str:
    """A table: one column per rank, one row per part, ms per step."""
    ranks = sorted(profiles, key=lambda p: p.rank)
    head = f"{'ms per step':22}" + "".join(f"{'rank ' + str(p.rank):>10}" for p in ranks)
    lines = [head]

    def row(label: str, values: List[float], share: bool = True) -> None:
        cells = "".join(
            f"{v:>10.2f}" if not share else f"{v:>6.2f}{100 * v / p.step_ms:>3.0f}%"
            for v, p in zip(values, ranks))
        lines.append(f"{label:22}{cells}")

    for part in list(PARTS) + [OTHER]:
        row(part, [p.parts_ms[part] for p in ranks])
    row("step (mean)", [p.step_ms for p in ranks], share=False)
    row("step (median)", [p.step_ms_p50 for p in ranks], share=False)
    row("all-reduce (all)", [p.allreduce_ms for p in ranks], share=False)
    row("  hidden by compute", [p.overlapped_allreduce_ms() for p in ranks], share=False)
    lines.append(f"{'steps averaged':22}" + "".join(f"{p.steps:>10}" for p in ranks))
    if limit_ms is not None:
        slowest = max(p.step_ms for p in ranks)
        lines.append(f"compute limit {limit_ms:.2f} ms: the slowest rank's step is "
                     f"{slowest:.2f} ms, {limit_ms / slowest:.3f} of the limit "
                     f"({slowest - limit_ms:+.2f} ms)")
    return "\n".join(lines)


def _window_arg(text: str) -> Window:
    first, sep, last = text.partition(":")
    try:
        if sep:
            return int(first), int(last)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"{text!r}: want FIRST:LAST, two step numbers")


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m ringleader.step_profile",
        description="Split each rank's mean optimizer step into its parts, "
                    "from the timeline files of a job run with timeline_dir.")
    parser.add_argument("paths", nargs="+", help="timeline files, or directories")
    parser.add_argument("--job", help="only this job's files in a directory")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--skip", type=int, default=5, help="warm-up steps left out")
    which.add_argument("--steps", metavar="FIRST:LAST", type=_window_arg,
                       help="average exactly the optimizer steps FIRST to LAST")
    parser.add_argument("--limit-ms", type=float, help="the compute limit's step time")
    parser.add_argument("--json", action="store_true", help="one JSON object per rank")
    args = parser.parse_args(argv)
    try:
        profiles = profile_job(timeline_files(args.paths, args.job), args.skip, args.steps)
    except (OSError, ValueError) as e:
        print(f"step_profile: {e}", file=sys.stderr)
        return 2
    if args.json:
        for p in profiles:
            print(json.dumps({"rank": p.rank, "path": p.path, "steps": p.steps,
                              "step_ms": p.step_ms, "step_ms_p50": p.step_ms_p50,
                              "parts_ms": p.parts_ms, "allreduce_ms": p.allreduce_ms}))
    else:
        print(format_profiles(profiles, args.limit_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())

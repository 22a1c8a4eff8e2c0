"""ringleader.step_profile: a step split into its parts from the timelines.

Hand-made timelines with known spans check the method (steps from one
forward to the next, spans by part, what no span covers as other, the
warm-up left out, the communication track's overlap) and the errors of bad
files; a real 2-worker job's timelines check that the worker writes what
the profile reads.
"""
from __future__ import annotations

import json
import pathlib
from typing import List, Tuple

import pytest

import ringleader
from ringleader import step_profile
from ringleader.step_profile import OTHER, PARTS

# One step: (name, start offset us, duration us) on the compute track.
STEP = [("data_wait", 0, 100), ("forward", 100, 300), ("backward", 400, 500),
        ("allreduce_wait", 900, 50), ("clip_grad_norm", 950, 20),
        ("optimizer", 970, 30)]
STEP_US = 1100  # 100 us between the optimizer's end and the next data_wait.


def write_timeline(path: pathlib.Path, rank: int, steps: int,
                   extra: List[Tuple[str, int, int, int]] = (),
                   step: List[Tuple[str, int, int]] = STEP) -> None:
    """A timeline of ``steps`` identical steps (``step``'s spans), each with
    one all-reduce of 200 us launched 100 us into backward, plus ``extra``
    (name, tid, ts, dur)."""
    events = [{"ph": "M", "name": "process_name", "pid": rank, "args": {"name": f"rank {rank}"}}]
    for k in range(steps):
        base = 1_000_000 + k * STEP_US
        for name, at, dur in step:
            events.append({"name": name, "ph": "X", "ts": base + at, "dur": dur,
                           "pid": rank, "tid": 1, "args": {"step": k + 1}})
        events.append({"name": "allreduce", "ph": "X", "ts": base + 500, "dur": 200,
                       "pid": rank, "tid": 2, "args": {"step": k + 1, "bucket": 0}})
    for name, tid, ts, dur in extra:
        events.append({"name": name, "ph": "X", "ts": ts, "dur": dur, "pid": rank,
                       "tid": tid, "args": {}})
    path.write_text(json.dumps({"traceEvents": events, "otherData": {"rank": rank}}))


def test_parts_add_up_to_the_step(tmp_path):
    f = tmp_path / "job-rank0.trace.json"
    write_timeline(f, 0, steps=12)
    p = step_profile.profile_rank(str(f), skip=2)
    # 12 forwards: 11 steps between them, less the 2 skipped.
    assert p.steps == 9
    assert p.step_ms == pytest.approx(1.1)
    assert p.parts_ms["data_wait"] == pytest.approx(0.1)
    assert p.parts_ms["forward"] == pytest.approx(0.3)
    assert p.parts_ms["backward"] == pytest.approx(0.5)
    assert p.parts_ms["exposed_allreduce"] == pytest.approx(0.05)
    assert p.parts_ms["clip_and_optimizer"] == pytest.approx(0.05)
    assert p.parts_ms["buffer_sync"] == 0
    assert p.parts_ms[OTHER] == pytest.approx(0.1)
    assert sum(p.parts_ms.values()) == pytest.approx(p.step_ms)
    assert p.allreduce_ms == pytest.approx(0.2)
    assert p.overlapped_allreduce_ms() == pytest.approx(0.15)


def test_waiting_for_a_slower_rank_is_told_from_communication(tmp_path):
    # Rank 1's backward is 300 us longer; rank 0 waits for it, then both
    # wait 50 us more for the all-reduce itself. Same step length on both.
    slow = [("data_wait", 0, 100), ("forward", 100, 300), ("backward", 400, 800),
            ("allreduce_wait", 1200, 50), ("clip_grad_norm", 1250, 20),
            ("optimizer", 1270, 30)]
    fast = [("allreduce_wait", 900, 350) if name == "allreduce_wait"
            else ("clip_grad_norm", 1250, 20) if name == "clip_grad_norm"
            else ("optimizer", 1270, 30) if name == "optimizer"
            else (name, at, dur) for name, at, dur in STEP]
    write_timeline(tmp_path / "j-rank0.trace.json", 0, steps=10, step=fast)
    write_timeline(tmp_path / "j-rank1.trace.json", 1, steps=10, step=slow)
    files = [str(tmp_path / f"j-rank{r}.trace.json") for r in (0, 1)]
    p0, p1 = step_profile.profile_job(files, skip=1)
    assert p0.parts_ms["peer_wait"] == pytest.approx(0.3)
    assert p0.parts_ms["exposed_allreduce"] == pytest.approx(0.05)
    assert p1.parts_ms["peer_wait"] == 0
    assert p1.parts_ms["exposed_allreduce"] == pytest.approx(0.05)
    for p in (p0, p1):
        assert sum(p.parts_ms.values()) == pytest.approx(p.step_ms)
    # One rank alone has no peer to tell apart: its whole wait is exposed.
    alone = step_profile.profile_rank(files[0], skip=1)
    assert alone.parts_ms["peer_wait"] == 0
    assert alone.parts_ms["exposed_allreduce"] == pytest.approx(0.35)
    # Two files of one rank are two jobs' files, not one job's.
    with pytest.raises(ValueError, match="same rank"):
        step_profile.profile_job([files[0], files[0]])


def test_a_checkpoint_counts_in_the_step_it_started(tmp_path):
    f = tmp_path / "job-rank1.trace.json"
    # 5 ms of checkpoint after step 8's optimizer; step 9 starts that much later.
    steps, at = 12, 1_000_000 + 7 * STEP_US + 1000
    write_timeline(f, 1, steps=steps, extra=[("checkpoint", 1, at, 5000)])
    doc = json.loads(f.read_text())
    for e in doc["traceEvents"]:
        if e.get("tid") in (1, 2) and e["ts"] > at and e["name"] != "checkpoint":
            e["ts"] += 5000
    f.write_text(json.dumps(doc))
    p = step_profile.profile_rank(str(f), skip=0)
    assert p.rank == 1
    assert p.parts_ms["checkpoint_and_eval"] == pytest.approx(5.0 / 11)
    assert p.step_ms == pytest.approx(1.1 + 5.0 / 11)
    assert p.step_ms_p50 == pytest.approx(1.1)
    assert sum(p.parts_ms.values()) == pytest.approx(p.step_ms)


def write_steps(path: pathlib.Path, rank: int, durations_us: List[int]) -> None:
    """A timeline whose forwards start ``durations_us`` apart."""
    events, at = [], 1_000_000
    for k, d in enumerate(durations_us + [100]):
        events.append({"name": "forward", "ph": "X", "ts": at, "dur": 50, "pid": rank,
                       "tid": 1, "args": {"step": k + 1}})
        at += d
    path.write_text(json.dumps({"traceEvents": events, "otherData": {"rank": rank}}))


def test_lockstep_pays_each_steps_slowest_loop(tmp_path):
    a, b = tmp_path / "a.trace.json", tmp_path / "b.trace.json"
    # Same mean (1.5 ms) on both, slow on alternate steps: lockstep pays 2 ms
    # every step; the warm-up step (9 ms) is skipped.
    write_steps(a, 0, [9000, 1000, 2000, 1000, 2000])
    write_steps(b, 1, [9000, 2000, 1000, 2000, 1000, 1000, 1000])
    assert step_profile.step_durations_ms(str(a), skip=1) == [1.0, 2.0, 1.0, 2.0]
    # The steps both loops have: the first four after the skip.
    assert step_profile.lockstep_ms([str(a), str(b)], skip=1) == pytest.approx(2.0)
    assert step_profile.lockstep_ms([str(a)], skip=1) == pytest.approx(1.5)
    # Split by speed, the same: equal means leave only the alternation.
    assert step_profile.lockstep_ms([str(a), str(b)], skip=1, by_speed=True) == \
        pytest.approx(2.0)
    with pytest.raises(ValueError, match="no timelines"):
        step_profile.lockstep_ms([])
    with pytest.raises(ValueError, match="at least 12"):
        step_profile.lockstep_ms([str(a)], skip=10)


def test_lockstep_by_speed_takes_away_a_lasting_difference(tmp_path):
    fast, slow = tmp_path / "a.trace.json", tmp_path / "b.trace.json"
    write_steps(fast, 0, [1000] * 5)
    write_steps(slow, 1, [2000] * 5)
    assert step_profile.lockstep_ms([str(fast), str(slow)], skip=0) == pytest.approx(2.0)
    # 1 and 2 ms a step: together 1.5 steps a ms, a step of 4/3 ms each.
    assert step_profile.lockstep_ms([str(fast), str(slow)], skip=0, by_speed=True) == \
        pytest.approx(4.0 / 3.0)


@pytest.mark.parametrize("content, why", [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "no traceEvents"),
    ('{"traceEvents": [{"ph": "X", "name": "forward", "tid": 1}]}', "integer ts"),
    ('{"traceEvents": [{"ph": "X", "name": "forward", "tid": 1, "ts": 1, "dur": -4,'
     ' "pid": 0}]}', "negative duration"),
    ('{"traceEvents": []}', "no rank"),
])
def test_bad_files_say_why(tmp_path, content, why):
    f = tmp_path / "bad.trace.json"
    f.write_text(content)
    with pytest.raises(ValueError, match=why):
        step_profile.profile_rank(str(f))


def test_a_window_of_steps_averages_exactly_those(tmp_path):
    # Step 6 ends 1 ms late (every span of steps 7 on starts 1 ms later).
    f = tmp_path / "job-rank0.trace.json"
    write_timeline(f, 0, steps=12)
    doc = json.loads(f.read_text())
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["args"].get("step", 0) >= 7:
            e["ts"] += 1000
    f.write_text(json.dumps(doc))
    p = step_profile.profile_rank(str(f), steps=(3, 6))
    assert p.steps == 4
    assert p.step_ms == pytest.approx((3 * 1.1 + 2.1) / 4)
    assert p.parts_ms[OTHER] == pytest.approx(0.1 + 1.0 / 4)
    assert p.allreduce_ms == pytest.approx(0.2)
    assert step_profile.profile_rank(str(f), steps=(7, 10)).step_ms == pytest.approx(1.1)
    with pytest.raises(ValueError, match="lacks 13"):
        step_profile.profile_rank(str(f), steps=(5, 12))
    with pytest.raises(ValueError, match="need 1 <= first <= last"):
        step_profile.profile_rank(str(f), steps=(6, 5))
    assert step_profile.main([str(f), "--steps", "3:6", "--json"]) == 0
    with pytest.raises(SystemExit):
        step_profile.main([str(f), "--steps", "3-6"])
    with pytest.raises(SystemExit):
        step_profile.main([str(f), "--steps", "3:6", "--skip", "2"])


def test_a_window_starts_each_step_at_its_first_micro_batch(tmp_path):
    # Gradient accumulation: two forwards per optimizer step, the same step
    # number on both; step 6's second micro-batch comes 1 ms late, which
    # steps 2..5 must not see.
    accumulated = [("forward", 0, 200), ("backward", 200, 300), ("forward", 500, 200),
                   ("backward", 700, 300), ("optimizer", 1000, 50)]
    f = tmp_path / "job-rank0.trace.json"
    write_timeline(f, 0, steps=8, step=accumulated)
    doc = json.loads(f.read_text())
    for e in doc["traceEvents"]:
        if e.get("ph") == "X" and e["args"].get("step", 0) == 6 and \
                e["ts"] >= 1_000_000 + 5 * STEP_US + 500:
            e["ts"] += 1000
    f.write_text(json.dumps(doc))
    p = step_profile.profile_rank(str(f), steps=(2, 5))
    assert p.step_ms == pytest.approx(1.1)
    assert p.parts_ms["forward"] == pytest.approx(0.4)


def test_too_few_steps_and_a_bad_skip(tmp_path):
    f = tmp_path / "job-rank0.trace.json"
    write_timeline(f, 0, steps=3)
    with pytest.raises(ValueError, match="3 steps recorded; at least 7"):
        step_profile.profile_rank(str(f), skip=5)
    with pytest.raises(ValueError, match="skip must be >= 0"):
        step_profile.profile_rank(str(f), skip=-1)


def test_command_line(tmp_path, capsys):
    for rank in (0, 1):
        write_timeline(tmp_path / f"j-1-rank{rank}.trace.json", rank, steps=10)
    write_timeline(tmp_path / "other-rank0.trace.json", 0, steps=10)
    assert step_profile.main([str(tmp_path), "--job", "j-1", "--limit-ms", "1.0"]) == 0
    out = capsys.readouterr().out
    assert "rank 0" in out and "rank 1" in out
    for part in list(PARTS) + [OTHER]:
        assert part in out
    assert "0.909 of the limit" in out
    assert step_profile.main([str(tmp_path), "--job", "j-1", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["rank"] for r in rows] == [0, 1]
    assert step_profile.main([str(tmp_path / "missing")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert step_profile.main([str(tmp_path), "--job", "nope"]) == 2
    assert "no timeline files" in capsys.readouterr().err


def test_a_real_jobs_timelines(tmp_path):
    """Two real workers write timelines whose every step splits into parts."""
    timeline_dir = tmp_path / "tl"
    with ringleader.LocalCluster(2) as cluster, cluster.client() as c:
        job_id = c.submit(
            name="profiled", model={"arch": "mlp"}, format="synthetic",
            synthetic_train_size=4096, synthetic_test_size=256,
            optimizer={"kind": "sgd"}, learning_rate=0.05, epochs=1,
            batch_size=32, min_workers=2, max_workers=2,
            timeline_dir=str(timeline_dir))
        ringleader.check_succeeded(c.wait(job_id))
    files = step_profile.timeline_files([str(timeline_dir)], job_id)
    assert len(files) == 2
    profiles = step_profile.profile_job(files)
    assert sorted(p.rank for p in profiles) == [0, 1]
    for p in profiles:
        # 64 steps per rank: 63 between forwards, 5 skipped.
        assert p.steps == 58, p
        assert sum(p.parts_ms.values()) == pytest.approx(p.step_ms)
        assert p.parts_ms["forward"] > 0 and p.parts_ms["backward"] > 0
        assert p.parts_ms["clip_and_optimizer"] > 0
        assert p.allreduce_ms > 0  # Two ranks: gradients were all-reduced.
        assert p.parts_ms[OTHER] >= -1e-9
        assert p.parts_ms["peer_wait"] >= 0 and p.parts_ms["exposed_allreduce"] >= 0
        assert p.step_ms_p50 <= 10 * p.step_ms
    assert "steps averaged" in step_profile.format_profiles(profiles)

"""A job's training history three ways, checked against each other: the
TensorBoard event files rank 0 wrote (read by a parser written here from the
format's description, both CRCs checked), ``ringctl get --history
--output=json`` and ``Client.history``; and the table ``ringctl get
--history`` prints.

The tfevents format: a sequence of records, each
    uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes
    | length bytes of a tensorflow.Event | uint32 masked CRC-32C of them
where masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 (mod 2^32). Event
(tensorflow/core/util/event.proto): 1 wall_time double, 2 step int64,
3 file_version string, 5 summary Summary; Summary
(tensorflow/core/framework/summary.proto): 1 value repeated Value; Value:
1 tag string, 2 simple_value float.
"""
from __future__ import annotations

import json
import pathlib
import struct
import subprocess
from typing import Dict, List, Tuple

import numpy as np
import pytest

import ringleader
from ringleader import binaries

EPOCHS = 2


def _crc32c_table() -> List[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(c: int) -> int:
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_crc32c_check_value():
    assert crc32c(b"123456789") == 0xE3069283


def _varint(buf: bytes, at: int) -> Tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7


def _fields(buf: bytes):
    """(field number, wire type, value) of a protobuf message: ints for
    varints, bytes for fixed and length-delimited values."""
    at = 0
    while at < len(buf):
        key, at = _varint(buf, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(buf, at)
        elif wire == 1:
            value, at = buf[at:at + 8], at + 8
        elif wire == 5:
            value, at = buf[at:at + 4], at + 4
        elif wire == 2:
            n, at = _varint(buf, at)
            value, at = buf[at:at + n], at + n
        else:
            raise AssertionError(f"wire type {wire} in an Event")
        yield number, wire, value


def _event(data: bytes) -> Dict:
    event: Dict = {"values": {}}
    for number, wire, value in _fields(data):
        if number == 1 and wire == 1:
            event["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            event["step"] = value
        elif number == 3 and wire == 2:
            event["file_version"] = value.decode()
        elif number == 5 and wire == 2:
            for _, _, val in _fields(value):  # Summary.value
                tag, simple = None, None
                for vn, vw, v in _fields(val):
                    if vn == 1:
                        tag = v.decode()
                    elif vn == 2 and vw == 5:
                        simple = np.frombuffer(v, "<f4")[0]
                event["values"][tag] = simple
        else:
            raise AssertionError(f"unexpected Event field {number}")
    return event


def read_events(path: pathlib.Path) -> List[Dict]:
    raw = path.read_bytes()
    events, at = [], 0
    while at < len(raw):
        header = raw[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (header_crc,) = struct.unpack("<I", raw[at + 8:at + 12])
        assert header_crc == masked(crc32c(header))
        data = raw[at + 12:at + 12 + length]
        assert len(data) == length, "a record cut short"
        (data_crc,) = struct.unpack("<I", raw[at + 12 + length:at + 16 + length])
        assert data_crc == masked(crc32c(data))
        events.append(_event(data))
        at += 16 + length
    return events


def ringctl(cluster, *args: str) -> subprocess.CompletedProcess:
    exe = binaries.find(["ringctl"])["ringctl"]
    return subprocess.run([exe, f"--coordinator={cluster.address}", *args],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def one_worker():
    """One worker: rank 0 is the whole job, so the job's mean loss and
    summed samples/s are rank 0's own and every value compares exactly."""
    from conftest import EXPECTED_PIDS
    with ringleader.LocalCluster(1) as c:
        EXPECTED_PIDS.update(c.pids())
        try:
            yield c
        finally:
            EXPECTED_PIDS.difference_update(c.pids())


def test_tensorboard_history_and_ringctl_agree(one_worker, tmp_path):
    tb_dir = tmp_path / "tb"
    with one_worker.client() as c:
        job_id = c.submit(
            name="history", model={"arch": "mlp"}, format="synthetic",
            synthetic_train_size=2048, synthetic_test_size=256,
            optimizer={"kind": "sgd"}, learning_rate=0.05,
            lr_schedule={"kind": "cosine", "warmup_steps": 5},
            epochs=EPOCHS, batch_size=64, min_workers=1, max_workers=1,
            evaluate_every_epoch=True, progress_every_steps=4,
            # 1 ms, not 0 (which means the 100 ms default): a job this short
            # must still send rank 0's training reports, the history's points.
            progress_min_interval_ms=1, tensorboard_dir=str(tb_dir))
        ringleader.check_succeeded(c.wait(job_id))
        history = c.history(job_id)

    files = sorted(tb_dir.glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    events = read_events(files[0])
    assert events[0]["file_version"] == "brain.Event:2"
    train = [e for e in events[1:] if "train/loss" in e["values"]]
    evals = [e for e in events[1:] if any(t.startswith("eval/")
                                          for t in e["values"])]
    assert len(train) + len(evals) == len(events) - 1

    out = ringctl(one_worker, "get", job_id, "--history", "--output=json")
    assert out.returncode == 0, out.stderr
    as_json = json.loads(out.stdout)
    points = as_json["points"]
    # Every training report of rank 0 is a point and an event, at its step.
    assert [int(p["step"]) for p in points] == [e["step"] for e in train]
    assert history.steps() == [e["step"] for e in train]
    # One per 4 steps, less the reports a newer one replaced in the queue.
    assert 2 <= len(points) <= 2 * 2048 // 64 // 4
    f32 = np.float32
    for p, typed, e in zip(points, history.points, train):
        v = e["values"]
        assert v["train/loss"] == f32(p["loss"]) == f32(typed.loss)
        assert v["train/learning_rate"] == f32(p["learningRate"]) \
            == f32(typed.learning_rate)
        assert v["train/grad_norm"] == f32(p["gradNorm"]) == f32(typed.grad_norm)
        assert v["train/samples_per_sec"] == f32(p["samplesPerSec"]) \
            == f32(typed.samples_per_sec)
        assert typed.ranks[0].rank == 0 and typed.ranks[0].step_time_ms > 0
        assert 0 <= typed.ranks[0].data_wait_share <= 1
    # The cosine schedule: warm-up, then the rate falls.
    rates = [p.learning_rate for p in history.points]
    assert rates[-1] < max(rates)

    # One evaluation per epoch (the last is the final test), same values.
    assert [e.epoch for e in history.evaluations] == list(range(1, EPOCHS + 1))
    assert len(evals) == EPOCHS
    for ev, e in zip(history.evaluations, evals):
        assert set(e["values"]) == {f"eval/{m}" for m in ev.metrics}
        for name, value in ev.metrics.items():
            assert e["values"][f"eval/{name}"] == f32(value)
    assert [ev["epoch"] for ev in as_json["evaluations"]] == \
        [str(i) for i in range(1, EPOCHS + 1)]

    table = ringctl(one_worker, "get", job_id, "--history")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split()[:6] == ["STEP", "EPOCH", "LOSS", "LR", "GRAD",
                                    "NORM"]
    assert "EVAL ACCURACY" in lines[0]
    assert len(lines) == 1 + len(points) + EPOCHS
    assert sum(1 for line in lines if line.startswith("eval")) == EPOCHS


def test_history_of_an_unknown_job(one_worker):
    with one_worker.client() as c:
        with pytest.raises(ringleader.NotFoundError):
            c.history("no-such-job-7")
    out = ringctl(one_worker, "get", "no-such-job-7", "--history")
    assert out.returncode != 0
    assert "no-such-job-7" in out.stderr

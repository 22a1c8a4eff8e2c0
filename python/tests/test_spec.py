"""Job specs from Python values: keywords, dicts, files, enum spellings."""
from __future__ import annotations

import pytest

import ringleader
from ringleader.v1 import job_pb2
from conftest import REPO


def test_keyword_forms():
    s = ringleader.job_spec(
        precision="bf16", lr_schedule="cosine", warmup_steps=100,
        ddp__gradient_compression="BF16", optimizer={"kind": "adamw",
                                                     "beta2": 0.95},
        hidden_sizes=[64, 32], export__torchscript_path="/tmp/m.pt",
        checkpoint_dir=REPO / "ckpt", ignore_index=0)
    assert s.precision == job_pb2.PRECISION_BF16_MIXED
    assert s.lr_schedule.kind == job_pb2.LR_SCHEDULE_KIND_COSINE
    assert s.lr_schedule.warmup_steps == 100
    assert s.ddp.gradient_compression == job_pb2.GRADIENT_COMPRESSION_BF16
    assert s.optimizer.kind == job_pb2.OPTIMIZER_KIND_ADAMW
    assert s.optimizer.HasField("beta2") and not s.optimizer.HasField("beta1")
    assert list(s.model.hidden_sizes) == [64, 32]
    assert s.checkpoint_dir == str(REPO / "ckpt")
    assert s.task.HasField("ignore_index")


def test_keywords_override_a_file():
    s = ringleader.job_spec(REPO / "examples" / "gpt" / "gpt_fortunes.textproto",
                            epochs=3, block_size=32)
    assert (s.epochs, s.dataset.block_size, s.name) == (3, 32, "gpt-fortunes")


def test_enum_spellings():
    for value in ("LR_SCHEDULE_KIND_STEP", "step", "STEP", 2):
        assert ringleader.job_spec(lr_schedule__kind=value).lr_schedule.kind == 2
    with pytest.raises(ringleader.InvalidSpecError, match="constant, step, "
                                                          "cosine, linear"):
        ringleader.job_spec(lr_schedule__kind="exp")
    with pytest.raises(ringleader.InvalidSpecError, match="not one of"):
        ringleader.job_spec(lr_schedule__kind=99)


def test_wrong_types_and_names_are_named():
    cases = [
        (dict(epochs="3"), "keyword epochs takes an integer"),
        (dict(shuffle=1), r"keyword shuffle \(dataset.shuffle\) takes True or False"),
        (dict(hidden_sizes=5), "takes a list"),
        (dict(hidden_sizes=[1, "a"]), r"hidden_sizes\)\[1\] takes an integer"),
        (dict(ddp={"bucket_cap": 1}), "did you mean 'bucket_cap_bytes'"),
        (dict(kind="sgd"), "ambiguous.*optimizer__kind"),
        (dict(torchscript_path="/m"), "ambiguous.*export__torchscript_path"),
        (dict(batchsize=3), "did you mean 'batch_size'"),
        (dict(seed=-1), "seed: Value out of range"),
        (dict(ddp=3.5), "takes a dict of DdpSpec fields"),
    ]
    for kwargs, words in cases:
        with pytest.raises(ringleader.InvalidSpecError, match=words):
            ringleader.job_spec(**kwargs)
    with pytest.raises(ringleader.InvalidSpecError, match="not int"):
        ringleader.job_spec(42)


def test_dicts_take_json_names_and_values():
    s = ringleader.job_spec({"batchSize": "64", "seed": "18446744073709551615",
                             "optimizer": {"learningRate": "0.5"}})
    assert (s.batch_size, s.seed) == (64, 2**64 - 1)
    assert s.optimizer.learning_rate == 0.5

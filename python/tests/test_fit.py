"""ringleader.fit end to end on real workers, and what it refuses early."""
from __future__ import annotations

import math
import os
import sys
from typing import Optional, Tuple

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import ringleader
from conftest import REPO, report_numeric, training_seed
from ringleader.v1 import job_pb2


def model_fn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                         nn.Linear(128, 10))


class TinyLM(nn.Module):
    """Bigram-ish language model computing its own loss, as nanoGPT does."""

    def __init__(self, vocab: int = 32, block_size: int = 16, dim: int = 32):
        super().__init__()
        self.block_size = block_size
        self.emb = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(block_size, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, idx: Tensor, targets: Optional[Tensor] = None
                ) -> Tuple[Tensor, Optional[Tensor]]:
        pos = torch.arange(idx.size(1), device=idx.device)
        logits = self.head(torch.relu(self.emb(idx) + self.pos(pos)))
        loss: Optional[Tensor] = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)),
                                   targets.reshape(-1))
        return logits, loss


class NumpyNet(nn.Module):
    """torch.jit.script refuses .numpy(); torch.jit.trace records it."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        scale = float(x.numpy().max()) + 1.0
        return self.fc(x.flatten(1) / scale)


def test_fit_fashion_mnist_on_a_local_cluster(tmp_path, capsys):
    """The README's skeleton (examples/python/fashion_mnist.py) on a subset."""
    sys.path.insert(0, str(REPO / "examples" / "python"))
    try:
        import fashion_mnist as example
    finally:
        sys.path.pop(0)
    result = example.fit(limit=4096, local=True, data_dir=tmp_path,
                         seed=training_seed(0))
    report_numeric("python.fit_fashion_mnist_accuracy",
                   result.metrics[-1]["accuracy"])
    assert [m["epoch"] for m in result.metrics] == [1, 2]
    assert set(result.metrics[-1]) >= {"accuracy", "top5_accuracy", "test_loss"}
    assert result.metrics[-1]["accuracy"] > 0.6  # Chance is 0.1.
    assert result.final_metrics["accuracy"] == result.metrics[-1]["accuracy"]
    assert result.job.world_size == 2
    # The model handed back is the user's class, and computes what the
    # exported TorchScript computes.
    assert isinstance(result.model, nn.Sequential) and not result.model.training
    batch = torch.stack([example.FashionMNIST("test", 32)[i][0]
                         for i in range(32)])
    with torch.no_grad():
        torch.testing.assert_close(result.model(batch),
                                   result.load_torchscript()(batch))
    assert set(result.state_dict) == set(example.model_fn().state_dict())
    err = capsys.readouterr().err
    assert f"submitted job {result.job_id}" in err
    assert "evaluated epoch 1: test_loss" in err
    assert f"job {result.job_id} SUCCEEDED" in err


def test_fit_language_model_reuses_its_data(cluster, tmp_path):
    pattern = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3])
    tokens = np.tile(pattern, 300).astype(np.int64)  # 4800 tokens
    kwargs = dict(test=tokens[:800], task="language_model", lr=2e-2,
                  epochs=2, batch_size=16, client=cluster.address,
                  data_dir=tmp_path, progress=False, seed=training_seed(0))
    first = ringleader.fit(TinyLM(), tokens, **kwargs)
    report_numeric("python.fit_language_model_test_loss_over_ln32",
                   first.metrics[-1]["test_loss"] / math.log(32))
    spec = first.job.spec
    assert spec.task.loss == job_pb2.LOSS_KIND_MODEL  # forward takes targets
    assert (spec.task.num_classes, spec.dataset.block_size) == (32, 16)
    assert first.metrics[-1]["test_loss"] < 0.5 * math.log(32)
    assert "perplexity" in first.metrics[-1]
    stamp = os.stat(spec.dataset.train_tokens).st_mtime_ns
    second = ringleader.fit(TinyLM(), tokens, **kwargs)
    assert second.job.spec.dataset.train_tokens == spec.dataset.train_tokens
    assert os.stat(spec.dataset.train_tokens).st_mtime_ns == stamp


def test_token_out_of_the_vocabulary_fails_before_submitting(cluster, tmp_path):
    tokens = np.arange(1000) % 32
    tokens[123] = 40
    with cluster.client() as c:
        before = len(c.list())
        with pytest.raises(ringleader.DataError,
                           match="token id 40 at position 123 is >= the "
                                 "model's vocabulary size 32"):
            ringleader.fit(TinyLM(), tokens, task="language_model",
                           client=c, data_dir=tmp_path, progress=False)
        assert len(c.list()) == before
    assert not os.listdir(tmp_path)


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
def test_unscriptable_model_fails_before_anything_then_traces(
        cluster, fashion_mnist, tmp_path):
    x, y, tx, ty = fashion_mnist
    with cluster.client() as c:
        before = len(c.list())
        with pytest.raises(ringleader.ModelScriptError) as err:
            ringleader.fit(NumpyNet(), (x, y), client=c, data_dir=tmp_path)
        assert len(c.list()) == before
    assert not os.listdir(tmp_path)
    message = str(err.value)
    assert "NumpyNet" in message and "numpy" in message
    assert "<--- HERE" in message  # torch's pointer at the construct
    assert 'jit="trace"' in message
    result = ringleader.fit(NumpyNet(), (x[:1024], y[:1024]), test=(tx, ty),
                            jit="trace", client=cluster.address,
                            data_dir=tmp_path, progress=False,
                            seed=training_seed(0))
    report_numeric("python.fit_traced_accuracy", result.metrics[-1]["accuracy"])
    assert result.metrics[-1]["accuracy"] > 0.3


def test_keywords_and_values_are_checked_before_submitting(
        cluster, fashion_mnist, tmp_path):
    x, y, _, _ = fashion_mnist
    data = (x[:256], y[:256])
    cases = [
        (dict(warmup=10), "unknown keyword 'warmup'.*'warmup_steps'"),
        (dict(precision="fp8"), "keyword precision: 'fp8' is not one of"),
        (dict(lr=-1), "lr must be a number > 0"),
        (dict(epochs=0), "epochs must be an int >= 1"),
        (dict(learning_rate=0.1), "set by fit from its lr argument"),
        (dict(task="ranking"), "task must be one of"),
        (dict(optimizer="lion"), "optimizer.kind.*'lion' is not one of sgd, adam"),
        (dict(min_workers=3), "min_workers 3 is more than workers=2"),
        (dict(dataset={"shuffle": True}), "set by fit from its train and test"),
        (dict(train_tokens="/x"), r"dataset.train_tokens\) is set by fit"),
    ]
    with cluster.client() as c:
        before = len(c.list())
        for kwargs, words in cases:
            with pytest.raises(ringleader.InvalidSpecError, match=words):
                ringleader.fit(model_fn, data, client=c, data_dir=tmp_path,
                               **kwargs)
        assert not os.listdir(tmp_path)
        # Ranges are the coordinator validator's: every violation at once.
        with pytest.raises(ringleader.InvalidSpecError) as err:
            ringleader.fit(model_fn, data, client=c, data_dir=tmp_path,
                           optimizer="sgd", momentum=3.0, weight_decay=2.0,
                           progress=False)
        assert len(c.list()) == before
    assert len(err.value.violations) == 2
    assert any("optimizer.momentum" in v for v in err.value.violations)


def test_the_recipe_reaches_the_job(cluster, fashion_mnist, tmp_path):
    x, y, tx, ty = fashion_mnist
    result = ringleader.fit(
        model_fn, (x[:1024], y[:1024]), test=(tx[:256], ty[:256]),
        optimizer="adamw", lr=2e-3, weight_decay=0.01, epochs=2,
        lr_schedule="cosine", warmup_steps=2, min_lr=1e-4, clip_grad_norm=1.0,
        gradient_compression="bf16", checkpoint_dir=tmp_path / "ckpt",
        checkpoint_every_steps=4, min_workers=1, name="recipe", seed=3,
        label_smoothing=0.1, drop_last=True, shuffle=False,
        transform={"scale": 2.0}, client=cluster.address, data_dir=tmp_path,
        progress=False)
    s = result.job.spec
    assert s.name == "recipe" and result.job_id.startswith("recipe-")
    assert (s.lr_schedule.warmup_steps, s.lr_schedule.min_lr) == (2, 1e-4)
    assert s.clip_grad_norm == 1.0 and s.ddp.gradient_compression != 0
    assert (s.min_workers, s.max_workers, s.seed) == (1, 2, 3)
    assert (s.dataset.drop_last, s.dataset.shuffle) == (True, False)
    assert s.dataset.transform.scale == 2.0
    assert result.job.last_checkpoint.checkpoint_id > 0
    assert result.job.progress.grad_norm > 0


def test_a_failed_job_raises_with_rank_and_reason(cluster, fashion_mnist,
                                                  tmp_path):
    x, y, _, _ = fashion_mnist
    three = nn.Sequential(nn.Flatten(), nn.Linear(784, 3))  # labels go to 9
    with pytest.raises(ringleader.JobFailedError) as err:
        ringleader.fit(three, (x[:256], y[:256]), client=cluster.address,
                       data_dir=tmp_path, progress=False)
    assert err.value.rank in (0, 1)
    assert "outside [0, 3)" in err.value.reason
    assert f"job {err.value.job_id} FAILED: rank {err.value.rank}" in str(err.value)


def test_the_environment_picks_the_coordinator(cluster, fashion_mnist,
                                               tmp_path, monkeypatch):
    x, y, _, _ = fashion_mnist
    monkeypatch.setenv("RINGLEADER_COORDINATOR", cluster.address)
    result = ringleader.fit(model_fn, (x[:256], y[:256]), data_dir=tmp_path,
                            progress=False)
    with cluster.client() as c:
        assert result.job_id in [j.job_id for j in c.list()]


def test_an_unreachable_coordinator_fails_before_the_data_is_written(
        fashion_mnist, tmp_path):
    x, y, _, _ = fashion_mnist
    with ringleader.Client("127.0.0.1:1", timeout=2) as nobody:
        with pytest.raises(ringleader.CoordinatorUnavailableError,
                           match="cannot reach coordinator at 127.0.0.1:1"):
            ringleader.fit(model_fn, (x[:64], y[:64]), client=nobody,
                           data_dir=tmp_path)
    assert not os.listdir(tmp_path)

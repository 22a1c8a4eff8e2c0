"""fit on image files where they are: an ImageFolder root and tar shards
(written from Fashion-MNIST by examples/resnet/prepare_images.py), decoded by
the workers; and the forms it refuses before anything runs."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch import nn

import ringleader
from conftest import REPO, report_numeric, training_seed
from ringleader import images
from ringleader.v1 import job_pb2


def small_cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(8 * 16 * 16, 10))


@pytest.fixture(scope="module")
def image_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("images")
    subprocess.run([sys.executable, str(REPO / "examples/resnet/prepare_images.py"),
                    "--out", str(out), "--limit-train", "1200", "--limit-test",
                    "300", "--shards", "2", "--skip-model"],
                   check=True, capture_output=True)
    return out


def recipe():
    # The files are the ResNet example's 32x32 images: no random crop.
    return dict(image={"size": 32, "resize_size": 32, "no_random_crop": True},
                epochs=3, batch_size=32, lr=2e-3, progress=False,
                seed=training_seed(0))


def test_fit_an_image_folder(cluster, image_dir, tmp_path):
    result = ringleader.fit(small_cnn, str(image_dir / "train"),
                            test=image_dir / "test", client=cluster.address,
                            data_dir=tmp_path, **recipe())
    d = result.job.spec.dataset
    assert d.format == job_pb2.DATASET_FORMAT_IMAGE_FOLDER
    assert d.train_root == str(image_dir / "train")
    assert result.classes[0] == "0-T-shirt_top" and len(result.classes) == 10
    report_numeric("python.fit_image_folder_accuracy",
                   result.metrics[-1]["accuracy"])
    assert result.metrics[-1]["accuracy"] > 0.4  # Chance is 0.1.


def test_fit_tar_shards(cluster, image_dir, tmp_path):
    result = ringleader.fit(
        small_cnn, str(image_dir / "shards/train-{000000..000001}.tar"),
        test=[str(image_dir / "shards/test-000000.tar")],
        client=cluster.address, data_dir=tmp_path, **recipe())
    d = result.job.spec.dataset
    assert d.format == job_pb2.DATASET_FORMAT_TAR_SHARDS
    assert list(d.train_shards) == [str(image_dir / "shards/train-{000000..000001}.tar")]
    assert result.classes == []
    report_numeric("python.fit_tar_shards_accuracy",
                   result.metrics[-1]["accuracy"])
    assert result.metrics[-1]["accuracy"] > 0.4


def test_image_paths_are_checked_before_anything(tmp_path):
    with pytest.raises(ringleader.InvalidSpecError, match="neither an ImageFolder"):
        images.plan(str(tmp_path / "missing"), None)
    with pytest.raises(ringleader.InvalidSpecError, match="test must too"):
        images.plan("/d/train-{0..9}.tar", str(tmp_path))
    assert images.plan((1, 2), None) is None  # Arrays are not image paths.
    with pytest.raises(ringleader.InvalidSpecError, match="set by fit"):
        ringleader.fit(small_cnn, str(tmp_path), train_root="/x", progress=False)

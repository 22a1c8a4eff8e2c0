"""Image data as users have it, for ``fit``: a torchvision ``ImageFolder``
root (``root/<class>/<image>``) or WebDataset tar shards (a brace pattern
such as ``"/data/train-{000000..000099}.tar"``, or a list of them), given as
a path instead of a ``Dataset``. Nothing is written: the workers list the
files once per job and decode them in their loader threads (the job's
``DATASET_FORMAT_IMAGE_FOLDER`` and ``_TAR_SHARDS``), so every path must be
one every worker can read.
"""
from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, List, Optional, Sequence, Union

import torch

from .errors import InvalidSpecError
from .v1 import job_pb2


@dataclasses.dataclass
class ImagePlan:
    """The splits of an image data set, as the job names them."""
    format: int  # job_pb2.DATASET_FORMAT_IMAGE_FOLDER or _TAR_SHARDS
    train: Union[str, List[str]]
    test: Optional[Union[str, List[str]]]

    @property
    def inputs(self) -> int:
        return 1

    @property
    def tokens(self) -> bool:
        return False

    def example(self, spec: job_pb2.JobSpec, with_targets: bool) -> tuple:
        """Two samples of the shape the workers feed (for tracing)."""
        size = spec.dataset.image.size or 224
        x = torch.zeros(2, 3, size, size)
        return (x, torch.zeros(2, dtype=torch.int64)) if with_targets else (x,)


def _is_shards(value: Any) -> bool:
    if isinstance(value, (str, os.PathLike)):
        return ".tar" in os.fspath(value)
    return isinstance(value, Sequence) and bool(value) and all(
        isinstance(v, (str, os.PathLike)) and ".tar" in os.fspath(v)
        for v in value)


def _absolute(value: Any) -> Union[str, List[str]]:
    if isinstance(value, (str, os.PathLike)):
        return os.path.abspath(os.fspath(value))
    return [os.path.abspath(os.fspath(v)) for v in value]


def plan(train: Any, test: Any) -> Optional[ImagePlan]:
    """An ImagePlan when ``train`` names image files; None for other data."""
    if _is_shards(train):
        if test is not None and not _is_shards(test):
            raise InvalidSpecError("train names tar shards: test must too")
        return ImagePlan(job_pb2.DATASET_FORMAT_TAR_SHARDS, _absolute(train),
                         None if test is None else _absolute(test))
    if isinstance(train, (str, os.PathLike)):
        root = os.fspath(train)
        if not os.path.isdir(root):
            raise InvalidSpecError(
                f"train {root!r} is neither an ImageFolder root (a directory "
                "of class folders) nor tar shards (a path with .tar)")
        if test is not None and not (isinstance(test, (str, os.PathLike)) and
                                     os.path.isdir(os.fspath(test))):
            raise InvalidSpecError("train is an ImageFolder root: test must be "
                                   "one too (a directory)")
        return ImagePlan(job_pb2.DATASET_FORMAT_IMAGE_FOLDER, _absolute(root),
                         None if test is None else _absolute(test))
    return None


def apply(spec: job_pb2.JobSpec, p: ImagePlan) -> None:
    """The dataset fields of the plan."""
    d = spec.dataset
    d.format = p.format
    if p.format == job_pb2.DATASET_FORMAT_IMAGE_FOLDER:
        d.train_root = p.train
        if p.test is not None:
            d.test_root = p.test
        return
    d.train_shards[:] = [p.train] if isinstance(p.train, str) else p.train
    if p.test is not None:
        d.test_shards[:] = [p.test] if isinstance(p.test, str) else p.test


def class_names(torchscript_path: str) -> List[str]:
    """The names the job exported beside the model (ImageFolder jobs)."""
    path = os.path.splitext(torchscript_path)[0] + ".classes.json"
    try:
        with open(path) as f:
            return list(json.load(f))
    except FileNotFoundError:
        return []

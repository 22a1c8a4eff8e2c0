"""The job spec ``fit`` builds, before any file is written.

Everything here is checked in Python, at once: fit's own arguments, every
job keyword (names from the JobSpec descriptor, values by type), the data's
structure and the model. Ranges of spec values are the coordinator's
validator's, which refuses the whole spec at submit with every violation
listed, before a job exists.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, List, Mapping, Optional, Tuple

import numpy as np

from . import data as data_mod
from .errors import InvalidSpecError
from .spec import apply_keywords, resolve_keyword, set_path
from .v1 import job_pb2

TASKS = {
    "classification": job_pb2.TASK_KIND_CLASSIFICATION,
    "language_model": job_pb2.TASK_KIND_LANGUAGE_MODEL,
    "regression": job_pb2.TASK_KIND_REGRESSION,
}
# Set by fit from its own arguments: a keyword for them would be ignored or
# contradict the data fit writes, so it is refused, naming the argument.
OWNED = {
    ("model",): "model", ("dataset", "format"): "train",
    ("dataset", "path"): "train", ("dataset", "train"): "train",
    ("dataset", "test"): "test", ("dataset", "train_tokens"): "train",
    ("dataset", "test_tokens"): "test", ("dataset", "token_dtype"): "train",
    ("dataset", "block_size"): "block_size",
    ("dataset", "synthetic_train_size"): "train",
    ("dataset", "synthetic_test_size"): "test",
    ("dataset", "train_root"): "train", ("dataset", "test_root"): "test",
    ("dataset", "train_shards"): "train", ("dataset", "test_shards"): "test",
    ("optimizer", "kind"): "optimizer", ("optimizer", "learning_rate"): "lr",
    ("task", "kind"): "task",
}
# Whole messages that hold both kinds: their other fields are keywords
# (shuffle=, transform=, augmentation=...).
OWNED_WHOLE = {("dataset",): "train and test arguments (and keywords such "
                             "as shuffle= or transform=)"}


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or value < 1:
        raise InvalidSpecError(f"{name} must be an int >= 1, not {value!r}")
    return int(value)


def check_owned(fields: Mapping[str, Any]) -> None:
    """No keyword sets a field that fit sets from its own arguments."""
    for keyword in fields:
        path = resolve_keyword(keyword)
        if path in OWNED_WHOLE:
            raise InvalidSpecError(
                f"keyword {keyword} is set by fit from its {OWNED_WHOLE[path]}")
        for owned, argument in OWNED.items():
            if path[:len(owned)] == owned:
                raise InvalidSpecError(
                    f"keyword {keyword} ({'.'.join(path)}) is set by fit from "
                    f"its {argument} argument")


def base_spec(task: str, optimizer: Any, lr: Any, epochs: Any,
              batch_size: Any, workers: Any,
              job_fields: Mapping[str, Any]) -> job_pb2.JobSpec:
    """The spec of fit's arguments and keywords, type-checked."""
    if task not in TASKS:
        raise InvalidSpecError(f"task must be one of {', '.join(TASKS)}, not "
                               f"{task!r}")
    if isinstance(lr, bool) or not isinstance(lr, numbers.Real) or \
            not (lr > 0 and math.isfinite(lr)):
        raise InvalidSpecError(f"lr must be a number > 0, not {lr!r}")
    n = _positive_int("workers", workers)
    check_owned(job_fields)
    spec = job_pb2.JobSpec(epochs=_positive_int("epochs", epochs),
                           batch_size=_positive_int("batch_size", batch_size),
                           min_workers=n, max_workers=n)
    spec.task.kind = TASKS[task]
    set_path(spec, ("optimizer", "kind"), optimizer, "optimizer")
    spec.optimizer.learning_rate = float(lr)
    spec.dataset.shuffle = True  # DistributedSampler's default.
    apply_keywords(spec, job_fields)
    if spec.min_workers > n:
        raise InvalidSpecError(f"min_workers {spec.min_workers} is more than "
                               f"workers={n}")
    return spec


@dataclasses.dataclass
class DataPlan:
    """The splits as fit will write them, and what the model is fed."""
    task: str
    train: Any  # data.ArraySource / data.ItemSource, or a token array
    test: Optional[Any]
    block_size: Optional[int] = None

    @property
    def tokens(self) -> bool:
        return self.task == "language_model"

    @property
    def inputs(self) -> int:
        return 1 if self.tokens else len(self.train.fields) - 1

    def example(self, with_targets: bool, as_float: bool = False) -> Tuple:
        """The first two samples as the workers batch them (for tracing)."""
        if self.tokens:
            assert self.block_size is not None
            need = 2 * self.block_size + 1
            t = np.asarray(self.train[:need]).astype(np.int64)
            if len(t) < need:
                raise InvalidSpecError("the training tokens hold fewer than "
                                       "two windows to trace with")
            x = np.stack([t[:self.block_size],
                          t[self.block_size:2 * self.block_size]])
            y = np.stack([t[1:self.block_size + 1],
                          t[self.block_size + 1:2 * self.block_size + 1]])
            fields: List[np.ndarray] = [x, y]
        else:
            fields = _first_rows(self.train, 2)
        from .model import example_inputs
        tensors = example_inputs(fields, as_float)
        return tuple(tensors if with_targets else tensors[:-1])


def _first_rows(src: Any, n: int) -> List[np.ndarray]:
    n = min(n, len(src))
    if isinstance(src, data_mod.ArraySource):
        return [next(src.chunks(k, n)) for k in range(len(src.fields))]
    buffers = [np.empty((n,) + f.shape, f.dtype) for f in src.fields]
    src.fill(0, buffers)
    return buffers


def plan_data(train: Any, test: Any, task: str) -> DataPlan:
    """The splits, checked for structure; nothing is read whole yet."""
    if task == "language_model":
        return DataPlan(task, data_mod.tokens(train, "train"),
                        None if test is None else data_mod.tokens(test, "test"))
    tr = data_mod.source(train, "train", task)
    te = None if test is None else data_mod.source(test, "test", task)
    if te is not None and te.fields != tr.fields:
        raise InvalidSpecError(
            "the test split's fields differ from the train split's: "
            f"{[f.describe() for f in te.fields]} vs "
            f"{[f.describe() for f in tr.fields]}")
    return DataPlan(task, tr, te)


def has_transform(spec: job_pb2.JobSpec) -> bool:
    t = spec.dataset.transform
    return bool(t.scale or t.mean or t.std)

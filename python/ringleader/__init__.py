"""Ringleader from Python: train a PyTorch model on a Ringleader cluster.

The way a DDP user works::

    import ringleader
    result = ringleader.fit(model, train_dataset, test=test_dataset,
                            epochs=3, batch_size=64, workers=2)
    result.model          # the trained nn.Module, on the CPU
    result.metrics        # [{"epoch": 1, "accuracy": 0.85, ...}, ...]

``fit`` scripts the model, writes the data once as ``.npy`` files every
worker reads, submits a job, shows its progress and returns the trained
model. Without ``$RINGLEADER_COORDINATOR`` it starts a local cluster (a
coordinator and ``workers`` worker daemons on this machine) for the call.

``ringleader.Client`` does everything ``ringctl`` does (submit, get, list,
cancel, delete, workers, watch, history); ``ringleader.LocalCluster`` starts daemons
on this machine for scripts, notebooks and tests. Every error is a
:class:`ringleader.Error`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _stubs

_stubs.ensure()  # Before anything imports ringleader.v1.

from .client import (Client, LogLine, check_succeeded,  # noqa: E402
                     format_log_line, is_final, state_name)
from .errors import (AlreadyExistsError, AuthenticationError,  # noqa: E402
                     ClusterError, CoordinatorUnavailableError, DataError,
                     DeadlineExceededError, Error, FailedPreconditionError,
                     InvalidArgumentError, InvalidSpecError, JobCancelledError,
                     JobError, JobFailedError, ModelScriptError, NotFoundError,
                     PermissionDeniedError, RpcError)
from .history import (Evaluation, HistoryPoint, JobHistory,  # noqa: E402
                      RankSample)
from .local import LocalCluster  # noqa: E402
from .spec import job_spec, load_spec_file  # noqa: E402
from .spec import keywords as spec_keywords  # noqa: E402
from .v1.job_pb2 import Job, JobSpec, JobState  # noqa: E402
from .v1.user_service_pb2 import WorkerInfo  # noqa: E402

if TYPE_CHECKING:
    from .fit import fit
    from .result import Result

__version__ = "0.1.0"

# fit and Result need torch, which takes seconds to import: a script that
# only submits or watches jobs does not pay for it.
_LAZY = {"fit": ("fit", "fit"), "Result": ("result", "Result")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ringleader' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "fit", "Result", "Client", "LocalCluster", "job_spec", "load_spec_file",
    "spec_keywords", "state_name", "is_final", "check_succeeded",
    "format_log_line", "LogLine",
    "Job", "JobSpec", "JobState", "WorkerInfo",
    "JobHistory", "HistoryPoint", "RankSample", "Evaluation",
    "Error", "RpcError", "CoordinatorUnavailableError",
    "DeadlineExceededError", "InvalidArgumentError", "InvalidSpecError",
    "NotFoundError", "FailedPreconditionError", "AlreadyExistsError",
    "AuthenticationError", "PermissionDeniedError", "JobError",
    "JobFailedError", "JobCancelledError", "ModelScriptError", "DataError",
    "ClusterError",
]

"""Every exception ``ringleader`` raises derives from :class:`Error`.

gRPC status codes map to one class each (as ``ringctl`` maps them to its
messages, ``cli/rpc_error.cc``), and each keeps the coordinator's own
message, so ``except ringleader.NotFoundError`` reads like the API's
contract. Classes that mean "bad input" also derive from ``ValueError``,
"no such thing" from ``LookupError``: code written for the standard
exceptions still catches them.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # grpc is imported lazily by the client.
    import grpc

    from .v1 import job_pb2


class Error(Exception):
    """Base class of every error raised by ringleader."""


class RpcError(Error):
    """A call to the coordinator failed.

    Attributes:
        code: the ``grpc.StatusCode`` of the failed call (None when the call
            never reached gRPC).
        details: the coordinator's own message, unchanged.
    """

    def __init__(self, message: str, code: "Optional[grpc.StatusCode]" = None,
                 details: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.details = details


class CoordinatorUnavailableError(RpcError, ConnectionError):
    """The coordinator cannot be reached (not running, wrong address, TLS)."""


class DeadlineExceededError(RpcError, TimeoutError):
    """The coordinator was reached but did not answer within the timeout."""


class InvalidArgumentError(RpcError, ValueError):
    """The coordinator refused a request's argument (INVALID_ARGUMENT)."""


class InvalidSpecError(InvalidArgumentError):
    """A job spec is invalid; ``violations`` has one line per broken rule.

    Raised by the coordinator's validator at submit (every violation at
    once, as ``ringctl submit`` prints them), and by ringleader itself before
    anything is sent: an unknown keyword, a value of the wrong type, a spec
    file that does not parse.
    """

    def __init__(self, message: str, code: "Optional[grpc.StatusCode]" = None,
                 details: str = "") -> None:
        super().__init__(message, code, details)
        self.violations = [line for line in message.splitlines() if line]


class NotFoundError(RpcError, LookupError):
    """No job (or other object) with that id."""


class FailedPreconditionError(RpcError):
    """The request does not fit the object's state (delete a live job)."""


class AlreadyExistsError(RpcError):
    """The object exists already."""


class AuthenticationError(RpcError, PermissionError):
    """No bearer token, or the wrong one (UNAUTHENTICATED)."""


class PermissionDeniedError(RpcError, PermissionError):
    """The caller may not do this (PERMISSION_DENIED)."""


class JobError(Error):
    """A job ended without succeeding.

    Attributes:
        job_id: the job's id.
        state: its final state's name, e.g. ``"FAILED"``.
        reason: the coordinator's message, whole (a worker's error may span
            lines).
        job: the final ``ringleader.v1.Job`` message.
    """

    def __init__(self, message: str, job: "job_pb2.Job") -> None:
        super().__init__(message)
        self.job = job
        self.job_id = job.job_id
        self.reason = job.message
        from .v1 import job_pb2  # Generated; imported once the stubs exist.
        self.state = job_pb2.JobState.Name(job.state).replace("JOB_STATE_", "")


class JobFailedError(JobError):
    """The job FAILED; ``rank`` is the rank that reported it (None if none)."""

    def __init__(self, message: str, job: "job_pb2.Job") -> None:
        super().__init__(message, job)
        m = re.match(r"rank (\d+): ", job.message)
        self.rank: Optional[int] = int(m.group(1)) if m else None


class JobCancelledError(JobError):
    """The job was CANCELLED (by a user, or by Ctrl-C in :func:`fit`)."""


class ModelScriptError(Error, TypeError):
    """The model cannot be made TorchScript, which the workers run."""


class DataError(Error, ValueError):
    """The training or test data cannot be written for the workers."""


class ClusterError(Error):
    """A local cluster could not start, or its daemons are not built."""


def _grpc_error_classes() -> "dict[grpc.StatusCode, type]":
    import grpc
    return {
        grpc.StatusCode.NOT_FOUND: NotFoundError,
        grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
        grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
        grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
        grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
        grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
        grpc.StatusCode.ABORTED: RpcError,
        grpc.StatusCode.OUT_OF_RANGE: InvalidArgumentError,
    }


def from_rpc_error(err: "grpc.RpcError", address: str, timeout: float,
                   connected: bool) -> RpcError:
    """The exception for a failed call, worded as ``ringctl`` words it.

    ``connected``: whether the channel was connected when the call failed;
    a deadline that passes while connecting means nobody is there.
    """
    import grpc
    code: grpc.StatusCode = err.code()
    details: str = err.details() or ""
    if code == grpc.StatusCode.UNAVAILABLE or (
            code == grpc.StatusCode.DEADLINE_EXCEEDED and not connected):
        return CoordinatorUnavailableError(
            f"cannot reach coordinator at {address} (is it running?)",
            code, details)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return DeadlineExceededError(
            f"coordinator at {address} did not answer within {timeout:g}s",
            code, details)
    cls = _grpc_error_classes().get(code)
    lines = "\n".join(line.strip() for line in details.splitlines()
                      if line.strip())
    if cls is not None and lines:
        if cls is InvalidArgumentError and lines.startswith("invalid job spec"):
            cls = InvalidSpecError
        return cls(lines, code, details)
    one_line = " ".join(lines.splitlines())
    return (cls or RpcError)(
        f"coordinator at {address} failed: {code.name}"
        + (f": {one_line}" if one_line else ""), code, details)

"""``ringleader.Client``: everything ``ringctl`` does, from Python.

One gRPC channel to the coordinator's ``UserService``. Unary calls have a
deadline (``timeout``, 10 s as ringctl's ``--timeout``); a watch stream has
none (the job decides how long). Failures raise :class:`ringleader.Error`
subclasses worded as ringctl words them (``errors.from_rpc_error``).
"""
from __future__ import annotations

import datetime
import os
import time
from typing import Iterable, Iterator, List, Optional, Union

import grpc

from . import errors
from .history import JobHistory, from_response
from .spec import SpecLike, job_spec
from .v1 import job_pb2, logs_pb2, user_service_pb2, user_service_pb2_grpc
from .v1 import history_pb2, job_pb2, user_service_pb2, user_service_pb2_grpc

Job = job_pb2.Job
JobState = job_pb2.JobState
WorkerInfo = user_service_pb2.WorkerInfo
LogLine = logs_pb2.LogLine
JobRef = Union[str, Job]

DEFAULT_COORDINATOR = "127.0.0.1:7070"
COORDINATOR_ENV = "RINGLEADER_COORDINATOR"
TOKEN_ENV = "RINGLEADER_TOKEN"
MAX_LIST_PAGES = 10000  # As ringctl's kMaxListPages: a bound, never reached.
FINAL_STATES = frozenset({job_pb2.JOB_STATE_SUCCEEDED, job_pb2.JOB_STATE_FAILED,
                          job_pb2.JOB_STATE_CANCELLED})
# gRPC's own default is 4 MB; a job with thousands of ranks' progress is
# larger, and the coordinator accepts 16 MB (--max_message_bytes).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def state_name(state: Union[int, Job]) -> str:
    """``"RUNNING"`` for ``JOB_STATE_RUNNING`` (or a Job in that state)."""
    value = state.state if isinstance(state, Job) else state
    try:
        return job_pb2.JobState.Name(value).replace("JOB_STATE_", "")
    except ValueError:
        return str(value)


def is_final(job: Job) -> bool:
    """Whether the job SUCCEEDED, FAILED or was CANCELLED."""
    return job.state in FINAL_STATES


def _job_id(job: JobRef) -> str:
    if isinstance(job, Job):
        return job.job_id
    if isinstance(job, str):
        return job
    raise TypeError(f"a job is an id (str) or a ringleader.v1.Job, not "
                    f"{type(job).__name__}")


def _state_value(state: Union[str, int]) -> int:
    if isinstance(state, int) and state in job_pb2.JobState.values():
        return state
    if isinstance(state, str):
        name = state.upper()
        name = name if name.startswith("JOB_STATE_") else "JOB_STATE_" + name
        if name in job_pb2.JobState.keys():
            return job_pb2.JobState.Value(name)
    valid = ", ".join(state_name(v).lower() for v in job_pb2.JobState.values()
                      if v)
    raise errors.InvalidArgumentError(
        f"unknown job state {state!r} (valid: {valid})")


def resolve_token(token: Optional[str], token_file: Optional[str]) -> str:
    """The bearer token as ringctl resolves it: ``token``, else the file's
    contents (trimmed), else ``$RINGLEADER_TOKEN``; "" for none."""
    if token and token_file:
        raise errors.Error("token and token_file are exclusive")
    if token:
        return token
    if token_file:
        try:
            with open(token_file, encoding="utf-8") as f:
                value = f.read().strip()
        except OSError as e:
            raise errors.Error(f"token_file {token_file}: {e.strerror}") from e
        if not value:
            raise errors.Error(f"token_file {token_file} is empty")
        return value
    return os.environ.get(TOKEN_ENV, "")


class Client:
    """A connection to a Ringleader coordinator, as ``ringctl`` has.

    Args:
        address: the coordinator, ``HOST:PORT``. Default:
            ``$RINGLEADER_COORDINATOR``, else ``127.0.0.1:7070``.
        tls_ca: PEM file of the CA that signed the coordinator's
            certificate; the channel is then TLS (ringctl's ``--tls_ca``).
        token: bearer token for submit, cancel and delete (ringctl's
            ``--token``). Default: ``token_file``'s contents, else
            ``$RINGLEADER_TOKEN``.
        token_file: a file holding the token (``--token_file``).
        timeout: deadline of each call in seconds (``--timeout``); a
            coordinator that cannot be reached fails the call within it.

    Example::

        >>> client = ringleader.Client("127.0.0.1:7070")
        >>> job_id = client.submit("examples/fashion_mnist.textproto",
        ...                        epochs=1)
        >>> final = client.wait(job_id)
        >>> final.progress.test_accuracy
        0.8612

    A ``Client`` is a context manager (``close`` on exit) and thread-safe.
    """

    def __init__(self, address: Optional[str] = None, *,
                 tls_ca: Optional[str] = None, token: Optional[str] = None,
                 token_file: Optional[str] = None,
                 timeout: float = 10.0) -> None:
        self.address = address or os.environ.get(COORDINATOR_ENV) or \
            DEFAULT_COORDINATOR
        if not (timeout > 0):
            raise errors.Error(f"timeout must be > 0 seconds, not {timeout!r}")
        self.timeout = float(timeout)
        self._token = resolve_token(token, token_file)
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
        if tls_ca:
            try:
                with open(tls_ca, "rb") as f:
                    creds = grpc.ssl_channel_credentials(root_certificates=f.read())
            except OSError as e:
                raise errors.Error(f"tls_ca {tls_ca}: {e.strerror}") from e
            self._channel = grpc.secure_channel(self.address, creds, options)
        else:
            self._channel = grpc.insecure_channel(self.address, options)
        self._stub = user_service_pb2_grpc.UserServiceStub(self._channel)

    def _connected(self) -> bool:
        """Whether the channel is connected now. grpc's public way is a
        subscription, whose polling thread fails when the channel closes
        under it (grpc 1.51); this asks the core channel directly, as that
        thread does, and says "not connected" if it cannot ask."""
        try:
            from grpc._common import \
                CYGRPC_CONNECTIVITY_STATE_TO_CHANNEL_CONNECTIVITY as states
            core = self._channel._channel  # type: ignore[attr-defined]
            state = states[core.check_connectivity_state(False)]
        except Exception:  # pragma: no cover - another grpc's internals
            return False
        return state == grpc.ChannelConnectivity.READY

    def _metadata(self) -> list:
        # As metadata rather than call credentials, which gRPC sends only
        # over TLS: a token-protected coordinator on loopback works too.
        return [("authorization", f"Bearer {self._token}")] if self._token \
            else []

    def _error(self, err: grpc.RpcError) -> errors.RpcError:
        return errors.from_rpc_error(err, self.address, self.timeout,
                                     self._connected())

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout,
                          metadata=self._metadata())
        except grpc.RpcError as err:
            raise self._error(err) from None

    def submit(self, spec: SpecLike = None, /, **fields) -> str:
        """Submits a job; returns its id.

        Args:
            spec: a ``ringleader.v1.JobSpec``, a dict of its fields, or the
                path of a job file (textproto or JSON, as ``ringctl submit
                --file`` reads).
            **fields: spec keywords set on top (``epochs=3``,
                ``lr_schedule__kind="cosine"``; :func:`ringleader.spec_keywords`).

        Raises:
            InvalidSpecError: the spec is invalid; its message (and
                ``violations``) lists every broken rule.
        """
        request = user_service_pb2.SubmitJobRequest(spec=job_spec(spec, **fields))
        return self._call(self._stub.SubmitJob, request).job_id

    def get(self, job: JobRef) -> Job:
        """The job, whole: spec, state, progress, evaluations, message."""
        return self._call(self._stub.GetJob,
                          user_service_pb2.GetJobRequest(job_id=_job_id(job)))

    def waiting_for(self, job: JobRef) -> Optional[str]:
        """Whom the job's ranks wait for, now, as ``ringctl get`` says it
        (``waiting 12.3 s in all-reduce of step 4711 for rank 2 (host h3):
        data loading for 12.4 s``), or None while no rank waits in a
        collective past the threshold. The fields are in
        ``get(job).waiting_for``."""
        from .progress import waiting_for_line
        return waiting_for_line(self.get(job)) or None

    def list(self, states: Optional[Iterable[Union[str, int]]] = None
             ) -> List[Job]:
        """Every job (in these states, e.g. ``["running", "pending"]``), in
        creation order, as summaries (``get`` has the whole job)."""
        wanted = [_state_value(s) for s in (states or [])]
        jobs: List[Job] = []
        token = ""
        for _ in range(MAX_LIST_PAGES):
            resp = self._call(self._stub.ListJobs, user_service_pb2.ListJobsRequest(
                states=wanted, page_token=token))
            jobs.extend(resp.jobs)
            token = resp.next_page_token
            if not token:
                return jobs
        raise errors.Error(f"the coordinator sent more than {MAX_LIST_PAGES} "
                           "pages of jobs")

    def cancel(self, job: JobRef) -> Job:
        """Cancels a job; returns it as cancelled (a final job is unchanged)."""
        return self._call(self._stub.CancelJob,
                          user_service_pb2.CancelJobRequest(job_id=_job_id(job)))

    def delete(self, job: JobRef) -> None:
        """Forgets a finished job; FailedPreconditionError for a live one."""
        self._call(self._stub.DeleteJob,
                   user_service_pb2.DeleteJobRequest(job_id=_job_id(job)))

    def history(self, job: JobRef) -> JobHistory:
        """The job's training curves: per optimizer step (one point per
        training report of rank 0) the loss, learning rate, gradient norm,
        samples/s and each rank's step time and data-wait share, and the
        per-epoch evaluations, as :class:`ringleader.history.JobHistory`
        dataclasses. NotFoundError for an unknown job; a job with no report
        yet has no points.

        >>> h = client.history("mnist-3")
        >>> [(p.step, p.loss) for p in h.points]
        """
        resp = self._call(self._stub.GetJobHistory,
                          history_pb2.GetJobHistoryRequest(job_id=_job_id(job)))
        return from_response(resp)

    def workers(self) -> List[WorkerInfo]:
        """The registered worker daemons."""
        return list(self._call(self._stub.ListWorkers,
                               user_service_pb2.ListWorkersRequest()).workers)

    def logs(self, job: JobRef, *, rank: Optional[int] = None,
             since: Union[None, float, datetime.timedelta] = None,
             tail: Optional[int] = None, follow: bool = False,
             poll: float = 0.5, linger: float = 3.0,
             outage: float = 60.0) -> Iterator[LogLine]:
        """The lines the job's workers logged while serving it, as
        ``ringctl logs`` prints them (:func:`ringleader.format_log_line`).

        Every rank's lines in time order, each a ``ringleader.v1.LogLine``
        (``time_ms``, ``rank``, ``generation``, ``host``, ``worker_id``,
        ``severity``, ``text``). The coordinator keeps each rank's last lines
        in memory (its ``--log_lines_per_rank``, ``--log_bytes_per_rank``).

        Args:
            rank: only this rank's lines.
            since: only lines of the last this many seconds (or timedelta).
            tail: only the last this many lines.
            follow: go on yielding new lines (asking every ``poll`` seconds)
                until the job is final and ``linger`` seconds passed (its
                ranks' last lines arrive after its final state). A
                coordinator that restarts meanwhile is waited for up to
                ``outage`` seconds; its log starts afresh.

        Raises:
            NotFoundError: no such job.
            InvalidArgumentError: a negative rank, since or tail.
        """
        if isinstance(since, datetime.timedelta):
            since = since.total_seconds()
        for name, value in (("rank", rank), ("since", since), ("tail", tail)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, float)) or
                                      value < 0):
                raise errors.InvalidArgumentError(
                    f"{name} must be a number >= 0, not {value!r}")
        request = logs_pb2.GetJobLogsRequest(
            job_id=_job_id(job), tail=int(tail or 0))
        if rank is not None:
            request.rank = int(rank)
        if since:
            request.since_ms = int((time.time() - float(since)) * 1000)
        page = self._call(self._stub.GetJobLogs, request)
        yield from page.lines
        if not follow:
            return
        yield from self._follow_logs(request, page, poll, linger, outage)

    def _follow_logs(self, request, page, poll: float, linger: float,
                     outage: float) -> Iterator[LogLine]:
        request.tail = 0
        ended = time.monotonic() if page.state in FINAL_STATES else None
        reached = time.monotonic()
        # Bounded by the job's end plus linger, or by the outage limit.
        while ended is None or time.monotonic() - ended < linger:
            time.sleep(poll)
            request.after_seq = page.last_seq
            request.incarnation = page.incarnation
            try:
                page = self._call(self._stub.GetJobLogs, request)
            except (errors.CoordinatorUnavailableError,
                    errors.DeadlineExceededError):
                if time.monotonic() - reached > outage:
                    raise
                continue
            reached = time.monotonic()
            yield from page.lines
            if ended is None and page.state in FINAL_STATES:
                ended = time.monotonic()

    def watch(self, job: JobRef) -> Iterator[Job]:
        """Snapshots of the job: one now, one after every change, the last
        one final (SUCCEEDED, FAILED or CANCELLED).

        The iterator ends after the final snapshot; it does not raise for a
        failed job (:meth:`wait` does). Breaking out of the loop ends the
        stream.

        Raises:
            NotFoundError: no such job.
            CoordinatorUnavailableError: the stream broke off.
        """
        job_id = _job_id(job)
        first = self.get(job_id)  # Fails fast, within the deadline.
        yield first
        if is_final(first):
            return
        call = self._stub.WatchJob(user_service_pb2.WatchJobRequest(job_id=job_id),
                                   metadata=self._metadata())
        last: Optional[Job] = None
        try:
            for last in call:
                yield last
                if is_final(last):
                    return
        except grpc.RpcError as err:
            mapped = self._error(err)
            raise type(mapped)(f"watch of job {job_id} broke off: {mapped}",
                               mapped.code, mapped.details) from None
        finally:
            call.cancel()  # Ends the stream when the caller stops early.
        raise errors.Error(f"watch of job {job_id} ended before the job finished"
                           + (f" (last state {state_name(last)})" if last else ""))

    def wait(self, job: JobRef) -> Job:
        """Blocks until the job is final; returns it if it SUCCEEDED.

        Raises:
            JobFailedError: it FAILED (``rank`` and ``reason`` say why).
            JobCancelledError: it was CANCELLED.
        """
        final: Optional[Job] = None
        for final in self.watch(job):
            pass
        assert final is not None
        return check_succeeded(final)

    def close(self) -> None:
        """Closes the channel; the client is unusable after."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ringleader.Client({self.address!r})"


def format_log_line(line: LogLine) -> str:
    """One job log line as ``ringctl logs`` prints it:
    ``[rank 1 gen 2 host-b] I1206 16:10:11.123 text``."""
    who = (f"rank {line.rank} gen {line.generation}" if line.rank >= 0
           else "no rank")
    when = datetime.datetime.fromtimestamp(line.time_ms / 1000,
                                           datetime.timezone.utc)
    stamp = when.strftime("%m%d %H:%M:%S.") + f"{line.time_ms % 1000:03d}"
    return f"[{who} {line.host}] {(line.severity or '?')[0]}{stamp} {line.text}"


def check_succeeded(job: Job) -> Job:
    """``job`` when it SUCCEEDED; JobFailedError or JobCancelledError else."""
    if job.state == job_pb2.JOB_STATE_SUCCEEDED:
        return job
    reason = job.message or "no reason given"
    if job.state == job_pb2.JOB_STATE_CANCELLED:
        raise errors.JobCancelledError(f"job {job.job_id} CANCELLED: {reason}",
                                       job)
    if job.state == job_pb2.JOB_STATE_FAILED:
        raise errors.JobFailedError(f"job {job.job_id} FAILED: {reason}", job)
    raise errors.Error(f"job {job.job_id} is {state_name(job)}, not final")

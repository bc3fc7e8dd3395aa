"""Why a job is still IN_QUEUE: the likely cause, in one line, from /health and, for
workers that cannot start, what one said last (docs/behaviour.md#health)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from nbext.models import Health, JobStatus

from ._calls import endpoint_call, model_of
from ._errors import NbextError, Timeout
from ._flows import JOB_GOES_ON, Context, Deadline, Flow, JobState, send, status
from ._resources.endpoints import workers
from ._resources.logs import _log_call, _read, _worker
from ._resources.rest import V2

T = TypeVar("T")

CHECK_TIMEOUT = 5.0
"""Seconds a timed-out wait spends at most on each call that says why the job waited."""
LOG_QUIET = 1.0
"""Seconds of silence after which a held-open worker log is taken to have said all, and
the longest a read goes on: a chatty worker's log must not hold up the job's polls."""
LOG_TAIL = 20
"""Lines of a worker's log read: enough to find its own last line among the service's."""


@dataclass(frozen=True)
class WorkerTail:
    """A worker's last log lines, each on one line, and the last it wrote itself (not
    the service's own notes, such as a restart's)."""

    worker: str
    lines: tuple[str, ...] = ()
    last_line: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    """Why a queued job waits, as read from its endpoint at one moment.

    ``health`` is None when /health could not be read (``cause`` then says why it is
    unknown, and ``error`` is what the read raised). ``tail`` is the log of the worker
    asked about, or, when no worker could start, of one unhealthy worker, whose last line
    of its own then also ends ``cause`` (no lines where the service keeps none, or they
    could not be read).
    """

    health: Health | None
    cause: str
    tail: WorkerTail | None = None
    error: NbextError | None = None


def diagnose(ctx: Context, endpoint_id: str, worker: str | None = None) -> Flow[Diagnosis]:
    """Why the endpoint's queued jobs wait: its /health and the likely cause
    (``why_queued``); when no worker could start, what one of them said last. ``worker``
    (a job's own) has its last log lines read instead, in any state."""
    try:
        call = endpoint_call("health", "GET", endpoint_id)
        health = model_of(call, (yield from send(ctx, call, _check(ctx, "health"))), Health)
    except NbextError as failure:
        return Diagnosis(None, f"why it waits is unknown: {failure}", error=failure)
    cause = why_queued(health)
    crashing = worker is None and _cannot_start(health)
    if crashing:
        worker = yield from _unhealthy_worker(ctx, endpoint_id)
    if worker is None:
        return Diagnosis(health, cause)
    tail = yield from worker_tail(ctx, endpoint_id, worker)
    if crashing and tail.last_line:
        cause = f"{cause}; last line: {tail.last_line}"
    return Diagnosis(health, cause, tail)


def worker_tail(ctx: Context, endpoint_id: str, worker: str) -> Flow[WorkerTail]:
    """The worker's last ``LOG_TAIL`` lines (REST v2), read ``LOG_QUIET`` seconds at most;
    none when they cannot be read (a key without that access, a worker gone)."""
    try:
        query = (LOG_TAIL, None, None)
        call = _log_call(V2(), "endpoints.worker_logs", _worker(endpoint_id, worker), query)
        events = yield from _read(ctx, call, LOG_QUIET, longest=LOG_QUIET)
    except NbextError:
        return WorkerTail(worker)
    events = events[-LOG_TAIL:]
    lines = tuple(" ".join(e.line.split()) for e in events)
    said = [line for e, line in zip(events, lines, strict=True) if e.source != "system"]
    return WorkerTail(worker, lines, said[-1] if said else None)


def explained(ctx: Context, endpoint_id: str, flow: Flow[T]) -> Flow[T]:
    """``flow`` (a wait), whose Timeout with the job still IN_QUEUE says why it waited.

    The job's /status is read once more first: the last state seen may be its
    submission's. A map does not do this per job: one /health per job would be a burst
    of calls saying the same thing.
    """
    try:
        return (yield from flow)
    except Timeout as exc:
        if exc.last_status is not JobStatus.IN_QUEUE or exc.job_id is None:
            raise
        try:
            check = _check(ctx, "the job's state")
            now = yield from status(ctx, JobState(endpoint_id, exc.job_id, False), check)
        except NbextError as failure:
            found = Diagnosis(None, f"why it waits is unknown: {failure}")
        else:
            if now.status is not JobStatus.IN_QUEUE:
                raise  # it started since: nothing to explain
            found = yield from diagnose(ctx, endpoint_id)
        text = str(exc)
        still = JOB_GOES_ON if text.endswith(JOB_GOES_ON) else ""
        raise Timeout(
            f"{text.removesuffix(JOB_GOES_ON)}; {found.cause}{still}",
            timeout=exc.timeout,
            last_status=exc.last_status,
            health=found.health,
            cause=found.cause,
            endpoint_id=exc.endpoint_id,
            job_id=exc.job_id,
        ) from None


def _check(ctx: Context, what: str) -> Deadline:
    return Deadline(start=ctx.now(), timeout=min(ctx.call_timeout, CHECK_TIMEOUT), what=what)


def _cannot_start(health: Health) -> bool:
    return health.workers.ready == 0 and health.workers.unhealthy > 0


def _unhealthy_worker(ctx: Context, endpoint_id: str) -> Flow[str | None]:
    """An unhealthy worker of the endpoint (the REST v2 workers list), or None when there
    is none or the list cannot be read."""
    try:
        listed = yield from workers(ctx, V2(), endpoint_id)
    except NbextError:
        return None
    return next((w.id for w in listed if w.status.upper() == "UNHEALTHY"), None)


def _workers(count: int, what: str) -> str:
    return f"{count} worker{'s' if count != 1 else ''} {what}"


def why_queued(health: Health) -> str:
    """The likely reason a job of this endpoint has not started, as one line."""
    w = health.workers
    queued = health.jobs.in_queue
    if _cannot_start(health):
        return (
            f"no worker could start: {_workers(w.unhealthy, 'unhealthy')} (crashing at start "
            "or not answering)"
        )
    if w.ready == 0 and w.throttled:
        return f"no GPU free: {_workers(w.throttled, 'throttled')}, waiting for a machine"
    if w.ready == 0 and w.initializing:
        return f"cold start: {_workers(w.initializing, 'initializing')}, none ready yet"
    if w.ready == 0:
        return (
            "no worker is running or starting (is the endpoint's workers.max 0, or its image "
            "unable to start?)"
        )
    if w.idle == 0:
        ahead = f"; {queued} jobs in queue" if queued > 1 else ""
        return f"every worker is busy: {_workers(w.running, 'running')}{ahead}"
    if queued == 0:  # a load-balancing endpoint's requests are not jobs: none is counted
        return f"{_workers(w.idle, 'idle')}, ready: a request or job sent now starts at once"
    return (
        f"{_workers(w.idle, 'idle')} yet the job waits (a lowPriority job does not start a worker)"
    )

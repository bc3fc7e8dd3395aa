"""A job's phase while it is followed: what it waits for, where it runs, what each took
(docs/behaviour.md#phases-of-a-waiting-job)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from nbext.models import Health, JobResult, JobStatus

from ._diagnosis import Diagnosis, WorkerTail, diagnose, worker_tail
from ._flows import Context, Deadline, Emit, Flow, JobState, next_poll, status

QUEUE_THRESHOLD = 2.0
"""Seconds a job waits in queue before its endpoint is diagnosed (``threshold``)."""
HEALTH_EVERY = 5.0
"""Least seconds between two looks at /health while the job waits."""
FAILED_STATES = frozenset({JobStatus.FAILED, JobStatus.TIMED_OUT})
"""A job that ended so has its worker's last log lines read once more, for its last
phase: the lines before its error often say why."""


@dataclass(frozen=True)
class Timings:
    """How long each phase of a finished job took, in seconds, one after the other.

    ``queued`` is the wait with no worker starting for the job, ``cold_start`` the wait
    while workers started (None: none was seen starting), ``ran`` the execution. None
    where the service gave no figure."""

    queued: float | None
    cold_start: float | None
    ran: float | None


@dataclass(frozen=True)
class Phase:
    """One /status answer of a followed job, with what it waits for.

    ``waited``: seconds since this client first saw the job waiting (the following's
    start). ``health`` and ``cause``: the endpoint's last diagnosis, from ``threshold``
    seconds of waiting on, while the job is in queue (None before, and once it runs).
    ``cold_start``: seconds workers have been starting, with none ready, as seen (fixed
    once the job left the queue). ``log_worker``, ``log`` and ``last_line``: a worker, its
    last lines and the last it wrote itself: an unhealthy one when no worker could
    start, else the job's own once it has run ``threshold`` seconds or failed.
    ``timings``: once the job ended.
    """

    result: JobResult
    waited: float = 0.0
    health: Health | None = None
    cause: str | None = None
    cold_start: float | None = None
    log_worker: str | None = None
    log: tuple[str, ...] = ()
    last_line: str | None = None
    timings: Timings | None = None

    @property
    def status(self) -> JobStatus:
        return self.result.status

    @property
    def worker_id(self) -> str | None:
        """The worker running (or that ran) the job, once one took it."""
        return self.result.worker_id

    @property
    def ahead(self) -> int | None:
        """At most this many jobs are ahead of this one: the others /health counts in
        queue (the service does not say which of them came first)."""
        if self.health is None:
            return None
        return max(0, self.health.jobs.in_queue - 1)

    def ended(self, result: JobResult) -> Phase:
        """This phase followed by the job's final ``result`` (read by a wait or a stream
        after the phases stopped): its timings, the cold start this phase saw kept, and
        the worker's log unless the job COMPLETED (then nothing needs explaining)."""
        ran = result.execution_time / 1000 if result.execution_time is not None else None
        cold = self.cold_start
        queued = result.delay_time / 1000 if result.delay_time is not None else None
        if queued is not None and cold is not None:
            cold = min(cold, queued)
            queued -= cold
        kept = result.status is not JobStatus.COMPLETED
        return replace(
            self,
            result=result,
            health=None,
            cause=None,
            log_worker=self.log_worker if kept else None,
            log=self.log if kept else (),
            last_line=self.last_line if kept else None,
            timings=Timings(queued, cold, ran),
        )


@dataclass
class _Watch:
    """What the following has seen so far, on the client's clock."""

    first: float
    threshold: float
    looked: float | None = None
    found: Diagnosis | None = None
    cold_since: float | None = None
    cold_until: float | None = None
    running_since: float | None = None
    tailed: float | None = None
    tail: WorkerTail | None = None

    def look_due(self, now: float) -> bool:
        return _due(now, self.first, self.looked, self.threshold)

    def tail_due(self, result: JobResult, now: float) -> bool:
        if result.status is not JobStatus.IN_PROGRESS or result.worker_id is None:
            return False
        if self.running_since is None:
            self.running_since = now
        return _due(now, self.running_since, self.tailed, self.threshold)

    def saw(self, found: Diagnosis, now: float) -> None:
        first_look = self.looked is None
        self.looked, self.found = now, found
        w = found.health.workers if found.health is not None else None
        starting = w is not None and w.initializing > 0 and w.ready == 0
        if starting and self.cold_since is None:
            self.cold_since = self.first if first_look else now
        elif not starting and w is not None and self.cold_since is not None:
            self.cold_until = self.cold_until or now

    def phase(self, result: JobResult, now: float) -> Phase:
        queued = result.status is JobStatus.IN_QUEUE
        if not queued and self.cold_since is not None and self.cold_until is None:
            self.cold_until = now  # the job left the queue: its worker is up
        cold = None
        if self.cold_since is not None:
            cold = (self.cold_until if self.cold_until is not None else now) - self.cold_since
            if result.delay_time is not None:  # it cannot have outlasted the job's wait
                cold = min(cold, result.delay_time / 1000)
        found = self.found if queued else None
        tail = (found.tail if found else None) if queued else self.tail
        phase = Phase(
            result,
            waited=now - self.first,
            health=found.health if found else None,
            cause=found.cause if found else None,
            cold_start=cold,
            log_worker=tail.worker if tail else None,
            log=tail.lines if tail else (),
            last_line=tail.last_line if tail else None,
        )
        return phase.ended(result) if result.status.is_final else phase


def _due(now: float, since: float, last: float | None, threshold: float) -> bool:
    """Whether a look is due: ``threshold`` after ``since``, then every ``HEALTH_EVERY``."""
    if last is None:
        return now - since >= threshold
    return now - last >= HEALTH_EVERY


def phases(ctx: Context, state: JobState, deadline: Deadline, threshold: float) -> Flow[None]:
    """Emit a ``Phase`` per /status answer, paced as ``states``, until a final one
    (emitted last, with its timings)."""
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0 seconds, got {threshold}")
    watch = _Watch(first=ctx.now(), threshold=threshold)
    while True:
        result = yield from status(ctx, state, deadline)
        if result.status is JobStatus.IN_QUEUE and watch.look_due(ctx.now()):
            found = yield from diagnose(ctx, state.endpoint_id)
            watch.saw(found, ctx.now())
        failed = result.status in FAILED_STATES
        if result.worker_id is not None and (failed or watch.tail_due(result, ctx.now())):
            watch.tail = yield from worker_tail(ctx, state.endpoint_id, result.worker_id)
            watch.tailed = ctx.now()
        yield Emit(watch.phase(result, ctx.now()))
        if result.status.is_final:
            return
        yield from next_poll(ctx, deadline)

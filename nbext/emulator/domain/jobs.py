"""The job record and the table of legal state changes (docs/behaviour.md#states)."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbext.models import RETRYABLE_STATES, JobStatus

from .clock import Signal, TimerHandle

if TYPE_CHECKING:
    from .workers import Worker

S = JobStatus

ALLOWED: dict[JobStatus, frozenset[JobStatus]] = {
    S.IN_QUEUE: frozenset({S.IN_PROGRESS, S.CANCELLED}),
    S.IN_PROGRESS: frozenset({S.COMPLETED, S.FAILED, S.TIMED_OUT, S.CANCELLED}),
    S.FAILED: frozenset({S.IN_QUEUE}),
    S.TIMED_OUT: frozenset({S.IN_QUEUE}),
    S.COMPLETED: frozenset(),
    S.CANCELLED: frozenset(),
}


class IllegalTransition(AssertionError):
    """A bug in the emulator: a state change its table (a job's, a worker's) does not allow."""


def check_transition(current: JobStatus, target: JobStatus) -> None:
    """Refuse any state change outside ``ALLOWED``; the operations check eligibility first."""
    if target not in ALLOWED[current]:
        raise IllegalTransition(f"{current} -> {target} is not a transition of the job table")


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""``output`` of a job that has none (as opposed to a JSON ``null`` output)."""


@dataclass(eq=False)
class Job:
    """One job of one endpoint, as the emulator keeps it."""

    id: str
    endpoint_id: str
    input: dict[str, Any]
    sync: bool
    submitted_at: float
    ttl_ms: int
    webhook: str | None = None
    s3_config: dict[str, Any] | None = None
    execution_timeout_ms: int | None = None
    low_priority: bool = False
    batch_id: str | None = None
    """The batch this job runs a request of (``batches``); workers get it as ``batchId``."""
    status: JobStatus = S.IN_QUEUE
    queued_at: float = 0.0
    started_at: float | None = None
    ended_at: float | None = None
    output: Any = UNSET
    progress: Any = UNSET
    """The last ``progress_update`` of a worker script, shown by ``/status`` while running."""
    error: str | None = None
    chunks: list[dict[str, Any]] = field(default_factory=list)
    stream_cursor: int = 0
    attempt: int = 0
    worker: Worker | None = None
    worker_id: str | None = None
    """The worker that took its latest attempt (``workerId``, kept after it ends)."""
    task: asyncio.Task[None] | None = None
    cancel_flag: threading.Event = field(default_factory=threading.Event)
    _signal: Signal | None = field(default=None, repr=False)
    removed: str | None = None
    ttl_timer: TimerHandle | None = None
    retention_timer: TimerHandle | None = None
    exec_timer: TimerHandle | None = None

    def payload(self, *, webhook: bool = False) -> dict[str, Any]:
        """What its handler is called with, or a worker process takes: ``id``, ``input``,
        and ``s3Config``, ``batchId`` (and for a process ``webhook``) when it has them."""
        payload: dict[str, Any] = {"id": self.id, "input": self.input}
        if webhook and self.webhook:
            payload["webhook"] = self.webhook
        if self.s3_config:
            payload["s3Config"] = self.s3_config
        if self.batch_id:
            payload["batchId"] = self.batch_id
        return payload

    @property
    def over(self) -> bool:
        """It ended or was removed: what waits on it need wait no more."""
        return self.status.is_final or self.removed is not None

    @property
    def signal(self) -> Signal:
        """What ``/runsync`` and ``/stream`` wait on; made when first needed."""
        if self._signal is None:
            self._signal = Signal()
        return self._signal

    def wake(self, *, final: bool) -> None:
        """Wake the job's waiters (``final``: it ended or was removed, so all of them), then
        let go of the signal: at thousands of jobs a second, a retained job that nobody
        waits on keeps none."""
        signal = self._signal
        if signal is not None:
            signal.fire(final=final)
            if final:
                self._signal = None

    def delay_ms(self, now: float) -> int:
        """Time spent queued before the current attempt started (so far, if still queued)."""
        until = self.started_at if self.started_at is not None else now
        return max(0, round((until - self.queued_at) * 1000))

    def execution_ms(self, now: float) -> int:
        """Time the current attempt has run (so far, if still running)."""
        if self.started_at is None:
            return 0
        until = self.ended_at if self.ended_at is not None else now
        return max(0, round((until - self.started_at) * 1000))


def wire_result(job: Job, now: float) -> dict[str, Any]:
    """The job result object as sent: ``output`` only when COMPLETED, ``error`` only
    when FAILED or TIMED_OUT."""
    status = job.status
    fields: dict[str, Any] = {
        "id": job.id,
        "status": status.value,
        "delayTime": job.delay_ms(now),
        "executionTime": job.execution_ms(now),
    }
    if job.worker_id is not None:
        fields["workerId"] = job.worker_id
    if status is S.COMPLETED:
        fields["output"] = None if job.output is UNSET else job.output
    elif status is S.IN_PROGRESS and job.progress is not UNSET:
        fields["output"] = job.progress
    elif status in RETRYABLE_STATES:
        fields["error"] = job.error or ""
    return fields

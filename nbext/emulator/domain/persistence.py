"""Jobs and endpoint counters as store records, and back, for an emulator that restarts
(what is written and what is not: docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import logging
from typing import Any

from nbext.models import JobStatus

from .clock import Clock, TimerHandle
from .endpoints import Endpoint
from .errors import StoreFailed
from .jobs import UNSET, Job
from .store_port import Record, Store, read_record

log = logging.getLogger("nbext.emulator")

_FIELDS = (
    "id",
    "endpoint_id",
    "input",
    "sync",
    "submitted_at",
    "ttl_ms",
    "webhook",
    "s3_config",
    "execution_timeout_ms",
    "low_priority",
    "queued_at",
    "started_at",
    "ended_at",
    "error",
    "chunks",
    "stream_cursor",
    "attempt",
)

JOB = "job"
COUNTERS = "endpoint_counters"


def job_to_record(job: Job) -> dict[str, Any]:
    output = job.output
    return {
        **{name: getattr(job, name) for name in _FIELDS},
        "batch_id": job.batch_id,
        "status": job.status.value,
        "has_output": output is not UNSET,
        "output": None if output is UNSET else output,
    }


def job_from_record(record: dict[str, Any]) -> Job:
    job = Job(**{name: record[name] for name in _FIELDS})
    if not (isinstance(job.id, str) and isinstance(job.endpoint_id, str)):
        raise ValueError("id and endpoint_id must be text")
    times = (job.submitted_at, job.queued_at, job.ttl_ms)
    if not all(isinstance(t, int | float) and not isinstance(t, bool) for t in times):
        raise ValueError("submitted_at, queued_at and ttl_ms must be numbers")
    if not isinstance(job.chunks, list):
        raise ValueError("chunks must be a list")
    job.status = JobStatus(record["status"])
    job.batch_id = record.get("batch_id")  # absent from records written before batches
    job.output = record["output"] if record.get("has_output") else UNSET
    return job


def _counters(record: dict[str, Any]) -> tuple[int, int, int]:
    values = (record["completed"], record["failed"], record["retried"])
    if not all(type(v) is int for v in values):
        raise ValueError(f"counters must be integers, got {values!r}")
    return values


class JobPersistence:
    """Writes jobs and endpoint counters through the ``Store`` port, and reads them back.
    A failed write refuses a new job, but never a later change: that write is retried
    (why: docs/architecture.md#job-domain-modules)."""

    RETRY_S = 1.0
    RETRY_MAX_S = 30.0

    def __init__(self, store: Store, clock: Clock) -> None:
        self.store = store
        self.clock = clock
        self._unwritten: dict[tuple[str, str], Record | None] = {}
        """Writes the store refused, latest per record (None: a delete), in order."""
        self._retry: TimerHandle | None = None
        self._delay = self.RETRY_S
        self.problem: str | None = None
        """Why writes are waiting, while they are (for ``/_emulator`` and logs)."""

    @property
    def unwritten(self) -> int:
        return len(self._unwritten)

    def accept(self, job: Job) -> None:
        """Store a new job, or raise ``StoreFailed`` with nothing stored."""
        self.store.put(JOB, job.id, job_to_record(job))

    def save(self, job: Job) -> None:
        self.write(JOB, job.id, job_to_record(job))

    def forget(self, job: Job) -> None:
        self.write(JOB, job.id, None)

    def save_counters(self, endpoint: Endpoint) -> None:
        record = {
            "id": endpoint.id,
            "completed": endpoint.completed,
            "failed": endpoint.failed,
            "retried": endpoint.retried,
        }
        self.write(COUNTERS, endpoint.id, record)

    def write(self, kind: str, key: str, record: Record | None) -> None:
        if self._unwritten:  # keep the order: this one waits behind the others
            self._unwritten.pop((kind, key), None)
            self._unwritten[(kind, key)] = record
            return
        try:
            self._apply(kind, key, record)
        except StoreFailed as exc:
            self._unwritten[(kind, key)] = record
            self._failing(exc)

    def _apply(self, kind: str, key: str, record: Record | None) -> None:
        if record is None:
            self.store.delete(kind, key)
        else:
            self.store.put(kind, key, record)

    def _failing(self, exc: StoreFailed) -> None:
        if self.problem is None:
            log.error("%s; state changes are kept and written when it can (retrying)", exc)
        self.problem = exc.message
        if self._retry is None:
            self._retry = self.clock.call_later(self._delay, self.flush)
            self._delay = min(self._delay * 2, self.RETRY_MAX_S)

    def flush(self) -> None:
        """Write what the store refused before, oldest first, until it refuses again."""
        self._retry = None
        while self._unwritten:
            (kind, key), record = next(iter(self._unwritten.items()))
            try:
                self._apply(kind, key, record)
            except StoreFailed as exc:
                self._failing(exc)
                return
            del self._unwritten[(kind, key)]
        if self.problem is not None:
            log.warning("the store takes writes again; every kept state change is written")
        self.problem, self._delay = None, self.RETRY_S

    def load_counters(self, endpoints: dict[str, Endpoint]) -> None:
        for record in self.store.all(COUNTERS):
            counters = read_record(COUNTERS, record, _counters)
            endpoint = endpoints.get(record["id"])
            if endpoint is not None:
                endpoint.completed, endpoint.failed, endpoint.retried = counters

    def load_jobs(self) -> list[Job]:
        """Every stored job, in the order they were first stored."""
        return [read_record(JOB, record, job_from_record) for record in self.store.all(JOB)]

"""The jobs and requests this kernel sent: what ``%runpod jobs``, ``cancel``, ``retry`` and
``why`` work on (docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from nbext._version import __version__
from nbext.models import JobResult

if TYPE_CHECKING:
    from nbext.client import JobCost

REMOVED = "REMOVED"
"""The state shown for a job the service no longer knows (purged, TTL, retention)."""


def provenance(
    source: str, endpoint_id: str, *, cost: JobCost | None = None, **known: Any
) -> dict[str, Any]:
    """Where an output came from, as its saved metadata says (docs/behaviour.md#provenance):
    the service (``cloud``, ``local`` or ``replay``; never an address, which may hold the
    key), the endpoint, what ``known`` gives (ids, worker, input digest, timings in ms)
    when not None, the cost and nbext's version."""
    said = {name: value for name, value in known.items() if value is not None}
    if cost is not None:
        said |= {"costUsd": cost.usd, "costIs": cost.source}
    return {"service": source, "endpoint": endpoint_id, **said, "nbext": __version__}


class Follower(Protocol):
    """What a record knows of its job's ``follow.JobFollower`` (records do not import it)."""

    task: asyncio.Task[JobResult | None] | None
    """The background task or awaited cell that follows (None: a blocking cell)."""
    on_end: Callable[[JobRecord], None] | None
    """Called at the job's end (``-o NAME``); a retry of the job calls it again."""

    @property
    def following(self) -> bool: ...

    def follow_again(self) -> None:
        """The job was queued again from elsewhere: follow its new run in the background."""


@dataclass(eq=False)
class JobRecord:
    """One submitted job as this kernel knows it."""

    id: str
    endpoint_id: str
    service: str
    via: str
    submitted: datetime = field(default_factory=lambda: datetime.now(UTC))
    result: JobResult | None = None
    removed: str | None = None
    retries: int = 0
    """How many times this kernel queued the job again (``%runpod retry``)."""
    cost: JobCost | None = None
    """What its last run cost, once it ended and was priced (``cost.record_cost``)."""
    execution_timeout: float | None = None
    """Seconds the job was allowed to run (``--execution-timeout``); None: the endpoint's."""
    ttl: float | None = None
    """Seconds the job may live from submission (``--ttl``); None: 24 hours. Kept for
    ``%runpod why``: the service never says a job's policy back."""
    replayed: bool = False
    """The job went to an endpoint that serves a recording (``%runpod replay``)."""
    input_digest: str | None = None
    """The input's digest, as recordings name it (``nbext.models.recording.digest``)."""
    follower: Follower | None = None
    """The follower of the job's latest run (the one a new panel of it belongs to)."""
    watchers: list[Callable[[JobRecord], None]] = field(default_factory=list, repr=False)
    """Called on every change of this record, whoever made it (each panel of the job)."""

    @property
    def state(self) -> str:
        if self.removed is not None:
            return REMOVED
        return self.result.status.value if self.result is not None else "IN_QUEUE"

    @property
    def final(self) -> bool:
        return self.removed is not None or (self.result is not None and self.result.status.is_final)

    @property
    def source(self) -> str:
        """``cloud``, ``local`` or ``replay``: what answered the job."""
        return "replay" if self.replayed else self.service

    def provenance(self) -> dict[str, Any]:
        result = self.result
        delay, run = (result.delay_time, result.execution_time) if result else (None, None)
        return provenance(
            self.source,
            self.endpoint_id,
            cost=self.cost,
            job=self.id,
            worker=result.worker_id if result else None,
            inputDigest=self.input_digest,
            delayMs=delay,
            executionMs=run,
            totalMs=None if delay is None or run is None else delay + run,
        )

    def as_row(self) -> dict[str, Any]:
        """The record as a listing row (``display.specs.JOBS`` gives the dtypes)."""
        result = self.result
        return {
            "id": self.id,
            "endpoint": self.endpoint_id,
            "state": self.state,
            "delay_ms": result.delay_time if result else None,
            "run_ms": result.execution_time if result else None,
            "cost_usd": self.cost.usd if self.cost else None,
            "cost_is": self.cost.source if self.cost else None,
            "worker": result.worker_id if result else None,
            "submitted": self.submitted,
            "via": self.via,
            "service": self.source,
        }


@dataclass(eq=False)
class RequestRecord:
    """One request of ``%%runpod_http``, once it ended: what was asked, of whom, and how
    it went (``status`` None: no answer came, ``error`` says why)."""

    endpoint_id: str
    service: str
    method: str
    path: str
    submitted: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: int | None = None
    worker: str | None = None
    seconds: float | None = None
    cost: JobCost | None = None
    """The worker's time at the endpoint's price (its wait for a cold start left out)."""
    error: str | None = None
    waited: float | None = None
    """Seconds the request waited for workers to start, as seen."""
    replayed: bool = False
    input_digest: str | None = None

    def provenance(self) -> dict[str, Any]:
        total = None if self.seconds is None else round(self.seconds * 1000)
        delay = None if self.waited is None else round(self.waited * 1000)
        return provenance(
            "replay" if self.replayed else self.service,
            self.endpoint_id,
            cost=self.cost,
            request=f"{self.method} {self.path}",
            status=self.status,
            worker=self.worker,
            inputDigest=self.input_digest,
            delayMs=delay,
            executionMs=None if total is None else total - (delay or 0),
            totalMs=total,
        )

    def as_row(self) -> dict[str, Any]:
        """The request as a row of the same listing as the jobs'."""
        cost = self.cost
        return {
            "endpoint": self.endpoint_id,
            "request": f"{self.method} {self.path}",
            "status": self.status,
            "run_ms": round(self.seconds * 1000) if self.seconds is not None else None,
            "cost_usd": cost.usd if cost else None,
            "cost_is": cost.source if cost else None,
            "worker": self.worker,
            "submitted": self.submitted,
            "via": "%%runpod_http",
            "service": "replay" if self.replayed else self.service,
        }


class JobRegistry:
    """Records by job id, in submission order; a record's watchers hear its changes."""

    def __init__(self) -> None:
        self._records: dict[str, JobRecord] = {}
        self.requests: list[RequestRecord] = []
        """The requests of ``%%runpod_http``, oldest first (listed with the jobs)."""

    def add(self, record: JobRecord) -> JobRecord:
        self._records[record.id] = record
        self._changed(record)
        return record

    def get(self, job_id: str) -> JobRecord | None:
        return self._records.get(job_id)

    def update(self, job_id: str, result: JobResult) -> None:
        record = self._records.get(job_id)
        if record is None or (record.result == result and record.removed is None):
            return  # unchanged: the same answer heard twice (a follower, the client's hook)
        record.result = result
        record.removed = None
        record.cost = None  # a new state: a new run's, or the same run's final one
        self._changed(record)

    def mark_removed(self, job_id: str, reason: str) -> None:
        record = self._records.get(job_id)
        if record is not None:
            record.removed = reason
            self._changed(record)

    def _changed(self, record: JobRecord) -> None:
        for watcher in list(record.watchers):
            watcher(record)

    def __iter__(self) -> Iterator[JobRecord]:
        return iter(list(self._records.values()))

    def __len__(self) -> int:
        return len(self._records)

"""Jobs and endpoint counters as store records, and back, for an emulator that restarts.

Only what a job *is* is written (ids, input, policy, state, times, output, chunks);
what it is *doing* (its worker, task, timers, waiters) is rebuilt by
``JobService.restore``. A start is not written: the record still says IN_QUEUE, which
is what a restart makes of a job that was running anyway (its worker died with the
emulator), and that spares one write of the three each job would otherwise cost.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from nbext.models import JobStatus

from .endpoints import Endpoint
from .jobs import UNSET, Job
from .store_port import Store, read_record

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
    # Written out rather than looped over _FIELDS: this runs on every transition.
    output = job.output
    return {
        "id": job.id,
        "endpoint_id": job.endpoint_id,
        "input": job.input,
        "sync": job.sync,
        "submitted_at": job.submitted_at,
        "ttl_ms": job.ttl_ms,
        "webhook": job.webhook,
        "s3_config": job.s3_config,
        "execution_timeout_ms": job.execution_timeout_ms,
        "low_priority": job.low_priority,
        "queued_at": job.queued_at,
        "started_at": job.started_at,
        "ended_at": job.ended_at,
        "error": job.error,
        "chunks": job.chunks,
        "stream_cursor": job.stream_cursor,
        "attempt": job.attempt,
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
    job.output = record["output"] if record.get("has_output") else UNSET
    return job


def _counters(record: dict[str, Any]) -> tuple[int, int, int]:
    values = (record["completed"], record["failed"], record["retried"])
    if not all(type(v) is int for v in values):
        raise ValueError(f"counters must be integers, got {values!r}")
    return values


class JobPersistence:
    """Writes jobs and endpoint counters through the ``Store`` port, and reads them back."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, job: Job) -> None:
        self.store.put(JOB, job.id, job_to_record(job))

    def forget(self, job: Job) -> None:
        self.store.delete(JOB, job.id)

    def save_counters(self, endpoint: Endpoint) -> None:
        self.store.put(
            COUNTERS,
            endpoint.id,
            {
                "id": endpoint.id,
                "completed": endpoint.completed,
                "failed": endpoint.failed,
                "retried": endpoint.retried,
            },
        )

    def load_counters(self, endpoints: dict[str, Endpoint]) -> None:
        for record in self.store.all(COUNTERS):
            counters = read_record(COUNTERS, record, _counters)
            endpoint = endpoints.get(record["id"])
            if endpoint is not None:
                endpoint.completed, endpoint.failed, endpoint.retried = counters

    def load_jobs(self) -> list[Job]:
        """Every stored job, in the order they were first stored."""
        return list(self._each_job())

    def _each_job(self) -> Iterator[Job]:
        for record in self.store.all(JOB):
            yield read_record(JOB, record, job_from_record)

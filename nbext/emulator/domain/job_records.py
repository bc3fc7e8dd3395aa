"""Jobs as store records and back, for an emulator that must survive a restart.

Only what a job *is* is written (ids, input, policy, state, times, output, chunks);
what it is *doing* (its worker, task, timers, waiters) is rebuilt by
``JobService.restore``.
"""

from __future__ import annotations

from typing import Any

from nbext.models import JobStatus

from .jobs import UNSET, Job

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
    job.status = JobStatus(record["status"])
    job.output = record["output"] if record.get("has_output") else UNSET
    return job

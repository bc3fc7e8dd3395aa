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
    record: dict[str, Any] = {name: getattr(job, name) for name in _FIELDS}
    record["status"] = job.status.value
    record["has_output"] = job.output is not UNSET
    record["output"] = None if job.output is UNSET else job.output
    return record


def job_from_record(record: dict[str, Any]) -> Job:
    job = Job(**{name: record[name] for name in _FIELDS})
    job.status = JobStatus(record["status"])
    job.output = record["output"] if record.get("has_output") else UNSET
    return job

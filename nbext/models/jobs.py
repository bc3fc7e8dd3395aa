"""Wire models of the queue-based job interface (``{serverless_url}/{endpoint_id}/...``).

Its ranges are docs/behaviour.md#submission's, so the client refuses a bad submission
with the service's message before anything is sent.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, StrictBool, StrictInt, field_validator

from ._base import WireModel

MS_PER_DAY = 86_400_000
EXECUTION_TIMEOUT_MIN_MS = 5_000
EXECUTION_TIMEOUT_MAX_MS = 7 * MS_PER_DAY
EXECUTION_TIMEOUT_DEFAULT_MS = 600_000
TTL_MIN_MS = 10_000
TTL_MAX_MS = 7 * MS_PER_DAY
TTL_DEFAULT_MS = MS_PER_DAY
RUNSYNC_WAIT_MIN_MS = 1_000
RUNSYNC_WAIT_MAX_MS = 300_000
RUNSYNC_WAIT_DEFAULT_MS = 90_000
STREAM_WAIT_DEFAULT_MS = 10_000
RUN_BODY_LIMIT = 10 * 1024 * 1024
RUNSYNC_BODY_LIMIT = 20 * 1024 * 1024
STREAM_CHUNK_LIMIT = 1024 * 1024
RETENTION_RUN_S = 30 * 60
RETENTION_RUNSYNC_S = 60


class JobStatus(enum.StrEnum):
    """The six job states (docs/behaviour.md#states)."""

    IN_QUEUE = "IN_QUEUE"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    TIMED_OUT = "TIMED_OUT"

    @property
    def is_final(self) -> bool:
        """True for the states a job only leaves by retry or removal."""
        return self in FINAL_STATES


FINAL_STATES = frozenset(
    {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.TIMED_OUT}
)
RETRYABLE_STATES = frozenset({JobStatus.FAILED, JobStatus.TIMED_OUT})


def _http_url(value: str) -> str:
    if not value.startswith(("http://", "https://")) or len(value.split("://", 1)[1]) == 0:
        raise ValueError(f"must be an http:// or https:// URL, got {value[:80]!r}")
    return value


def _ms_range(low: int, high: int) -> AfterValidator:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"must be between {low} and {high} ms, got {value}")
        return value

    return AfterValidator(check)


class JobPolicy(WireModel):
    """``policy``: per-job execution timeout, low priority and time to live."""

    execution_timeout: (
        Annotated[StrictInt, _ms_range(EXECUTION_TIMEOUT_MIN_MS, EXECUTION_TIMEOUT_MAX_MS)] | None
    ) = None
    low_priority: StrictBool = False
    ttl: Annotated[StrictInt, _ms_range(TTL_MIN_MS, TTL_MAX_MS)] | None = None


class S3Config(WireModel):
    """Object-storage settings handed to the handler; never part of any response."""

    access_id: str | None = None
    access_secret: str | None = Field(default=None, repr=False)
    bucket_name: str | None = None
    endpoint_url: str | None = None


class JobSubmission(WireModel):
    """The body of ``/run`` and ``/runsync``. Unknown top-level fields are ignored."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    input: dict[str, Any]
    webhook: Annotated[str, AfterValidator(_http_url)] | None = None
    policy: JobPolicy | None = None
    s3_config: S3Config | None = Field(default=None, repr=False)

    @field_validator("input", mode="before")
    @classmethod
    def _input_is_object(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"must be a JSON object, got {json_kind(value)}")
        return value


def json_kind(value: Any) -> str:
    """A JSON value's type as JSON names it ("an array", "null"), for one-line refusals."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


class AcceptedJob(WireModel):
    """Answer of ``/run`` and ``/retry``: the job id and IN_QUEUE."""

    id: str
    status: JobStatus


class JobResult(WireModel):
    """Answer of ``/status`` and ``/runsync``: ``output`` only for COMPLETED, ``error``
    only for FAILED and TIMED_OUT."""

    id: str
    status: JobStatus
    delay_time: int | None = None
    execution_time: int | None = None
    output: Any = None
    error: str | None = None
    worker_id: str | None = None
    """The worker that took the job, once one has."""

    @property
    def has_output(self) -> bool:
        """Whether the service sent an ``output`` field (it may be JSON ``null``)."""
        return "output" in self.model_fields_set


class CancelResult(WireModel):
    """Answer of ``/cancel``."""

    id: str
    status: JobStatus


class PurgeResult(WireModel):
    """Answer of ``/purge-queue``."""

    removed: int
    status: str = "completed"


class HealthJobs(WireModel):
    """Job counters of ``/health``: completed, failed, retried since creation; the rest now."""

    completed: int = 0
    failed: int = 0
    in_progress: int = 0
    in_queue: int = 0
    retried: int = 0


class HealthWorkers(WireModel):
    """Worker counts of ``/health``, with every key the service's SDKs declare."""

    idle: int = 0
    running: int = 0
    initializing: int = 0
    ready: int = 0
    throttled: int = 0
    unhealthy: int = 0


class Health(WireModel):
    """Answer of ``/health``."""

    jobs: HealthJobs
    workers: HealthWorkers


class StreamChunk(WireModel):
    """One element of a ``/stream`` answer: the handler's yielded value and its metrics."""

    output: Any = None
    metrics: dict[str, Any] = Field(default_factory=dict)


class StreamResponse(WireModel):
    """Answer of ``/stream``: the job's state and the chunks not handed out before."""

    status: JobStatus
    stream: list[StreamChunk] = Field(default_factory=list)


SPLIT_KEY = "nbext_split"
"""The ``metrics`` key that marks one part of an output larger than one chunk may carry.

Its value is ``{"part": k, "parts": n, "encoding": "text" | "json"}``: ``text`` parts are
pieces of one string, ``json`` parts are pieces of the JSON text of one non-string value.
Concatenating the parts in order (and parsing, for ``json``) gives the original output.
"""

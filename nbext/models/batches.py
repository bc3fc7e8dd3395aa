"""The service's batch jobs: their states and documented limits (docs/behaviour.md#batches).

No schema is published yet (beta), so only what the documentation states is here: the
emulator enforces these numbers and the client splits what it sends to fit them.
"""

from __future__ import annotations

import enum

from pydantic import model_validator

from ._base import WireModel
from .jobs import JobResult

BATCH_REQUESTS_MAX = 5_000
"""Requests in one batch."""
BATCHES_ACTIVE_MAX = 10
"""Batches of one endpoint that are a draft, or finalized and not yet done."""
BATCH_QUEUED_MAX = 50_000
"""Requests of one endpoint waiting to start, batches' and ``/run``'s together."""
BATCH_CALL_LIMIT = 10 * 1024 * 1024
"""Bytes in one call's body (create, add, update)."""
BATCH_PAGE_DEFAULT = 100
BATCH_PAGE_MAX = 1_000
"""``limit`` of a listing page when none is asked for, and the most one page holds."""


class BatchStatus(enum.StrEnum):
    """DRAFT -> FINALIZED -> FAILED or CANCELLED; a FINALIZED batch is done when
    ``requestCompleted + requestFailed == requestTotal`` (there is no COMPLETED)."""

    DRAFT = "DRAFT"
    FINALIZED = "FINALIZED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"


class BatchRecord(WireModel):
    """A batch: ``GET /batch/{id}`` (a create may answer only ``id`` and ``status``)."""

    id: str
    status: BatchStatus
    endpoint_id: str | None = None
    request_total: int = 0
    request_in_progress: int = 0
    request_completed: int = 0
    request_failed: int = 0
    """FAILED, TIMED_OUT and CANCELLED requests: every one that did not complete."""
    created_at: int | None = None
    """Epoch milliseconds."""

    @property
    def ended(self) -> int:
        return self.request_completed + self.request_failed

    @property
    def done(self) -> bool:
        """Every request has ended (a draft never is): the service has no COMPLETED."""
        return self.status is not BatchStatus.DRAFT and self.ended >= self.request_total


class BatchRequest(JobResult):
    """One request of a batch with its result: a job's, plus when it ran (epoch ms).

    ``execution_time`` is ``completedAt - startedAt`` when the service gives no
    ``executionTime``, so a request is priced as a job is."""

    started_at: int | None = None
    completed_at: int | None = None

    @model_validator(mode="after")
    def _ran(self) -> BatchRequest:
        if self.execution_time is None and None not in (self.started_at, self.completed_at):
            self.execution_time = max(0, self.completed_at - self.started_at)  # type: ignore[operator]
        return self


class _Page(WireModel):
    total: int
    offset: int = 0
    limit: int = BATCH_PAGE_DEFAULT
    has_more: bool = False


class BatchPage(_Page):
    """``GET /batch``: the endpoint's batches, newest first."""

    batches: list[BatchRecord]


class BatchRequestPage(_Page):
    """``GET /batch/{id}/requests``: requests in the order they were added."""

    requests: list[BatchRequest]

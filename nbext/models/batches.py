"""The service's batch jobs: their states and documented limits (docs/behaviour.md#batches).

No schema is published yet (beta), so only what the documentation states is here: the
emulator enforces these numbers and the client splits what it sends to fit them.
"""

from __future__ import annotations

import enum

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

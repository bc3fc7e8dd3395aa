"""A job that did not complete stops the notebook at its cell, in one line
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

from nbext.models import JobResult, JobStatus

from .display.text import shorten
from .errors import OneLineError

ERROR_CHARS = 200
"""How much of the job's error the one line carries (the panel shows all of it)."""
NOT_COMPLETED = frozenset({JobStatus.FAILED, JobStatus.TIMED_OUT, JobStatus.CANCELLED})


class JobNotCompleted(OneLineError):
    """A job of this cell ended FAILED, TIMED_OUT or CANCELLED."""

    def __init__(self, message: str, result: JobResult) -> None:
        super().__init__(message)
        self.result = result


def check_completed(result: JobResult | None, endpoint_id: str) -> None:
    """Raise ``JobNotCompleted`` if ``result`` is FAILED, TIMED_OUT or CANCELLED."""
    if result is None or result.status not in NOT_COMPLETED:
        return
    error = " ".join((result.error or "").split())
    detail = f": {shorten(error, ERROR_CHARS)}" if error else ""
    raise JobNotCompleted(
        f"job {result.id} on {endpoint_id!r} ended {result.status.value}{detail} "
        "(--no-raise lets the notebook go on)",
        result,
    )

"""What one job may output: the service's 20 MB, for a result and for a streamed chunk,
of the JSON as sent, 1 MB being 2^20 bytes
(why it fails the job: docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

from typing import Any

from .streaming import wire_size

MB = 1024 * 1024
OUTPUT_LIMIT = 20 * MB
"""The largest output, and the largest single streamed chunk, a job may have."""


def too_large(size: int) -> str:
    """The job's error: ``output of N MB exceeds the service's 20 MB limit``."""
    return f"output of {size / MB:.1f} MB exceeds the service's {OUTPUT_LIMIT // MB} MB limit"


def oversized(value: Any) -> str | None:
    """``too_large`` for ``value`` (a JSON value) past the limit, else None."""
    size = wire_size(value)
    return too_large(size) if size > OUTPUT_LIMIT else None

"""When to send a request again, and how long to wait first. Pure: no I/O, no clock.

A submission is sent again only when the service certainly did not queue it (no
connection made, or a 429), else the job could run twice
(docs/architecture.md#the-path-of-a-429-through-the-client)."""

from __future__ import annotations

import email.utils
import enum
import math
import time
from dataclasses import dataclass

import httpx

RETRYABLE_SERVER_STATUSES = frozenset({500, 502, 503, 504})


class Kind(enum.Enum):
    """How safe it is to send a call twice."""

    IDEMPOTENT = "idempotent"
    """Sending twice has the effect of sending once (GET, cancel, purge)."""
    SUBMIT = "submit"
    """Sending twice may create or change a job twice (/run, /runsync, /retry)."""


def never_sent(exc: httpx.TransportError) -> bool:
    """True when the request certainly did not reach the service."""
    return isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def may_retry_status(kind: Kind, status: int) -> bool:
    if status == 429:
        return True
    return kind is Kind.IDEMPOTENT and status in RETRYABLE_SERVER_STATUSES


def may_retry_transport(kind: Kind, exc: httpx.TransportError) -> bool:
    return never_sent(exc) or kind is Kind.IDEMPOTENT


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date; None when absent or odd."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter, honouring ``Retry-After``.

    ``delay(attempt)`` is ``base * 2**attempt`` capped at ``max_delay``, scaled by a
    random factor in [0.5, 1] ("equal jitter": spreads clients out, never retries at
    once). A ``Retry-After`` wins, plus up to 10 % jitter so clients told the same second
    do not return together; one longer than ``max_retry_after`` is not waited for.
    """

    max_retries: int = 5
    base_delay: float = 0.25
    max_delay: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("delays must be >= 0")

    def delay(self, attempt: int, retry_after: float | None, rand: float) -> float:
        """Seconds to wait before retry number ``attempt + 1``; ``rand`` is in [0, 1)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after) * (1.0 + 0.1 * rand)
        backoff = min(self.max_delay, self.base_delay * (2.0**attempt))
        return backoff * (0.5 + 0.5 * rand)

"""Rate and concurrency limits of the job interface, per endpoint and operation
(docs/behaviour.md#rate-limits), on the emulator's clock."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from .clock import Clock
from .errors import RateLimited

WINDOW_S = 10.0


@dataclass(frozen=True)
class Limit:
    """Base requests per window, and requests in flight at once (None: no cap)."""

    rate: int
    concurrent: int | None


LIMITS: dict[str, Limit] = {
    "runsync": Limit(2000, 400),
    "run": Limit(1000, 200),
    "status": Limit(2000, 400),
    "stream": Limit(2000, 400),
    "cancel": Limit(100, 20),
    "purge-queue": Limit(2, None),
    "openai": Limit(2000, 400),
    "requests": Limit(10, 2),
    "batch": Limit(500, 50),  # every batch call; the service publishes no figure
}


class RateLimiter:
    """Sliding-window request log and in-flight counts, per (endpoint, operation)."""

    def __init__(self, clock: Clock, *, enabled: bool = True, requests_per_worker: int = 50):
        self.clock = clock
        self.enabled = enabled
        self.requests_per_worker = requests_per_worker
        self._log: dict[tuple[str, str], deque[float]] = {}
        self._inflight: dict[tuple[str, str], int] = {}

    def effective_rate(self, operation: str, running_workers: int) -> int:
        """The rate limit in force now for ``operation`` (the service's dynamic rule)."""
        return max(LIMITS[operation].rate, running_workers * self.requests_per_worker)

    def acquire(self, endpoint_id: str, operation: str, running_workers: int) -> bool:
        """Admit one request or raise RateLimited; True means ``release`` must follow."""
        limit = LIMITS.get(operation)
        if not self.enabled or limit is None:
            return False
        key = (endpoint_id, operation)
        now = self.clock.now()
        log = self._log.setdefault(key, deque())
        while log and log[0] <= now - WINDOW_S:
            log.popleft()
        rate = self.effective_rate(operation, running_workers)
        if len(log) >= rate:
            wait = max(1, math.ceil(log[0] + WINDOW_S - now))
            raise RateLimited(
                f"rate limit of /{operation} on endpoint {endpoint_id} reached: "
                f"{rate} requests per {WINDOW_S:g} s; retry in {wait} s",
                retry_after=wait,
            )
        inflight = self._inflight.get(key, 0)
        if limit.concurrent is not None and inflight >= limit.concurrent:
            raise RateLimited(
                f"concurrency limit of /{operation} on endpoint {endpoint_id} reached: "
                f"{limit.concurrent} requests at once; retry in 1 s",
                retry_after=1,
            )
        log.append(now)
        self._inflight[key] = inflight + 1
        return True

    def release(self, endpoint_id: str, operation: str) -> None:
        """The request admitted by ``acquire`` is done."""
        key = (endpoint_id, operation)
        self._inflight[key] = max(0, self._inflight.get(key, 0) - 1)

    def reset(self) -> None:
        self._log.clear()
        self._inflight.clear()

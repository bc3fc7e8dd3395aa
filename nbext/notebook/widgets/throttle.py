"""At most one panel update per interval, however fast data arrives: each update is a
message to the browser, and a model streaming thousands of tokens a second would flood
the kernel's IOPub channel. The final render is always forced, so nothing is left unshown.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEFAULT_INTERVAL = 0.1
"""Seconds between two renders: 10 updates a second reads as live and costs little."""


class Throttle:
    """Leading-edge rate limit: ``ready()`` says whether a render may happen now
    (``clock`` is injectable: tests drive it in simulated time)."""

    def __init__(
        self, interval: float = DEFAULT_INTERVAL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if interval < 0:
            raise ValueError(f"interval must be >= 0 seconds, got {interval}")
        self.interval = interval
        self._clock = clock
        self._last: float | None = None

    def now(self) -> float:
        """The throttle's clock (panels time a running job with it too)."""
        return self._clock()

    def ready(self) -> bool:
        """True (and the interval restarts) if the last render is at least ``interval`` old."""
        now = self._clock()
        if self._last is not None and now - self._last < self.interval:
            return False
        self._last = now
        return True

    def wait_left(self) -> float:
        """Seconds until ``ready()`` would be true (0 when it already is)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.interval - self._clock())

    def mark(self) -> None:
        """Count a forced render as the latest one."""
        self._last = self._clock()

"""After a 429, nothing of a map is sent before the service's ``Retry-After`` has passed
(docs/architecture.md#the-path-of-a-429-through-the-client)."""

from __future__ import annotations

import threading


class SubmitGate:
    """When a map's submissions may go; shared by all its workers (threads or tasks)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._until = float("-inf")

    def wait(self, now: float) -> float:
        """Seconds before a submission may go (0: at once)."""
        with self._lock:
            return max(0.0, self._until - now)

    def refused(self, now: float, pause: float) -> None:
        """A 429 arrived ``now``, asking for ``pause`` seconds: nothing goes before then."""
        with self._lock:
            self._until = max(self._until, now + pause)

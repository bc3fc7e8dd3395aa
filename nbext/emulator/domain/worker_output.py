"""What worker processes print: each worker's stdout and stderr, line by line.

These are the logs of a worker-script endpoint, as the service keeps a worker's
container output. They are written from the supervisor's reader threads (one per
process) and read from the emulator's loop (the v2 worker-logs route) and from user
threads (``Emulator.worker_logs``), hence the lock. A worker restarted after a crash
keeps its id, so its log goes on across processes, with the supervisor's lines (a
process starting, exiting) marked ``system`` between the program's ``container`` lines.

Every line is numbered when it is written, so a reader that passes the cursor of the
last line it saw (``Last-Event-ID``) gets exactly the lines after it, even when older
lines have been dropped.
"""

from __future__ import annotations

import threading
from collections import deque

from .clock import Clock
from .management.logs import LogLine, literal

LOG_LINES = 10_000
"""Lines of output kept per worker (older lines are dropped)."""


class WorkerOutput:
    """Each worker's output, kept after the worker stops."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._lines: dict[str, deque[LogLine]] = {}
        self._written: dict[str, int] = {}
        self._endpoint_of: dict[str, str] = {}
        self._lock = threading.Lock()

    def write(self, endpoint_id: str, worker_id: str, text: str, source: str = "container") -> None:
        """One line of the worker's (``container``) or the supervisor's (``system``)."""
        with self._lock:
            lines = self._lines.get(worker_id)
            if lines is None:
                lines = self._lines[worker_id] = deque(maxlen=LOG_LINES)
            self._endpoint_of[worker_id] = endpoint_id
            seq = self._written[worker_id] = self._written.get(worker_id, 0) + 1
            lines.append(LogLine(self.clock.now(), seq, source, literal(text)))

    def log(self, endpoint_id: str, worker_id: str) -> list[LogLine] | None:
        """The worker's lines, oldest first; None if no process of that worker ever ran."""
        with self._lock:
            if self._endpoint_of.get(worker_id) != endpoint_id:
                return None
            return list(self._lines[worker_id])

    def lines(self, endpoint_id: str, worker_id: str | None = None) -> list[str]:
        """The endpoint's worker output as text, each line prefixed with its worker's id."""
        with self._lock:
            ids = [
                w
                for w, ep in self._endpoint_of.items()
                if ep == endpoint_id and (worker_id is None or w == worker_id)
            ]
            return [f"[{w}] {line.line}" for w in ids for line in list(self._lines[w])]

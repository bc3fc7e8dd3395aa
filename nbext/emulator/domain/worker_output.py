"""What worker processes print, line by line, bounded by bytes since it lives in the
kernel's memory (docs/workers.md#logs); locked, as reader threads write it."""

from __future__ import annotations

import threading
from collections import deque

from .clock import Clock
from .management.logs import LogLine, literal

LOG_LINES = 10_000
"""Lines of output kept per worker (older lines are dropped)."""
LINE_BYTES = 16_384
"""Bytes (UTF-8) of one line kept; the rest is cut, and the line says how much."""
WORKER_BYTES = 1_048_576
"""Bytes of one worker's lines kept (older lines are dropped); each line also counts
``LINE_OVERHEAD``, so a flood of empty lines is bounded too."""
LINE_OVERHEAD = 100
"""What keeping a line costs besides its text (its record, its timestamp)."""
WORKERS_KEPT = 32
"""Workers whose logs are kept: the ones that wrote last (so at most
``WORKERS_KEPT * WORKER_BYTES`` in all)."""


def cut_mark(cut: int) -> str:
    """What ends a line whose last ``cut`` bytes were not kept."""
    return f" … [{cut:,} more bytes cut: lines keep {LINE_BYTES:,}]"


def capped(text: str, cut: int = 0) -> str:
    """``text`` to its first ``LINE_BYTES`` bytes, marked when anything was cut (``cut``:
    bytes already cut before it got here, as the supervisor's reader does)."""
    data = text.encode("utf-8", "replace")
    if len(data) > LINE_BYTES:
        cut += len(data) - LINE_BYTES
        text = data[:LINE_BYTES].decode("utf-8", "ignore")  # no half character
    return text + cut_mark(cut) if cut else text


class _Log:
    """One worker's lines and what they cost."""

    __slots__ = ("lines", "size")

    def __init__(self) -> None:
        self.lines: deque[tuple[LogLine, int]] = deque()
        self.size = 0

    def append(self, line: LogLine) -> None:
        cost = len(line.text.encode("utf-8", "replace")) + LINE_OVERHEAD
        self.lines.append((line, cost))
        self.size += cost
        while self.size > WORKER_BYTES or len(self.lines) > LOG_LINES:
            _, freed = self.lines.popleft()
            self.size -= freed


class WorkerOutput:
    """Each worker's output, kept after the worker stops (within the bounds above)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._logs: dict[str, _Log] = {}
        """By worker id, the one that wrote last at the end."""
        self._written: dict[str, int] = {}
        self._endpoint_of: dict[str, str] = {}
        self._lock = threading.Lock()

    def write(
        self,
        endpoint_id: str,
        worker_id: str,
        text: str,
        source: str = "container",
        cut: int = 0,
    ) -> None:
        """One line of the worker's (``container``) or the supervisor's (``system``);
        ``cut``: bytes of it the reader did not keep."""
        line_text = literal(capped(text, cut))
        with self._lock:
            log = self._logs.pop(worker_id, None) or _Log()
            self._logs[worker_id] = log  # the latest writer last
            while len(self._logs) > WORKERS_KEPT:
                del self._logs[next(iter(self._logs))]
            self._endpoint_of[worker_id] = endpoint_id
            seq = self._written[worker_id] = self._written.get(worker_id, 0) + 1
            log.append(LogLine(self.clock.now(), seq, source, line_text))

    def log(self, endpoint_id: str, worker_id: str) -> list[LogLine] | None:
        """The worker's lines, oldest first; None if no process of that worker ever ran."""
        with self._lock:
            if self._endpoint_of.get(worker_id) != endpoint_id:
                return None
            return self._kept(worker_id)

    def lines(self, endpoint_id: str, worker_id: str | None = None) -> list[str]:
        """The endpoint's worker output as text, each line prefixed with its worker's id."""
        with self._lock:
            ids = [
                w
                for w, ep in self._endpoint_of.items()
                if ep == endpoint_id and (worker_id is None or w == worker_id)
            ]
            return [f"[{w}] {line.line}" for w in ids for line in self._kept(w)]

    def size(self) -> int:
        """What the kept lines cost, in bytes (as the budgets count)."""
        with self._lock:
            return sum(log.size for log in self._logs.values())

    def _kept(self, worker_id: str) -> list[LogLine]:
        log = self._logs.get(worker_id)
        return [line for line, _ in log.lines] if log is not None else []

"""Logs a user would read: a pod's boot and shutdown, and the jobs a worker ran; lines
carry an append-only cursor for SSE's ``Last-Event-ID`` (docs/architecture.md#management-areas)."""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from ..clock import Clock
from .pod_status import PROVISIONING_S, STARTING_S
from .records import iso

if TYPE_CHECKING:
    from ..endpoints import Endpoint as LiveEndpoint
    from ..jobs import Job
    from .container import Container
    from .usage import Usage

WORKER_LINES = 1000
"""Lines kept per worker (the oldest go first)."""
WORKERS_KEPT = 500
"""Workers whose logs are kept (the longest known go first)."""


@dataclass(frozen=True)
class LogLine:
    ts: float
    seq: int
    source: str
    """``container`` (what the program printed) or ``system`` (what the platform did)."""
    text: str
    job: weakref.ref[Job] | None = None
    """The job a "finished" line is about: its outcome is settled only after the line is
    written (the worker is freed first), so it is read when the line is."""

    @property
    def line(self) -> str:
        job = self.job() if self.job is not None else None
        return self.text.format(outcome=str(job.status) if job is not None else "ended")

    @property
    def cursor(self) -> str:
        return f"{iso(self.ts)}/{self.seq:012d}"

    def wire(self) -> dict[str, str]:
        return {"ts": iso(self.ts), "source": self.source, "line": self.line}


def literal(text: str) -> str:
    """``text`` as a line template that formats to itself (braces doubled)."""
    return text.replace("{", "{{").replace("}", "}}")


def pod_lines(
    pod: Container, hardware: str, data_center: str, intervals: Iterable[Usage], now: float
) -> list[LogLine]:
    """The pod's log up to ``now``, from the intervals it ran (oldest first)."""
    raw: list[tuple[float, str, str]] = []
    for i, usage in enumerate(sorted(intervals, key=lambda u: u.start)):
        start, end = usage.start, usage.end
        boot = start
        if i == 0:
            raw += [
                (start, "system", f"pod {pod.id}: {hardware} in {data_center}"),
                (start, "system", f"pulling image {pod.image}"),
                (start + PROVISIONING_S, "system", f"image {pod.image} pulled"),
            ]
            boot = start + PROVISIONING_S
        raw.append((boot, "system", "starting container"))
        up = boot + STARTING_S
        raw.append((up, "container", "container started"))
        for port in pod.ports:
            number, _, protocol = port.partition("/")
            service = {"8888": "Jupyter Lab", "22": "sshd"}.get(number, "service")
            raw.append((up, "container", f"{service} listening on {number}/{protocol}"))
        if end is not None:
            raw = [r for r in raw if r[0] <= end]  # a stop cuts the boot short
            raw.append((end, "system", "stopping container"))
            raw.append((end, "container", "container exited with code 0"))
    raw = [r for r in raw if r[0] <= now]
    raw.sort(key=lambda r: r[0])
    return [
        LogLine(ts, seq, source, literal(line)) for seq, (ts, source, line) in enumerate(raw, 1)
    ]


@dataclass(slots=True)
class _Worker:
    """One worker's record: when it was first seen, and its last executions, raw."""

    first_seen: float
    image: str | None
    runs: deque[tuple[float, float, str, weakref.ref[Job] | None]] = field(
        default_factory=lambda: deque(maxlen=WORKER_LINES // 2)
    )
    total: int = 0
    """Executions ever recorded (older ones fall out of ``runs``); numbers the lines."""


class WorkerLogs:
    """Lines of serverless workers: one raw tuple per job as it ends (the job service's
    hot path), written out as lines when someone reads them."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._workers: dict[tuple[str, str], _Worker] = {}

    def _worker(self, key: tuple[str, str], seen: float, image: str | None) -> _Worker:
        found = self._workers.get(key)
        if found is None:
            found = self._workers[key] = _Worker(seen, image)
            if len(self._workers) > WORKERS_KEPT:  # the longest-known worker goes first
                del self._workers[next(iter(self._workers))]
        return found

    def observe(self, endpoint_id: str, worker_id: str, image: str | None) -> float:
        """Note a worker seen alive (its first line says it started); its start time."""
        return self._worker((endpoint_id, worker_id), self.clock.now(), image).first_seen

    def record_execution(
        self, live: LiveEndpoint, worker_id: str, start: float, end: float
    ) -> None:
        """The job service's hook: a job left its worker (finished, failed, cancelled...)."""
        worker = self._worker((live.id, worker_id), start, live.image)
        job = next((w.job for w in live.workers if w.id == worker_id), None)
        if job is None:
            worker.runs.append((start, end, "?", None))
        else:
            worker.runs.append((start, end, job.id, weakref.ref(job)))
        worker.total += 1

    def lines(
        self, endpoint_id: str, worker_id: str, crashed: tuple[float, str] | None = None
    ) -> list[LogLine] | None:
        """The worker's lines, or None if unknown; ``crashed``, its last failed start and
        line (a crash-loop scenario's), comes last so a tail of one line finds it."""
        worker = self._workers.get((endpoint_id, worker_id))
        if worker is None:
            return None
        started = f"worker {worker_id} started ({worker.image or 'no image'})"
        out = [LogLine(worker.first_seen, 1, "system", literal(started))]
        first = worker.total - len(worker.runs)
        for i, (start, end, job_id, ref) in enumerate(worker.runs, first):
            out.append(LogLine(start, 2 + 2 * i, "container", literal(f"job {job_id} started")))
            finished = f"job {literal(job_id)} {{outcome}} after {end - start:.3f} s"
            out.append(LogLine(end, 3 + 2 * i, "container", finished, ref))
        if crashed is not None:
            at, line = crashed
            out.append(LogLine(max(at, out[-1].ts), out[-1].seq + 1, "container", literal(line)))
        return out


def select(
    lines: list[LogLine],
    *,
    source: str | None,
    tail: int,
    since: datetime | None,
    after: str | None,
) -> list[LogLine]:
    """The lines a reader asked for: after a cursor, else since a time, else the last ``tail``."""
    if source is not None:
        lines = [line for line in lines if line.source == source]
    if after is not None:
        stamp, _, seq = after.partition("/")
        if seq.isdigit():
            return [line for line in lines if line.seq > int(seq)]
        try:
            cutoff = datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        except ValueError:  # not a cursor: every line
            return lines
        return [line for line in lines if line.ts > cutoff]
    if since is not None:
        return [line for line in lines if line.ts >= since.timestamp()]
    return lines[-tail:] if tail else []

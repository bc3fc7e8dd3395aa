"""The worker record and its states; which state may follow which, and what each does,
is the table of ``fleet.py`` (docs/behaviour.md#worker-states)."""

from __future__ import annotations

import enum
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .clock import TimerHandle

if TYPE_CHECKING:
    from .jobs import Job


class WorkerState(enum.StrEnum):
    """Where a worker is, named as ``/health`` counts it; a removed worker is GONE."""

    THROTTLED = "throttled"
    INITIALIZING = "initializing"
    UNHEALTHY = "unhealthy"
    IDLE = "idle"
    RUNNING = "running"
    GONE = "gone"


W = WorkerState


def backoff(restarts: int) -> float:
    """Seconds before a worker that crashed at start starts again: 0.5 doubling to 30."""
    return min(30.0, 0.5 * 2.0 ** min(restarts, 6))


def _new_worker_id() -> str:
    """A worker id unique across restarts: billing groups usage by it, and a store outlives
    the process, so a per-process counter would merge two workers' usage after a restart."""
    return f"worker-{secrets.token_hex(4)}"


@dataclass(eq=False)
class Worker:
    """One worker of an endpoint, in one state of ``fleet.TABLE``."""

    id: str = field(default_factory=_new_worker_id)
    state: WorkerState = W.INITIALIZING
    since: float = 0.0
    """When it entered its state (entering it again re-arms its timer, keeps this)."""
    timer: TimerHandle | None = None
    job: Job | None = None
    started_at: float = 0.0
    """When its latest start began."""
    restarts: int = 0
    """Starts since it was last ready: a crash loop's backoff grows with them."""
    last_line: str | None = None
    """The last line of its log, kept for a worker that keeps failing to start."""

    @property
    def running(self) -> bool:
        return self.state is W.RUNNING

    @property
    def ready(self) -> bool:
        return self.state is W.IDLE or self.state is W.RUNNING

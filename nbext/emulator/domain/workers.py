"""The worker record and its state table: the states, which may follow which, and what
each state's timer does when it runs out.

Every kind of worker follows the table (a handler run in the emulator, a worker
script's process: ``fleet.Body``), and ``fleet.Fleet.enter`` is the only place a state
changes, so a worker's timer is always its present state's (docs/behaviour.md#scaling).
"""

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
_STARTS = frozenset({W.THROTTLED, W.INITIALIZING, W.UNHEALTHY, W.IDLE, W.GONE})
"""Where a start lands (held by the scenario, booting, ready at once), or removed."""

TABLE: dict[WorkerState, tuple[frozenset[WorkerState], str | None]] = {
    # state: (the states it may go to, the ``Fleet`` method its timer calls)
    # New, or a cold start (the scenario's, timed); untimed: its body starts (a process,
    # until its first call).
    W.INITIALIZING: (_STARTS, "boot"),
    # No GPU free (the scenario's): starts again when it ends.
    W.THROTTLED: (_STARTS, "start"),
    # Crashed at start (timed: restarted after a backoff, if still wanted), or its calls
    # are refused (untimed: it waits for its body).
    W.UNHEALTHY: (_STARTS, "restart"),
    # Ready without a job: removed after the idle timeout, unless workersMin keeps it.
    W.IDLE: (frozenset({W.RUNNING, W.INITIALIZING, W.UNHEALTHY, W.GONE}), "retire"),
    # Ready with a job (a process may hold several); back to IDLE when it ends.
    W.RUNNING: (frozenset({W.IDLE, W.INITIALIZING, W.UNHEALTHY, W.GONE}), None),
    W.GONE: (frozenset(), None),
}

RESTART_BACKOFF = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
"""Seconds before a worker that crashed at start starts again, by its restarts so far."""


def backoff(restarts: int) -> float:
    return RESTART_BACKOFF[min(restarts, len(RESTART_BACKOFF) - 1)]


class IllegalWorkerTransition(AssertionError):
    """A bug in the emulator: a worker state change the table does not allow."""


def _new_worker_id() -> str:
    """A worker id unique across restarts: billing groups usage by it, and a store outlives
    the process, so a per-process counter would merge two workers' usage after a restart."""
    return f"worker-{secrets.token_hex(4)}"


@dataclass(eq=False)
class Worker:
    """One worker of an endpoint, in one state of ``TABLE``."""

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

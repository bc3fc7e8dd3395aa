"""Endpoints and their workers: how many run, and which job each one takes next.

Scaling follows docs/behaviour.md#scaling: a queued job starts a worker when none is
idle and the endpoint is below ``workers_max`` (low-priority jobs never do); a worker
idle longer than ``idle_timeout`` stops unless that would leave fewer than
``workers_min``.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from .clock import TimerHandle
from .handlers import Handler
from .scenarios import Scenario

if TYPE_CHECKING:
    from .jobs import Job


def _new_worker_id() -> str:
    """A worker id unique across restarts: billing groups usage by it, and a store outlives
    the process, so a per-process counter would merge two workers' usage after a restart."""
    return f"worker-{secrets.token_hex(4)}"


READY = "ready"
BOOTING = ("initializing", "throttled", "unhealthy")
"""The states of a worker that cannot take a job yet (``scenarios`` puts workers there)."""


@dataclass(eq=False)
class Worker:
    """One worker of an endpoint: booting (one of ``BOOTING``), idle, or running one job."""

    id: str = field(default_factory=_new_worker_id)
    job: Job | None = None
    idle_since: float = 0.0
    idle_timer: TimerHandle | None = None
    state: str = READY
    started_at: float = 0.0
    restarts: int = 0
    last_line: str | None = None
    """The last line of its log, kept for a worker that keeps failing to start."""
    boot_timer: TimerHandle | None = None

    @property
    def running(self) -> bool:
        return self.job is not None

    @property
    def ready(self) -> bool:
        return self.state == READY


@dataclass(eq=False)
class Endpoint:
    """A deployed endpoint: its image or handler, scaling settings, queue and counters."""

    id: str
    name: str
    image: str | None = None
    handler: Handler | None = None
    workers_min: int = 0
    workers_max: int = 3
    idle_timeout: float = 5.0
    execution_timeout_ms: int = EXECUTION_TIMEOUT_DEFAULT_MS
    aggregate_stream: bool = True
    created_at: float = 0.0
    queue: OrderedDict[str, Job] = field(default_factory=OrderedDict)
    workers: list[Worker] = field(default_factory=list)
    completed: int = 0
    failed: int = 0
    retried: int = 0
    scenario: Scenario | None = None
    """A teaching scenario's troubles (``scenarios``), or None for a healthy fleet."""

    def __post_init__(self) -> None:
        if self.workers_min < 0 or self.workers_max < 0:
            raise ValueError("workers_min and workers_max must be >= 0")
        if self.workers_min > self.workers_max:
            raise ValueError(
                f"workers_min ({self.workers_min}) must not exceed workers_max ({self.workers_max})"
            )
        if self.idle_timeout < 0:
            raise ValueError("idle_timeout must be >= 0 seconds")

    @property
    def running_workers(self) -> int:
        return sum(1 for w in self.workers if w.running)

    @property
    def idle_workers(self) -> int:
        return len(self.workers) - self.running_workers

    def idle_worker(self) -> Worker | None:
        """The ready worker idle longest, so the others can reach their idle timeout."""
        idle = [w for w in self.workers if not w.running and w.ready]
        return min(idle, key=lambda w: w.idle_since) if idle else None

    def may_scale_up(self) -> bool:
        """More jobs wait that are allowed to start a worker than workers are starting
        for them, and there is room for one more."""
        if len(self.workers) >= self.workers_max:
            return False
        starting = sum(1 for w in self.workers if not w.ready)
        return sum(1 for job in self.queue.values() if not job.low_priority) > starting

    def count(self, state: str) -> int:
        return sum(1 for w in self.workers if w.state == state)

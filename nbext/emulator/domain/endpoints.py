"""Endpoints: their settings, queue and workers, and whether one more worker may start
(docs/behaviour.md#scaling)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from .handlers import Handler
from .scenarios import Scenario
from .workers import Worker, WorkerState

if TYPE_CHECKING:
    from .jobs import Job


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
    in_progress: int = 0
    """Its jobs IN_PROGRESS (``Lifecycle`` counts them; a process may run several)."""
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

    def idle_worker(self) -> Worker | None:
        """The worker idle longest, so the others can reach their idle timeout."""
        idle = [w for w in self.workers if w.state is WorkerState.IDLE]
        return min(idle, key=lambda w: w.since) if idle else None

    def may_scale_up(self) -> bool:
        """More jobs wait that are allowed to start a worker than workers are idle or
        starting for them, and there is room for one more."""
        if len(self.workers) >= self.workers_max:
            return False
        free = sum(1 for w in self.workers if not w.running)
        return sum(1 for job in self.queue.values() if not job.low_priority) > free

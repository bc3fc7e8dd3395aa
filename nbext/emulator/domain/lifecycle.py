"""A job's life: its state changes, its TTL and retention, and its removal, each through
one method so none of their effects can disagree (docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nbext.models import (
    RETENTION_RUN_S,
    RETENTION_RUNSYNC_S,
    RETRYABLE_STATES,
    JobResult,
    JobStatus,
)

from .clock import Clock
from .endpoints import Endpoint
from .jobs import UNSET, Job, check_transition, wire_result
from .json_values import printable, unservable
from .output_limit import oversized
from .persistence import JobPersistence
from .webhooks import WebhookDispatcher

if TYPE_CHECKING:
    from .scheduling import Scheduler

log = logging.getLogger("nbext.emulator")
S = JobStatus


class Lifecycle:
    """The state changes, timers and removal of every job of one emulator."""

    scheduler: Scheduler
    """Set by ``JobService`` once both exist (each needs the other)."""

    def __init__(
        self,
        clock: Clock,
        jobs: dict[str, Job],
        endpoints: dict[str, Endpoint],
        persistence: JobPersistence,
        webhooks: WebhookDispatcher,
    ) -> None:
        self.clock = clock
        self.jobs = jobs
        self.endpoints = endpoints
        self.persistence = persistence
        self.webhooks = webhooks
        self.retention_run_s: float = RETENTION_RUN_S
        self.retention_runsync_s: float = RETENTION_RUNSYNC_S
        self.on_change: list[Callable[[Job], None]] = []
        """Observers of every transition and removal."""
        # Bound once, so that every job's timers share it rather than each its own.
        self._remove: Callable[[Job, str], None] = self.remove

    def transition(
        self, job: Job, target: JobStatus, *, output: Any = UNSET, error: str | None = None
    ) -> None:
        """Move ``job`` to ``target`` and do everything that goes with it."""
        check_transition(job.status, target)
        source = job.status
        endpoint = self.endpoints[job.endpoint_id]
        now = self.clock.now()
        if source is S.IN_QUEUE:
            endpoint.queue.pop(job.id, None)
        if source is S.IN_PROGRESS:
            endpoint.in_progress -= 1
            self.scheduler.stop_execution(job, endpoint)
        job.status = target
        if target is S.IN_PROGRESS:
            endpoint.in_progress += 1
            job.started_at = now
            job.attempt += 1
            if job.attempt > 1 or job.cancel_flag.is_set():  # a stale attempt keeps its own
                job.cancel_flag = threading.Event()
        elif target is S.IN_QUEUE:  # retry
            job.output, job.error = UNSET, None
            job.chunks, job.stream_cursor = [], 0
            job.started_at = job.ended_at = None
            job.queued_at = now
            if job.retention_timer:
                job.retention_timer.cancel()
            endpoint.retried += 1
            self.persistence.save_counters(endpoint)
            endpoint.queue[job.id] = job
        else:  # a final state
            job.ended_at = now
            if source is S.IN_QUEUE:
                job.started_at = None
            job.output, job.error = output, error
            if target is S.COMPLETED:
                endpoint.completed += 1
            elif target in RETRYABLE_STATES:
                endpoint.failed += 1
            self.persistence.save_counters(endpoint)
            self.schedule_retention(job)
            if job.webhook:
                body = JobResult.model_validate(wire_result(job, now)).to_wire()
                self.webhooks.dispatch(job.id, job.webhook, body)
        job.wake(final=target.is_final)
        # A start is not stored (``persistence`` says why).
        self.changed(job, store=target is not S.IN_PROGRESS)
        self.scheduler.dispatch(endpoint)

    def finish(self, job: Job, output: Any, error: Any, what: str) -> None:
        """End ``job`` with what its handler or worker (``what``: whose output) answered:
        an ``error`` (text or JSON) fails it, as does an output that JSON cannot carry or
        that is over the service's limit; else it completes with ``output``."""
        if error:
            text = error if isinstance(error, str) else json.dumps(error, default=str)
            self.transition(job, S.FAILED, error=printable(text))
        elif (why := unservable(output)) is not None:
            self.transition(job, S.FAILED, error=f"{what} cannot be sent as JSON: {why}")
        elif (too_large := oversized(output)) is not None:
            self.transition(job, S.FAILED, error=too_large)
        else:
            self.transition(job, S.COMPLETED, output=output)

    def remove(self, job: Job, reason: str) -> None:
        """Delete ``job`` in any state (TTL, retention, purge); later lookups give 404."""
        if self.jobs.pop(job.id, None) is None:
            return
        endpoint = self.endpoints.get(job.endpoint_id)
        job.removed = reason
        for timer in (job.ttl_timer, job.retention_timer):
            if timer:
                timer.cancel()
        if endpoint is not None:
            endpoint.queue.pop(job.id, None)
            if job.status is S.IN_PROGRESS:
                endpoint.in_progress -= 1
                self.scheduler.stop_execution(job, endpoint)
        job.wake(final=True)
        self.webhooks.forget(job.id)
        self.changed(job)
        if endpoint is not None:
            self.scheduler.dispatch(endpoint)

    def changed(self, job: Job, *, store: bool = True) -> None:
        if job.removed is not None:
            self.persistence.forget(job)
        elif store:
            self.persistence.save(job)
        for observer in self.on_change:
            try:
                observer(job)
            except Exception:  # an observer never stops a state change half-way
                log.exception("an observer of job %s failed", job.id)

    def schedule_ttl(self, job: Job) -> None:
        if job.ttl_timer:
            job.ttl_timer.cancel()
        due = job.submitted_at + job.ttl_ms / 1000 - self.clock.now()
        job.ttl_timer = self.clock.call_later(due, self._remove, job, "ttl elapsed")

    def schedule_retention(self, job: Job) -> None:
        """Remove the job when its retention period, counted from its end, runs out."""
        keep = self.retention_runsync_s if job.sync else self.retention_run_s
        ended = job.ended_at if job.ended_at is not None else self.clock.now()
        if job.retention_timer:
            job.retention_timer.cancel()
        job.retention_timer = self.clock.call_later(
            ended + keep - self.clock.now(), self._remove, job, "retention period elapsed"
        )

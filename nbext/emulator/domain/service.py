"""The job interface's behaviour: submit, wait, stream, cancel, retry, purge, health.

Every state change goes through ``JobService._transition`` and every removal through
``JobService._remove``, so TTL, retention, cancel, retry, timeouts, worker release,
health counters and webhooks cannot disagree. All methods run on the emulator's asyncio
loop; nothing here knows about HTTP.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import secrets
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from nbext.models import (
    EXECUTION_TIMEOUT_DEFAULT_MS,
    RETENTION_RUN_S,
    RETENTION_RUNSYNC_S,
    RETRYABLE_STATES,
    TTL_DEFAULT_MS,
    TTL_MAX_MS,
    TTL_MIN_MS,
    AcceptedJob,
    CancelResult,
    Health,
    HealthJobs,
    HealthWorkers,
    JobResult,
    JobStatus,
    JobSubmission,
    PurgeResult,
    StreamResponse,
)

from .cancel import STOPPED, CancelFlag
from .clock import Clock
from .endpoints import Endpoint, Worker
from .errors import Conflict, InvalidInput, NotFound
from .handlers import Handler, JobContext, Outcome, invoke
from .images import ImageRegistry
from .job_records import job_from_record, job_to_record
from .jobs import UNSET, Job, check_transition
from .store import MemoryStore, Store
from .streaming import to_chunks
from .webhooks import WebhookDispatcher

log = logging.getLogger("nbext.emulator")
S = JobStatus


class JobService:
    """All endpoints and jobs of one emulator."""

    def __init__(
        self,
        clock: Clock,
        images: ImageRegistry,
        webhooks: WebhookDispatcher,
        executor: Executor,
        store: Store | None = None,
    ) -> None:
        self.clock = clock
        self.store: Store = store or MemoryStore()
        self.images = images
        self.webhooks = webhooks
        self.executor = executor
        self.endpoints: dict[str, Endpoint] = {}
        self.jobs: dict[str, Job] = {}
        self.retention_run_s: float = RETENTION_RUN_S
        self.retention_runsync_s: float = RETENTION_RUNSYNC_S
        self._dispatching: set[str] = set()
        self.on_change: list[Callable[[Job], None]] = []
        """Observers of every transition and removal (the SQLite store listens here)."""
        # Bound once, so that every job's timers share them rather than each its own.
        self._on_ttl: Callable[[Job], None] = self._ttl_elapsed
        self._on_retention: Callable[[Job], None] = self._retention_elapsed
        self.on_execution: list[Callable[[Endpoint, str, float, float], None]] = []
        """Observers of every execution that ended, however (billing listens here):
        ``(endpoint, worker id, started at, ended at)``."""

    # ---- endpoints -------------------------------------------------------------------

    def add_endpoint(self, endpoint: Endpoint) -> Endpoint:
        if endpoint.id in self.endpoints:
            raise InvalidInput(f"an endpoint with id {endpoint.id!r} already exists")
        endpoint.created_at = endpoint.created_at or self.clock.now()
        for _ in range(endpoint.workers_min):
            endpoint.workers.append(Worker(idle_since=self.clock.now()))
        self.endpoints[endpoint.id] = endpoint
        return endpoint

    def remove_endpoint(self, endpoint_id: str) -> None:
        endpoint = self.endpoint(endpoint_id)
        for job in [j for j in self.jobs.values() if j.endpoint_id == endpoint_id]:
            self._remove(job, "endpoint deleted")
        for worker in endpoint.workers:
            if worker.idle_timer:
                worker.idle_timer.cancel()
        del self.endpoints[endpoint_id]

    def update_endpoint(
        self,
        endpoint_id: str,
        *,
        name: str | None = None,
        image: str | None = None,
        workers_min: int | None = None,
        workers_max: int | None = None,
        idle_timeout: float | None = None,
        execution_timeout_ms: int | None = None,
    ) -> Endpoint:
        """Change a live endpoint's image or scaling; queued and running jobs carry on.

        A new image serves the next job a worker takes. Workers are added up to a higher
        ``workers_min`` at once; above a lower ``workers_max``, idle workers stop at once
        and busy ones when their job ends. A new idle timeout applies to idle workers
        from when they became idle; a new execution timeout to jobs started from now.
        """
        endpoint = self.endpoint(endpoint_id)
        low = endpoint.workers_min if workers_min is None else workers_min
        high = endpoint.workers_max if workers_max is None else workers_max
        if low < 0 or high < 0 or low > high:
            raise InvalidInput(f"workersMin ({low}) must not exceed workersMax ({high})")
        if name is not None:
            endpoint.name = name
        if image is not None:
            endpoint.image = image
        if execution_timeout_ms is not None:
            endpoint.execution_timeout_ms = execution_timeout_ms
        endpoint.workers_min, endpoint.workers_max = low, high
        now = self.clock.now()
        for worker in [w for w in endpoint.workers if not w.running]:
            if len(endpoint.workers) <= high:
                break
            if worker.idle_timer:
                worker.idle_timer.cancel()
            endpoint.workers.remove(worker)
        while len(endpoint.workers) < low:
            endpoint.workers.append(Worker(idle_since=now))
        if idle_timeout is not None:
            endpoint.idle_timeout = idle_timeout
            for worker in endpoint.workers:
                if worker.idle_timer is not None:
                    self._schedule_idle(worker, endpoint, due=worker.idle_since + idle_timeout)
        self._dispatch(endpoint)
        return endpoint

    def endpoint(self, endpoint_id: str) -> Endpoint:
        try:
            return self.endpoints[endpoint_id]
        except KeyError:
            raise NotFound(
                f"endpoint {endpoint_id!r} not found; deployed endpoints: "
                f"{', '.join(sorted(self.endpoints)) or 'none'}"
            ) from None

    def handler_for(self, endpoint: Endpoint) -> Handler | None:
        if endpoint.handler is not None:
            return endpoint.handler
        return self.images.get(endpoint.image) if endpoint.image else None

    def image_registered(self, name: str) -> None:
        """An image got a handler: endpoints running it may start their queued jobs."""
        for endpoint in list(self.endpoints.values()):
            if endpoint.image == name and endpoint.handler is None:
                self._dispatch(endpoint)

    # ---- operations ------------------------------------------------------------------

    def submit(self, endpoint_id: str, submission: JobSubmission, *, sync: bool) -> Job:
        """Queue a job (``/run``, or the first half of ``/runsync``)."""
        endpoint = self.endpoint(endpoint_id)
        policy = submission.policy
        now = self.clock.now()
        job = Job(
            id=("sync-" if sync else "") + uuid4_text(),
            endpoint_id=endpoint.id,
            input=submission.input,
            sync=sync,
            submitted_at=now,
            queued_at=now,
            ttl_ms=(policy.ttl if policy and policy.ttl else TTL_DEFAULT_MS),
            webhook=submission.webhook,
            s3_config=(
                submission.s3_config.model_dump(by_alias=True, exclude_none=True)
                if submission.s3_config
                else None
            ),
            execution_timeout_ms=policy.execution_timeout if policy else None,
            low_priority=policy.low_priority if policy else False,
        )
        self.jobs[job.id] = job
        self._schedule_ttl(job)
        endpoint.queue[job.id] = job
        self._changed(job)
        self._dispatch(endpoint)
        return job

    async def wait_final(self, job: Job, timeout_s: float) -> None:
        """Return when ``job`` is final or removed, or after ``timeout_s`` of the clock."""
        deadline = self.clock.now() + timeout_s
        while not job.status.is_final and job.removed is None:
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                return
            await job.signal.wait(self.clock, remaining, final_only=True)

    async def run_sync(
        self, endpoint_id: str, submission: JobSubmission, wait_ms: int
    ) -> dict[str, Any]:
        """``/runsync``: the result if the job ends within ``wait_ms``, else id and state."""
        job = self.submit(endpoint_id, submission, sync=True)
        await self.wait_final(job, wait_ms / 1000)
        if job.removed is not None:
            raise NotFound(f"job {job.id} was removed before it finished ({job.removed})")
        if job.status.is_final:
            return self.wire_result(job)
        return {"id": job.id, "status": job.status.value}

    def job(self, endpoint_id: str, job_id: str) -> Job:
        job = self.jobs.get(job_id)
        if job is None or job.endpoint_id != endpoint_id:
            self.endpoint(endpoint_id)
            raise NotFound(
                f"job {job_id!r} not found on endpoint {endpoint_id!r}: unknown, purged, "
                "or removed after its TTL or retention period"
            )
        return job

    def status(self, endpoint_id: str, job_id: str, ttl_ms: int | None = None) -> JobResult:
        """``/status``, optionally setting the job's TTL (still counted from submission)."""
        return JobResult.model_validate(self.status_wire(endpoint_id, job_id, ttl_ms))

    def status_wire(
        self, endpoint_id: str, job_id: str, ttl_ms: int | None = None
    ) -> dict[str, Any]:
        """``status`` as the JSON object the HTTP route sends (no model on the hot path)."""
        job = self.job(endpoint_id, job_id)
        if ttl_ms is not None:
            self.set_ttl(job, ttl_ms)
        return self.wire_result(job)

    def set_ttl(self, job: Job, ttl_ms: int) -> None:
        if not TTL_MIN_MS <= ttl_ms <= TTL_MAX_MS:
            raise InvalidInput(
                f"ttl must be between {TTL_MIN_MS} and {TTL_MAX_MS} ms, got {ttl_ms}"
            )
        age_ms = (self.clock.now() - job.submitted_at) * 1000
        if ttl_ms <= age_ms:
            raise InvalidInput(
                f"ttl={ttl_ms} ms has already elapsed for job {job.id} (submitted "
                f"{age_ms:.0f} ms ago; the TTL counts from submission); choose a larger ttl"
            )
        job.ttl_ms = ttl_ms
        self._schedule_ttl(job)
        self._changed(job)

    def result(self, job: Job) -> JobResult:
        return JobResult.model_validate(self.wire_result(job))

    def wire_result(self, job: Job) -> dict[str, Any]:
        """The job result object as sent: ``output`` only when COMPLETED, ``error`` only
        when FAILED or TIMED_OUT."""
        now = self.clock.now()
        status = job.status
        fields: dict[str, Any] = {
            "id": job.id,
            "status": status.value,
            "delayTime": job.delay_ms(now),
            "executionTime": job.execution_ms(now),
        }
        if status is S.COMPLETED:
            fields["output"] = None if job.output is UNSET else job.output
        elif status in RETRYABLE_STATES:
            fields["error"] = job.error or ""
        return fields

    async def stream(self, endpoint_id: str, job_id: str, wait_ms: int) -> StreamResponse:
        """``/stream``: chunks not handed out before, waiting up to ``wait_ms`` for one."""
        job = self.job(endpoint_id, job_id)
        deadline = self.clock.now() + wait_ms / 1000
        while (
            job.stream_cursor >= len(job.chunks) and not job.status.is_final and job.removed is None
        ):
            remaining = deadline - self.clock.now()
            if remaining <= 0:
                break
            await job.signal.wait(self.clock, remaining)
        if job.removed is not None:
            raise NotFound(f"job {job.id} was removed ({job.removed})")
        chunks = job.chunks[job.stream_cursor :]
        job.stream_cursor = len(job.chunks)
        return StreamResponse.model_validate({"status": job.status, "stream": chunks})

    def cancel(self, endpoint_id: str, job_id: str) -> CancelResult:
        job = self.job(endpoint_id, job_id)
        if job.status in (S.IN_QUEUE, S.IN_PROGRESS):
            self._transition(job, S.CANCELLED)
        elif job.status is not S.CANCELLED:
            raise Conflict(
                f"job {job.id} is {job.status.value} and can no longer be cancelled; "
                "only IN_QUEUE and IN_PROGRESS jobs can"
            )
        return CancelResult(id=job.id, status=S.CANCELLED)

    def retry(self, endpoint_id: str, job_id: str) -> AcceptedJob:
        job = self.job(endpoint_id, job_id)
        if job.status not in RETRYABLE_STATES:
            raise Conflict(
                f"job {job.id} is {job.status.value}; only FAILED or TIMED_OUT jobs can be retried"
            )
        self._transition(job, S.IN_QUEUE)
        return AcceptedJob(id=job.id, status=S.IN_QUEUE)

    def purge(self, endpoint_id: str) -> PurgeResult:
        endpoint = self.endpoint(endpoint_id)
        queued = list(endpoint.queue.values())
        for job in queued:
            self._remove(job, "purged")
        return PurgeResult(removed=len(queued), status="completed")

    def health(self, endpoint_id: str) -> Health:
        ep = self.endpoint(endpoint_id)
        running = ep.running_workers
        return Health(
            jobs=HealthJobs(
                completed=ep.completed,
                failed=ep.failed,
                in_progress=running,
                in_queue=len(ep.queue),
                retried=ep.retried,
            ),
            workers=HealthWorkers(idle=len(ep.workers) - running, running=running),
        )

    def requests(self, endpoint_id: str) -> list[JobResult]:
        """The endpoint's retained jobs, newest first."""
        self.endpoint(endpoint_id)
        jobs = [j for j in self.jobs.values() if j.endpoint_id == endpoint_id]
        jobs.sort(key=lambda j: j.submitted_at, reverse=True)
        return [self.result(j) for j in jobs]

    def running_workers(self, endpoint_id: str) -> int:
        endpoint = self.endpoints.get(endpoint_id)
        return endpoint.running_workers if endpoint else 0

    # ---- the one transition function -------------------------------------------------

    def _transition(
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
            self._stop_execution(job, endpoint)
        job.status = target
        if target is S.IN_PROGRESS:
            job.started_at = now
            job.attempt += 1
            if job.attempt > 1 or job.cancel_flag.is_set():  # a stale attempt keeps its own
                job.cancel_flag = CancelFlag()
        elif target is S.IN_QUEUE:  # retry
            job.output, job.error = UNSET, None
            job.chunks, job.stream_cursor = [], 0
            job.started_at = job.ended_at = None
            job.queued_at = now
            if job.retention_timer:
                job.retention_timer.cancel()
            endpoint.retried += 1
            self._save_counters(endpoint)
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
            self._save_counters(endpoint)
            self._schedule_retention(job)
            if job.webhook:
                self.webhooks.dispatch(job.id, job.webhook, self.result(job).to_wire())
        job.wake(final=target.is_final)
        # A start is not stored: the record still says IN_QUEUE, which is what ``restore``
        # makes of a job that was running anyway (its worker died with the emulator).
        # That spares one store write per job of the three it would otherwise cost.
        self._changed(job, store=target is not S.IN_PROGRESS)
        self._dispatch(endpoint)

    def _remove(self, job: Job, reason: str) -> None:
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
                self._stop_execution(job, endpoint)
        job.wake(final=True)
        self._changed(job)
        if endpoint is not None:
            self._dispatch(endpoint)

    def _changed(self, job: Job, *, store: bool = True) -> None:
        if job.removed is not None:
            self.store.delete("job", job.id)
        elif store:
            self.store.put("job", job.id, job_to_record(job))
        for observer in self.on_change:
            observer(job)

    def _save_counters(self, endpoint: Endpoint) -> None:
        self.store.put(
            "endpoint_counters",
            endpoint.id,
            {
                "id": endpoint.id,
                "completed": endpoint.completed,
                "failed": endpoint.failed,
                "retried": endpoint.retried,
            },
        )

    def restore(self) -> int:
        """Take back the jobs a previous run stored; call on the loop, endpoints first.

        A job that was running when the emulator stopped lost its worker with it; it is
        queued again, as the service does when a worker dies mid-job. Timers restart for
        what is left of each TTL and retention period; what has run out is removed.
        """
        for counters in self.store.all("endpoint_counters"):
            endpoint = self.endpoints.get(counters["id"])
            if endpoint is not None:
                endpoint.completed = counters["completed"]
                endpoint.failed = counters["failed"]
                endpoint.retried = counters["retried"]
        restored = 0
        for record in self.store.all("job"):
            job = job_from_record(record)
            endpoint = self.endpoints.get(job.endpoint_id)
            if endpoint is None or job.id in self.jobs:
                self.store.delete("job", job.id)
                continue
            if job.status is S.IN_PROGRESS:
                job.status, job.started_at = S.IN_QUEUE, None
                job.chunks, job.stream_cursor = [], 0
            self.jobs[job.id] = job
            self._schedule_ttl(job)
            if job.status.is_final:
                self._schedule_retention(job)
            elif job.status is S.IN_QUEUE:
                endpoint.queue[job.id] = job
            self._changed(job)
            restored += 1
        for endpoint in self.endpoints.values():
            self._dispatch(endpoint)
        return restored

    # ---- timers ----------------------------------------------------------------------

    # Timers take their arguments rather than closures: a job keeps its TTL and retention
    # timers for as long as it is retained, and every object kept per job is work for
    # the garbage collector at thousands of jobs a second.

    def _schedule_ttl(self, job: Job) -> None:
        if job.ttl_timer:
            job.ttl_timer.cancel()
        due = job.submitted_at + job.ttl_ms / 1000 - self.clock.now()
        job.ttl_timer = self.clock.call_later(due, self._on_ttl, job)

    def _schedule_retention(self, job: Job) -> None:
        """Remove the job when its retention period, counted from its end, runs out."""
        keep = self.retention_runsync_s if job.sync else self.retention_run_s
        ended = job.ended_at if job.ended_at is not None else self.clock.now()
        if job.retention_timer:
            job.retention_timer.cancel()
        job.retention_timer = self.clock.call_later(
            ended + keep - self.clock.now(), self._on_retention, job
        )

    def _ttl_elapsed(self, job: Job) -> None:
        self._remove(job, "ttl elapsed")

    def _retention_elapsed(self, job: Job) -> None:
        self._remove(job, "retention period elapsed")

    # ---- workers and execution -------------------------------------------------------

    def _dispatch(self, endpoint: Endpoint) -> None:
        """Hand queued jobs to idle workers, starting workers where the rules allow."""
        if not endpoint.queue or endpoint.id in self._dispatching:  # nothing to do, or
            return  # re-entered from a transition: the loop under way goes on
        if self.handler_for(endpoint) is None or endpoint.id not in self.endpoints:
            return
        self._dispatching.add(endpoint.id)
        try:
            while endpoint.queue:
                worker = endpoint.idle_worker()
                if worker is None:
                    if not endpoint.may_scale_up():
                        return
                    worker = Worker(idle_since=self.clock.now())
                    endpoint.workers.append(worker)
                    # A new worker was started for the oldest job allowed to start one;
                    # handing it a low-priority job would let those scale up after all.
                    job = next(j for j in endpoint.queue.values() if not j.low_priority)
                else:
                    job = next(iter(endpoint.queue.values()))
                self._start(job, worker, endpoint)
        finally:
            self._dispatching.discard(endpoint.id)

    def _start(self, job: Job, worker: Worker, endpoint: Endpoint) -> None:
        # The worker's idle timer, if any, stays: when it fires it finds the worker busy,
        # or idle since later than it was set for, and lets the worker be (``_idle_elapsed``).
        worker.job = job
        job.worker = worker
        self._transition(job, S.IN_PROGRESS)
        timeout_ms = job.execution_timeout_ms or endpoint.execution_timeout_ms
        timeout_ms = timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS
        attempt = job.attempt
        job.exec_timer = self.clock.call_later(
            timeout_ms / 1000, self._timed_out, job, attempt, timeout_ms
        )
        job.task = asyncio.get_running_loop().create_task(self._execute(job, attempt))

    def _stop_execution(self, job: Job, endpoint: Endpoint) -> None:
        """The job leaves IN_PROGRESS: stop its handler and free its worker."""
        job.cancel_flag.set()
        job.cancel_flag = STOPPED  # the handler keeps its own; the job need not keep one
        if job.exec_timer:
            job.exec_timer.cancel()
            job.exec_timer = None
        task, job.task = job.task, None
        if task is not None and task is not _current_task():
            task.cancel()
        worker, job.worker = job.worker, None
        if worker is not None:
            now = self.clock.now()
            if job.started_at is not None:
                for observer in self.on_execution:
                    observer(endpoint, worker.id, job.started_at, now)
            worker.job = None
            worker.idle_since = now
            if len(endpoint.workers) > endpoint.workers_max and worker in endpoint.workers:
                endpoint.workers.remove(worker)  # scaled down while it ran
            elif worker.idle_timer is None:
                self._schedule_idle(worker, endpoint)

    def _schedule_idle(self, worker: Worker, endpoint: Endpoint, due: float | None = None) -> None:
        """Check on ``worker`` at ``due`` (its idle timeout from now, by default).

        A worker keeps one idle timer across the jobs it runs, rather than one set and
        called off per job (two timer operations per job saved at thousands a second):
        when the timer fires, ``_idle_elapsed`` sets it again for the worker's present
        deadline if the worker ran a job since.
        """
        if worker.idle_timer:
            worker.idle_timer.cancel()
        delay = endpoint.idle_timeout if due is None else due - self.clock.now()
        worker.idle_timer = self.clock.call_later(delay, self._idle_elapsed, worker, endpoint)

    def _idle_elapsed(self, worker: Worker, endpoint: Endpoint) -> None:
        """Stop ``worker`` if it has been idle for the idle timeout and is not needed."""
        worker.idle_timer = None
        if worker.running or worker not in endpoint.workers:
            return  # a running worker gets a new timer when its job ends
        due = worker.idle_since + endpoint.idle_timeout
        if due > self.clock.now():  # it ran a job since this timer was set
            self._schedule_idle(worker, endpoint, due)
        elif len(endpoint.workers) > endpoint.workers_min:
            endpoint.workers.remove(worker)

    def _timed_out(self, job: Job, attempt: int, timeout_ms: int) -> None:
        if job.attempt == attempt and job.status is S.IN_PROGRESS and job.removed is None:
            self._transition(
                job,
                S.TIMED_OUT,
                error=f"job exceeded its execution timeout of {timeout_ms} ms and was stopped",
            )

    def _current(self, job: Job, attempt: int) -> bool:
        """Whether this attempt's results still count (not cancelled, timed out, removed)."""
        return job.attempt == attempt and job.status is S.IN_PROGRESS and job.removed is None

    def _emit(self, job: Job, attempt: int, value: Any, metrics: dict[str, Any]) -> None:
        if not self._current(job, attempt):
            return
        job.chunks.extend(to_chunks(value, metrics, len(job.chunks)))
        job.wake(final=False)

    async def _execute(self, job: Job, attempt: int) -> None:
        endpoint = self.endpoints[job.endpoint_id]
        handler = self.handler_for(endpoint)
        assert handler is not None
        payload: dict[str, Any] = {"id": job.id, "input": job.input}
        if job.s3_config:
            payload["s3Config"] = job.s3_config
        ctx = JobContext(job.id, self.clock, job.cancel_flag)
        try:
            outcome = await invoke(
                handler,
                payload,
                ctx,
                functools.partial(self._emit, job, attempt),
                self.executor,
            )
        except asyncio.CancelledError:
            return
        except Exception as exc:
            log.warning(
                "handler of endpoint %s failed on job %s:\n%s",
                endpoint.id,
                job.id,
                traceback.format_exc(),
            )
            if self._current(job, attempt):
                self._transition(job, S.FAILED, error=_error_text(exc))
            return
        if self._current(job, attempt):
            self._complete(job, endpoint, outcome)

    def _complete(self, job: Job, endpoint: Endpoint, outcome: Outcome) -> None:
        value = outcome.value
        if outcome.streamed and not endpoint.aggregate_stream:
            value = None
        if isinstance(value, dict) and value.get("error"):
            error = value["error"]
            text = error if isinstance(error, str) else json.dumps(error, default=str)
            self._transition(job, S.FAILED, error=text)
            return
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            self._transition(
                job,
                S.FAILED,
                error=f"handler output is not JSON-serialisable: {exc}",
            )
            return
        self._transition(job, S.COMPLETED, output=value)

    # ---- administration --------------------------------------------------------------

    def reset(self) -> None:
        """Forget every job (endpoints stay, counters restart)."""
        for job in list(self.jobs.values()):
            self._remove(job, "emulator reset")
        for endpoint in self.endpoints.values():
            endpoint.completed = endpoint.failed = endpoint.retried = 0
            self._save_counters(endpoint)


def _error_text(exc: BaseException) -> str:
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def uuid4_text() -> str:
    """A random (version 4) UUID as text, as ``str(uuid.uuid4())`` but without building a
    ``UUID`` object: one is made per job, on the hot path."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def new_endpoint_id() -> str:
    """An id shaped like the service's: 14 lowercase letters and digits."""
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(secrets.choice(alphabet) for _ in range(14))

"""Which worker runs which job, and running it: dispatch and execution
(docs/behaviour.md#scaling; docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import asyncio
import functools
import logging
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS, JobStatus

from .clock import Clock, sleep
from .endpoints import Endpoint
from .fleet import Fleet
from .handler_threads import HandlerThreads
from .handlers import Handler, JobContext, Outcome, invoke
from .images import ImageRegistry
from .jobs import Job
from .json_values import printable, unservable
from .lifecycle import Lifecycle
from .output_limit import oversized
from .streaming import to_chunks
from .workers import Worker

log = logging.getLogger("nbext.emulator")
S = JobStatus


class Scheduler:
    """Hands queued jobs to workers and runs their handlers."""

    def __init__(
        self,
        clock: Clock,
        images: ImageRegistry,
        executor: Executor,
        endpoints: dict[str, Endpoint],
        lifecycle: Lifecycle,
    ) -> None:
        self.clock = clock
        self.images = images
        self.executor = executor
        self.endpoints = endpoints
        self.lifecycle = lifecycle
        self._dispatching: set[str] = set()
        self.fleet = Fleet(clock, self.dispatch)
        """Every worker's state changes (``fleet.TABLE``)."""
        self.on_execution: list[Callable[[Endpoint, str, float, float], None]] = []
        """Observers of every execution that ended, however (billing listens here):
        ``(endpoint, worker id, started at, ended at)``."""

    def handler_for(self, endpoint: Endpoint) -> Handler | None:
        if endpoint.handler is not None:
            return endpoint.handler
        return self.images.get(endpoint.image) if endpoint.image else None

    def dispatch(self, endpoint: Endpoint) -> None:
        """Hand queued jobs to idle workers, starting workers where the rules allow (for
        workers that take jobs themselves, only start them)."""
        if not endpoint.queue or endpoint.id in self._dispatching:  # nothing to do, or
            return  # re-entered from a transition: the loop under way goes on
        pulled = self.fleet.body(endpoint).pulls
        if endpoint.id not in self.endpoints or not (pulled or self.handler_for(endpoint)):
            return
        self._dispatching.add(endpoint.id)
        try:
            while endpoint.queue:
                worker = None if pulled else endpoint.idle_worker()
                if worker is None:
                    if not endpoint.may_scale_up():
                        return
                    worker = self.fleet.add(endpoint)
                    if pulled or not worker.ready:
                        continue  # it takes a job once it is ready (``Fleet.ready``)
                    # A new worker was started for the oldest job allowed to start one;
                    # handing it a low-priority job would let those scale up after all.
                    job = next(j for j in endpoint.queue.values() if not j.low_priority)
                else:
                    job = next(iter(endpoint.queue.values()))
                self._start(job, worker, endpoint)
        finally:
            self._dispatching.discard(endpoint.id)

    def _start(self, job: Job, worker: Worker, endpoint: Endpoint) -> None:
        if self.assign(job, worker, endpoint):
            job.task = asyncio.get_running_loop().create_task(self._execute(job, job.attempt))

    def assign(self, job: Job, worker: Worker, endpoint: Endpoint) -> bool:
        """``job`` starts on ``worker`` (a worker process's too: ``remote_workers``), timed
        out after its or the endpoint's timeout; False: the endpoint's scenario failed it
        on purpose."""
        self.fleet.run(worker, endpoint, job)
        job.worker = worker
        job.worker_id = worker.id
        self.lifecycle.transition(job, S.IN_PROGRESS)
        if endpoint.scenario and (error := endpoint.scenario.job_error()) is not None:
            self.lifecycle.transition(job, S.FAILED, error=error)
            return False
        timeout_ms = job.execution_timeout_ms or endpoint.execution_timeout_ms
        timeout_ms = timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS
        job.exec_timer = self.clock.call_later(
            timeout_ms / 1000, self._timed_out, job, job.attempt, timeout_ms
        )
        return True

    def stop_execution(self, job: Job, endpoint: Endpoint) -> None:
        """The job leaves IN_PROGRESS: stop its handler and free its worker."""
        job.cancel_flag.set()
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
                    try:
                        observer(endpoint, worker.id, job.started_at, now)
                    except Exception:  # billing's store write, say: the job ends anyway
                        log.exception("an observer of job %s's execution failed", job.id)
            self.fleet.release(worker, endpoint)

    def _timed_out(self, job: Job, attempt: int, timeout_ms: int) -> None:
        if self.current(job, attempt):
            self.lifecycle.transition(
                job,
                S.TIMED_OUT,
                error=f"job exceeded its execution timeout of {timeout_ms} ms and was stopped",
            )

    def current(self, job: Job, attempt: int) -> bool:
        """Whether this attempt's results still count (not cancelled, timed out, removed)."""
        return job.attempt == attempt and job.status is S.IN_PROGRESS and job.removed is None

    def _emit(self, job: Job, attempt: int, value: Any, metrics: dict[str, Any]) -> None:
        if not self.current(job, attempt):
            return
        why = unservable(value) or unservable(metrics)
        if why is None:
            if (too_large := oversized(value)) is not None:
                self.lifecycle.transition(job, S.FAILED, error=f"a streamed chunk's {too_large}")
                return
            try:
                job.chunks.extend(to_chunks(value, metrics, len(job.chunks)))
            except (TypeError, ValueError, RecursionError) as exc:
                why = printable(str(exc))
        if why is not None:
            error = f"the handler streamed a chunk that cannot be sent as JSON: {why}"
            self.lifecycle.transition(job, S.FAILED, error=error)
            return
        job.wake(final=False)

    async def _execute(self, job: Job, attempt: int) -> None:
        endpoint = self.endpoints[job.endpoint_id]
        handler = self.handler_for(endpoint)
        assert handler is not None
        ctx = JobContext(job.id, self.clock, job.cancel_flag)
        emit = functools.partial(self._emit, job, attempt)
        gap = endpoint.scenario.chunk_gap() if endpoint.scenario else 0.0
        paced = _Paced(self.clock, emit, gap) if gap > 0 else None
        try:
            outcome = await invoke(
                handler, job.payload(), ctx, paced.emit if paced else emit, self.executor
            )
            if paced is not None:
                await paced.drained()
        except asyncio.CancelledError:  # the job ended (timeout, cancel, removal) first
            call = ctx.thread_call
            if call is not None and not call.done() and isinstance(self.executor, HandlerThreads):
                log.info(
                    "handler of endpoint %s still runs after job %s ended; its thread no "
                    "longer counts against the handler threads",
                    endpoint.id,
                    job.id,
                )
                self.executor.write_off(call)
            return
        except BaseException as exc:
            # Not only Exception: a handler's SystemExit or KeyboardInterrupt would stop the
            # loop and the server with it; it is the handler's, so it fails the job alone.
            log.warning(
                "handler of endpoint %s failed on job %s:\n%s",
                endpoint.id,
                job.id,
                traceback.format_exc(),
            )
            if self.current(job, attempt):
                self.lifecycle.transition(job, S.FAILED, error=_error_text(exc))
            return
        if self.current(job, attempt):
            self._complete(job, endpoint, outcome)

    def _complete(self, job: Job, endpoint: Endpoint, outcome: Outcome) -> None:
        value = outcome.value
        if outcome.streamed and not endpoint.aggregate_stream:
            value = None
        error = value.get("error") if isinstance(value, dict) else None
        self.lifecycle.finish(job, value, error, "handler output")


class _Paced:
    """The slow-stream scenario: a handler's chunks handed on ``gap`` seconds apart."""

    def __init__(self, clock: Clock, emit: Callable[[Any, dict[str, Any]], None], gap: float):
        self.clock = clock
        self._emit = emit
        self.gap = gap
        self.due = clock.now()

    def emit(self, value: Any, metrics: dict[str, Any]) -> None:
        self.due += self.gap
        self.clock.call_later(self.due - self.clock.now(), self._emit, value, metrics)

    async def drained(self) -> None:
        """Return once the last chunk was handed on: the job ends after its stream."""
        left = self.due - self.clock.now()
        if left > 0:
            await sleep(self.clock, left)


def _error_text(exc: BaseException) -> str:
    message = printable(str(exc))
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    if not isinstance(exc, Exception):  # SystemExit, KeyboardInterrupt and the like
        text += " (raised by the handler: it ended this job, and only this job)"
    return text


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None

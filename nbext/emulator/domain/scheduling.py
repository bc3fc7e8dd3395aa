"""Which worker runs which job, and running it: dispatch, workers, idle timers, execution.

Scaling follows docs/behaviour.md#scaling: a queued job starts a worker when none is
idle and the endpoint is below ``workers_max`` (low-priority jobs never do); a worker
idle longer than ``idle_timeout`` stops unless that would leave fewer than
``workers_min``. A job's end (``Lifecycle.transition``) frees its worker through
``stop_execution``; everything runs on the emulator's loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import traceback
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS, JobStatus

from .cancel import STOPPED
from .clock import Clock, sleep
from .endpoints import READY, Endpoint, Worker
from .handler_threads import HandlerThreads
from .handlers import Handler, JobContext, Outcome, invoke
from .images import ImageRegistry
from .jobs import Job
from .json_values import printable, unservable
from .lifecycle import Lifecycle
from .output_limit import oversized
from .scenarios import CRASH_LINE, RESTART_BACKOFF
from .streaming import to_chunks

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
        self.on_execution: list[Callable[[Endpoint, str, float, float], None]] = []
        """Observers of every execution that ended, however (billing listens here):
        ``(endpoint, worker id, started at, ended at)``."""

    def handler_for(self, endpoint: Endpoint) -> Handler | None:
        if endpoint.handler is not None:
            return endpoint.handler
        return self.images.get(endpoint.image) if endpoint.image else None

    def dispatch(self, endpoint: Endpoint) -> None:
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
                    worker = self.new_worker(endpoint)
                    if not worker.ready:
                        continue  # it takes a job once it is ready (``_booted``)
                    # A new worker was started for the oldest job allowed to start one;
                    # handing it a low-priority job would let those scale up after all.
                    job = next(j for j in endpoint.queue.values() if not j.low_priority)
                else:
                    job = next(iter(endpoint.queue.values()))
                self._start(job, worker, endpoint)
        finally:
            self._dispatching.discard(endpoint.id)

    # ---- workers starting: ready at once, or as the endpoint's scenario has it -------------

    def new_worker(self, endpoint: Endpoint) -> Worker:
        """Add a worker to ``endpoint``, started as its scenario says (ready at once if none)."""
        now = self.clock.now()
        worker = Worker(idle_since=now, started_at=now)
        endpoint.workers.append(worker)
        self.boot(worker, endpoint)
        return worker

    def boot(self, worker: Worker, endpoint: Endpoint) -> None:
        """Start ``worker`` (again): throttled, crashing, initializing, or ready at once."""
        if worker.boot_timer is not None:
            worker.boot_timer.cancel()
            worker.boot_timer = None
        if worker not in endpoint.workers:
            return
        scenario = endpoint.scenario
        now = self.clock.now()
        until = scenario.throttled_until() if scenario else None
        if scenario is None:
            self._booted(worker, endpoint)
        elif until is not None and now < until:
            worker.state = "throttled"
            worker.boot_timer = self.clock.call_later(until - now, self.boot, worker, endpoint)
        elif scenario.name == "crash-loop":
            if worker.restarts and not self._wanted(endpoint):
                endpoint.workers.remove(worker)  # nothing waits for it: it is not restarted
                return
            worker.state = "unhealthy"
            worker.started_at = now  # its latest start, the one that failed
            worker.last_line = CRASH_LINE
            delay = RESTART_BACKOFF[min(worker.restarts, len(RESTART_BACKOFF) - 1)]
            worker.restarts += 1
            worker.boot_timer = self.clock.call_later(delay, self.boot, worker, endpoint)
        elif scenario.startup_seconds() > 0:
            worker.state = "initializing"
            worker.started_at = now
            worker.boot_timer = self.clock.call_later(
                scenario.startup_seconds(), self._booted, worker, endpoint
            )
        else:
            self._booted(worker, endpoint)

    @staticmethod
    def _wanted(endpoint: Endpoint) -> bool:
        """Whether a worker that failed to start is still wanted: a job waits that may
        start one, or the endpoint keeps ``workersMin`` workers."""
        waiting = any(not job.low_priority for job in endpoint.queue.values())
        return waiting or len(endpoint.workers) <= endpoint.workers_min

    def _booted(self, worker: Worker, endpoint: Endpoint) -> None:
        worker.boot_timer = None
        if worker not in endpoint.workers:
            return
        worker.state = READY
        worker.idle_since = self.clock.now()
        self.dispatch(endpoint)
        if not worker.running and worker.idle_timer is None and worker in endpoint.workers:
            self.schedule_idle(worker, endpoint)

    def _start(self, job: Job, worker: Worker, endpoint: Endpoint) -> None:
        # The worker's idle timer, if any, stays: when it fires it finds the worker busy,
        # or idle since later than it was set for, and lets the worker be (``_idle_elapsed``).
        worker.job = job
        job.worker = worker
        job.worker_id = worker.id
        self.lifecycle.transition(job, S.IN_PROGRESS)
        self.arm_execution_timeout(job, endpoint)
        job.task = asyncio.get_running_loop().create_task(self._execute(job, job.attempt))

    def arm_execution_timeout(self, job: Job, endpoint: Endpoint) -> None:
        """Time the attempt just started out after the job's or the endpoint's timeout
        (worker processes' jobs too: ``remote_workers``)."""
        timeout_ms = job.execution_timeout_ms or endpoint.execution_timeout_ms
        timeout_ms = timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS
        job.exec_timer = self.clock.call_later(
            timeout_ms / 1000, self._timed_out, job, job.attempt, timeout_ms
        )

    def stop_execution(self, job: Job, endpoint: Endpoint) -> None:
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
                    try:
                        observer(endpoint, worker.id, job.started_at, now)
                    except Exception:  # billing's store write, say: the job ends anyway
                        log.exception("an observer of job %s's execution failed", job.id)
            worker.job = None
            worker.idle_since = now
            if len(endpoint.workers) > endpoint.workers_max and worker in endpoint.workers:
                endpoint.workers.remove(worker)  # scaled down while it ran
            elif worker.idle_timer is None:
                self.schedule_idle(worker, endpoint)

    def schedule_idle(self, worker: Worker, endpoint: Endpoint, due: float | None = None) -> None:
        """Check on ``worker`` at ``due`` (its idle timeout from now, by default).

        A worker keeps one idle timer across the jobs it runs, rather than one set and
        called off per job: when the timer fires, ``_idle_elapsed`` sets it again for the
        worker's present deadline if the worker ran a job since.
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
            self.schedule_idle(worker, endpoint, due)
        elif len(endpoint.workers) > endpoint.workers_min:
            endpoint.workers.remove(worker)

    def _timed_out(self, job: Job, attempt: int, timeout_ms: int) -> None:
        if self._current(job, attempt):
            self.lifecycle.transition(
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
        payload: dict[str, Any] = {"id": job.id, "input": job.input}
        if job.s3_config:
            payload["s3Config"] = job.s3_config
        if job.batch_id:
            payload["batchId"] = job.batch_id
        ctx = JobContext(job.id, self.clock, job.cancel_flag)
        scenario = endpoint.scenario
        if scenario is not None and scenario.fails_next_job():
            error = f"the flaky scenario failed this job on purpose ({scenario.describe()})"
            self.lifecycle.transition(job, S.FAILED, error=error)
            return
        emit = functools.partial(self._emit, job, attempt)
        gap = scenario.chunk_gap() if scenario is not None else 0.0
        paced = _Paced(self.clock, emit, gap) if gap > 0 else None
        try:
            outcome = await invoke(
                handler, payload, ctx, paced.emit if paced else emit, self.executor
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
            # Not only Exception: a handler's sys.exit(), SystemExit or KeyboardInterrupt
            # would otherwise leave this task, stop the loop and with it the whole server.
            # It is the handler's, not the emulator's, so it fails the job alone. (Ctrl-C
            # in a kernel reaches the kernel's main thread, never this loop's thread.)
            log.warning(
                "handler of endpoint %s failed on job %s:\n%s",
                endpoint.id,
                job.id,
                traceback.format_exc(),
            )
            if self._current(job, attempt):
                self.lifecycle.transition(job, S.FAILED, error=_error_text(exc))
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
            self.lifecycle.transition(job, S.FAILED, error=printable(text))
            return
        why = unservable(value)
        if why is not None:
            error = f"handler output cannot be sent as JSON: {why}"
            self.lifecycle.transition(job, S.FAILED, error=error)
            return
        too_large = oversized(value)
        if too_large is not None:
            self.lifecycle.transition(job, S.FAILED, error=too_large)
            return
        self.lifecycle.transition(job, S.COMPLETED, output=value)


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

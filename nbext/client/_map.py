"""Many jobs, bounded concurrency, results in completion order, inside the rate limit
(docs/architecture.md#maps-in-the-client, docs/behaviour.md#maps-under-faults)."""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from nbext.models import CancelResult, JobResult, JobStatus

from ._calls import JobOptions, endpoint_call, job_call, runsync_call, submission_body
from ._drive import Steps, aiterate, arun, iterate, run
from ._errors import (
    APIError,
    BudgetExceeded,
    Conflict,
    ConnectionError,
    NbextError,
    RateLimited,
    ServerError,
    Timeout,
)
from ._flows import (
    Context,
    Effect,
    Emit,
    Flow,
    Sleep,
    call_model,
    finish,
    pause,
    send,
    submission_deadline,
    submitted,
)
from ._gate import SubmitGate

MAP_HOLD = 1.0
"""Seconds each map item's /runsync asks the service to hold it (the interface's least)."""

CANCEL_BUDGET = 10.0
"""Seconds an abandoned map spends at most cancelling the jobs it had submitted."""

Operation = Literal["run", "runsync"]


@dataclass(frozen=True)
class MaybeQueued:
    """A map input whose submission got no usable answer (a reset, a lost or cut
    answer, a 5xx): the service may have queued it, and would then run it, so it was
    not sent again, which could run it twice. The map went on with the other inputs.
    ``job_id`` is the job's id when it is known (a lost answer never tells it).
    """

    index: int
    error: NbextError
    job_id: str | None = None

    def __str__(self) -> str:
        job = f"job {self.job_id}" if self.job_id else "job id unknown"
        return f"input #{self.index} may have been queued, not sent again ({job}): {self.error}"


MapItem = tuple[int, JobResult | MaybeQueued]
"""What a map yields: the input's index, and its job's result or ``MaybeQueued``."""


@dataclass(frozen=True)
class Abandoned:
    """What became of the jobs a map had submitted and not yet handed over, when it was
    left before its end: ``cancelled``; ``ended`` before the cancel came (their results
    were not collected); ``running``: the cancel failed, they may still run. Ids each."""

    cancelled: tuple[str, ...] = ()
    ended: tuple[str, ...] = ()
    running: tuple[str, ...] = ()
    unanswered: tuple[int, ...] = ()
    """Inputs whose submission was on its way, unanswered: they may have been queued."""

    def __str__(self) -> str:
        parts = []
        if self.cancelled:
            parts.append(f"cancelled {_jobs(self.cancelled)} it had submitted")
        if self.ended:
            parts.append(f"{_jobs(self.ended)} had ended, results not collected")
        if self.running:
            parts.append(f"{_jobs(self.running)} could not be cancelled and may still run")
        if self.unanswered:
            inputs = ", ".join(f"#{i}" for i in self.unanswered)
            parts.append(f"input {inputs} may have been queued (submission unanswered)")
        return "map left before its end: " + ("; ".join(parts) or "no job was in flight")


def _jobs(ids: tuple[str, ...]) -> str:
    return f"{len(ids)} job{'s' if len(ids) != 1 else ''} ({', '.join(ids)})"


def _ambiguous(exc: BaseException) -> bool:
    """Whether a submission that raised ``exc`` may have been queued all the same."""
    if isinstance(exc, ConnectionError):
        return exc.maybe_sent
    if isinstance(exc, Timeout | ServerError):
        return True
    return isinstance(exc, APIError) and 200 <= exc.status < 300  # an answer not readable


class BatchHost(Protocol):
    """What a map needs of its client: the flow context, and its driver's ``_perform``."""

    _ctx: Context

    def _perform(self, effect: Effect) -> Any: ...


class SyncBatchHost(BatchHost, Protocol):
    _real_time: bool


def operation_for(timeout: float | None) -> Operation:
    """/runsync, unless each job's ``timeout`` could end during the hold (then /run)."""
    return "runsync" if timeout is None or timeout >= 2 * MAP_HOLD else "run"


def submit_and_wait(
    ctx: Context,
    gate: SubmitGate,
    operation: Operation,
    endpoint_id: str,
    body: bytes,
    timeout: float | None,
    track: Callable[[str | None], None] = lambda job_id: None,
) -> Flow[JobResult]:
    """One map item: submitted when the gate lets it (a 429 pauses the map and the item
    is sent again, nothing else is), then waited for until done or ``timeout`` seconds
    after its submission. ``track`` is told None as the submission leaves, and the job's
    id as soon as it is known."""
    if operation == "runsync":
        call = runsync_call(endpoint_id, body, MAP_HOLD)
    else:
        call = endpoint_call("run", "POST", endpoint_id, body=body)
    refusals = 0
    while True:
        delay = gate.wait(ctx.now())
        if delay > 0:
            yield pause(ctx, delay)
            continue
        deadline = submission_deadline(ctx, endpoint_id, timeout, operation)
        track(None)
        try:
            response = yield from send(ctx, call, deadline, retry_429=False)
            break
        except RateLimited as exc:
            asked = exc.retry_after
            backoff = ctx.policy.delay(refusals, None, ctx.rand())
            gate.refused(ctx.now(), backoff if asked is None else asked)
            refusals += 1
    flow = submitted(ctx, call, response, deadline, False, keep_chunks=False, track=track)
    return (yield from flow)


@dataclass
class MapPlan:
    """What a map needs besides the client: where, how wide, with what options."""

    endpoint_id: str
    inputs: Iterable[Any]
    concurrency: int
    options: JobOptions
    """Every job's, checked with each input's body as the input is taken."""
    deadline: float | None
    raise_on_failure: bool

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.deadline is not None and not self.deadline >= 0:
            raise ValueError(f"deadline must be >= 0 seconds, got {self.deadline}")

    @property
    def operation(self) -> Operation:
        return operation_for(self.deadline)


_END = object()
"""A worker is done: every input was taken, or it stopped."""


@dataclass
class _Ledger:
    """The jobs a batch submitted and has not handed over yet (by input index), and what
    became of them when the batch was left before its end. Its workers write it from
    their threads; what is read while they may run is read from a copy."""

    in_flight: dict[int, str | None] = field(default_factory=dict)
    unsent: set[int] = field(default_factory=set)
    abandoned: Abandoned | None = None

    def take(self, index: int) -> None:
        self.in_flight[index] = None
        self.unsent.add(index)

    def track(self, index: int, job_id: str | None) -> None:
        self.unsent.discard(index)
        if job_id is not None:
            self.in_flight[index] = job_id

    def handed_over(self, index: int) -> None:
        del self.in_flight[index]
        self.unsent.discard(index)

    def unanswered(self) -> tuple[int, ...]:
        unsent = set(self.unsent)
        waiting = list(self.in_flight.items())
        return tuple(sorted(i for i, job in waiting if job is None and i not in unsent))

    def job_ids(self) -> list[str]:
        return [job_id for job_id in list(self.in_flight.values()) if job_id is not None]

    def left(self, outcomes: dict[str, JobStatus | None]) -> None:
        """The batch was left: what became of its jobs (None: the cancel failed)."""
        if not self.in_flight:
            return
        done = [(job_id, status) for job_id, status in outcomes.items() if status is not None]
        self.abandoned = Abandoned(
            tuple(job_id for job_id, status in done if status is JobStatus.CANCELLED),
            tuple(job_id for job_id, status in done if status is not JobStatus.CANCELLED),
            tuple(job_id for job_id, status in outcomes.items() if status is None),
            self.unanswered(),
        )


class _Batch:
    """One map's state, shared by its workers: inputs taken in turn, the gate, the ledger."""

    def __init__(self, plan: MapPlan, ctx: Context, ledger: _Ledger) -> None:
        self.plan, self.ctx, self.ledger = plan, ctx, ledger
        self.gate = SubmitGate()
        self._inputs = enumerate(plan.inputs)
        self._lock = threading.Lock()

    def _take(self) -> tuple[int, Any] | None:
        with self._lock:  # a generator must not be resumed by two threads at once
            return next(self._inputs, None)

    def worker(self) -> Flow[None]:
        """One worker: takes inputs until none is left, emitting each one's item (its
        result, or ``MaybeQueued``); an error of an input ends it, naming the input."""
        plan, ctx, ledger = self.plan, self.ctx, self.ledger
        while (taken := self._take()) is not None:
            index, value = taken
            try:
                yield from ctx.admit(plan.endpoint_id)
            except BudgetExceeded as exc:
                exc.add_note(f"map: stopped before input #{index}")
                raise
            ledger.take(index)
            try:
                body = submission_body(plan.endpoint_id, plan.operation, value, plan.options)
                flow = submit_and_wait(
                    ctx,
                    self.gate,
                    plan.operation,
                    plan.endpoint_id,
                    body,
                    plan.deadline,
                    track=functools.partial(ledger.track, index),
                )
                try:
                    item: JobResult | MaybeQueued = yield from flow
                except NbextError as exc:
                    if ledger.in_flight[index] is not None or not _ambiguous(exc):
                        raise
                    item = MaybeQueued(index, exc)
            except Exception as exc:
                exc.add_note(f"map: input #{index}")
                raise
            ledger.handed_over(index)
            yield Emit((index, item))


def _cancel(ctx: Context, endpoint_id: str, job_id: str) -> Flow[JobStatus]:
    """Cancel one job a map left behind; the state it ended in."""
    call = job_call("cancel", "POST", endpoint_id, job_id)
    try:
        answer = yield from call_model(ctx, call, CancelResult)
    except Conflict:
        return JobStatus.COMPLETED  # it had already ended
    return answer.status


def _status(done: Future[JobStatus] | asyncio.Future[JobStatus]) -> JobStatus | None:
    """What a cancel came to; None when it failed or did not end within its budget."""
    if not done.done() or done.cancelled() or done.exception() is not None:
        return None
    return done.result()


def _outcome(plan: MapPlan, got: Any, ctx: Context) -> MapItem:
    """What the consumer yields for a worker's item; a worker's error raises.

    The client's listeners hear each result here, on the consumer's thread (the workers
    run with a context that has none: on a sync client, in other threads)."""
    if isinstance(got, BaseException):
        raise got
    index, item = got
    if isinstance(item, MaybeQueued):
        return index, item
    ctx.seen(item)
    if plan.raise_on_failure:
        try:
            finish(plan.endpoint_id, item, True, ctx.secret)
        except Exception as exc:
            exc.add_note(f"map: input #{index}")
            raise
    return index, item


class _Left:
    """What both map iterators say once left: ``abandoned``. Their generators hold the
    ledger, never the iterator (docs/architecture.md#maps-in-the-client says why)."""

    def __init__(self) -> None:
        self._ledger = _Ledger()

    @property
    def abandoned(self) -> Abandoned | None:
        """What became of the jobs in flight when the map was left before its end (None
        when it ran to its end, or nothing was in flight)."""
        return self._ledger.abandoned

    def _told(self, exc: BaseException) -> None:
        """The error that left the map says what became of its jobs in flight."""
        if self._ledger.abandoned is not None:
            exc.add_note(str(self._ledger.abandoned))


class _Stopped(Exception):
    """The map was left: its workers perform no more effects."""


class MapResults(_Left, Iterator[MapItem]):
    """A sync map's ``(index, result)`` items as the jobs finish (``Endpoint.map``).

    ``concurrency`` threads run the workers; results come back here. Leaving it early
    (``break``, ``close()``, an exception, Ctrl-C) stops submitting and cancels the jobs
    in flight: ``abandoned`` then says which.
    """

    def __init__(self, client: SyncBatchHost, plan: MapPlan) -> None:
        super().__init__()
        self._items = self._run(client, plan, self._ledger)

    @staticmethod
    def _run(
        client: SyncBatchHost, plan: MapPlan, ledger: _Ledger
    ) -> Generator[MapItem, None, None]:
        results: queue.SimpleQueue[Any] = queue.SimpleQueue()
        stop = threading.Event()
        batch = _Batch(plan, client._ctx.unobserved(), ledger)

        def perform(effect: Effect) -> Any:
            if stop.is_set():
                raise _Stopped
            if isinstance(effect, Sleep) and client._real_time:
                stop.wait(max(0.0, effect.until - time.monotonic()))  # cut short if left
                return None
            return client._perform(effect)

        def work() -> None:
            try:
                for item in iterate(Steps(batch.worker()), perform):
                    results.put(item)
            except _Stopped:
                pass
            except BaseException as exc:
                results.put(exc)  # the consumer raises it: it ends the map
            finally:
                results.put(_END)

        workers = [
            threading.Thread(target=work, name="nbext-map", daemon=True)
            for _ in range(plan.concurrency)
        ]
        for worker in workers:
            worker.start()
        try:
            ended = 0
            while ended < len(workers):
                got = results.get()
                if got is _END:
                    ended += 1
                else:
                    yield _outcome(plan, got, client._ctx)
        finally:
            stop.set()
            MapResults._stop(client, batch, workers)

    @staticmethod
    def _stop(client: SyncBatchHost, batch: _Batch, workers: list[threading.Thread]) -> None:
        """Cancel the jobs in flight (which ends the waits on them), let the workers end,
        then cancel the jobs whose ids came meanwhile; all within ``CANCEL_BUDGET``."""
        until = time.monotonic() + CANCEL_BUDGET
        ledger = batch.ledger
        outcomes = MapResults._cancel(client, batch, ledger.job_ids(), CANCEL_BUDGET)
        for worker in workers:
            worker.join(max(0.0, until - time.monotonic()))
        later = [job_id for job_id in ledger.job_ids() if job_id not in outcomes]
        outcomes |= MapResults._cancel(client, batch, later, max(0.1, until - time.monotonic()))
        ledger.left(outcomes)

    @staticmethod
    def _cancel(
        client: SyncBatchHost, batch: _Batch, job_ids: list[str], budget: float
    ) -> dict[str, JobStatus | None]:
        if not job_ids:
            return {}
        bounded = replace(batch.ctx, call_timeout=budget)
        endpoint_id = batch.plan.endpoint_id
        pool = ThreadPoolExecutor(len(job_ids), thread_name_prefix="nbext-cancel")
        cancels = {
            job_id: pool.submit(run, _cancel(bounded, endpoint_id, job_id), client._perform)
            for job_id in job_ids
        }
        wait_all(cancels.values(), timeout=budget + 1)
        pool.shutdown(wait=False, cancel_futures=True)
        return {job_id: _status(done) for job_id, done in cancels.items()}

    def __iter__(self) -> MapResults:
        return self

    def __next__(self) -> MapItem:
        try:
            return next(self._items)
        except BaseException as exc:
            self._told(exc)
            raise

    def close(self) -> None:
        """Stop the map: nothing more is submitted, the jobs in flight are cancelled."""
        self._items.close()


class AsyncMapResults(_Left, AsyncIterator[MapItem]):
    """``MapResults`` for ``async for`` (``AsyncEndpoint.map``): tasks on the running
    loop, sending through the client's pool; ``aclose()`` stops it."""

    def __init__(self, client: BatchHost, plan: MapPlan) -> None:
        super().__init__()
        self._items = self._run(client, plan, self._ledger)

    @staticmethod
    async def _run(
        client: BatchHost, plan: MapPlan, ledger: _Ledger
    ) -> AsyncGenerator[MapItem, None]:
        results: asyncio.Queue[Any] = asyncio.Queue()
        batch = _Batch(plan, client._ctx.unobserved(), ledger)

        async def work() -> None:
            try:
                async for item in aiterate(Steps(batch.worker()), client._perform):
                    results.put_nowait(item)
            except asyncio.CancelledError:
                raise
            except BaseException as exc:
                results.put_nowait(exc)
            finally:
                results.put_nowait(_END)

        workers = [asyncio.ensure_future(work()) for _ in range(plan.concurrency)]
        try:
            ended = 0
            while ended < len(workers):
                got = await results.get()
                if got is _END:
                    ended += 1
                else:
                    yield _outcome(plan, got, client._ctx)
        finally:
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            bounded = replace(batch.ctx, call_timeout=CANCEL_BUDGET)
            cancels = {
                job_id: asyncio.ensure_future(
                    arun(_cancel(bounded, plan.endpoint_id, job_id), client._perform)
                )
                for job_id in ledger.job_ids()
            }
            if cancels:
                await asyncio.wait(cancels.values(), timeout=CANCEL_BUDGET + 1)
            ledger.left({job_id: _status(done) for job_id, done in cancels.items()})
            for done in cancels.values():
                done.cancel()
            await asyncio.gather(*cancels.values(), return_exceptions=True)

    def __aiter__(self) -> AsyncMapResults:
        return self

    async def __anext__(self) -> MapItem:
        try:
            return await anext(self._items)
        except BaseException as exc:
            self._told(exc)
            raise

    async def aclose(self) -> None:
        """Stop the map: nothing more is submitted, the jobs in flight are cancelled."""
        await self._items.aclose()

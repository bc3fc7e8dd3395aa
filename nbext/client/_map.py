"""Many jobs, bounded concurrency, results in completion order, inside the rate limit.

Each input goes through /runsync with a short hold (``MAP_HOLD``): a job that ends
within it costs one call, its result in the answer, where /run and a /status cost two
(a server spends about the same on each call, so half the calls is about half the
work); /runsync's rate limit is also twice /run's. A job that
outlives the hold comes back as its id, and is waited for like any job this client
submitted (a /stream long-poll that the service answers the moment the job ends, then
/status for the output). The price is the hold itself: a connection that drops during
it leaves a job whose id we never learned, for up to ``MAP_HOLD`` instead of the
milliseconds /run takes to answer. A map with a ``timeout`` too short for the hold
(under ``2 * MAP_HOLD``) submits through /run instead, whose id comes back at once.

A submission whose answer was lost may have been queued, so it is never sent again; it
is not the map's end either: that input comes back as a ``MaybeQueued`` item and the
others go on. A map left before its end (an exception, Ctrl-C, ``break``, a panel's
Cancel) cancels the jobs it had submitted and not yet handed over, and says which on
``abandoned`` and on the error that left it (docs/behaviour.md#maps-under-faults).
A map whose client reaches its ``budget_usd`` is left the same way, by ``BudgetExceeded``
before the next submission (docs/behaviour.md#budget).

A submission answered 429 was refused before it was queued, so it is the one that is
safe to send again; ``SubmitGate`` (``_gate``) makes all of a map's workers back off
together, and learns from the 429 how many submissions the window holds so it can
resume exactly when the oldest ones leave it, instead of stampeding the service at the
next whole second of Retry-After.
"""

from __future__ import annotations

import asyncio
import functools
import queue
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from nbext.models import AcceptedJob, CancelResult, JobResult, JobStatus

from ._calls import endpoint_call, job_call, model_of, runsync_call
from ._config import Secret
from ._drive import arun
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
    Flow,
    JobState,
    call_model,
    continued,
    finish,
    pause,
    send,
    submission_deadline,
    wait,
)
from ._gate import SubmitGate
from ._loop import BatchDriver, LoopThread

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
    """What a map needs of its client: the flow context, and how its workers perform
    their effects (on the running loop: the caller's for ``AsyncClient``, a private one
    for ``Client``)."""

    _ctx: Context

    def _batch_driver(self, threads: int) -> BatchDriver: ...


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
    """One map item: submitted through the gate (429s re-queued, nothing else re-sent),
    then waited for until done or ``timeout`` seconds after its submission. ``track``
    is told None as the submission leaves, and the job's id as soon as it is known."""
    if operation == "runsync":
        call = runsync_call(endpoint_id, body, MAP_HOLD)
    else:
        call = endpoint_call("run", "POST", endpoint_id, body=body)
    while True:
        delay, ticket = gate.acquire(ctx.now())
        if ticket is None:
            yield pause(ctx, delay)
            continue
        if delay > 0:
            yield pause(ctx, delay)  # the slot is held for this submission meanwhile
            if not gate.go(ticket, ctx.now()):
                continue
        deadline = submission_deadline(ctx, endpoint_id, timeout, operation)
        rejected: RateLimited | None = None
        track(None)
        try:
            response = yield from send(ctx, call, deadline, retry_429=False)
        except RateLimited as exc:
            rejected = exc
        except BaseException:
            gate.admitted(ticket, ctx.now())  # it may have reached the service: it counts
            raise
        if rejected is None:
            gate.admitted(ticket, ctx.now())
            break
        gate.rejected(ticket, ctx.now(), rejected.retry_after)
    if operation == "runsync":
        # One parse: a job still running answers {id, status}, which reads as a JobResult.
        result = model_of(call, response, JobResult)
        track(result.id)
        ctx.started(endpoint_id, result.id)
        ctx.seen(result)
        if result.status.is_final:
            return result
    else:
        accepted = model_of(call, response, AcceptedJob)
        result = JobResult(id=accepted.id, status=accepted.status)
        track(result.id)
        ctx.started(endpoint_id, result.id)
    state = JobState(endpoint_id, result.id, keep_chunks=False, result=result)
    job = continued(deadline, result.id, f"/{operation}")
    return (yield from wait(ctx, state, job, raise_on_failure=False, look_first=False))


@dataclass
class MapPlan:
    """What a map needs besides the client: where, how wide, how to build each body."""

    endpoint_id: str
    inputs: Iterable[Any]
    concurrency: int
    make_body: Callable[[Any, Operation], bytes]
    """One input's body, checked against the limit of the operation it goes to."""
    timeout: float | None
    raise_on_failure: bool

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.timeout is not None and not self.timeout >= 0:
            raise ValueError(f"timeout must be >= 0 seconds, got {self.timeout}")

    @property
    def operation(self) -> Operation:
        return operation_for(self.timeout)

    def checked(
        self, index: int, result: JobResult, secret: Secret | None
    ) -> tuple[int, JobResult]:
        if self.raise_on_failure:
            try:
                finish(JobState(self.endpoint_id, result.id), result, True, secret)
            except Exception as exc:
                exc.add_note(f"map: input #{index}")
                raise
        return index, result


class _End:
    """The batch is over: every item was yielded, or it stopped."""


class _Failed:
    def __init__(self, index: int | None, exc: BaseException) -> None:
        self.index, self.exc = index, exc


Item = MapItem | _Failed | _End


@dataclass
class _Ledger:
    """The jobs a batch submitted and has not handed over yet (by input index), and what
    became of them when the batch was left before its end."""

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
        return tuple(
            sorted(i for i, job in self.in_flight.items() if job is None and i not in self.unsent)
        )

    def job_ids(self) -> list[str]:
        return [job_id for job_id in self.in_flight.values() if job_id is not None]


async def run_batch(
    plan: MapPlan,
    ctx: Context,
    driver: BatchDriver,
    emit: Callable[[Item], None],
    ledger: _Ledger | None = None,
) -> None:
    """``plan.concurrency`` workers on the running loop, taking inputs in turn.

    Every worker's effects go through ``driver``; ``emit`` hands each outcome to the
    consumer, a failure included (the consumer raises it and cancels the batch). A
    submission that may have been queued is an item (``MaybeQueued``), not a failure.
    Jobs submitted and not handed over when the batch ends (it was cancelled, or an item
    failed) are cancelled; ``ledger`` says which. Ends with ``_End`` however it ends.
    """
    source = enumerate(plan.inputs)
    gate = SubmitGate()
    ledger = _Ledger() if ledger is None else ledger

    async def worker() -> None:
        index: int | None = None
        try:
            for index, value in source:
                try:
                    await arun(ctx.admit(plan.endpoint_id), driver.perform)
                except BudgetExceeded as exc:
                    exc.add_note(f"map: stopped before input #{index}")
                    index = None
                    raise
                ledger.take(index)
                body = plan.make_body(value, plan.operation)
                flow = submit_and_wait(
                    ctx,
                    gate,
                    plan.operation,
                    plan.endpoint_id,
                    body,
                    plan.timeout,
                    track=functools.partial(ledger.track, index),
                )
                try:
                    item: JobResult | MaybeQueued = await arun(flow, driver.perform)
                except NbextError as exc:
                    if ledger.in_flight[index] is not None or not _ambiguous(exc):
                        raise
                    item = MaybeQueued(index, exc)
                ledger.handed_over(index)
                emit((index, item))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            emit(_Failed(index, exc))

    loop = asyncio.get_running_loop()
    tasks = [loop.create_task(worker()) for _ in range(plan.concurrency)]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        try:
            if ledger.in_flight:
                ledger.abandoned = await _cancel_all(ctx, driver, plan.endpoint_id, ledger)
        finally:
            try:
                await driver.aclose()
            finally:
                emit(_End())


async def _cancel_all(
    ctx: Context, driver: BatchDriver, endpoint_id: str, ledger: _Ledger
) -> Abandoned:
    """Cancel every job the batch submitted and did not hand over, within
    ``CANCEL_BUDGET``: an abandoned map must not leave work running, nor hang."""
    bounded = replace(ctx, call_timeout=CANCEL_BUDGET)

    async def cancel(job_id: str) -> JobStatus:
        call = job_call("cancel", "POST", endpoint_id, job_id)
        try:
            answer: CancelResult = await arun(
                call_model(bounded, call, CancelResult), driver.perform
            )
        except Conflict:
            return JobStatus.COMPLETED  # it had already ended
        return answer.status

    ids = ledger.job_ids()
    tasks = {job_id: asyncio.ensure_future(cancel(job_id)) for job_id in ids}
    if tasks:
        await asyncio.wait(tasks.values(), timeout=CANCEL_BUDGET + 1)
    cancelled, ended, running = [], [], []
    for job_id, task in tasks.items():
        if not task.done():
            task.cancel()
            running.append(job_id)
        elif task.cancelled() or task.exception() is not None:
            running.append(job_id)
        elif task.result() is JobStatus.CANCELLED:
            cancelled.append(job_id)
        else:
            ended.append(job_id)
    await asyncio.gather(*tasks.values(), return_exceptions=True)
    return Abandoned(tuple(cancelled), tuple(ended), tuple(running), ledger.unanswered())


def _outcome(plan: MapPlan, got: Item, ctx: Context) -> MapItem | None:
    """What the consumer yields for ``got``; None at the end; a failure raises.

    The client's listeners hear each result here, on the consumer's thread (the batch
    itself runs with a context that has none: on a sync client, on another thread)."""
    if isinstance(got, _End):
        return None
    if isinstance(got, _Failed):
        if got.index is not None:
            got.exc.add_note(f"map: input #{got.index}")
        raise got.exc
    index, item = got
    if isinstance(item, MaybeQueued):
        return got
    ctx.seen(item)
    return plan.checked(index, item, ctx.secret)


def _told(exc: BaseException, ledger: _Ledger) -> None:
    """The error that left a map says what became of its jobs in flight."""
    if ledger.abandoned is not None:
        exc.add_note(str(ledger.abandoned))


class _Left:
    """What both map iterators say once left: ``abandoned``."""

    def __init__(self) -> None:
        self._ledger = _Ledger()

    @property
    def abandoned(self) -> Abandoned | None:
        """What became of the jobs in flight when the map was left before its end (None
        when it ran to its end, or nothing was in flight)."""
        return self._ledger.abandoned


class MapResults(_Left, Iterator[MapItem]):
    """A sync map's ``(index, result)`` items as the jobs finish (``Endpoint.map``).

    The batch runs on a private loop (``_loop``); results come back here. Leaving it
    early (``break`` then ``close()``, an exception, Ctrl-C, the iterator collected)
    stops submitting and cancels the jobs in flight: ``abandoned`` then says which.
    """

    def __init__(self, client: BatchHost, plan: MapPlan) -> None:
        super().__init__()
        self._items = self._run(client, plan)

    def _run(self, client: BatchHost, plan: MapPlan) -> Generator[MapItem, None, None]:
        results: queue.SimpleQueue[Item] = queue.SimpleQueue()
        driver = client._batch_driver(plan.concurrency)
        batch = run_batch(plan, client._ctx.unobserved(), driver, results.put, self._ledger)
        runner = LoopThread(batch, name="nbext-map")
        try:
            while (item := _outcome(plan, results.get(), client._ctx)) is not None:
                yield item
        finally:
            runner.cancel()
            runner.join()

    def __iter__(self) -> MapResults:
        return self

    def __next__(self) -> MapItem:
        try:
            return next(self._items)
        except StopIteration:
            raise
        except BaseException as exc:
            _told(exc, self._ledger)
            raise

    def close(self) -> None:
        """Stop the map: nothing more is submitted, the jobs in flight are cancelled."""
        self._items.close()


class AsyncMapResults(_Left, AsyncIterator[MapItem]):
    """``MapResults`` for ``async for`` (``AsyncEndpoint.map``): tasks on the running
    loop, sending through the client's pool; ``aclose()`` stops it."""

    def __init__(self, client: BatchHost, plan: MapPlan) -> None:
        super().__init__()
        self._items = self._run(client, plan)

    async def _run(self, client: BatchHost, plan: MapPlan) -> AsyncGenerator[MapItem, None]:
        results: asyncio.Queue[Item] = asyncio.Queue()
        driver = client._batch_driver(plan.concurrency)
        batch = run_batch(plan, client._ctx.unobserved(), driver, results.put_nowait, self._ledger)
        task = asyncio.get_running_loop().create_task(batch)
        try:
            while (item := _outcome(plan, await results.get(), client._ctx)) is not None:
                yield item
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def __aiter__(self) -> AsyncMapResults:
        return self

    async def __anext__(self) -> MapItem:
        try:
            return await anext(self._items)
        except StopAsyncIteration:
            raise
        except BaseException as exc:
            _told(exc, self._ledger)
            raise

    async def aclose(self) -> None:
        """Stop the map: nothing more is submitted, the jobs in flight are cancelled."""
        await self._items.aclose()

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

A submission answered 429 was refused before it was queued, so it is the one that is
safe to send again; ``SubmitGate`` (``_gate``) makes all of a map's workers back off
together, and learns from the 429 how many submissions the window holds so it can
resume exactly when the oldest ones leave it, instead of stampeding the service at the
next whole second of Retry-After.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from nbext.models import AcceptedJob, JobResult

from ._calls import endpoint_call, model_of, runsync_call
from ._config import Secret
from ._drive import arun
from ._errors import RateLimited
from ._flows import (
    Context,
    Flow,
    JobState,
    continued,
    finish,
    pause,
    runsync_outcome,
    send,
    submission_deadline,
    wait,
)
from ._gate import SubmitGate
from ._loop import BatchDriver, LoopThread

MAP_HOLD = 1.0
"""Seconds each map item's /runsync asks the service to hold it (the interface's least)."""

Operation = Literal["run", "runsync"]


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
) -> Flow[JobResult]:
    """One map item: submitted through the gate (429s re-queued, nothing else re-sent),
    then waited for until done or ``timeout`` seconds after its submission."""
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
        flow = runsync_outcome(ctx, call, response, deadline, False, keep_chunks=False)
        return (yield from flow)[1]
    accepted = model_of(call, response, AcceptedJob)
    state = JobState(endpoint_id, accepted.id, keep_chunks=False)
    job = continued(deadline, accepted.id, "/run")
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


Item = tuple[int, JobResult] | _Failed | _End


async def run_batch(
    plan: MapPlan, ctx: Context, driver: BatchDriver, emit: Callable[[Item], None]
) -> None:
    """``plan.concurrency`` workers on the running loop, taking inputs in turn.

    Every worker's effects go through ``driver``; ``emit`` hands each outcome to the
    consumer, a failure included (the consumer raises it and cancels the batch). Ends
    with ``_End`` however it ends.
    """
    source = enumerate(plan.inputs)
    gate = SubmitGate()

    async def worker() -> None:
        index: int | None = None
        try:
            for index, value in source:
                body = plan.make_body(value, plan.operation)
                flow = submit_and_wait(
                    ctx, gate, plan.operation, plan.endpoint_id, body, plan.timeout
                )
                emit((index, await arun(flow, driver.perform)))
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
            await driver.aclose()
        finally:
            emit(_End())


def _outcome(plan: MapPlan, got: Item, ctx: Context) -> tuple[int, JobResult] | None:
    """What the consumer yields for ``got``; None at the end; a failure raises.

    The client's listeners hear each result here, on the consumer's thread (the batch
    itself runs with a context that has none: on a sync client, on another thread)."""
    if isinstance(got, _End):
        return None
    if isinstance(got, _Failed):
        if got.index is not None:
            got.exc.add_note(f"map: input #{got.index}")
        raise got.exc
    ctx.seen(got[1])
    return plan.checked(*got, ctx.secret)


def map_sync(client: BatchHost, plan: MapPlan) -> Iterator[tuple[int, JobResult]]:
    """The sync map: the batch runs on a private loop (``_loop``); results come back here.

    Leaving the loop early (``break``, an exception, the iterator collected) cancels
    the batch: nothing more is submitted.
    """
    results: queue.SimpleQueue[Item] = queue.SimpleQueue()
    driver = client._batch_driver(plan.concurrency)
    runner = LoopThread(
        run_batch(plan, client._ctx.unobserved(), driver, results.put), name="nbext-map"
    )
    try:
        while (item := _outcome(plan, results.get(), client._ctx)) is not None:
            yield item
    finally:
        runner.cancel()
        runner.join()


async def map_async(client: BatchHost, plan: MapPlan) -> AsyncIterator[tuple[int, JobResult]]:
    """The async map: tasks on the running loop, sending through the client's pool."""
    results: asyncio.Queue[Item] = asyncio.Queue()
    driver = client._batch_driver(plan.concurrency)
    task = asyncio.get_running_loop().create_task(
        run_batch(plan, client._ctx.unobserved(), driver, results.put_nowait)
    )
    try:
        while (item := _outcome(plan, await results.get(), client._ctx)) is not None:
            yield item
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

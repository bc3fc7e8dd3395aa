"""Many jobs, bounded concurrency, results in completion order, inside the rate limit.

Each input goes through /run (its id arrives in milliseconds, so a job is never left
running with an id we do not know, which a long /runsync could do on a dropped
connection) and is then waited for like any job. A /run answered 429 was refused before
it was queued, so it is the one submission that is safe to send again; ``SubmitGate``
(``_gate``) makes all of a map's workers back off together, and learns from the 429
how many submissions the window holds so it can resume exactly when the oldest ones
leave it, instead of stampeding the service at the next whole second of Retry-After.

Each item then makes as few calls as its job allows: /run, and one /status timed to
find the job done (``_lookout``); when that is not to be had, a /stream long-poll,
which the service answers the moment the job ends, and one /status for the output.
"""

from __future__ import annotations

import asyncio
import queue
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbext.models import AcceptedJob, JobResult

from ._calls import endpoint_call, model_of
from ._config import Secret
from ._drive import drive
from ._errors import RateLimited
from ._flows import Context, Flow, JobState, finish, job_deadline, pause, send, status, wait
from ._gate import SubmitGate
from ._lookout import Lookout
from ._loop import LoopDriver, LoopThread

if TYPE_CHECKING:
    from ._client import AsyncClient, Client


def submit_and_wait(
    ctx: Context,
    gate: SubmitGate,
    lookout: Lookout,
    endpoint_id: str,
    body: bytes,
    timeout: float | None,
) -> Flow[JobResult]:
    """One map item: /run through the gate (429s re-queued, nothing else re-sent), then wait."""
    call = endpoint_call("run", "POST", endpoint_id, body=body)
    while True:
        delay, ticket = gate.acquire(ctx.now())
        if ticket is None:
            yield pause(ctx, delay)
            continue
        rejected: RateLimited | None = None
        try:
            response = yield from send(ctx, call, retry_429=False)
        except RateLimited as exc:
            rejected = exc
        except BaseException:
            gate.admitted(ticket, ctx.now())  # it may have reached the service: it counts
            raise
        if rejected is None:
            gate.admitted(ticket, ctx.now())
            break
        gate.rejected(ticket, ctx.now(), rejected.retry_after)
    accepted = model_of(call, response, AcceptedJob)
    state = JobState(endpoint_id, accepted.id, keep_chunks=False)
    deadline = job_deadline(ctx, endpoint_id, accepted.id, timeout)
    look = lookout.plan()
    if look is None:
        return (yield from wait(ctx, state, deadline, raise_on_failure=False, look_first=False))
    answered = ctx.now()
    if look > 0:
        yield pause(ctx, min(look, max(0.0, deadline.remaining(answered))))
    result = yield from status(ctx, state, deadline)
    if result.status.is_final:
        lookout.saw(True)
        return result
    result = yield from wait(ctx, state, deadline, raise_on_failure=False, look_first=False)
    lookout.saw(False, ctx.now() - answered)
    return result


@dataclass
class MapPlan:
    """What a map needs besides the client: where, how wide, how to build each body."""

    endpoint_id: str
    inputs: Iterable[Any]
    concurrency: int
    make_body: Callable[[Any], bytes]
    timeout: float | None
    raise_on_failure: bool

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency}")

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
RunFlow = Callable[[Flow[JobResult]], Awaitable[JobResult]]


async def run_batch(
    plan: MapPlan, ctx: Context, run: RunFlow, emit: Callable[[Item], None]
) -> None:
    """``plan.concurrency`` workers on the running loop, taking inputs in turn.

    ``run`` drives one item's flow; ``emit`` hands each outcome to the consumer, a
    failure included (the consumer raises it and cancels the batch). Ends with
    ``_End`` however it ends.
    """
    source = enumerate(plan.inputs)
    gate = SubmitGate()
    lookout = Lookout()

    async def worker() -> None:
        index: int | None = None
        try:
            for index, value in source:
                body = plan.make_body(value)
                flow = submit_and_wait(ctx, gate, lookout, plan.endpoint_id, body, plan.timeout)
                emit((index, await run(flow)))
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
        emit(_End())


def _outcome(plan: MapPlan, got: Item, secret: Secret | None) -> tuple[int, JobResult] | None:
    """What the consumer yields for ``got``; None at the end; a failure raises."""
    if isinstance(got, _End):
        return None
    if isinstance(got, _Failed):
        if got.index is not None:
            got.exc.add_note(f"map: input #{got.index}")
        raise got.exc
    return plan.checked(*got, secret)


def map_sync(client: Client, plan: MapPlan) -> Iterator[tuple[int, JobResult]]:
    """The sync map: the batch runs on a private loop (``_loop``); results come back here.

    Leaving the loop early (``break``, an exception, the iterator collected) cancels
    the batch: nothing more is submitted.
    """
    results: queue.SimpleQueue[Item] = queue.SimpleQueue()
    driver = LoopDriver(client, plan.concurrency)

    async def batch() -> None:
        try:
            await run_batch(
                plan, client._ctx, lambda flow: drive(flow, driver.perform), results.put
            )
        finally:
            await driver.aclose()

    runner = LoopThread(batch(), name="nbext-map")
    try:
        while (item := _outcome(plan, results.get(), client._ctx.secret)) is not None:
            yield item
    finally:
        runner.cancel()
        runner.join()


async def map_async(client: AsyncClient, plan: MapPlan) -> AsyncIterator[tuple[int, JobResult]]:
    """The async map: tasks on the running loop sharing the client's one connection pool."""
    results: asyncio.Queue[Item] = asyncio.Queue()
    task = asyncio.get_running_loop().create_task(
        run_batch(plan, client._ctx, client._run, results.put_nowait)
    )
    try:
        while (item := _outcome(plan, await results.get(), client._ctx.secret)) is not None:
            yield item
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

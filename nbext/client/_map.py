"""Many jobs, bounded concurrency, results in completion order, inside the rate limit.

Each input goes through /run (its id arrives in milliseconds, so a job is never left
running with an id we do not know, which a long /runsync could do on a dropped
connection) and is then waited for like any job. A /run answered 429 was refused before
it was queued, so it is the one submission that is safe to send again; ``SubmitGate``
(``_gate``) makes all of a map's workers back off together, and learns from the 429
how many submissions the window holds so it can resume exactly when the oldest ones
leave it, instead of stampeding the service at the next whole second of Retry-After.

Each item then makes as few calls as its job allows: /run, and /status when that
usually finds the job done (``Lookout``); otherwise a /stream long-poll, which the
service answers the moment the job ends, and one /status for the output.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbext.models import AcceptedJob, JobResult

from ._calls import endpoint_call, model_of
from ._config import Secret
from ._errors import RateLimited
from ._flows import Context, Flow, JobState, finish, job_deadline, pause, send, status, wait
from ._gate import SubmitGate

if TYPE_CHECKING:
    from ._client import AsyncClient, Client

LOOK_THRESHOLD = 0.5
"""Ask /status right after /run while at least this share of such looks find the job
done: a look that misses costs one call more than going straight to the /stream
long-poll (4 calls instead of 3), a look that hits one call less (2)."""
LOOK_WEIGHT = 1 / 16
"""Weight of the newest look in the running share (about the last 16 count)."""
PROBE_EVERY = 16
"""While the share is low, every so many items look anyway, to notice it rising."""


class Lookout:
    """Learns, per batch, whether a /status right after /run usually finds the job done.

    Fast jobs on an idle endpoint are done before their id has come back; on a busy one
    (more jobs in flight than workers) they wait in the queue, and the first /status
    only says IN_QUEUE. Shared by a batch's workers; a lost update between threads
    only blurs the running share a little.
    """

    def __init__(self) -> None:
        self.share = 1.0
        self._items = 0

    def should_look(self) -> bool:
        self._items += 1
        return self.share >= LOOK_THRESHOLD or self._items % PROBE_EVERY == 0

    def saw(self, done: bool) -> None:
        self.share += ((1.0 if done else 0.0) - self.share) * LOOK_WEIGHT


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
    if lookout.should_look():
        result = yield from status(ctx, state, deadline)
        lookout.saw(result.status.is_final)
    return (yield from wait(ctx, state, deadline, raise_on_failure=False, look_first=False))


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


class _Done:
    """A worker has no more inputs."""


class _Failed:
    def __init__(self, index: int | None, exc: BaseException) -> None:
        self.index, self.exc = index, exc


class Stopped(Exception):
    """The consumer of a sync map went away; its worker threads end quietly."""


def map_sync(client: Client, plan: MapPlan) -> Iterator[tuple[int, JobResult]]:
    """The sync map: worker threads sharing the client's one connection pool."""
    source = enumerate(plan.inputs)
    lock = threading.Lock()
    results: queue.SimpleQueue[tuple[int, JobResult] | _Done | _Failed] = queue.SimpleQueue()
    stop = threading.Event()
    gate = SubmitGate()
    lookout = Lookout()

    def worker() -> None:
        index: int | None = None
        try:
            while not stop.is_set():
                with lock:
                    item = next(source, None)
                if item is None:
                    break
                index, value = item
                body = plan.make_body(value)
                flow = submit_and_wait(
                    client._ctx, gate, lookout, plan.endpoint_id, body, plan.timeout
                )
                results.put((index, client._run(flow, stop=stop)))
        except Stopped:
            pass
        except BaseException as exc:
            results.put(_Failed(index, exc))
        finally:
            results.put(_Done())

    threads = [
        threading.Thread(target=worker, name=f"nbext-map-{n}", daemon=True)
        for n in range(plan.concurrency)
    ]
    for thread in threads:
        thread.start()
    running = len(threads)
    try:
        while running:
            got = results.get()
            if isinstance(got, _Done):
                running -= 1
            elif isinstance(got, _Failed):
                if got.index is not None:
                    got.exc.add_note(f"map: input #{got.index}")
                raise got.exc
            else:
                yield plan.checked(*got, client._ctx.secret)
    finally:
        stop.set()


async def map_async(client: AsyncClient, plan: MapPlan) -> AsyncIterator[tuple[int, JobResult]]:
    """The async map: tasks on the running loop sharing the client's one connection pool."""
    source = enumerate(plan.inputs)
    results: asyncio.Queue[tuple[int, JobResult] | _Done | _Failed] = asyncio.Queue()
    gate = SubmitGate()
    lookout = Lookout()

    async def worker() -> None:
        index: int | None = None
        try:
            for index, value in source:
                body = plan.make_body(value)
                flow = submit_and_wait(
                    client._ctx, gate, lookout, plan.endpoint_id, body, plan.timeout
                )
                results.put_nowait((index, await client._run(flow)))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            results.put_nowait(_Failed(index, exc))
        finally:
            results.put_nowait(_Done())

    tasks = [_task(worker()) for _ in range(plan.concurrency)]
    running = len(tasks)
    try:
        while running:
            got = await results.get()
            if isinstance(got, _Done):
                running -= 1
            elif isinstance(got, _Failed):
                if got.index is not None:
                    got.exc.add_note(f"map: input #{got.index}")
                raise got.exc
            else:
                yield plan.checked(*got, client._ctx.secret)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _task(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro)

"""Many jobs, bounded concurrency, results in completion order, inside the rate limit.

Each input goes through /run (its id arrives in milliseconds, so a job is never left
running with an id we do not know, which a long /runsync could do on a dropped
connection) and is then waited for like any job. A /run answered 429 was refused before
it was queued, so it is the one submission that is safe to send again; ``SubmitGate``
makes all of a map's workers back off together, and learns from the 429 how many
submissions the window holds so it can resume exactly when the oldest ones leave it,
instead of stampeding the service at the next whole second of Retry-After.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbext.models import AcceptedJob, JobResult

from ._calls import endpoint_call, model_of
from ._config import Secret
from ._errors import RateLimited
from ._flows import Context, Flow, JobState, finish, job_deadline, pause, send, wait

if TYPE_CHECKING:
    from ._client import AsyncClient, Client

RATE_WINDOW = 10.0
"""The service's rate-limit window (the seed's "per 10 seconds")."""
RESUME_MARGIN = 0.05
"""Resume this long after a slot should have left the window: our clock and the
service's admission time differ by a request's flight time."""


@dataclass(eq=False)
class Ticket:
    """One /run admitted by the gate at ``time`` (kept while it counts in the window)."""

    time: float


class SubmitGate:
    """Client-side pacing of /run for one map, learned from the service's 429s.

    Free-running until the first 429. Then: the submissions still in the window are the
    limit, and the next one may go when the oldest of them leaves the window (or after
    Retry-After, whichever is sooner). The learned limit is forgotten one window after
    the last 429, so a limit that grows (more running workers raise it) is found again.
    Thread-safe: the sync map's worker threads share one gate.
    """

    def __init__(self, window: float = RATE_WINDOW) -> None:
        self.window = window
        self._lock = threading.Lock()
        self._admitted: deque[Ticket] = deque()
        self._limit: int | None = None
        self._limit_until = float("-inf")
        self._paused_until = float("-inf")
        self.rejections = 0

    @property
    def learned_limit(self) -> int | None:
        return self._limit

    def _prune(self, now: float) -> None:
        # A ticket leaves our window RESUME_MARGIN after it would leave the service's:
        # the service stamped it later than we did, and counting it a little too long
        # costs milliseconds, while counting it too short teaches a limit one too low.
        horizon = now - self.window - RESUME_MARGIN
        while self._admitted and self._admitted[0].time <= horizon:
            self._admitted.popleft()

    def acquire(self, now: float) -> tuple[float, Ticket | None]:
        """``(0, ticket)``: submit now. ``(seconds, None)``: ask again after that long."""
        with self._lock:
            self._prune(now)
            if now < self._paused_until:
                return self._paused_until - now, None
            limited = self._limit is not None and now < self._limit_until
            if limited and self._limit is not None and len(self._admitted) >= self._limit:
                blocking = self._admitted[len(self._admitted) - self._limit]
                return max(0.001, blocking.time + self.window + RESUME_MARGIN - now), None
            ticket = Ticket(now)
            self._admitted.append(ticket)
            return 0.0, ticket

    def rejected(self, ticket: Ticket, now: float, retry_after: float | None) -> None:
        """The /run holding ``ticket`` got 429: learn the limit, pause every worker.

        A 429 for a request sent before the current pause began is old news (it was in
        flight when the first 429 arrived): its ticket is dropped, nothing more, so a
        burst of such answers cannot push the pause further out.
        """
        with self._lock:
            self.rejections += 1
            with contextlib.suppress(ValueError):  # already out of the window
                self._admitted.remove(ticket)
            if ticket.time < self._paused_until:
                return
            self._prune(now)
            if self._admitted:
                self._limit = len(self._admitted)
                self._limit_until = now + self.window
                resume = self._admitted[0].time + self.window + RESUME_MARGIN
                if retry_after is not None:
                    resume = min(resume, now + retry_after)
            else:
                resume = now + (retry_after if retry_after is not None else 1.0)
            self._paused_until = max(resume, now + 0.001)


def submit_and_wait(
    ctx: Context, gate: SubmitGate, endpoint_id: str, body: bytes, timeout: float | None
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
        if rejected is None:
            break
        gate.rejected(ticket, ctx.now(), rejected.retry_after)
    accepted = model_of(call, response, AcceptedJob)
    state = JobState(endpoint_id, accepted.id, keep_chunks=False)
    deadline = job_deadline(ctx, endpoint_id, accepted.id, timeout)
    return (yield from wait(ctx, state, deadline, raise_on_failure=False))


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
                flow = submit_and_wait(client._ctx, gate, plan.endpoint_id, body, plan.timeout)
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

    async def worker() -> None:
        index: int | None = None
        try:
            for index, value in source:
                body = plan.make_body(value)
                flow = submit_and_wait(client._ctx, gate, plan.endpoint_id, body, plan.timeout)
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

"""A sync ``Client``'s batch, run on a private event loop in one background thread.

``Client.map`` keeps many jobs in flight. As one blocking thread per job in flight, the
batch spent about as much CPU switching threads (and contending for the GIL) as on its
requests; on one event loop, a single thread multiplexes every connection and wakes once
for a whole batch of answers. The caller's thread only takes results off a queue.

``LoopDriver`` performs a sync client's effects on that loop: requests through the
batch's own senders (``_aio_lanes``), or, when the client's HTTP layer is substituted (a
sync transport cannot serve a loop), through the client's blocking send in worker
threads; pauses with ``asyncio.sleep``, or, on a substituted clock (tests' virtual
time), in a worker thread, since such a clock's ``sleep_until`` blocks. The client
decides which (``Client._lanes``); this module knows no client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from ._aio_lanes import LaneSenders
from ._calls import Answer, Call
from ._drive import arun, log_answer
from ._flows import Effect, Flow, Send, Sleep
from ._transport import LaneSender

T = TypeVar("T")


class BlockingClock(Protocol):
    def sleep_until(self, instant: float) -> None: ...


log = logging.getLogger("nbext.client")


LanePerform = Callable[[Effect, LaneSender | None], Awaitable[Any]]
"""Performs an effect, a request through the given sender (None: the client's way)."""
RunFlow = Callable[[Flow[T]], Awaitable[T]]


class Lanes:
    """How each worker of a batch drives its flows: through a sender of its own
    (``LaneSenders``), or, when the client's HTTP layer is substituted, the client's."""

    def __init__(
        self,
        perform: LanePerform,
        senders: LaneSenders | None,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._perform = perform
        self._senders = senders
        self._on_close = on_close

    def lane(self) -> RunFlow[Any]:
        """One worker's way to run flows; its sender is made when it first runs one (a
        worker that finds the inputs taken costs nothing)."""
        senders, perform = self._senders, self._perform
        sender: LaneSender | None = None

        async def run(flow: Flow[Any]) -> Any:
            nonlocal sender
            if sender is None and senders is not None:
                sender = senders.new()
            own = sender
            return await arun(flow, lambda effect: perform(effect, own))

        return run

    async def aclose(self) -> None:
        if self._senders is not None:
            await self._senders.aclose()
        if self._on_close is not None:
            await self._on_close()


class LoopDriver:
    """Performs a sync ``Client``'s effects on the running loop."""

    def __init__(
        self,
        send_blocking: Callable[[Call, float], Answer],
        clock: BlockingClock | None,
        threads: int,
    ) -> None:
        self._send_blocking = send_blocking
        self._clock = clock
        self._threads = max(1, threads)
        self._executor: ThreadPoolExecutor | None = None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="nbext-map")
        return self._executor

    async def perform(self, effect: Effect, sender: LaneSender | None) -> Any:
        if isinstance(effect, Sleep):
            if self._clock is None:
                await asyncio.sleep(max(0.0, effect.until - time.monotonic()))
            else:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._pool(), self._clock.sleep_until, effect.until)
            return None
        if isinstance(effect, Send):
            debug = log.isEnabledFor(logging.DEBUG)
            started = time.perf_counter() if debug else 0.0
            response: Answer
            if sender is not None:
                response = await sender.send(effect.call, effect.timeout)
            else:
                loop = asyncio.get_running_loop()
                response = await loop.run_in_executor(
                    self._pool(), self._send_blocking, effect.call, effect.timeout
                )
            if debug:
                log_answer(effect, response.status_code, started)
            return response
        raise TypeError(f"unexpected effect {effect!r}")

    async def aclose(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)


def new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where installed (a dependency on CPython, as for the emulator): its
    handles, futures and transports cost a fraction of asyncio's, and a batch is made
    of little else."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - not on Windows or PyPy
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class LoopThread:
    """One coroutine on a new event loop in a daemon thread, cancellable from outside."""

    def __init__(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self.loop = new_loop()
        self._task = self.loop.create_task(
            coro
        )  # created before the thread: cancel() may come at once
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            with contextlib.suppress(BaseException):  # the coroutine reports its own errors
                self.loop.run_until_complete(self._task)
        finally:
            with contextlib.suppress(Exception):
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def cancel(self) -> None:
        """Cancel the coroutine (it cleans up on its loop); a finished one is left alone."""
        with contextlib.suppress(RuntimeError):  # the loop already closed
            self.loop.call_soon_threadsafe(self._task.cancel)

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

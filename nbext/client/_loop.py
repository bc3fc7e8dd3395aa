"""A sync ``Client``'s batch, run on a private event loop in one background thread.

``Client.map`` keeps many jobs in flight. As one blocking thread per job in flight, the
batch spent about as much CPU switching threads (and contending for the GIL) as on its
requests; on one event loop, a single thread multiplexes every connection and wakes once
for a whole batch of answers. The caller's thread only takes results off a queue.

``LoopDriver`` performs a sync client's effects on that loop: requests through an
``AsyncSender`` of the batch's own (httpx, made like the client's), or, when the
client's HTTP layer is substituted (a sync transport cannot serve a loop), through the
client's blocking send in worker threads; pauses with ``asyncio.sleep``, or, on a
substituted clock (tests' virtual time), in a worker thread, since such a clock's
``sleep_until`` blocks. The client decides which (``Client._batch_driver``); this
module knows no client.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from ._calls import Answer, Call
from ._drive import log_answer
from ._flows import Effect, Send, Sleep
from ._transport import AsyncSender


class BlockingClock(Protocol):
    def sleep_until(self, instant: float) -> None: ...


log = logging.getLogger("nbext.client")


class BatchDriver(Protocol):
    """How a batch's workers perform their flows' effects, on the running loop."""

    def perform(self, effect: Effect) -> Awaitable[Any]: ...

    async def aclose(self) -> None: ...


class ClientDriver:
    """A batch that performs its effects the client's own way: an ``AsyncClient``'s,
    whose loop is the caller's and whose connection pool serves the batch too."""

    def __init__(self, perform: Callable[[Effect], Awaitable[Any]]) -> None:
        self.perform = perform

    async def aclose(self) -> None:
        """Nothing of the batch's own to close: the pool is the client's."""


class LoopDriver:
    """Performs a sync ``Client``'s effects on the batch's loop."""

    def __init__(
        self,
        sender: AsyncSender | None,
        send_blocking: Callable[[Call, float], Answer],
        clock: BlockingClock | None,
        threads: int,
    ) -> None:
        self._sender = sender
        self._send_blocking = send_blocking
        self._clock = clock
        self._threads = max(1, threads)
        self._executor: ThreadPoolExecutor | None = None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix="nbext-map")
        return self._executor

    async def perform(self, effect: Effect) -> Any:
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
            if self._sender is not None:
                response = await self._sender.send(effect.call, effect.timeout)
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
        try:
            if self._sender is not None:
                await self._sender.aclose()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)


class LoopThread:
    """One coroutine on a new event loop in a daemon thread, cancellable from outside."""

    def __init__(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        self.loop = asyncio.new_event_loop()
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

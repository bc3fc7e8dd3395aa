"""Time for the emulator, injectable so tests move it instead of sleeping; timers are
plain callbacks on the loop thread that never block (docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol


class TimerHandle(Protocol):
    """A scheduled callback that can be called off."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """What the domain needs of time: now, and a callback later."""

    def now(self) -> float:
        """Seconds since the epoch."""
        ...

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` on the emulator's loop after ``delay`` seconds of this
        clock. (Arguments rather than a closure: a job keeps its timers for as long as it
        is retained, and fewer objects per job is less for the garbage collector.)"""
        ...


class RealClock:
    """Wall-clock time; timers are the running loop's own."""

    def now(self) -> float:
        return time.time()

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)

    def __repr__(self) -> str:
        return "RealClock()"


class _FakeTimer:
    __slots__ = ("args", "callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[..., None], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False

    def fire(self) -> None:
        self.callback(*self.args)

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that stands still until ``advance`` moves it, firing due timers in order,
    each at its own deadline (so chains of timers behave as in real time). On the loop
    thread only; from others: ``Emulator.advance`` or ``POST /_emulator/clock/advance``."""

    def __init__(self, start: float = 1_767_225_600.0) -> None:
        self._now = start
        self._heap: list[tuple[float, int, _FakeTimer]] = []
        self._seq = itertools.count()
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[..., None], *args: Any) -> TimerHandle:
        timer = _FakeTimer(self._now + max(0.0, delay), callback, args)
        with self._lock:
            heapq.heappush(self._heap, (timer.when, next(self._seq), timer))
        return timer

    def step(self, seconds: float) -> int:
        """Move time forward and fire due timers without letting the loop run in between;
        where woken tasks schedule new timers, ``advance`` wakes each at its own moment."""
        return sum(1 for _ in self._fire(seconds))

    async def advance(self, seconds: float) -> int:
        """Move time forward, letting woken tasks run after each timer; on the loop only."""
        fired = 0
        await settle()
        for _ in self._fire(seconds):
            fired += 1
            await settle()
        await settle()
        return fired

    def _fire(self, seconds: float) -> Iterator[None]:
        """Fire the timers due within ``seconds``, in order, pausing after each."""
        if seconds < 0:
            raise ValueError(f"a clock only moves forward; got {seconds} seconds")
        target = self._now + seconds
        while (timer := self._pop_due(target)) is not None:
            timer.fire()
            yield
        self._now = target

    def _pop_due(self, target: float) -> _FakeTimer | None:
        while True:
            with self._lock:
                if not self._heap or self._heap[0][0] > target:
                    return None
                when, _, timer = heapq.heappop(self._heap)
            if not timer.cancelled:
                self._now = max(self._now, when)
                return timer

    def __repr__(self) -> str:
        return f"FakeClock(now={self._now})"


async def settle(rounds: int = 10) -> None:
    """Let the loop run callbacks and tasks that are ready (a chain of wake-ups)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


async def sleep(clock: Clock, seconds: float) -> None:
    """Sleep on ``clock``: real seconds for RealClock, ``advance`` steps for FakeClock."""
    if seconds <= 0:
        # Nothing to wait for; on a FakeClock a zero-delay timer would otherwise wait
        # for the next ``advance`` (a ``sleep`` job of 0 s hung until the clock moved).
        await asyncio.sleep(0)
        return
    await Signal().wait(clock, seconds)  # nothing fires it: its timeout ends the wait


class Signal:
    """A broadcast wake-up: every ``wait`` pending when ``fire`` is called returns; a
    ``final_only`` waiter (``/runsync``) sleeps through a ``fire(final=False)`` (a start,
    a chunk) instead of waking to wait again."""

    __slots__ = ("_final_only", "_waiters")

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[bool]] = []
        self._final_only: set[asyncio.Future[bool]] | None = None

    def fire(self, *, final: bool = True) -> None:
        waiters = self._waiters
        if not waiters:
            return
        sleepers = self._final_only if not final else None
        if sleepers:
            self._waiters = [fut for fut in waiters if fut in sleepers]
            waiters = [fut for fut in waiters if fut not in sleepers]
        else:
            self._waiters = []
        for fut in waiters:
            if not fut.done():
                fut.set_result(True)

    async def wait_for(
        self, clock: Clock, done: Callable[[], bool], timeout: float, *, final_only: bool = False
    ) -> bool:
        """Wait until ``done()``, asked again at each ``fire``, for at most ``timeout``
        seconds of ``clock``; whether it is done."""
        deadline = clock.now() + timeout
        while not done():
            remaining = deadline - clock.now()
            if remaining <= 0:
                return False
            await self.wait(clock, remaining, final_only=final_only)
        return True

    async def wait(self, clock: Clock, timeout: float, *, final_only: bool = False) -> bool:
        """Wait for the next ``fire`` (the next ``fire(final=True)`` with ``final_only``)
        or ``timeout`` seconds of ``clock``; True if fired."""
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        if final_only:
            if self._final_only is None:
                self._final_only = set()
            self._final_only.add(fut)

        def expire() -> None:
            if not fut.done():
                fut.set_result(False)

        handle = clock.call_later(timeout, expire)
        try:
            return await fut
        finally:
            handle.cancel()
            if fut in self._waiters:
                self._waiters.remove(fut)
            if final_only and self._final_only is not None:
                self._final_only.discard(fut)
                if not self._final_only:
                    self._final_only = None

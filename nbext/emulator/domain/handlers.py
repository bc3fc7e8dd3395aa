"""Calling a worker handler the way the service's worker convention does
(docs/behaviour.md#handlers); cancellation is cooperative
(docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import AsyncIterator, Callable, Generator
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Any

from .clock import Clock, sleep

Handler = Callable[[dict[str, Any]], Any]
"""A worker handler: ``handler(job) -> output``, or a (async) generator of chunks."""

_current: contextvars.ContextVar[JobContext] = contextvars.ContextVar("nbext_job")


@dataclass
class JobContext:
    """What a running handler may ask of the emulator about its own job."""

    job_id: str
    clock: Clock
    cancel_flag: threading.Event
    metrics: dict[str, Any] = field(default_factory=dict)
    """Merged into the ``metrics`` of every chunk yielded after it is set."""
    thread_call: Future[Any] | None = None
    """The handler's call in a thread, while a sync handler runs (the scheduler writes
    its thread off if the job ends before it returns)."""

    @property
    def cancelled(self) -> bool:
        """True once the job was cancelled, timed out or removed: stop working."""
        return self.cancel_flag.is_set()

    async def sleep(self, seconds: float) -> None:
        """Sleep on the emulator's clock (a test's fake clock moves it)."""
        await sleep(self.clock, seconds)


def current_job() -> JobContext:
    """The context of the job the calling handler is running; only valid inside a handler."""
    try:
        return _current.get()
    except LookupError:
        raise RuntimeError("current_job() is only available inside a running handler") from None


@dataclass
class Outcome:
    """What a handler produced: its return value, and whether it streamed."""

    value: Any
    streamed: bool


async def invoke(
    handler: Handler,
    payload: dict[str, Any],
    ctx: JobContext,
    emit: Callable[[Any, dict[str, Any]], None],
    executor: Executor,
) -> Outcome:
    """Run ``handler`` on ``payload``; ``emit(value, metrics)`` is called on the loop per
    chunk. A callable may also *return* a coroutine or generator: it is settled alike."""
    _current.set(ctx)
    if inspect.iscoroutinefunction(handler):
        result = await handler(payload)
    elif inspect.isasyncgenfunction(handler) or inspect.isgeneratorfunction(handler):
        result = handler(payload)  # only makes the generator: its body runs as it is drained
    else:
        context = contextvars.copy_context()
        result = await _in_thread(executor, ctx, context.run, handler, payload)
    if inspect.isawaitable(result):
        result = await result
    if inspect.isasyncgen(result):
        return await _drain_async(result, ctx, emit)
    if inspect.isgenerator(result):
        return await _drain_in_thread(result, ctx, emit, executor)
    return Outcome(result, streamed=False)


async def _in_thread(
    executor: Executor, ctx: JobContext, fn: Callable[..., Any], *args: Any
) -> Any:
    """``fn(*args)`` in ``executor``, its future kept on ``ctx`` while it runs; not run at
    all if the job ended while it waited for a thread."""
    call = executor.submit(_unless_cancelled, ctx, fn, *args)
    ctx.thread_call = call
    try:
        return await asyncio.wrap_future(call)
    finally:
        if call.done():
            ctx.thread_call = None


def _unless_cancelled(ctx: JobContext, fn: Callable[..., Any], *args: Any) -> Any:
    return None if ctx.cancelled else fn(*args)


async def _drain_async(
    gen: AsyncIterator[Any], ctx: JobContext, emit: Callable[[Any, dict[str, Any]], None]
) -> Outcome:
    items: list[Any] = []
    async for item in gen:
        if ctx.cancelled:
            break
        items.append(item)
        emit(item, dict(ctx.metrics))
    return Outcome(items, streamed=True)


async def _drain_in_thread(
    gen: Generator[Any, Any, Any],
    ctx: JobContext,
    emit: Callable[[Any, dict[str, Any]], None],
    executor: Executor,
) -> Outcome:
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()

    def pump() -> list[Any]:
        items: list[Any] = []
        try:
            for item in gen:
                if ctx.cancelled:
                    break
                items.append(item)
                loop.call_soon_threadsafe(emit, item, dict(ctx.metrics))
        finally:
            gen.close()
        return items

    items: list[Any] = await _in_thread(executor, ctx, context.run, pump)
    return Outcome(items, streamed=True)

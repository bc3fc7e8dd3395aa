"""Stepping a flow: the one place that feeds a flow the results of its effects, and
the drivers' loops (docs/architecture.md#flows-drivers-and-twins)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator
from typing import Any, Generic, TypeVar

import httpx

from ._flows import Effect, Emit, Flow

T = TypeVar("T")

Perform = Callable[[Effect], Any]
AsyncPerform = Callable[[Effect], Awaitable[Any]]


class Steps(Generic[T]):
    """One flow, stepped: ``advance()`` gives its next effect (None once it returned, its
    value in ``result``), after ``answer(value)`` or ``fail(transport_error)`` told it the
    last one's outcome (nothing told: None). A failure is thrown in outside any ``except``,
    so no httpx exception (its request holds the key) is chained to the user's error."""

    __slots__ = ("_error", "_value", "flow", "result")

    def __init__(self, flow: Flow[T]) -> None:
        self.flow = flow
        self._value: Any = None
        self._error: httpx.TransportError | None = None

    def advance(self) -> Effect | None:
        value, error = self._value, self._error
        self._value = self._error = None
        try:
            return self.flow.send(value) if error is None else self.flow.throw(error)
        except StopIteration as done:
            self.result: T = done.value
            return None

    def answer(self, value: Any) -> None:
        self._value = value

    def fail(self, error: httpx.TransportError) -> None:
        self._error = error

    def close(self) -> None:
        self.flow.close()


def iterate(steps: Steps[Any], perform: Perform) -> Generator[Any, None, None]:
    """Perform the flow's effects with ``perform``, yielding what it emits."""
    try:
        while (effect := steps.advance()) is not None:
            if isinstance(effect, Emit):
                yield effect.value
                continue
            try:
                steps.answer(perform(effect))
            except httpx.TransportError as exc:
                steps.fail(exc)
    finally:
        steps.close()


async def aiterate(steps: Steps[Any], perform: AsyncPerform) -> AsyncGenerator[Any, None]:
    """``iterate`` on an event loop."""
    try:
        while (effect := steps.advance()) is not None:
            if isinstance(effect, Emit):
                yield effect.value
                continue
            try:
                steps.answer(await perform(effect))
            except httpx.TransportError as exc:
                steps.fail(exc)
    finally:
        steps.close()


def run(flow: Flow[T], perform: Perform) -> T:
    """Perform ``flow``'s effects with ``perform`` until it returns."""
    steps = Steps(flow)
    with contextlib.closing(iterate(steps, perform)) as emitted:
        for _ in emitted:
            raise TypeError(EMITTED)
    return steps.result


async def arun(flow: Flow[T], perform: AsyncPerform) -> T:
    """``run`` on an event loop."""
    steps = Steps(flow)
    async with contextlib.aclosing(aiterate(steps, perform)) as emitted:
        async for _ in emitted:
            raise TypeError(EMITTED)
    return steps.result


EMITTED = "a flow run to completion must not emit"

"""Performing a flow's effects on an event loop: shared by every async driver.

``AsyncClient`` drives its flows on the caller's loop; a sync ``Client``'s batch drives
its items on a private loop (``_loop``). Both step a flow the same way: send it the
result of each effect, throw a transport failure into it (outside any ``except``
block, so no httpx exception, whose request holds the key, is chained to what the user
sees), and close it however it ends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx

from ._flows import Effect, Emit, Flow, Send

log = logging.getLogger("nbext.client")
T = TypeVar("T")

Perform = Callable[[Effect], Awaitable[Any]]


async def drive(flow: Flow[T], perform: Perform) -> T:
    """Perform ``flow``'s effects with ``perform`` until it returns."""
    value: Any = None
    error: httpx.TransportError | None = None
    try:
        while True:
            try:
                effect = flow.send(value) if error is None else flow.throw(error)
            except StopIteration as done:
                result: T = done.value
                return result
            value, error = None, None
            if isinstance(effect, Emit):
                raise TypeError("a flow run to completion must not emit")
            try:
                value = await perform(effect)
            except httpx.TransportError as exc:
                error = exc
    finally:
        flow.close()


def log_answer(effect: Send, status: int, started: float) -> None:
    """One debug line per request: what, its status, how long (never the key)."""
    elapsed = (time.perf_counter() - started) * 1000
    log.debug("%s -> %d in %.1f ms", effect.call.describe(), status, elapsed)

"""Handling widget messages while a cell blocks, so a panel's Cancel works mid-cell
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from IPython import get_ipython

STEP = 0.02
"""Seconds between two looks at the kernel's messages while waiting."""
EVENTS_PER_STEP = 10
"""Messages handled at most per look (a burst of clicks does not stall the wait)."""


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The kernel's event loop, where background panels run; None outside one (a
    terminal IPython, a script), where nothing would update them between cells."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def kernel_available() -> bool:
    """Whether this code runs in a Jupyter kernel whose messages can be read mid-cell
    (with ``do_one_iteration``, gone in ipykernel 7: there ``awaiting`` serves)."""
    shell = get_ipython()
    kernel = getattr(shell, "kernel", None) if shell is not None else None
    return kernel is not None and hasattr(kernel, "do_one_iteration")


class UiPump(contextlib.ExitStack):
    """``with UiPump() as pump:`` then ``pump.wait(seconds, until=...)`` in the cell."""

    def __init__(self, enabled: bool = True) -> None:
        super().__init__()
        self.available = enabled and kernel_available()
        self._poll: Callable[[int], Any] | None = None

    def __enter__(self) -> UiPump:
        if self.available:
            from jupyter_ui_poll import ui_events

            self._poll = self.enter_context(ui_events())
        return self

    def wait(
        self,
        seconds: float,
        until: Callable[[], bool] = lambda: False,
        tick: Callable[[], object] = lambda: None,
    ) -> None:
        """Pass ``seconds`` handling messages, or less once ``until()`` is true; ``tick``
        is called at every look (a panel redraws its running clock)."""
        deadline = time.monotonic() + seconds
        while True:
            if self._poll is not None:
                self._poll(EVENTS_PER_STEP)  # a click runs its callback here
            tick()
            left = deadline - time.monotonic()
            if until() or left <= 0:
                return
            time.sleep(min(STEP if self.available else left, left))

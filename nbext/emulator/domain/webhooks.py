"""Webhook delivery: POST the ``/status`` body when a job reaches a final state.

Only HTTP 200 acknowledges. Otherwise two more attempts follow, ``retry_delay`` seconds
of the emulator's clock apart. Delivery runs as its own task and never holds up the queue;
every attempt is recorded so ``/_emulator/webhooks`` and tests can see what happened.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from .clock import Clock, sleep

log = logging.getLogger("nbext.emulator.webhooks")

Sender = Callable[[str, dict[str, Any]], Awaitable[int]]
"""``send(url, body) -> HTTP status``; raises on a connection failure."""


@dataclass
class Delivery:
    """One attempt to deliver one job's webhook."""

    job_id: str
    url: str
    attempt: int
    at: float
    status_code: int | None
    error: str | None
    acknowledged: bool
    body: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WebhookDispatcher:
    """Sends webhooks with retries and keeps the record of every attempt."""

    def __init__(
        self,
        clock: Clock,
        send: Sender,
        *,
        retry_delay: float = 10.0,
        attempts: int = 3,
    ) -> None:
        self.clock = clock
        self.send = send
        self.retry_delay = retry_delay
        self.attempts = attempts
        self.deliveries: list[Delivery] = []
        self._tasks: set[asyncio.Task[None]] = set()

    def dispatch(self, job_id: str, url: str, body: dict[str, Any]) -> None:
        """Start delivering in the background; returns at once."""
        task = asyncio.get_running_loop().create_task(self._deliver(job_id, url, body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, job_id: str, url: str, body: dict[str, Any]) -> None:
        for attempt in range(1, self.attempts + 1):
            status: int | None = None
            error: str | None = None
            try:
                status = await self.send(url, body)
                if status != 200:
                    error = f"receiver answered HTTP {status}; only 200 acknowledges"
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            ok = status == 200
            self.deliveries.append(
                Delivery(job_id, url, attempt, self.clock.now(), status, error, ok, body)
            )
            if ok:
                return
            log.info("webhook for job %s attempt %d failed: %s", job_id, attempt, error)
            if attempt < self.attempts:
                await sleep(self.clock, self.retry_delay)

    async def drain(self) -> None:
        """Wait for every delivery under way (tests and shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

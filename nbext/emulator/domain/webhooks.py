"""Webhook delivery: POST the ``/status`` body when a job ends, with retries on the
emulator's clock and a queue per receiver (docs/behaviour.md#webhooks). An attempt not
sent for the emulator's own reasons (``NotSent``) is queued again without counting.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .clock import Clock, TimerHandle

log = logging.getLogger("nbext.emulator.webhooks")

Sender = Callable[[str, dict[str, Any]], Awaitable[int]]
"""``send(url, body) -> HTTP status``; raises on a connection failure, ``NotSent`` when
the attempt never left the emulator."""

CONCURRENCY = 64
"""Attempts in flight per receiver: enough that a receiver taking 2 s an answer still
takes 32 webhooks a second, few enough that one receiver cannot take every socket."""


class NotSent(Exception):
    """The attempt did not leave the emulator (its own limits); it is not counted."""


class Refused(Exception):
    """The emulator will not send to this URL (its webhook guard); no retries follow."""


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


@dataclass
class _Pending:
    job_id: str
    url: str
    body: dict[str, Any]
    attempt: int = 1


@dataclass
class _Receiver:
    queue: deque[_Pending] = field(default_factory=deque)
    in_flight: int = 0


class WebhookDispatcher:
    """Sends webhooks with retries, per-receiver limits, and a record of every attempt."""

    def __init__(
        self,
        clock: Clock,
        send: Sender,
        *,
        retry_delay: float = 10.0,
        attempts: int = 3,
        concurrency: int = CONCURRENCY,
    ) -> None:
        if concurrency < 1:
            raise ValueError("webhook concurrency must be >= 1")
        self.clock = clock
        self.send = send
        self.retry_delay = retry_delay
        self.attempts = attempts
        self.concurrency = concurrency
        self._records: dict[str, list[Delivery]] = {}
        self._receivers: dict[str, _Receiver] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._retries: dict[int, TimerHandle] = {}
        """Retries waiting on the clock, by ``id`` of their ``_Pending``."""

    @property
    def deliveries(self) -> list[Delivery]:
        """Every recorded attempt of the jobs still retained, oldest first."""
        every = (d for records in self._records.values() for d in records)
        return sorted(every, key=lambda d: d.at)  # stable: one instant's attempts keep order

    def records_of(self, job_id: str) -> list[Delivery]:
        return list(self._records.get(job_id, ()))

    @property
    def pending(self) -> int:
        """Webhooks not yet acknowledged or given up on (queued, in flight, or waiting)."""
        queued = sum(len(r.queue) + r.in_flight for r in self._receivers.values())
        return queued + len(self._retries)

    def dispatch(self, job_id: str, url: str, body: dict[str, Any]) -> None:
        """Queue delivery for ``url``'s receiver; returns at once."""
        self._records.setdefault(job_id, [])
        self._enqueue(_Pending(job_id, url, body))

    def forget(self, job_id: str) -> None:
        """The job is gone: drop its records (a delivery under way still completes)."""
        self._records.pop(job_id, None)

    def clear(self) -> None:
        """Drop every record (``reset``); deliveries under way go on."""
        self._records.clear()

    def _enqueue(self, pending: _Pending) -> None:
        key = receiver_of(pending.url)
        receiver = self._receivers.setdefault(key, _Receiver())
        receiver.queue.append(pending)
        self._pump(key, receiver)

    def _pump(self, key: str, receiver: _Receiver) -> None:
        loop = asyncio.get_running_loop()
        while receiver.queue and receiver.in_flight < self.concurrency:
            pending = receiver.queue.popleft()
            receiver.in_flight += 1
            task = loop.create_task(self._attempt(key, receiver, pending))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        if not receiver.queue and not receiver.in_flight:
            del self._receivers[key]

    async def _attempt(self, key: str, receiver: _Receiver, pending: _Pending) -> None:
        try:
            await self._send_once(pending)
        finally:
            receiver.in_flight -= 1
            if self._receivers.get(key) is receiver:
                self._pump(key, receiver)

    async def _send_once(self, pending: _Pending) -> None:
        status: int | None = None
        error: str | None = None
        final = False
        try:
            status = await self.send(pending.url, pending.body)
            if status != 200:
                error = f"receiver answered HTTP {status}; only 200 acknowledges"
        except NotSent:
            self._enqueue(pending)  # the same attempt, again: it never left
            return
        except Refused as exc:
            error, final = f"refused: {exc}", True
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        ok = status == 200
        records = self._records.get(pending.job_id)
        if records is not None:  # the body is one per job, shared by its attempts
            at = self.clock.now()
            attempt = Delivery(
                pending.job_id, pending.url, pending.attempt, at, status, error, ok, pending.body
            )
            records.append(attempt)
        if ok:
            return
        log.info("webhook for job %s attempt %d failed: %s", pending.job_id, pending.attempt, error)
        if pending.attempt < self.attempts and not final:
            retry = _Pending(pending.job_id, pending.url, pending.body, pending.attempt + 1)
            self._retries[id(retry)] = self.clock.call_later(
                self.retry_delay, self._retry_due, retry
            )

    def _retry_due(self, retry: _Pending) -> None:
        del self._retries[id(retry)]
        self._enqueue(retry)

    def cancel_all(self) -> None:
        for handle in self._retries.values():
            handle.cancel()
        self._retries.clear()
        for task in list(self._tasks):
            task.cancel()
        self._receivers.clear()


def receiver_of(url: str) -> str:
    """The receiver a URL names: its scheme, host and port."""
    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # a port out of range: the attempt will say what is wrong
        return url
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"

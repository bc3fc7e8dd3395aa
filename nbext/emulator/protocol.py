"""uvicorn's HTTP protocol, with a deadline for reading each request and a connection cap.

Why this exists at all: uvicorn times out an idle keep-alive connection, but not a
request that is never finished. A client that sends half its headers, or a body that
never ends, holds its connection (and a socket) for as long as it likes, and thousands
of them pile up (the hardening tests make them). Here every request must be read whole
within ``request_timeout`` seconds of its connection being made or its first byte
arriving; otherwise the client gets a 408 (or, when its handler already started, the
connection is closed, which the handler sees as the client gone). Beyond
``max_connections`` open connections a new one is answered at once with a 503 that says
the emulator refused the connection, and closed: a client then reports that, rather
than a connection closed without an answer, which for a submission it must take as "the
job may have been queued".

It is uvicorn's own pure-Python protocol (h11, the one uvicorn always has), watched
after each batch of parsed bytes: h11's state of the client's side says whether a
request is under way (its head begun, or its body being read) or read whole. The
deadlines run on the loop's own clock, never the emulator's (a test's fake clock governs
jobs, not sockets).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_TIMEOUT = 30.0
"""Seconds a client has to send one whole request (headers and body)."""
KEEP_ALIVE_S = 65
"""Seconds an idle keep-alive connection stays open: longer than any client of the
emulator keeps one in its pool (the SDK's aiohttp 15 s, httpx 5 s), so a client never
reuses a connection the server has just closed. uvicorn's default, 5 s, lost worker
results: the SDK posts a job's result on the connection that fetched it, idle while the
job ran, and does not retry when it was closed (a 7 s job stayed IN_PROGRESS)."""
MAX_CONNECTIONS = 1024
"""Open connections served at once; a local emulator's clients need a few dozen."""
REFUSED_LINGER_S = 2.0
"""Seconds a refused connection stays open after its 503, reading (and dropping) what
the client sends: closing at once would reset a connection whose request is still
arriving, and the client could lose the 503 before reading it."""


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a per-request read deadline and a connection cap."""

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    _deadline: asyncio.TimerHandle | None = None

    _refused: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            self._refuse(transport)
            return
        self._arm()

    def handle_events(self) -> None:
        super().handle_events()
        their = self.conn.their_state
        if their is h11.SEND_BODY or (their is h11.IDLE and self.conn.trailing_data[0]):
            self._arm()  # a request is under way: its body, or the start of its head
        elif their is not h11.IDLE:
            self._disarm()  # read whole (or the connection is done with)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return  # a refused connection's request is read and dropped
        super().data_received(data)

    def _refuse(self, transport: asyncio.Transport) -> None:
        """Answer 503 before any request, send no more, and close after a short linger
        (``connection_lost`` takes it out of the server's set)."""
        self._refused = True
        _answer(
            transport,
            b"503 Service Unavailable",
            f"the emulator refused this connection: it serves at most {self.max_connections} "
            "at once (--max-connections) and that many are open, maybe held by another local "
            "process; the request was not run",
        )
        if transport.can_write_eof():
            transport.write_eof()
        self._deadline = self.loop.call_later(REFUSED_LINGER_S, transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.request_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        transport: Any = self.transport
        if transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:  # nobody answers it yet
            message = f"the request was not sent whole within {self.request_timeout:g} s"
            _answer(transport, b"408 Request Timeout", message)
        transport.close()


def _answer(transport: Any, status: bytes, error: str) -> None:
    """A whole JSON error answer, written before (or instead of) uvicorn's own."""
    body = json.dumps({"error": error}).encode()
    transport.write(
        b"HTTP/1.1 %s\r\ncontent-type: application/json\r\nconnection: close\r\n"
        b"content-length: %d\r\n\r\n%s" % (status, len(body), body)
    )


def deadline_protocol(request_timeout: float, max_connections: int) -> type[DeadlineProtocol]:
    """``DeadlineProtocol`` with these limits (uvicorn takes a protocol class)."""
    if not request_timeout > 0 or max_connections < 1:
        raise ValueError("request_timeout must be > 0 seconds and max_connections >= 1")
    limits = {"request_timeout": request_timeout, "max_connections": max_connections}
    return type("DeadlineProtocol", (DeadlineProtocol,), limits)

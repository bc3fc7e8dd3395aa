"""uvicorn's h11 protocol with a deadline for reading each request and a connection cap
(docs/behaviour.md#connections): uvicorn times out an idle connection, never a request
left half sent. Deadlines run on the loop's clock, never the emulator's (a test's fake
clock governs jobs, not sockets).
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
"""Seconds an idle keep-alive connection stays open: longer than any client keeps one in
its pool, as the SDK does not retry a result posted on a connection the server closed
(docs/behaviour.md#connections)."""
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
        """Answer 503 before any request and close after a short linger (``connection_lost``
        takes it out of the server's set)."""
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

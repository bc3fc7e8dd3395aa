"""uvicorn's HTTP protocol, with a deadline for reading each request and a connection cap.

uvicorn times out an idle keep-alive connection, but not a request that is never
finished: a client that sends half its headers, or a body that never ends, holds its
connection (and a socket) for as long as it likes, and thousands of them pile up. Here
every request must be read whole within ``request_timeout`` seconds of its connection
being made or its first byte arriving; otherwise the client gets a 408 (or, when its
handler already started, the connection is closed, which the handler sees as the client
gone). Beyond ``max_connections`` open connections a new one is closed at once.

The deadlines run on the loop's own clock, never the emulator's (a test's fake clock
governs jobs, not sockets). It builds on uvicorn's httptools protocol through its
connection and parser callbacks (``connection_made``, ``on_message_begin``,
``on_message_complete``, ``connection_lost``), which every uvicorn since 0.29 shares.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

REQUEST_TIMEOUT = 30.0
"""Seconds a client has to send one whole request (headers and body)."""
MAX_CONNECTIONS = 1024
"""Open connections served at once; a local emulator's clients need a few dozen."""


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a per-request read deadline and a connection cap."""

    request_timeout: float = REQUEST_TIMEOUT
    max_connections: int = MAX_CONNECTIONS
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.close()  # connection_lost takes it out of the server's set
            return
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

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
            body = json.dumps(
                {"error": f"the request was not sent whole within {self.request_timeout:g} s"}
            ).encode()
            transport.write(
                b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
            )
        transport.close()


def deadline_protocol(request_timeout: float, max_connections: int) -> type[DeadlineProtocol]:
    """``DeadlineProtocol`` with these limits (uvicorn takes a protocol class)."""
    if not request_timeout > 0 or max_connections < 1:
        raise ValueError("request_timeout must be > 0 seconds and max_connections >= 1")
    limits = {"request_timeout": request_timeout, "max_connections": max_connections}
    return type("DeadlineProtocol", (DeadlineProtocol,), limits)

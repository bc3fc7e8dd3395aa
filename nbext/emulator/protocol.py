"""uvicorn's HTTP protocol, with each small response sent in one write.

uvicorn writes a response's status line and headers when the application starts the
response, and the body when it sends it: two ``send`` system calls, and two TCP
segments that wake the client twice, for every answer. The job interface answers
thousands of small JSON bodies a second, so that second write was about a fifth of
the emulator's whole CPU time in a batch (profiled with py-spy). Here the connection's
transport holds a response head back until the next write (the body, as a rule) and
sends both together; a head with no body after it (``100 Continue``, or a body that
takes its time) goes out on the loop's next turn, so nothing waits on the holding.
Measured with ``benchmarks/client_vs_sdk.py --quick`` (part 3, a batch through
``map``): server CPU per job 656 -> 505 us, jobs a second 1223 -> 1658.

It builds on uvicorn's httptools protocol through ``connection_made`` alone, the
one method every uvicorn since 0.29 shares.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

JOIN_LIMIT = 64 * 1024
"""Bodies up to this size are joined to their head in one buffer; larger ones are
written as a pair of buffers, so a big body is not copied just to save a call."""


class OneWriteTransport:
    """A transport that sends a response head together with what is written next.

    Everything else is the wrapped transport's own (``__getattr__``), so uvicorn's
    flow control, addresses and closing work unchanged.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is not None:
            self._held = None
            if len(data) <= JOIN_LIMIT:
                self._transport.write(held + bytes(data))
            else:
                self._transport.writelines((held, data))
            return
        if data[:5] == b"HTTP/" and data[-4:] == b"\r\n\r\n":  # a response head
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
            return
        self._transport.write(data)

    def flush(self) -> None:
        """Send a held head now (no body followed it within the loop's turn)."""
        held = self._held
        if held is not None:
            self._held = None
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol over a ``OneWriteTransport``."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        wrapped: Any = OneWriteTransport(transport, self.loop)
        super().connection_made(wrapped)

"""``AsyncClient``'s own connections: asyncio protocols, kept alive, on the caller's loop.

The async twin of ``_sockets``: same wire code (``_wire``), same errors (httpx's
exception classes, so ``_retry`` decides for both), same keep-alive rules, including
asking an idle socket whether its peer closed it before reusing it (the loop may not
have run the callback that says so yet).

A pool belongs to the loop it is used on. Used from another loop (``asyncio.run``
twice with one client), it forgets the first loop's connections: they cannot serve.

Timeouts are inactivity timeouts, as httpx's read timeout: the answer may take as long
as it likes while bytes keep arriving, but ``timeout`` seconds of silence end the
request with ``httpx.ReadTimeout``. One timer per request, re-armed only when it fires.
"""

from __future__ import annotations

import asyncio
import select
import ssl
from collections import deque
from typing import Any, cast

import httpx

from ._sockets import KEEPALIVE_EXPIRY, MAX_CONNECTIONS, default_ssl_context
from ._wire import Origin, ProtocolError, Reply, ResponseParser


class _Connection(asyncio.Protocol):
    """One connection to one origin, used by one request at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.parser: ResponseParser | None = None
        self.waiter: asyncio.Future[Reply] | None = None
        self.closed = False
        self.idle_since = 0.0
        self._timeout = 0.0
        self._last_data = 0.0
        self._timer: asyncio.TimerHandle | None = None

    # ---- asyncio's callbacks -------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport, though not always an asyncio.Transport (uvloop's are not)
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        parser = self.parser
        if parser is None:  # nothing was asked: the connection is not fit for reuse
            self.abort()
            return
        self._last_data = self.loop.time()
        try:
            reply = parser.feed(data)
        except ProtocolError as exc:
            self._fail(httpx.RemoteProtocolError(str(exc)))
            return
        if reply is not None:
            self._resolve(reply)

    def eof_received(self) -> bool | None:
        parser = self.parser
        self.closed = True
        if parser is not None:
            try:
                reply = parser.feed_eof()
            except ProtocolError as exc:
                self._fail(httpx.RemoteProtocolError(str(exc)))
            else:
                self._resolve(reply)
        return None  # let the transport close

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            if exc is None:
                gone = "Server disconnected without sending a response."
                self._fail(httpx.RemoteProtocolError(gone))
            else:
                self._fail(httpx.ReadError(f"{type(exc).__name__}: {exc}"))

    # ---- one request ---------------------------------------------------------------------

    async def exchange(self, data: bytes, timeout: float, no_body: bool) -> tuple[Reply, bool]:
        """Send one request, await its answer; ``(reply, reusable)``."""
        assert self.transport is not None
        parser = self.parser = ResponseParser(no_body=no_body)
        waiter = self.waiter = self.loop.create_future()
        self._timeout = timeout
        self._last_data = now = self.loop.time()
        self._timer = self.loop.call_at(now + timeout, self._on_timer)
        try:
            self.transport.write(data)
            reply = await waiter
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self.parser = self.waiter = None
        return reply, parser.keep_alive and not self.closed

    def _on_timer(self) -> None:
        silent_until = self._last_data + self._timeout
        if self.loop.time() < silent_until:  # bytes arrived meanwhile: wait on
            self._timer = self.loop.call_at(silent_until, self._on_timer)
            return
        self._timer = None
        self._fail(httpx.ReadTimeout(f"no answer within {self._timeout:g} s"))
        self.abort()

    def _resolve(self, reply: Reply) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(reply)

    def _fail(self, exc: Exception) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(exc)

    def peer_gone(self) -> bool:
        """Whether the socket has something to read while idle: the peer's close."""
        sock = self.transport.get_extra_info("socket") if self.transport else None
        if sock is None:
            return True
        try:
            readable, _, _ = select.select([sock.fileno()], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()


class AioPool:
    """Keep-alive connections per origin for the tasks of one event loop."""

    def __init__(
        self,
        *,
        max_connections: int = MAX_CONNECTIONS,
        keepalive_expiry: float = KEEPALIVE_EXPIRY,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._ssl_context = ssl_context
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: dict[tuple[str, str, int], deque[_Connection]] = {}
        self._open = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._closed = False

    @property
    def open_connections(self) -> int:
        return self._open

    async def request(
        self, origin: Origin, data: bytes, timeout: float, connect_timeout: float, no_body: bool
    ) -> Reply:
        """Send ``data`` (a whole encoded request) to ``origin``; its answer."""
        conn = await self._checkout(origin, timeout, connect_timeout)
        try:
            reply, reusable = await conn.exchange(data, timeout, no_body)
        except BaseException:
            self._discard(conn)
            raise
        if reusable and not self._closed and conn.loop is self._loop:
            conn.idle_since = conn.loop.time()
            self._idle.setdefault(origin.key, deque()).append(conn)
            self._wake()
        else:
            self._discard(conn)
        return reply

    async def _checkout(
        self, origin: Origin, timeout: float, connect_timeout: float
    ) -> _Connection:
        if self._closed:
            raise RuntimeError("the client is closed: make a new one to send more requests")
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._adopt(loop)
        idle = self._idle.get(origin.key)
        now = loop.time()
        while idle:
            conn = idle.pop()
            # A close that arrived while the loop was busy elsewhere is not known from
            # the callbacks yet: ask the socket itself (as the sync pool does).
            if (
                not conn.closed
                and now - conn.idle_since <= self.keepalive_expiry
                and not conn.peer_gone()
            ):
                return conn
            self._discard(conn)
        if self._open >= self.max_connections:
            await self._wait_for_room(loop, timeout)
            return await self._checkout(origin, timeout, connect_timeout)
        self._open += 1
        try:
            return await self._connect(loop, origin, connect_timeout)
        except BaseException:
            self._open -= 1
            self._wake()
            raise

    async def _wait_for_room(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        room: asyncio.Future[None] = loop.create_future()
        self._waiting.append(room)
        try:
            async with asyncio.timeout(timeout):
                await room
        except TimeoutError:
            raise httpx.PoolTimeout(
                f"all {self.max_connections} connections stayed busy for {timeout:g} s"
            ) from None
        finally:
            if room in self._waiting:
                self._waiting.remove(room)

    def _wake(self) -> None:
        while self._waiting:
            room = self._waiting.popleft()
            if not room.done():
                room.set_result(None)
                return

    async def _connect(
        self, loop: asyncio.AbstractEventLoop, origin: Origin, timeout: float
    ) -> _Connection:
        conn = _Connection(loop)
        tls: dict[str, Any] = {}
        if origin.scheme == "https":
            if self._ssl_context is None:
                self._ssl_context = default_ssl_context()
            tls = {"ssl": self._ssl_context, "server_hostname": origin.host}
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(lambda: conn, origin.host, origin.port, **tls)
        except TimeoutError:
            conn.close()
            raise httpx.ConnectTimeout(
                f"could not connect to {origin.host_header} within {timeout:g} s"
            ) from None
        except OSError as exc:  # ssl.SSLError and socket.gaierror included
            conn.close()
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}") from None
        return conn

    def _adopt(self, loop: asyncio.AbstractEventLoop) -> None:
        """First use, or use from another loop: connections of the old loop cannot serve."""
        if self._loop is not None:
            self._close_idle()
            self._waiting.clear()
            self._open = 0  # the old loop's busy ones no longer count (see _discard)
        self._loop = loop

    def _close_idle(self) -> int:
        """Close the idle connections; how many there were."""
        running = asyncio.get_running_loop()
        count = 0
        for queue in self._idle.values():
            count += len(queue)
            for conn in queue:
                if conn.loop is running:
                    conn.close()
                elif not conn.loop.is_closed():
                    conn.loop.call_soon_threadsafe(conn.close)
                # a closed loop's transports are closed when collected
        self._idle.clear()
        return count

    def _discard(self, conn: _Connection) -> None:
        conn.abort()
        if conn.loop is self._loop:
            self._open -= 1
            self._wake()

    async def aclose(self) -> None:
        """Close idle connections now, and the busy ones when their request ends."""
        self._closed = True
        if self._loop is asyncio.get_running_loop():
            self._open -= self._close_idle()
        else:  # closed from another loop: nothing of the old one counts any more
            self._close_idle()
            self._open = 0
            self._loop = None

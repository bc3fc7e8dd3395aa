"""``Client``'s own connections: blocking sockets, kept alive, shared by threads.

One pool per client. A request takes an idle connection to its origin (or opens one),
writes the request in one ``send``, reads the answer with ``_wire.ResponseParser`` and
gives the connection back if the answer allows keep-alive. Failures are raised as the
httpx exceptions the flows already understand (``httpx.ConnectError`` when nothing was
sent, ``httpx.ReadTimeout``, ``httpx.RemoteProtocolError``...), so retry rules stay in
one place (``_retry``) for both transports.

A connection idle longer than ``keepalive_expiry`` is not reused (servers drop idle
connections; a request written to a dropped one may or may not have been read, which
for /run is exactly the doubt we must not create), nor one whose socket turned readable
while idle (the server closed it, or sent something unasked).
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import ssl
import threading
import time
from collections import deque

import httpx

from ._wire import Origin, ProtocolError, Reply, ResponseParser

KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept for reuse: less than the 5 s after which uvicorn
(the emulator) and many servers drop idle connections, so a request is not written
into a connection the server is closing at that very moment."""
MAX_CONNECTIONS = 256
READ_SIZE = 256 * 1024


def default_ssl_context() -> ssl.SSLContext:
    """Verified TLS with the CA bundle httpx uses (certifi), or ``SSL_CERT_FILE``/``_DIR``."""
    cafile = os.environ.get("SSL_CERT_FILE") or None
    capath = os.environ.get("SSL_CERT_DIR") or None
    if cafile is None and capath is None:
        import certifi  # httpx's own dependency: always installed with it

        cafile = certifi.where()
    return ssl.create_default_context(cafile=cafile, capath=capath)


class _Connection:
    """One socket to one origin, used by one request at a time."""

    __slots__ = ("idle_since", "sock", "timeout")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.timeout: float | None = None
        self.idle_since = 0.0

    def usable(self, now: float, expiry: float) -> bool:
        """Still worth a request: fresh enough and not closed (or chattering) by the peer."""
        if now - self.idle_since > expiry:
            return False
        if isinstance(self.sock, ssl.SSLSocket) and self.sock.pending():
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def exchange(self, data: bytes, timeout: float, no_body: bool) -> tuple[Reply, bool]:
        """Send one request, read its answer; ``(reply, reusable)``.

        ``timeout`` bounds each write and each read (the time the peer may stay silent),
        as httpx's write and read timeouts do.
        """
        sock = self.sock
        if timeout != self.timeout:
            sock.settimeout(timeout)
            self.timeout = timeout
        try:
            sock.sendall(data)
        except TimeoutError:
            raise httpx.WriteTimeout(f"could not send the request within {timeout:g} s") from None
        except OSError as exc:
            raise httpx.WriteError(f"{type(exc).__name__}: {exc}") from None
        parser = ResponseParser(no_body=no_body)
        recv = sock.recv
        while True:
            try:
                data = recv(READ_SIZE)
            except TimeoutError:
                raise httpx.ReadTimeout(f"no answer within {timeout:g} s") from None
            except OSError as exc:
                raise httpx.ReadError(f"{type(exc).__name__}: {exc}") from None
            try:
                reply = parser.feed(data) if data else parser.feed_eof()
            except ProtocolError as exc:
                raise httpx.RemoteProtocolError(str(exc)) from None
            if reply is not None:
                return reply, parser.keep_alive

    def close(self) -> None:
        with contextlib.suppress(OSError):  # closing a dead socket
            self.sock.close()


class SocketPool:
    """Keep-alive connections per origin, for many threads at once."""

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
        self._cond = threading.Condition(threading.Lock())
        self._idle: dict[tuple[str, str, int], deque[_Connection]] = {}
        self._open = 0
        self._closed = False

    @property
    def open_connections(self) -> int:
        """Connections open now, idle or in use (for tests and diagnostics)."""
        return self._open

    def request(
        self, origin: Origin, data: bytes, timeout: float, connect_timeout: float, no_body: bool
    ) -> Reply:
        """Send ``data`` (a whole encoded request) to ``origin``; its answer."""
        conn = self._checkout(origin, timeout, connect_timeout)
        try:
            reply, reusable = conn.exchange(data, timeout, no_body)
        except BaseException:
            self._discard(conn)
            raise
        if reusable:
            self._checkin(origin, conn)
        else:
            self._discard(conn)
        return reply

    def _checkout(self, origin: Origin, timeout: float, connect_timeout: float) -> _Connection:
        deadline: float | None = None
        while True:
            with self._cond:
                if self._closed:
                    raise RuntimeError("the client is closed: make a new one to send more requests")
                idle = self._idle.get(origin.key)
                if idle:
                    conn = idle.pop()
                elif self._open < self.max_connections:
                    self._open += 1
                    break
                else:
                    if deadline is None:
                        deadline = time.monotonic() + timeout
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise httpx.PoolTimeout(
                            f"all {self.max_connections} connections stayed busy for {timeout:g} s"
                        )
                    self._cond.wait(remaining)
                    continue
            if conn.usable(time.monotonic(), self.keepalive_expiry):
                return conn
            self._discard(conn)
        try:
            return self._connect(origin, connect_timeout)
        except BaseException:
            with self._cond:
                self._open -= 1
                self._cond.notify()
            raise

    def _connect(self, origin: Origin, timeout: float) -> _Connection:
        try:
            sock = socket.create_connection((origin.host, origin.port), timeout=timeout)
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"could not connect to {origin.host_header} within {timeout:g} s"
            ) from None
        except OSError as exc:
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}") from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if origin.scheme == "https":
                sock = self._tls().wrap_socket(sock, server_hostname=origin.host)
        except TimeoutError:
            sock.close()
            raise httpx.ConnectTimeout(
                f"TLS handshake with {origin.host_header} took over {timeout:g} s"
            ) from None
        except OSError as exc:  # ssl.SSLError is an OSError
            sock.close()
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}") from None
        return _Connection(sock)

    def _tls(self) -> ssl.SSLContext:
        if self._ssl_context is None:  # built on first use: loading CA files takes a while
            self._ssl_context = default_ssl_context()
        return self._ssl_context

    def _checkin(self, origin: Origin, conn: _Connection) -> None:
        conn.idle_since = time.monotonic()
        with self._cond:
            if not self._closed:
                idle = self._idle.get(origin.key)
                if idle is None:
                    idle = self._idle[origin.key] = deque()
                idle.append(conn)
                self._cond.notify()
                return
            self._open -= 1
        conn.close()

    def _discard(self, conn: _Connection) -> None:
        conn.close()
        with self._cond:
            self._open -= 1
            self._cond.notify()

    def close(self) -> None:
        """Close idle connections now, and the busy ones when their request ends."""
        with self._cond:
            self._closed = True
            idle = [conn for queue in self._idle.values() for conn in queue]
            self._idle.clear()
            self._open -= len(idle)
            self._cond.notify_all()
        for conn in idle:
            conn.close()

"""A TCP proxy for HTTP/1.1 that loses answers on purpose: the network of issue 24.

The client is tested against the real emulator, but a real network also drops answers
after the service acted on the request, resets connections and cuts bodies short. This
proxy sits between the two (asyncio, standard library only, in a thread of its own) and
does exactly that, deterministically: a ``rule`` sees each exchange (the request, and
the service's answer when it was read whole) and names the fault to inject, and/or a
seeded random draw injects one of ``kinds`` at ``rate``. Every fault comes *after* the
request was forwarded, so the service did act on it: the case a client cannot tell from
"never arrived", and must not resolve by sending a submission twice.

Faults:

- ``drop``: the answer is read from the service and never sent; the connection closes.
- ``reset``: the same, but the connection is reset (RST) instead of closed.
- ``truncate``: the head and half the body are sent, then the connection closes.

Bounded: ``latency`` is the only wait it adds; ``stop()`` ends every connection.
Only 127.0.0.1 is listened on.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit

Fault = Literal["drop", "reset", "truncate"]
FAULTS: tuple[Fault, ...] = ("drop", "reset", "truncate")
HEAD_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Exchange:
    """One request and, where it was read whole, the service's answer to it."""

    number: int
    """1-based, in the order requests reached the proxy."""
    method: str
    target: str
    """The path and query, as sent."""
    status: int
    body: bytes
    """The answer's body; empty for an answer relayed as it came (chunked, SSE)."""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


Rule = Callable[[Exchange], Fault | None]


def once(rule: Callable[[Exchange], bool], fault: Fault = "drop") -> Rule:
    """A rule that injects ``fault`` into the first exchange ``rule`` accepts, only."""
    fired = False

    def decide(exchange: Exchange) -> Fault | None:
        nonlocal fired
        if fired or not rule(exchange):
            return None
        fired = True
        return fault

    return decide


@dataclass
class FaultProxy:
    """``with FaultProxy("http://127.0.0.1:8000", rule=...) as proxy: ... proxy.url``."""

    upstream: str
    rule: Rule | None = None
    rate: float = 0.0
    seed: int = 0
    kinds: Sequence[Fault] = FAULTS
    latency: float = 0.0
    counts: Counter[str] = field(default_factory=Counter)
    """``requests``, and one count per fault kind injected."""
    injected: list[tuple[Exchange, Fault]] = field(default_factory=list)

    def __post_init__(self) -> None:
        parts = urlsplit(self.upstream)
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or 80
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._numbered = 0
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def via(self, url: str) -> str:
        """``url`` (of the upstream) as reached through the proxy."""
        parts = urlsplit(url)
        return f"{self.url}{parts.path}" + (f"?{parts.query}" if parts.query else "")

    def start(self) -> FaultProxy:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        future.result(10)
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
        with contextlib.suppress(Exception):
            future.result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- inside the proxy's loop ----------------------------------------------------------

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def _decide(self, exchange: Exchange) -> Fault | None:
        with self._lock:
            self.counts["requests"] += 1
            fault = self.rule(exchange) if self.rule is not None else None
            if fault is None and self.rate > 0 and self._rng.random() < self.rate:
                fault = self._rng.choice(list(self.kinds))
            if fault is not None:
                self.counts[fault] += 1
                self.injected.append((exchange, fault))
            return fault

    def _next_number(self) -> int:
        with self._lock:
            self._numbered += 1
            return self._numbered

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                head, body, method, target = request
                number = self._next_number()
                if self.latency:
                    await asyncio.sleep(self.latency)
                if upstream is None:
                    upstream = await asyncio.open_connection(self._host, self._port)
                up_reader, up_writer = upstream
                up_writer.write(head + body)
                await up_writer.drain()
                status_head, status, headers = await _read_head(up_reader)
                length = headers.get("content-length")
                whole = method == "HEAD" or status in (204, 304) or length is not None
                answer = b""
                if whole and length is not None and method != "HEAD":
                    answer = await up_reader.readexactly(int(length))
                fault = self._decide(Exchange(number, method, target, status, answer))
                if fault is not None:
                    await _inject(fault, writer, status_head, answer)
                    return
                writer.write(status_head + answer)
                await writer.drain()
                if not whole:
                    await _relay_body(up_reader, writer, headers)
                    return  # a body relayed as it came: end both connections after it
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            return
        except asyncio.CancelledError:
            return  # stop(): the connection ends with the proxy (asyncio logs a cancelled one)
        finally:
            self._tasks.discard(task)
            for w in (writer, upstream[1] if upstream else None):
                if w is not None and not w.is_closing():
                    w.close()


async def _read_request(
    reader: asyncio.StreamReader,
) -> tuple[bytes, bytes, str, str] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    except asyncio.LimitOverrunError as exc:
        raise ConnectionError("request head too large") from exc
    if len(head) > HEAD_LIMIT:
        raise ConnectionError("request head too large")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = _headers(lines[1:])
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise ConnectionError("chunked request bodies are not proxied")
    length = int(headers.get("content-length", "0"))
    body = await reader.readexactly(length) if length else b""
    return head, body, method, target


async def _read_head(reader: asyncio.StreamReader) -> tuple[bytes, int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    return head, status, _headers(lines[1:])


def _headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return headers


async def _relay_body(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, headers: dict[str, str]
) -> None:
    """A chunked (or close-delimited) body, relayed as it arrives until it ends."""
    chunked = "chunked" in headers.get("transfer-encoding", "").lower()
    while True:
        if chunked:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";", 1)[0], 16)
            data = await reader.readexactly(size + 2)
            writer.write(size_line + data)
            await writer.drain()
            if size == 0:
                return
        else:
            data = await reader.read(65536)
            if not data:
                return
            writer.write(data)
            await writer.drain()


async def _inject(fault: Fault, writer: asyncio.StreamWriter, head: bytes, body: bytes) -> None:
    if fault == "truncate":  # half the body; half the head when there is no body
        writer.write(head + body[: len(body) // 2] if body else head[: len(head) // 2])
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()
    elif fault == "reset":
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
    else:
        writer.close()

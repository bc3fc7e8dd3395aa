"""A TCP proxy that adds network latency: what a client meets on the way to the service.

    .venv/bin/python benchmarks/latency_proxy.py UPSTREAM_PORT [--rtt-ms 50] [--port 0]

Every byte is held ``rtt / 2`` on its way to the upstream and ``rtt / 2`` on its way
back, so each request and answer costs one round trip more, as over a real network;
bandwidth is not limited (a chunk's delay does not hold the next one up). Only
127.0.0.1, stdlib asyncio, and it stops with its process (``start`` runs it in a child
process, so its CPU is not charged to the client being measured).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import multiprocessing.connection
from typing import Any

HOST = "127.0.0.1"


class _Leg(asyncio.Protocol):
    """One side of a relayed connection: what it receives reaches ``peer`` ``delay`` later.

    Plain protocol callbacks, and one timer on the loop per chunk: no stream reader,
    task, queue or sleep per chunk. The proxy shares the machine with the client and the
    emulator it sits between, so what it spends on a chunk is taken from what it
    measures.
    """

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.loop = asyncio.get_running_loop()
        self.transport: asyncio.Transport | None = None
        self.peer: _Leg | None = None
        self.due = 0.0
        self.early: list[bytes] = []
        """Bytes that came before the peer's connection was made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        # Strictly later than the last chunk's: timers due at one instant may run in
        # any order, and bytes must not.
        self.due = max(self.loop.time() + self.delay, self.due + 1e-6)
        self.loop.call_at(self.due, self._deliver, data)

    def eof_received(self) -> bool:
        self.due = max(self.loop.time() + self.delay, self.due + 1e-6)
        self.loop.call_at(self.due, self._deliver, b"")
        return True  # keep the other direction open until the peer ends it too

    def connection_lost(self, exc: Exception | None) -> None:
        self.loop.call_at(max(self.loop.time() + self.delay, self.due + 1e-6), self._close_peer)

    def _deliver(self, data: bytes) -> None:
        """``data`` to the peer (b"": its end of stream)."""
        peer = self.peer
        if peer is None or peer.transport is None:
            if peer is not None:
                peer.early.append(data)
            return
        if peer.transport.is_closing():
            return
        if data:
            peer.transport.write(data)
        elif peer.transport.can_write_eof():
            peer.transport.write_eof()

    def _close_peer(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()


async def _serve(upstream_port: int, rtt: float, port: int, ready: Any | None) -> None:
    loop = asyncio.get_running_loop()
    delay = rtt / 2

    def accepted() -> _Leg:
        client = _Leg(delay)
        upstream = _Leg(delay)
        client.peer, upstream.peer = upstream, client

        async def connect() -> None:
            try:
                await loop.create_connection(lambda: upstream, HOST, upstream_port)
            except OSError:
                if client.transport is not None:
                    client.transport.close()
                return
            assert upstream.transport is not None
            for data in upstream.early:
                if data:
                    upstream.transport.write(data)
                else:
                    upstream.transport.write_eof()
            upstream.early.clear()

        tasks.add(task := loop.create_task(connect()))
        task.add_done_callback(tasks.discard)
        return client

    tasks: set[asyncio.Task[None]] = set()
    server = await loop.create_server(accepted, HOST, port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    if ready is not None:
        ready.send(bound)
    else:
        print(f"proxy on {HOST}:{bound} -> {HOST}:{upstream_port}, +{rtt * 1000:.0f} ms RTT")
    async with server:
        await server.serve_forever()


def _run(upstream_port: int, rtt: float, port: int, ready: Any | None) -> None:
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(upstream_port, rtt, port, ready))


class Proxy:
    """A latency proxy in a child process; ``url`` reaches the upstream through it."""

    def __init__(self, upstream_port: int, rtt: float = 0.050) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self.process = ctx.Process(target=_run, args=(upstream_port, rtt, 0, child), daemon=True)
        self.process.start()
        if not parent.poll(30):
            self.process.kill()
            raise RuntimeError("the latency proxy did not start within 30 s")
        self.port: int = parent.recv()
        self.url = f"http://{HOST}:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("upstream_port", type=int)
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="added round trip (ms)")
    parser.add_argument("--port", type=int, default=0, help="where to listen (0: any)")
    args = parser.parse_args()
    _run(args.upstream_port, args.rtt_ms / 1000, args.port, None)


if __name__ == "__main__":
    main()

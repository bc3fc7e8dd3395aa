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
import time
from typing import Any

HOST = "127.0.0.1"


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float) -> None:
    """Bytes from ``reader`` to ``writer``, each chunk ``delay`` seconds after it came."""
    queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await queue.get()
            if not data:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    sender = asyncio.create_task(deliver())
    try:
        while data := await reader.read(65536):
            queue.put_nowait((time.monotonic() + delay, data))
    except OSError:
        pass
    finally:
        queue.put_nowait((0.0, b""))
        with contextlib.suppress(OSError):
            await sender


async def _serve(upstream_port: int, rtt: float, port: int, ready: Any | None) -> None:
    async def relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(HOST, upstream_port)
        except OSError:
            client_w.close()
            return
        try:
            await asyncio.gather(_pipe(client_r, up_w, rtt / 2), _pipe(up_r, client_w, rtt / 2))
        finally:
            for w in (up_w, client_w):
                w.close()

    server = await asyncio.start_server(relay, HOST, port, backlog=1024)
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

"""A log stream the server holds open, as the service does: over loopback TCP.

The emulator ends each stream after the lines it has; the service keeps it open and
sends lines as they are written. ``HeldOpen`` is a server on 127.0.0.1 that does the
latter, one scripted stream per connection, and lets go of every connection when the
test ends (each also gives up by itself after ``HOLD_LIMIT`` seconds).
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from nbext.client import AsyncClient, Client
from nbext.client._diagnosis import worker_tail

from .test_event_streams import AsyncClock, SyncClock

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
HOLD_LIMIT = 20.0


def event(cursor: str, line: str) -> bytes:
    data = json.dumps({"ts": "2026-01-01T00:00:01Z", "source": "container", "line": line})
    return f"id: {cursor}\ndata: {data}\n\n".encode()


class HeldOpen(ThreadingHTTPServer):
    """Connection n sends ``opening[n]``, then whatever ``push`` gives, until ``release``."""

    daemon_threads = True

    def __init__(self, *opening: bytes) -> None:
        self.opening = list(opening)
        self.seen: list[dict[str, str]] = []
        self.pushed: queue.Queue[bytes | None] = queue.Queue()
        self.done = threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v2"

    def push(self, chunk: bytes) -> None:
        self.pushed.put(chunk)

    def end_stream(self) -> None:
        self.pushed.put(None)


class Handler(BaseHTTPRequestHandler):
    server: HeldOpen

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        n = len(self.server.seen)
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        if n >= len(self.server.opening):
            self.send_response(404)
            self.send_header("Content-Type", "application/problem+json")
            self.end_headers()
            self.wfile.write(b'{"title": "Not Found", "status": 404, "detail": "gone"}')
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        self.wfile.write(self.server.opening[n])
        self.wfile.flush()
        while not self.server.done.is_set():
            try:
                chunk = self.server.pushed.get(timeout=HOLD_LIMIT)
            except queue.Empty:
                return
            if chunk is None:
                return
            self.wfile.write(chunk)
            self.wfile.flush()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[HeldOpen] = []

    def start(*opening: bytes) -> HeldOpen:
        server = HeldOpen(*opening)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.done.set()
        for _ in range(4):
            server.end_stream()
        server.shutdown()
        server.server_close()


def test_logs_returns_what_a_held_open_stream_had_once_it_is_quiet(serve: Any) -> None:
    server = serve(event("c1", "one") + event("c2", "two"))
    with Client(KEY, base_url=server.url, max_retries=0) as client:
        lines = client.pods.logs("p1", quiet=0.3)
    assert [x.line for x in lines] == ["one", "two"]


def test_logs_of_a_log_that_never_goes_quiet_return_after_the_longest_read(serve: Any) -> None:
    server = serve(b"".join(event(f"c{i}", f"line {i}") for i in range(200)))

    class Ticking(SyncClock):
        def now(self) -> float:  # each look at the clock: a second later
            self.t += 1.0
            return self.t

    with Client(KEY, base_url=server.url, clock=Ticking()) as client:  # type: ignore[arg-type]
        lines = client.pods.logs("p1", quiet=10)
    assert 5 <= len(lines) <= 12 and lines[0].line == "line 0"


def test_a_follower_gets_lines_as_they_are_written_then_resumes(serve: Any) -> None:
    server = serve(b"retry: 500\n\n" + event("c1", "one"))
    clock = SyncClock()
    with Client(KEY, base_url=server.url, clock=clock) as client:  # type: ignore[arg-type]
        follower = client.pods.follow_logs("p1")
        assert next(follower).line == "one"
        server.push(event("c2", "two"))  # written later, on the same connection
        assert next(follower).line == "two"
        assert len(server.seen) == 1 and clock.slept == []
        server.end_stream()  # the server lets go: reconnect from c2, then 404 ends it
        assert list(follower) == []
    assert server.seen[1]["last-event-id"] == "c2" and clock.slept == [0.5]


def test_the_async_follower_too(serve: Any) -> None:
    server = serve(event("c1", "one"))

    async def main() -> list[str]:
        got = []
        async with AsyncClient(KEY, base_url=server.url, clock=AsyncClock()) as client:  # type: ignore[arg-type]
            async for line in client.pods.follow_logs("p1"):
                got.append(line.line)
                if line.line == "one":
                    server.push(event("c2", "two"))
                else:
                    server.end_stream()
        return got

    assert asyncio.run(main()) == ["one", "two"]
    assert server.seen[1]["last-event-id"] == "c2"


def test_a_stopped_follower_ends_without_reconnecting(serve: Any) -> None:
    server = serve(event("c1", "one") + event("c2", "two"))
    stop = threading.Event()
    with Client(KEY, base_url=server.url) as client:
        seen = []
        for line in client.pods.follow_logs("p1", stop=stop):
            seen.append(line.line)
            stop.set()
    assert seen == ["one"] and len(server.seen) == 1


def test_a_jobs_phase_reads_a_chatty_workers_log_for_a_second_at_most(serve: Any) -> None:
    """The phases of a running job read its worker's log at their pace; a log held open
    and never quiet must not hold up the job's polls for ``LONGEST_READ``."""
    server = serve(b"".join(event(f"c{i}", f"step {i}") for i in range(200)))

    class Ticking(SyncClock):
        def now(self) -> float:  # each look at the clock: a tenth of a second later
            self.t += 0.1
            return self.t

    with Client(KEY, base_url=server.url, clock=Ticking()) as client:  # type: ignore[arg-type]
        tail = client._run(worker_tail(client._ctx, "ep", "w1"))
    assert tail.worker == "w1" and 5 <= len(tail.lines) <= 12, tail.lines
    assert tail.last_line == tail.lines[-1] and tail.lines[0] == "step 0"


def test_a_slow_opening_does_not_cut_off_the_lines_it_then_holds(serve: Any) -> None:
    """The longest read counts from the stream's opening: an opening that took longer
    (a first management call, retried after a timeout) still reads what the stream held,
    even past a leading event that is no line (``retry:``)."""
    server = serve(b"retry: 1000\n\n" + event("c1", "started") + event("c2", "crashed"))
    server.end_stream()  # the stream ends after what it held, as the emulator's does

    class SlowOpening(SyncClock):
        def now(self) -> float:  # the first look is the opening's: it takes 3 s
            t = self.t
            self.t = max(self.t, 3.0)
            return t

    with Client(KEY, base_url=server.url, clock=SlowOpening()) as client:  # type: ignore[arg-type]
        tail = client._run(worker_tail(client._ctx, "ep", "w1"))
    assert tail.lines == ("started", "crashed") and tail.last_line == "crashed"

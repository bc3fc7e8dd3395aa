"""After a 429, nothing of a map goes out before its ``Retry-After`` has passed, in every
interleaving of answers (issue 31).

The service here is a real HTTP server on 127.0.0.1 that admits 5 ``/runsync`` in any
14 s and answers the others 429 with ``Retry-After: 14``. The map (20 inputs, 8 in
flight) and the server share a virtual clock, which moves when the map sleeps and when
an answer takes its time on the way back, so a 14 s wait costs no real time.

The server answers in lockstep: it waits until every worker the map has busy has a
request waiting on it, then answers one of them, chosen by a seeded generator, after a
seeded flight time. Every answer thus reaches a map that had sent all it could, and a
request that arrives after a 429 was sent by a map that had read it: it is early if it
arrives before that 429's ``Retry-After`` has passed. Hundreds of seeds drive the answers'
orders on purpose, among them the one that used to lose a ``Retry-After``: a 429 for a
request sent before an earlier 429's pause began, answered after time had moved on.
"""

from __future__ import annotations

import json
import random
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from nbext.client import AsyncClient, Client

from .conftest import KEY, AsyncVirtualTime, VirtualTime

ADMITTED = 5
"""Requests the server admits in any ``WINDOW``."""
WINDOW = 14.0
RETRY_AFTER = 14
INPUTS = 20
CONCURRENCY = 8
SEEDS = 150
"""Interleavings per client kind."""
LOCKSTEP_GRACE = 5.0
"""Real seconds the server waits for the map's next request before answering anyway (a
client that neither sends nor sleeps); a passing map never comes near it."""


@dataclass
class Held:
    """A request waiting for the server's answer."""

    arrival: float
    body: dict[str, Any]
    answered: threading.Event = field(default_factory=threading.Event)
    status: int = 0
    answer: bytes = b""


class Lockstep(ThreadingHTTPServer):
    """The service above. ``run(seed)`` answers one map's requests in lockstep."""

    daemon_threads = True
    request_queue_size = 64  # the map's connections all open at once

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.changed = threading.Condition()
        self.reset(VirtualTime(), 0)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v2"

    def reset(self, clock: VirtualTime, seed: int) -> None:
        with self.changed:
            self.clock, self.rng = clock, random.Random(seed)
            self.held: list[Held] = []
            self.admissions: deque[float] = deque()
            self.admitted = 0
            self.events: list[tuple[str, float]] = []
            """("arrived", when) and ("429", when answered), in the server's order."""
            self.done = False
            self.stalls = 0

    def arrive(self, body: dict[str, Any]) -> Held:
        with self.changed:
            request = Held(self.clock.now(), body)
            self.events.append(("arrived", request.arrival))
            self.held.append(request)
            self.changed.notify_all()
        return request

    def busy(self) -> int:
        """The map's workers that hold an input: every one they hold is to be admitted."""
        return min(CONCURRENCY, INPUTS - self.admitted)

    def drive(self) -> None:
        """Answer one request at a time, once every busy worker waits on the server."""
        with self.changed:
            while not self.done and self.busy() > 0:
                if not self.changed.wait_for(
                    lambda: self.done or len(self.held) >= self.busy(), LOCKSTEP_GRACE
                ):
                    self.stalls += 1
                if self.done or not self.held:
                    continue
                request = self.held.pop(self.rng.randrange(len(self.held)))
                if self.rng.random() < 0.5:  # the answer takes a while on its way back
                    self.clock.advance(self.rng.uniform(0.0, 3.0))
                self._judge(request)
                request.answered.set()

    def _judge(self, request: Held) -> None:
        now = self.clock.now()
        while self.admissions and self.admissions[0] <= now - WINDOW:
            self.admissions.popleft()
        if len(self.admissions) < ADMITTED:
            self.admissions.append(now)
            self.admitted += 1
            body = {"id": f"job-{self.admitted}", "status": "COMPLETED"}
            request.status, request.answer = 200, json.dumps(body | request.body).encode()
        else:
            self.events.append(("429", now))
            request.status, request.answer = 429, b'{"error": "rate limit reached"}'

    def stop_driving(self) -> None:
        with self.changed:
            self.done = True
            self.changed.notify_all()
            for request in self.held:
                request.status, request.answer = 400, b'{"error": "the test is over"}'
                request.answered.set()

    def early(self) -> list[str]:
        """Each request that arrived after a 429 and before its Retry-After had passed."""
        found, refused = [], []
        for kind, when in self.events:
            if kind == "429":
                refused.append(when)
                continue
            for answered in refused:
                if when < answered + RETRY_AFTER - 1e-6:
                    found.append(f"a request at {when:.3f} s, after a 429 at {answered:.3f} s")
        return found


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go at once, not an ACK apart
    server: Lockstep

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = self.server.arrive({"output": body["input"]})
        request.answered.wait(30)
        self.send_response(request.status or 400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(request.answer)))
        if request.status == 429:
            self.send_header("Retry-After", str(RETRY_AFTER))
        self.end_headers()
        self.wfile.write(request.answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[Lockstep]:
    served = Lockstep()
    try:
        yield served
    finally:
        served.shutdown()
        served.server_close()


def mapped(kind: str, server: Lockstep, seed: int) -> list[Any]:
    """One map of ``INPUTS`` against the server, answered in the order ``seed`` draws."""
    clock = AsyncVirtualTime() if kind == "async" else VirtualTime()
    server.reset(clock, seed)
    driver = threading.Thread(target=server.drive, daemon=True)
    driver.start()
    inputs = [{"i": i} for i in range(INPUTS)]
    settings: dict[str, Any] = {"serverless_url": server.url, "max_retries": 0}
    try:
        if kind == "async":

            async def run() -> list[Any]:
                async with AsyncClient(KEY, clock=clock, **settings) as client:
                    items = client.endpoint("e").map(inputs, concurrency=CONCURRENCY)
                    return [item async for item in items]

            return anyio.run(run)
        with Client(KEY, clock=clock, **settings) as client:
            return list(client.endpoint("e").map(inputs, concurrency=CONCURRENCY))
    finally:
        server.stop_driving()
        driver.join(10)


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.timeout(600)
def test_no_request_goes_before_the_retry_after_in_any_interleaving(
    server: Lockstep, kind: str
) -> None:
    for seed in range(SEEDS):
        results = mapped(kind, server, seed)
        where = f"seed {seed}: "
        assert server.early() == [], where + "requests went before the Retry-After"
        assert sorted(i for i, _ in results) == list(range(INPUTS)), where + "lost or doubled"
        assert all(r.output == {"i": i} for i, r in results), where + "a result went astray"
        assert sum(kind == "429" for kind, _ in server.events) > 0  # the limit was met

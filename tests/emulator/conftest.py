"""Fixtures for the emulator's job interface: a real emulator on a fake clock, both stores.

Every test that takes ``emu`` (or ``http``, which is built on it) runs twice: once with
the in-memory store and once with the SQLite store, because a store that persists jobs
sits on every transition and must not change what the interface does.

Time: the emulator runs on a ``FakeClock``; ``advance`` moves it on the test's loop and
lets woken tasks run. Handlers that run in threads (sync handlers, sync generators) finish
in real time, so tests wait for them with ``until``, a bounded poll of a condition, never
a fixed sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, FakeClock, create_app
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.jobs import Job
from nbext.models import JobSubmission

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
"""Shaped like the service's keys (``rpa_`` + 40 characters)."""
AUTH = {"Authorization": f"Bearer {KEY}"}
STORES = ["memory", "sqlite"]
DEMO_ENDPOINTS = {
    "echo": "echo",
    "sleep": "sleep",
    "fail": "fail",
    "stream": "stream-text",
    "held": "no-such-image",  # no handler bound: its jobs stay IN_QUEUE
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def deploy_demos(emu: Emulator) -> None:
    for endpoint_id, image in DEMO_ENDPOINTS.items():
        emu.deploy(image, endpoint_id=endpoint_id)


MakeEmulator = Callable[..., Emulator]


@pytest.fixture(params=STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
async def make_emulator(store_kind: str, tmp_path: Path) -> AsyncIterator[MakeEmulator]:
    """``make_emulator(**Emulator kwargs)``: a bound emulator on a fake clock, demos deployed.

    Each one gets its own store (a fresh SQLite file for the sqlite variant). Teardown
    removes every job first, so no handler task outlives its emulator's store.
    """
    made: list[Emulator] = []

    def factory(*, demos: bool = True, **kw: Any) -> Emulator:
        kw.setdefault("api_key", KEY)
        kw.setdefault("clock", FakeClock())
        kw.setdefault("webhook_retry_delay", 10.0)
        if store_kind == "sqlite" and "store" not in kw:
            kw.setdefault("db", tmp_path / f"emulator-{len(made)}.db")
        emu = Emulator(**kw)
        emu.bind()
        if demos:
            deploy_demos(emu)
        made.append(emu)
        return emu

    yield factory
    for emu in made:
        with contextlib.suppress(Exception):
            emu.jobs.reset()
        await settle()
        with contextlib.suppress(Exception):
            await emu.aclose()
        emu.close()


@pytest.fixture
async def emu(make_emulator: MakeEmulator) -> Emulator:
    """The common case: fake clock, rate limits on, the demo endpoints deployed."""
    return make_emulator()


def client_for(emu: Emulator, **kw: Any) -> httpx.AsyncClient:
    """An in-process HTTP client for ``emu`` (the app runs in the test's own loop)."""
    kw.setdefault("headers", AUTH)
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=create_app(emu)), base_url="http://emulator", **kw
    )


@pytest.fixture
async def http(emu: Emulator) -> AsyncIterator[httpx.AsyncClient]:
    """``emu`` over HTTP, in process; sends the right key unless a test overrides it."""
    async with client_for(emu) as client:
        yield client


# ---- time and waiting --------------------------------------------------------------------


async def advance(emu: Emulator, seconds: float) -> None:
    """Move the fake clock, letting every task woken on the way run at its moment."""
    await emu.advance_async(seconds)


async def until(
    condition: Callable[[], bool], what: str = "condition", limit: float = 10.0
) -> None:
    """Wait, up to ``limit`` real seconds, for ``condition``; threads need real time."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)


def submission(input: Any = None, **extra: Any) -> JobSubmission:
    """A validated submission body, as the HTTP layer would hand it to the domain."""
    return JobSubmission.model_validate({"input": {} if input is None else input, **extra})


def submit(emu: Emulator, endpoint_id: str, input: Any = None, **extra: Any) -> Job:
    """``/run`` at the domain level."""
    return emu.jobs.submit(endpoint_id, submission(input, **extra), sync=False)


def status_of(emu: Emulator, endpoint_id: str, job_id: str) -> dict[str, Any]:
    """``/status`` at the domain level, as the wire shows it."""
    return emu.jobs.status(endpoint_id, job_id).to_wire()


class Gates:
    """Handlers the test finishes: each job's handler waits until its gate opens.

    ``handler`` is an async handler returning ``{"done": job id}`` once the test calls
    ``open(job_id)``; ``fail(job_id)`` makes it raise instead. Nothing depends on time.
    """

    def __init__(self) -> None:
        self.events: dict[str, asyncio.Event] = {}
        self.outcome: dict[str, str] = {}
        self.started: list[str] = []

    def _event(self, job_id: str) -> asyncio.Event:
        return self.events.setdefault(job_id, asyncio.Event())

    async def handler(self, job: dict[str, Any]) -> Any:
        self.started.append(job["id"])
        event = self._event(job["id"])
        await event.wait()
        event.clear()
        if self.outcome.pop(job["id"], "ok") == "fail":
            raise RuntimeError(f"gate of {job['id']} failed on purpose")
        return {"done": job["id"]}

    def open(self, job_id: str) -> None:
        self._event(job_id).set()

    def fail(self, job_id: str) -> None:
        self.outcome[job_id] = "fail"
        self._event(job_id).set()


@pytest.fixture
def gates() -> Gates:
    return Gates()


# ---- a real webhook receiver ---------------------------------------------------------------


class Receiver:
    """A tiny HTTP server on 127.0.0.1 that records every POST it gets.

    ``answers`` is the list of status codes to answer in turn (200 once exhausted);
    while ``hold`` is clear, requests wait for it (a receiver that hangs).
    """

    def __init__(self) -> None:
        self.answers: list[int] = []
        self.received: list[dict[str, Any]] = []
        self.arrived = 0
        """Requests read so far, including ones still held."""
        self.hold = threading.Event()
        self.hold.set()
        self._lock = threading.Lock()
        receiver = self

        class Handle(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with receiver._lock:
                    receiver.arrived += 1
                receiver.hold.wait(30)
                with receiver._lock:
                    receiver.received.append({"path": self.path, "body": body})
                    code = receiver.answers.pop(0) if receiver.answers else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handle)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def close(self) -> None:
        self.hold.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


class Blocking:
    """A sync handler (so it runs in a thread, out of the loop's reach) the test releases.

    It records whether it saw its job cancelled, and returns ``{"done": job id}``: the
    emulator must drop that result when the job was cancelled, timed out or removed.
    """

    def __init__(self) -> None:
        self.events: dict[str, threading.Event] = {}
        self.started: list[str] = []
        self.saw_cancel: dict[str, bool] = {}
        self.returned: list[str] = []
        self._lock = threading.Lock()
        self._closed = False

    def _event(self, job_id: str) -> threading.Event:
        with self._lock:
            event = self.events.setdefault(job_id, threading.Event())
            if self._closed:
                event.set()
            return event

    def handler(self, job: dict[str, Any]) -> Any:
        from nbext.emulator import current_job

        ctx = current_job()
        with self._lock:
            self.started.append(job["id"])
        self._event(job["id"]).wait(30)
        self.saw_cancel[job["id"]] = ctx.cancelled
        with self._lock:
            self.returned.append(job["id"])
        return {"done": job["id"]}

    def release(self, job_id: str) -> None:
        self._event(job_id).set()

    def release_all(self) -> None:
        """Let every handler return, including ones not started yet (test teardown)."""
        with self._lock:
            self._closed = True
            events = list(self.events.values())
        for event in events:
            event.set()


@pytest.fixture
def blocking() -> Iterator[Blocking]:
    b = Blocking()
    yield b
    b.release_all()

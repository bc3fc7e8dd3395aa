"""The client against the emulator, four ways: {async, sync} x {in-process, real server}.

Every test written against ``Harness`` runs in all four modes:

- ``async-asgi``: ``AsyncClient`` over ``httpx.ASGITransport`` (the app in the test's loop)
- ``async-server``: ``AsyncClient`` over TCP to an ``EmulatorServer``
- ``sync-asgi``: ``Client`` over ``SyncASGIBridge`` (the app on a loop in another thread;
  httpx has no sync ASGI transport, this is the smallest one that honours read timeouts)
- ``sync-server``: ``Client`` over TCP to an ``EmulatorServer``

Sync calls run in a worker thread (``anyio.to_thread``), so one async test body drives
both clients. Time: the emulator runs on a ``FakeClock`` unless a test asks otherwise;
tests move it with ``POST /_emulator/clock/advance`` and never sleep to let time pass.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from nbext.client import AsyncClient, Client
from nbext.emulator import Emulator, EmulatorServer, FakeClock, RealClock, create_app

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
"""Shaped like the service's keys (``rpa_`` + 40), so masking is tested on a real shape."""
MODES = ["async-asgi", "async-server", "sync-asgi", "sync-server"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class SyncASGIBridge(httpx.BaseTransport):
    """A sync httpx transport that serves requests from an ASGI app on a private loop."""

    def __init__(self, app: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._inner = httpx.ASGITransport(app=app)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()

        async def forward() -> tuple[int, httpx.Headers, bytes]:
            inner = httpx.Request(
                request.method, request.url, headers=request.headers, content=body
            )
            response = await self._inner.handle_async_request(inner)
            return response.status_code, response.headers, await response.aread()

        future = asyncio.run_coroutine_threadsafe(forward(), self._loop)
        read = request.extensions.get("timeout", {}).get("read")
        try:
            status, headers, content = future.result(read)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise httpx.ReadTimeout("no answer in time", request=request) from None
        return httpx.Response(status, headers=headers, content=content, request=request)

    def close(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(5)


class EmulatorTime:
    """The client's clock made of the emulator's fake clock: sleeping moves it.

    With this, a client that honours a 10 s Retry-After "sleeps" 10 s of emulator time
    in microseconds, and the rate limiter's window slides exactly that much.
    """

    def __init__(self, harness: Harness) -> None:
        self.h = harness
        self.slept: list[float] = []
        self._lock = threading.Lock()
        self._alock = asyncio.Lock()

    def now(self) -> float:
        return self.h.emu.clock.now()

    def _advance_to(self, target: float) -> None:
        with self._lock:
            delta = target - self.now()
            if delta > 0:
                self.h.emu.advance(delta)


class SyncEmulatorTime(EmulatorTime):
    def sleep_until(self, target: float) -> None:
        if target > self.now():
            self.slept.append(target - self.now())
        self._advance_to(target)


class AsyncEmulatorTime(EmulatorTime):
    async def sleep_until(self, target: float) -> None:
        if target > self.now():
            self.slept.append(target - self.now())
        if self.h.mode == "async-asgi":
            async with self._alock:
                delta = target - self.now()
                if delta > 0:
                    await self.h.emu.advance_async(delta)
        else:
            await anyio.to_thread.run_sync(self._advance_to, target)


class VirtualTime:
    """A clock that moves only when told to (the client sleeps, a test's server takes its
    time), shared by a client and a server of the test: a 25 s wait costs no real time,
    and both read the same instants."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep_until(self, instant: float) -> None:
        with self._lock:
            self._now = max(self._now, instant)

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


class AsyncVirtualTime(VirtualTime):
    async def sleep_until(self, instant: float) -> None:  # type: ignore[override]
        VirtualTime.sleep_until(self, instant)


class Harness:
    """One emulator, one client of the given mode, and the test's controls."""

    def __init__(self, mode: str, emu: Emulator) -> None:
        self.mode = mode
        self.emu = emu
        self.is_async = mode.startswith("async")
        self.server: EmulatorServer | None = None
        self.bridge: SyncASGIBridge | None = None
        self.client: Any = None
        self.time: EmulatorTime | None = None
        self._control: Any = None
        self._async_transport: httpx.AsyncBaseTransport | None = None

    def transport_kwargs(self) -> dict[str, Any]:
        """How a client of this mode reaches the emulator (for extra clients in a test)."""
        if self.server is not None:  # both interfaces: the job's and management (REST v2)
            return {
                "serverless_url": self.server.serverless_url,
                "base_url": f"{self.server.url}/v2",
            }
        if self.is_async:
            return {
                "serverless_url": "http://emulator/v2",
                "transport": httpx.ASGITransport(app=self.app),
            }
        assert self.bridge is not None
        return {"serverless_url": "http://emulator/v2", "transport": self.bridge}

    def new_client(self, api_key: str = KEY, **kw: Any) -> Any:
        cls = AsyncClient if self.is_async else Client
        return cls(api_key, **{**self.transport_kwargs(), **kw})

    async def start(self, virtual_time: bool, client_kw: dict[str, Any]) -> Harness:
        self.app = create_app(self.emu)
        if self.mode.endswith("server"):
            self.server = await anyio.to_thread.run_sync(EmulatorServer(self.emu).start)
            self._control = httpx.Client(base_url=self.server.url)
        elif self.is_async:
            self._control = httpx.AsyncClient(
                transport=httpx.ASGITransport(app=self.app), base_url="http://emulator"
            )
        else:
            self.bridge = SyncASGIBridge(self.app)
            self._control = httpx.Client(transport=self.bridge, base_url="http://emulator")
        if virtual_time:
            self.time = AsyncEmulatorTime(self) if self.is_async else SyncEmulatorTime(self)
            client_kw = {"clock": self.time, **client_kw}
        self.client = self.new_client(**client_kw)
        return self

    async def close(self) -> None:
        if self.is_async:
            await self.client.aclose()
        else:
            self.client.close()
        if isinstance(self._control, httpx.AsyncClient):
            await self._control.aclose()
        else:
            self._control.close()
        if self.bridge is not None:
            self.bridge.close()
        if self.server is not None:
            # uvicorn takes a tick (~0.15 s) to stop; nothing waits for it, so stop in the
            # background (each server has its own port and emulator).
            server, emu = self.server, self.emu
            threading.Thread(target=lambda: (server.stop(), emu.close()), daemon=True).start()
        else:
            self.emu.close()

    # ---- calling the client the same way in every mode ------------------------------------

    def endpoint(self, endpoint_id: str) -> Any:
        return self.client.endpoint(endpoint_id)

    async def call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """``await fn(...)`` for the async client, ``fn(...)`` in a thread for the sync one."""
        if self.is_async:
            result = fn(*args, **kw)
            return await result if inspect.isawaitable(result) else result
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kw))

    async def collect(self, iterable: Any) -> list[Any]:
        """Every item of a (sync or async) iterator."""
        if self.is_async:
            return [item async for item in iterable]
        return await anyio.to_thread.run_sync(list, iterable)

    # ---- controlling the emulator ---------------------------------------------------------

    async def control(self, method: str, path: str, **kw: Any) -> Any:
        headers = {"Authorization": f"Bearer {KEY}"}
        if isinstance(self._control, httpx.AsyncClient):
            response = await self._control.request(method, path, headers=headers, **kw)
        else:
            response = await anyio.to_thread.run_sync(
                functools.partial(self._control.request, method, path, headers=headers, **kw)
            )
        response.raise_for_status()
        return response.json()

    async def advance(self, seconds: float) -> None:
        """Move the emulator's fake clock, over HTTP like any outside controller."""
        await self.control("POST", "/_emulator/clock/advance", json={"seconds": seconds})

    async def until(self, condition: Callable[[], bool], what: str = "condition") -> None:
        """Wait (up to 5 s of real time) for the emulator to reach a state."""
        deadline = time.monotonic() + 5
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await anyio.sleep(0.002)

    def job(self, job_id: str) -> Any:
        return self.emu.jobs.jobs.get(job_id)

    def waiters(self, job_id: str) -> int:
        """How many requests (runsync, stream) the emulator holds open on this job."""
        job = self.job(job_id)
        return len(job.signal._waiters) if job is not None else 0


def deploy_defaults(emu: Emulator) -> None:
    emu.deploy(image="echo", endpoint_id="echo")
    emu.deploy(image="sleep", endpoint_id="sleep")
    emu.deploy(image="fail", endpoint_id="fail")
    emu.deploy(image="stream-text", endpoint_id="stream")
    emu.deploy(image="no-such-image", endpoint_id="held")  # no handler: jobs stay queued


MakeHarness = Callable[..., Awaitable[Harness]]


@pytest.fixture(params=MODES)
async def make(request: pytest.FixtureRequest) -> AsyncIterator[MakeHarness]:
    """``h = await make(fake_clock=True, rate_limit=True, virtual_time=False, **client_kw)``."""
    made: list[Harness] = []

    async def factory(
        *,
        fake_clock: bool = True,
        rate_limit: bool = True,
        virtual_time: bool = False,
        **client_kw: Any,
    ) -> Harness:
        emu = Emulator(
            api_key=KEY,
            clock=FakeClock() if fake_clock else RealClock(),
            rate_limit=rate_limit,
            webhook_retry_delay=0.01,
        )
        deploy_defaults(emu)
        harness = Harness(request.param, emu)
        made.append(harness)
        return await harness.start(virtual_time, client_kw)

    yield factory
    for harness in made:
        with contextlib.suppress(Exception):
            await harness.close()


@pytest.fixture
async def h(make: MakeHarness) -> Harness:
    """The common case: fake clock, rate limits on, the default endpoints deployed."""
    return await make()


class ServedEmulator:
    """A real emulator behind a real server, rate limits off, for the fault suites.

    A subclass deploys its endpoints in ``deploy`` and may release what its handlers
    wait on in ``release_all``; ``close`` stops the handlers' waits first, so a test that
    failed halfway never leaves a handler thread blocking the server's shutdown.
    """

    def __init__(self) -> None:
        self.emu = Emulator(api_key=KEY, rate_limit=False)
        self.deploy()
        self.server = EmulatorServer(self.emu).start()

    def deploy(self) -> None:
        """Deploy the endpoints the suite's tests call."""

    def release_all(self) -> None:
        """Let every handler that waits on the test go on."""

    def close(self) -> None:
        self.release_all()
        self.emu.reset()
        self.server.stop()
        self.emu.close()

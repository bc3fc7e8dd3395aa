"""Management tests: the client's resources against the emulator, four ways, per interface.

``V2Harness`` is the job tests' ``Harness`` (see ``tests/client/conftest.py``) with the
client's ``base_url`` pointed at the emulator's ``/v2`` (REST v2, the default);
``V1Harness`` asks for the frozen v1 adapter (``management_api="v1"``) and points it at
the emulator's ``/v1``. Both return REST v2's records. The emulator starts empty (no
demo endpoints): what a test finds is what it made.

``Recorder`` is the network, not the service: a transport that keeps every request
and answers each with one canned response. Tests of what the client *sends* (and of
what it refuses to send) use it; tests of behaviour use the emulator.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from nbext.client import AsyncClient, Client
from nbext.emulator import Emulator, FakeClock

from ..conftest import KEY, MODES, Harness


class V1Harness(Harness):
    """A ``Harness`` whose clients speak the emulator's ``/v1`` through the v1 adapter."""

    version = "v1"

    def transport_kwargs(self) -> dict[str, Any]:
        kw = super().transport_kwargs()
        root = self.server.url if self.server is not None else "http://emulator"
        kw["base_url"] = f"{root}/{self.version}"
        kw["management_api"] = self.version
        return kw

    def client_of(self, version: str) -> Any:
        """Another client of the same emulator, speaking management ``version``."""
        kw = self.transport_kwargs()
        kw["base_url"] = kw["base_url"].rsplit("/", 1)[0] + "/" + version
        return self.new_client(**{**kw, "management_api": version})

    async def close_client(self, client: Any) -> None:
        if self.is_async:
            await client.aclose()
        else:
            client.close()


class V2Harness(V1Harness):
    """The same, with the client speaking REST v2, the default."""

    version = "v2"

    @property
    def resources(self) -> Any:
        """The client itself: ``h.resources.pods.create(...)`` reads as what it calls."""
        return self.client


MakeV1 = Callable[..., Awaitable[V1Harness]]


@pytest.fixture(params=MODES)
async def make_v1(request: pytest.FixtureRequest) -> AsyncIterator[MakeV1]:
    """``h = await make_v1(**client_kw)``: an empty emulator on a fake clock, one client."""
    made: list[V1Harness] = []

    async def factory(**client_kw: Any) -> V1Harness:
        emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
        harness = V1Harness(request.param, emu)
        made.append(harness)
        return await harness.start(False, client_kw)  # type: ignore[return-value]

    yield factory
    for harness in made:
        with contextlib.suppress(Exception):
            await harness.close()


@pytest.fixture
async def v1(make_v1: MakeV1) -> V1Harness:
    return await make_v1()


@pytest.fixture(params=MODES)
async def v2(request: pytest.FixtureRequest) -> AsyncIterator[V2Harness]:
    """An empty emulator on a fake clock, one client speaking REST v2, four ways."""
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
    harness = V2Harness(request.param, emu)
    await harness.start(False, {})
    yield harness
    with contextlib.suppress(Exception):
        await harness.close()


class Recorder(httpx.MockTransport):
    """Keeps every request; answers each with ``status`` and ``body`` (JSON)."""

    def __init__(self, status: int = 200, body: Any = None) -> None:
        self.requests: list[httpx.Request] = []
        self.status = status
        self.body = {} if body is None else body
        super().__init__(self._answer)

    def _answer(self, request: httpx.Request) -> httpx.Response:
        request.read()
        self.requests.append(request)
        return httpx.Response(self.status, json=self.body)

    @property
    def last(self) -> httpx.Request:
        assert self.requests, "nothing was sent"
        return self.requests[-1]

    def last_json(self) -> Any:
        return json.loads(self.last.content)


def recorded_client(is_async: bool, recorder: Recorder, **kw: Any) -> Any:
    cls = AsyncClient if is_async else Client
    settings = {
        "base_url": "https://mgmt.example/v2",
        "serverless_url": "https://jobs.example/v2",
        "transport": recorder,
        "max_retries": 0,
        **kw,
    }
    return cls(KEY, **settings)


async def call(client: Any, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """``fn(...)``, awaited when the client is async (no thread: nothing here blocks)."""
    result = fn(*args, **kw)
    if isinstance(client, AsyncClient):
        return await result
    return result


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    return str(request.param)

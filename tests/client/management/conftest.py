"""Management tests: the client's resources against the emulator, four ways.

``V2Harness`` is the job tests' ``Harness`` (see ``tests/client/conftest.py``) with the
client's ``base_url`` pointed at the emulator's ``/v2`` (REST v2). The emulator starts
empty (no demo endpoints): what a test finds is what it made.

``Recorder`` is the network, not the service: a transport that keeps every request
and answers each with one canned response. Tests of what the client *sends* (and of
what it refuses to send) use it; tests of behaviour use the emulator.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from nbext.client import AsyncClient, Client
from nbext.emulator import Emulator, FakeClock

from ..conftest import KEY, MODES, Harness


class V2Harness(Harness):
    """A ``Harness`` whose clients speak the emulator's ``/v2`` (REST v2)."""

    def transport_kwargs(self) -> dict[str, Any]:
        kw = super().transport_kwargs()
        root = self.server.url if self.server is not None else "http://emulator"
        kw["base_url"] = f"{root}/v2"
        return kw


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

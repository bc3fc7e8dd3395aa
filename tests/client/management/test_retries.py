"""Which management calls are sent again after trouble, and which never are.

A ``Flaky`` transport sits between the client and a real emulator server, and, per
request, refuses the connection (nothing sent), loses the answer after the emulator
acted on the request, or answers 503/429 itself. A recording clock takes the backoff
pauses, so nothing sleeps. What the emulator holds afterwards is read with a second,
untroubled client.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from nbext.client import (
    AsyncClient,
    BadRequest,
    Client,
    ConnectionError,
    NotFound,
    RateLimited,
    ServerError,
)
from nbext.emulator import Emulator, EmulatorServer, FakeClock

from ..conftest import KEY
from .conftest import call

pytestmark = pytest.mark.anyio

FORWARD = None
REFUSED = "refused"
"""The connection is never made: certainly not sent."""
LOST = "lost"
"""Sent, acted on by the emulator, and the answer lost on the way back."""
OVERLOADED = "503"
LIMITED = "429"


class Faults:
    """The fault for each successive request (then FORWARD), and what was asked."""

    def __init__(self, *script: str | None) -> None:
        self.script = list(script)
        self.asked: list[str] = []

    def next(self, request: httpx.Request) -> str | None:
        self.asked.append(f"{request.method} {request.url.path}")
        return self.script.pop(0) if self.script else FORWARD

    @staticmethod
    def answer(fault: str, request: httpx.Request) -> httpx.Response | None:
        if fault == REFUSED:
            raise httpx.ConnectError("connection refused", request=request)
        if fault == OVERLOADED:
            return httpx.Response(503, json={"message": "overloaded"}, request=request)
        if fault == LIMITED:
            return httpx.Response(
                429, json={"message": "slow down"}, headers={"Retry-After": "2"}, request=request
            )
        return None

    @staticmethod
    def lost(request: httpx.Request) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "server disconnected without sending a response", request=request
        )


class FlakySync(httpx.BaseTransport):
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        fault = self.faults.next(request)
        if fault is not None and (canned := Faults.answer(fault, request)) is not None:
            return canned
        response = self.inner.handle_request(request)
        if fault == LOST:
            response.read()
            response.close()
            raise Faults.lost(request)
        return response


class FlakyAsync(httpx.AsyncBaseTransport):
    def __init__(self, faults: Faults) -> None:
        self.faults = faults
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        fault = self.faults.next(request)
        if fault is not None and (canned := Faults.answer(fault, request)) is not None:
            return canned
        response = await self.inner.handle_async_request(request)
        if fault == LOST:
            await response.aread()
            await response.aclose()
            raise Faults.lost(request)
        return response


class Clock:
    """Backoff without sleeping: each pause is recorded and time jumps."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep_until(self, instant: float) -> None:
        self.slept.append(instant - self.t)
        self.t = max(self.t, instant)


class AsyncClockAdapter(Clock):
    async def sleep_until(self, instant: float) -> None:  # type: ignore[override]
        Clock.sleep_until(self, instant)


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
    with EmulatorServer(emu) as running:
        yield running
    emu.close()


class Rig:
    """A troubled client, its faults and clock, and a plain client to look with."""

    def __init__(self, flavour: str, server: EmulatorServer) -> None:
        self.faults = Faults()
        self.is_async = flavour == "async"
        self.clock = AsyncClockAdapter() if self.is_async else Clock()
        urls = {"base_url": server.base_url, "serverless_url": server.serverless_url}
        if self.is_async:
            self.client: Any = AsyncClient(
                KEY, transport=FlakyAsync(self.faults), clock=self.clock, **urls
            )
        else:
            self.client = Client(KEY, transport=FlakySync(self.faults), clock=self.clock, **urls)
        self.plain = Client(KEY, **urls)

    def script(self, *faults: str | None) -> None:
        self.faults.script = list(faults)
        self.faults.asked.clear()

    async def close(self) -> None:
        if self.is_async:
            await self.client.aclose()
        else:
            self.client.close()
        self.plain.close()


@pytest.fixture
async def rig(flavour: str, server: EmulatorServer) -> AsyncIterator[Rig]:
    made = Rig(flavour, server)
    yield made
    await made.close()


GPU = {"id": "NVIDIA A40"}


def unique(what: str) -> str:
    """A name no other test on the shared server uses."""
    return f"{what}-{uuid.uuid4().hex[:8]}"


async def test_a_get_is_retried_after_trouble(rig: Rig) -> None:
    made = rig.plain.templates.create(name=unique("get"), image="i")
    rig.script(LOST, OVERLOADED, REFUSED)
    got = await call(rig.client, rig.client.templates.get, made.id)
    assert got.id == made.id
    assert rig.faults.asked == [f"GET /v2/templates/{made.id}"] * 4
    assert len(rig.clock.slept) == 3 and all(s > 0 for s in rig.clock.slept)


async def test_a_create_whose_answer_was_lost_is_not_sent_again(rig: Rig) -> None:
    wanted = unique("lost")
    rig.script(LOST)
    with pytest.raises(ConnectionError) as info:
        await call(rig.client, rig.client.templates.create, name=wanted, image="i")
    assert info.value.maybe_sent is True
    assert "may have taken effect" in str(info.value) and "look before trying again" in str(
        info.value
    )
    assert rig.faults.asked == ["POST /v2/templates"]  # once
    assert [t.name for t in rig.plain.templates.list() if t.name == wanted] == [wanted]


async def test_a_create_is_sent_again_when_it_certainly_was_not_sent(rig: Rig) -> None:
    wanted = unique("refused")
    rig.script(REFUSED, LIMITED)
    made = await call(rig.client, rig.client.templates.create, name=wanted, image="i")
    assert made.name == wanted
    assert rig.faults.asked == ["POST /v2/templates"] * 3
    assert rig.clock.slept[1] >= 2  # the 429's Retry-After
    assert [t.id for t in rig.plain.templates.list() if t.name == wanted] == [made.id]


async def test_a_create_is_not_retried_after_a_server_error(rig: Rig) -> None:
    rig.script(OVERLOADED)
    with pytest.raises(ServerError) as info:
        await call(rig.client, rig.client.pods.create, image="i", name=unique("5xx"), gpu=GPU)
    assert "overloaded" in str(info.value) and rig.faults.asked == ["POST /v2/pods"]


async def test_an_update_is_not_sent_again_after_a_lost_answer(rig: Rig) -> None:
    pod = rig.plain.pods.create(image="i", name=unique("upd"), gpu=GPU)
    rig.script(LOST)
    with pytest.raises(ConnectionError):
        await call(rig.client, rig.client.pods.update, pod.id, image="img:2")
    assert rig.faults.asked == [f"PATCH /v2/pods/{pod.id}"]
    assert rig.plain.pods.get(pod.id).image == "img:2"  # the one send took effect


async def test_a_delete_whose_answer_was_lost_is_a_success(rig: Rig) -> None:
    pod = rig.plain.pods.create(image="i", name=unique("del"), gpu=GPU)
    rig.script(LOST)
    assert await call(rig.client, rig.client.pods.delete, pod.id) is None
    assert rig.faults.asked == [f"DELETE /v2/pods/{pod.id}"] * 2  # the retry found it gone
    with pytest.raises(NotFound):
        rig.plain.pods.get(pod.id)


async def test_a_delete_of_an_unknown_id_is_not_found_even_after_a_429(rig: Rig) -> None:
    rig.script(LIMITED)
    with pytest.raises(NotFound) as info:
        await call(rig.client, rig.client.templates.delete, "no-such-template")
    assert "template 'no-such-template'" in str(info.value)
    assert len(rig.faults.asked) == 2


async def test_a_pod_action_is_sent_again_only_when_it_certainly_was_not_sent(rig: Rig) -> None:
    """A second ``stop`` would be refused (409) for what the first one did, and a second
    ``restart`` would kill what the first one started: an action may go again only when
    it never left."""
    pod = rig.plain.pods.create(image="i", name=unique("act"), gpu=GPU)
    rig.script(REFUSED)
    stopped = await call(rig.client, rig.client.pods.stop, pod.id)
    assert stopped.status == "EXITED" and len(rig.faults.asked) == 2
    for action in ("start", "restart"):
        rig.script(LOST)
        with pytest.raises(ConnectionError) as info:
            await call(rig.client, getattr(rig.client.pods, action), pod.id)
        assert info.value.maybe_sent is True
        assert rig.faults.asked == [f"POST /v2/pods/{pod.id}/action"]


async def test_a_400_is_never_retried(rig: Rig) -> None:
    wanted = unique("dup")
    rig.plain.templates.create(name=wanted, image="i")
    rig.script()
    with pytest.raises(BadRequest):
        await call(rig.client, rig.client.templates.create, name=wanted, image="i")
    assert rig.faults.asked == ["POST /v2/templates"] and rig.clock.slept == []


async def test_429s_run_out_as_rate_limited(rig: Rig) -> None:
    rig.script(*[LIMITED] * 10)
    with pytest.raises(RateLimited) as info:
        await call(rig.client, rig.client.pods.list)
    assert info.value.retry_after == 2 and len(rig.faults.asked) == 6  # 1 + max_retries

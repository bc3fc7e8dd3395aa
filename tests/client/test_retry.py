"""Retries: what is sent again, after how long, and what never is.

Faults the emulator cannot produce on demand (5xx, dropped connections) come from
``httpx.MockTransport``; 429 with Retry-After comes from the emulator's own limiter.
The clients get a recording clock, so backoff is checked without sleeping.
"""

from __future__ import annotations

import email.utils
import inspect
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from nbext.client import (
    AsyncClient,
    Client,
    ConnectionError,
    RateLimited,
    RetryPolicy,
    ServerError,
    Timeout,
)
from nbext.client._retry import Kind, may_retry_status, may_retry_transport, parse_retry_after

from .conftest import KEY, MakeHarness

pytestmark = pytest.mark.anyio

Responder = Callable[[httpx.Request, int], httpx.Response]


class RecordingClock:
    def __init__(self) -> None:
        self.t = 1000.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep_until(self, instant: float) -> None:
        if instant > self.t:
            self.slept.append(instant - self.t)
            self.t = instant


class AsyncRecordingClock(RecordingClock):
    async def sleep_until(self, instant: float) -> None:  # type: ignore[override]
        RecordingClock.sleep_until(self, instant)


class Mocked:
    """A client of either flavour whose every request is answered by ``responder``."""

    def __init__(self, flavour: str, responder: Responder, **kw: Any) -> None:
        self.requests: list[httpx.Request] = []

        def handle(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            return responder(request, len(self.requests))

        transport = httpx.MockTransport(handle)
        self.is_async = flavour == "async"
        self.clock = AsyncRecordingClock() if self.is_async else RecordingClock()
        cls: Any = AsyncClient if self.is_async else Client
        self.client = cls(
            KEY, serverless_url="http://svc/v2", transport=transport, clock=self.clock, **kw
        )

    async def call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        result = fn(*args, **kw)
        return await result if inspect.isawaitable(result) else result

    def paths(self) -> list[str]:
        return [f"{r.method} {r.url.path}" for r in self.requests]


@pytest.fixture(params=["sync", "async"])
def mocked(request: pytest.FixtureRequest) -> Callable[..., Mocked]:
    return lambda responder, **kw: Mocked(request.param, responder, **kw)


def ok_status(job_id: str = "j1", status: str = "COMPLETED") -> httpx.Response:
    return httpx.Response(200, json={"id": job_id, "status": status, "output": {"ok": 1}})


def error(status: int, text: str = "nope", **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"error": text}, headers=headers)


# ---- pure policy ---------------------------------------------------------------------------


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    policy = RetryPolicy(base_delay=0.25, max_delay=2.0)
    assert policy.delay(0, None, 0.0) == 0.125 and policy.delay(0, None, 0.999) < 0.25
    assert policy.delay(1, None, 0.0) == 0.25
    assert policy.delay(3, None, 0.0) == 1.0
    assert policy.delay(10, None, 0.999) <= 2.0  # capped


def test_retry_after_wins_with_a_little_jitter_and_a_cap() -> None:
    policy = RetryPolicy(max_retry_after=30)
    assert policy.delay(0, 10.0, 0.0) == 10.0
    assert 10.0 <= policy.delay(4, 10.0, 0.999) <= 11.0
    assert policy.delay(0, 3600.0, 0.0) == 30.0


def test_retry_after_parses_seconds_and_http_dates() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 1.5 ") == 1.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    date = email.utils.formatdate(1_000_030.0, usegmt=True)
    assert parse_retry_after(date, now=1_000_000.0) == pytest.approx(30.0)
    assert parse_retry_after("-5") == 0.0


def test_which_failures_are_retried() -> None:
    request = httpx.Request("POST", "http://svc/v2/e/run")
    connect = httpx.ConnectError("refused", request=request)
    reset = httpx.ReadError("reset", request=request)
    assert may_retry_status(Kind.SUBMIT, 429) and may_retry_status(Kind.IDEMPOTENT, 429)
    assert not may_retry_status(Kind.SUBMIT, 503) and may_retry_status(Kind.IDEMPOTENT, 503)
    assert not may_retry_status(Kind.IDEMPOTENT, 501) and not may_retry_status(Kind.IDEMPOTENT, 404)
    assert may_retry_transport(Kind.SUBMIT, connect)  # never reached the service
    assert not may_retry_transport(Kind.SUBMIT, reset)  # may have been queued
    assert may_retry_transport(Kind.IDEMPOTENT, reset)


# ---- against mock transports -----------------------------------------------------------------


async def test_status_is_retried_on_5xx_with_backoff(mocked: Callable[..., Mocked]) -> None:
    m = mocked(lambda req, n: error(503) if n <= 2 else ok_status())
    result = await m.call(m.client.endpoint("e").job("j1").status)
    assert result.output == {"ok": 1}
    assert len(m.requests) == 3
    assert 0.125 <= m.clock.slept[0] < 0.25 and 0.25 <= m.clock.slept[1] < 0.5


async def test_run_is_never_resent_after_a_5xx(mocked: Callable[..., Mocked]) -> None:
    m = mocked(lambda req, n: error(500, "worker crashed"))
    with pytest.raises(ServerError) as info:
        await m.call(m.client.endpoint("e").run, {"a": 1})
    assert m.paths() == ["POST /v2/e/run"]
    assert info.value.status == 500 and "worker crashed" in str(info.value)


async def test_run_sync_is_never_resent_after_a_5xx(mocked: Callable[..., Mocked]) -> None:
    m = mocked(lambda req, n: error(502))
    with pytest.raises(ServerError):
        await m.call(m.client.endpoint("e").run_sync, {"a": 1})
    assert len(m.requests) == 1


async def test_run_is_resent_when_the_connection_was_never_made(
    mocked: Callable[..., Mocked],
) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            raise httpx.ConnectError("connection refused", request=req)
        return httpx.Response(200, json={"id": "j9", "status": "IN_QUEUE"})

    m = mocked(respond)
    job = await m.call(m.client.endpoint("e").run, {"a": 1})
    assert job.id == "j9" and len(m.requests) == 2


async def test_run_is_not_resent_when_the_answer_was_lost(mocked: Callable[..., Mocked]) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        raise httpx.ReadError("connection reset by peer", request=req)

    m = mocked(respond)
    with pytest.raises(ConnectionError) as info:
        await m.call(m.client.endpoint("e").run, {"a": 1})
    assert len(m.requests) == 1
    assert info.value.maybe_sent is True and "not sent again" in str(info.value)


async def test_run_sync_without_an_answer_in_time_is_not_resent(
    mocked: Callable[..., Mocked],
) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=req)

    m = mocked(respond)
    with pytest.raises(Timeout):
        await m.call(m.client.endpoint("e").run_sync, {"a": 1}, wait=2)
    assert len(m.requests) == 1


async def test_run_is_resent_after_429_honouring_retry_after(mocked: Callable[..., Mocked]) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            return error(429, "slow down", **{"Retry-After": "2"})
        return httpx.Response(200, json={"id": "j2", "status": "IN_QUEUE"})

    m = mocked(respond)
    job = await m.call(m.client.endpoint("e").run, {"a": 1})
    assert job.id == "j2" and len(m.requests) == 2
    assert 2.0 <= m.clock.slept[0] <= 2.2


async def test_rate_limited_after_the_retries_run_out(mocked: Callable[..., Mocked]) -> None:
    m = mocked(lambda req, n: error(429, "limit", **{"Retry-After": "3"}), max_retries=4)
    with pytest.raises(RateLimited) as info:
        await m.call(m.client.endpoint("e").health)
    assert len(m.requests) == 5 and info.value.retry_after == 3.0
    assert info.value.status == 429 and "Retry-After: 3 s" in str(info.value)


async def test_cancel_is_retried_but_retry_is_not(mocked: Callable[..., Mocked]) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        if n == 1:
            return error(500)
        return httpx.Response(200, json={"id": "j1", "status": "CANCELLED"})

    m = mocked(respond)
    job = m.client.endpoint("e").job("j1")
    assert (await m.call(job.cancel)).status.value == "CANCELLED"
    assert len(m.requests) == 2
    m2 = mocked(respond)
    with pytest.raises(ServerError):
        await m2.call(m2.client.endpoint("e").job("j1").retry)
    assert len(m2.requests) == 1


async def test_connection_errors_on_reads_are_retried_then_raised(
    mocked: Callable[..., Mocked],
) -> None:
    def respond(req: httpx.Request, n: int) -> httpx.Response:
        raise httpx.ConnectError("name or service not known", request=req)

    m = mocked(respond, max_retries=2)
    with pytest.raises(ConnectionError) as info:
        await m.call(m.client.endpoint("e").health)
    assert len(m.requests) == 3 and info.value.maybe_sent is False
    assert isinstance(info.value, OSError)  # also the builtin ConnectionError


async def test_a_wait_deadline_cuts_a_long_retry_after(mocked: Callable[..., Mocked]) -> None:
    m = mocked(lambda req, n: error(429, "limit", **{"Retry-After": "30"}))
    job = m.client.endpoint("e").job("j1")
    with pytest.raises(Timeout) as info:
        await m.call(job.wait, timeout=5)
    assert len(m.requests) == 1 and m.clock.slept == []
    assert "j1" in str(info.value) and "429" in str(info.value)


# ---- against the emulator's real rate limiter -------------------------------------------------


async def test_429_and_retry_after_from_the_emulator_limiter(make: MakeHarness) -> None:
    h = await make(virtual_time=True)
    held = h.endpoint("held")
    await h.call(held.purge_queue)
    await h.call(held.purge_queue)  # /purge-queue allows 2 per 10 s
    assert h.time is not None and h.time.slept == []
    third = await h.call(held.purge_queue)  # 429, Retry-After: 10, then admitted
    assert third.removed == 0
    assert len(h.time.slept) == 1 and 10.0 <= h.time.slept[0] <= 11.0


async def test_429_from_the_emulator_maps_to_rate_limited(make: MakeHarness) -> None:
    h = await make(max_retries=0)
    held = h.endpoint("held")
    await h.call(held.purge_queue)
    await h.call(held.purge_queue)
    with pytest.raises(RateLimited) as info:
        await h.call(held.purge_queue)
    assert info.value.status == 429 and info.value.retry_after == 10.0
    assert info.value.endpoint_id == "held" and "purge-queue" in str(info.value)

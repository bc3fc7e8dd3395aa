"""Size limits (413) and rate limits (429 with Retry-After) as documented
(docs/behaviour.md#rate-limits).

Rate windows slide on the emulator's fake clock, so a test fills a window, moves the
clock, and sees exactly when the next request is admitted again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.errors import RateLimited
from nbext.emulator.domain.ratelimit import LIMITS, RateLimiter
from nbext.models import RUN_BODY_LIMIT, RUNSYNC_BODY_LIMIT

from .conftest import MakeEmulator, advance, client_for, until

pytestmark = pytest.mark.anyio
JSON = {"Content-Type": "application/json"}


def body_of_size(size: int) -> bytes:
    """A valid submission body of exactly ``size`` bytes."""
    head, tail = b'{"input":{"s":"', b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def error_of(response: httpx.Response, status: int) -> str:
    """The error's text: ``{"error": "..."}``, or OpenAI's ``{"error": {"message": ...}}``."""
    assert response.status_code == status, response.text[:300]
    error = response.json()["error"]
    text: str = error["message"] if isinstance(error, dict) else error
    return text


# ---- size limits -------------------------------------------------------------------------


async def test_run_accepts_a_body_of_exactly_10_mb(emu: Emulator, http: httpx.AsyncClient) -> None:
    response = await http.post("/v2/held/run", content=body_of_size(RUN_BODY_LIMIT), headers=JSON)
    assert response.status_code == 200


async def test_run_refuses_a_body_over_10_mb_with_413_and_queues_nothing(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    body = body_of_size(RUN_BODY_LIMIT + 1)
    message = error_of(await http.post("/v2/held/run", content=body, headers=JSON), 413)
    assert "10 MB limit" in message and "nothing was queued" in message
    assert emu.jobs.jobs == {} and emu.jobs.health("held").jobs.in_queue == 0


async def test_runsync_accepts_a_body_of_exactly_20_mb(http: httpx.AsyncClient) -> None:
    body = body_of_size(RUNSYNC_BODY_LIMIT)
    response = await http.post("/v2/fail/runsync", content=body, headers=JSON)
    assert response.status_code == 200 and response.json()["status"] == "FAILED"


async def test_runsync_refuses_a_body_over_20_mb_with_413_and_queues_nothing(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    body = body_of_size(RUNSYNC_BODY_LIMIT + 1)
    message = error_of(await http.post("/v2/echo/runsync", content=body, headers=JSON), 413)
    assert "20 MB limit" in message
    assert emu.jobs.jobs == {}


async def test_a_15_mb_body_is_too_large_for_run_but_not_for_runsync(
    http: httpx.AsyncClient,
) -> None:
    body = body_of_size(15 * 1024 * 1024)
    assert (await http.post("/v2/fail/run", content=body, headers=JSON)).status_code == 413
    assert (await http.post("/v2/fail/runsync", content=body, headers=JSON)).status_code == 200


async def test_a_streamed_body_without_length_is_cut_off_at_the_limit(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    sent = 0

    async def pieces() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"input":{"s":"'
        for _ in range(40):  # 40 MB on offer; the emulator must stop reading past 10 MB
            sent += 1
            yield b"x" * (1024 * 1024)
        yield b'"}}'

    response = await http.post("/v2/held/run", content=pieces(), headers=JSON)
    assert "content-length" not in response.request.headers
    assert "10 MB limit" in error_of(response, 413)
    assert sent <= 11  # it stopped reading once past the limit
    assert emu.jobs.jobs == {}


# ---- the rate limit table ----------------------------------------------------------------


def test_the_limits_are_the_seeds_table() -> None:
    table = {op: (limit.rate, limit.concurrent) for op, limit in LIMITS.items()}
    assert table == {
        "runsync": (2000, 400),
        "run": (1000, 200),
        "status": (2000, 400),
        "stream": (2000, 400),
        "cancel": (100, 20),
        "purge-queue": (2, None),
        "openai": (2000, 400),
        "requests": (10, 2),
        "batch": (500, 50),  # decided: the service publishes no limit for batch calls
    }


@pytest.mark.parametrize("operation", list(LIMITS))
def test_the_window_admits_exactly_the_base_rate_per_10_seconds(operation: str) -> None:
    clock = FakeClock()
    limiter = RateLimiter(clock)
    rate = LIMITS[operation].rate
    for _ in range(rate):
        limiter.acquire("e", operation, running_workers=0)
        limiter.release("e", operation)
    with pytest.raises(RateLimited) as refused:
        limiter.acquire("e", operation, running_workers=0)
    assert refused.value.retry_after == 10
    clock.step(9.999)
    with pytest.raises(RateLimited):
        limiter.acquire("e", operation, running_workers=0)
    clock.step(0.001)
    assert limiter.acquire("e", operation, running_workers=0) is True


@pytest.mark.parametrize("operation", [op for op, lim in LIMITS.items() if lim.concurrent])
def test_requests_beyond_the_concurrency_cap_are_refused(operation: str) -> None:
    limiter = RateLimiter(FakeClock())
    cap = LIMITS[operation].concurrent
    assert cap is not None
    for _ in range(cap):
        limiter.acquire("e", operation, running_workers=0)
    with pytest.raises(RateLimited, match="concurrency limit") as refused:
        limiter.acquire("e", operation, running_workers=0)
    assert refused.value.retry_after == 1
    limiter.release("e", operation)
    limiter.acquire("e", operation, running_workers=0)


def test_the_dynamic_limit_is_the_seeds_worked_case() -> None:
    limiter = RateLimiter(FakeClock(), requests_per_worker=50)
    assert limiter.effective_rate("runsync", running_workers=0) == 2000
    assert limiter.effective_rate("runsync", running_workers=20) == 2000
    assert limiter.effective_rate("runsync", running_workers=50) == 2500
    assert limiter.effective_rate("purge-queue", running_workers=1) == 50


def test_a_switched_off_limiter_admits_everything() -> None:
    limiter = RateLimiter(FakeClock(), enabled=False)
    for _ in range(5000):
        assert limiter.acquire("e", "purge-queue", running_workers=0) is False


# ---- rate limits over HTTP ---------------------------------------------------------------


async def test_the_1001st_run_in_10_seconds_gets_429_with_retry_after(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    for _ in range(1000):
        assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 200
    await advance(emu, 4)
    refused = await http.post("/v2/held/run", json={"input": {}})
    message = error_of(refused, 429)
    assert refused.headers["Retry-After"] == "6"
    assert "1000 requests per 10 s" in message and "/run" in message
    assert len(emu.jobs.jobs) == 1000
    await advance(emu, 5.999)
    assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 429
    await advance(emu, 0.001)
    assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 200


async def test_the_3rd_purge_in_10_seconds_gets_429(emu: Emulator, http: httpx.AsyncClient) -> None:
    for _ in range(2):
        assert (await http.post("/v2/held/purge-queue")).status_code == 200
    refused = await http.post("/v2/held/purge-queue")
    assert "2 requests per 10 s" in error_of(refused, 429)
    assert refused.headers["Retry-After"] == "10"
    await advance(emu, 10)
    assert (await http.post("/v2/held/purge-queue")).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "rate"),
    [
        ("GET", "/status/unknown-job", 2000),
        ("POST", "/cancel/unknown-job", 100),
        ("GET", "/requests", 10),
        ("POST", "/openai/v1/chat/completions", 2000),
    ],
)
async def test_each_operation_is_limited_at_its_table_rate(
    emu: Emulator, http: httpx.AsyncClient, method: str, path: str, rate: int
) -> None:
    for _ in range(rate):
        assert (await http.request(method, f"/v2/echo{path}")).status_code != 429
    refused = await http.request(method, f"/v2/echo{path}")
    assert f"{rate} requests per 10 s" in error_of(refused, 429)
    assert int(refused.headers["Retry-After"]) == 10


async def test_limits_are_per_endpoint_and_per_operation(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    for _ in range(2):
        await http.post("/v2/held/purge-queue")
    assert (await http.post("/v2/held/purge-queue")).status_code == 429
    assert (await http.post("/v2/echo/purge-queue")).status_code == 200
    assert (await http.get("/v2/held/health")).status_code == 200
    assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 200


async def test_running_workers_raise_the_limit_by_requests_per_worker(
    make_emulator: MakeEmulator,
) -> None:
    emu = make_emulator(requests_per_worker=5)
    emu.deploy("sleep", endpoint_id="busy", workers={"max": 2})
    async with client_for(emu) as http:
        for _ in range(2):
            await http.post("/v2/busy/run", json={"input": {"seconds": 60}})
        await until(lambda: emu.jobs.health("busy").workers.running == 2, "both jobs to run")
        for _ in range(10):  # max(2, 2 workers x 5)
            assert (await http.post("/v2/busy/purge-queue")).status_code == 200
        refused = await http.post("/v2/busy/purge-queue")
        assert "10 requests per 10 s" in error_of(refused, 429)
        await advance(emu, 60)  # both jobs end: the limit falls back to the base rate
        await until(lambda: emu.jobs.health("busy").workers.running == 0, "both jobs to end")
        for _ in range(2):
            assert (await http.post("/v2/busy/purge-queue")).status_code == 200
        assert "2 requests per 10 s" in error_of(await http.post("/v2/busy/purge-queue"), 429)


async def test_the_401st_concurrent_runsync_gets_429(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    waiting = [
        asyncio.create_task(http.post("/v2/held/runsync?wait=5000", json={"input": {}}))
        for _ in range(400)
    ]
    await until(lambda: len(emu.jobs.jobs) == 400, "400 runsync jobs to be submitted")
    refused = await http.post("/v2/held/runsync?wait=5000", json={"input": {}})
    assert "400 requests at once" in error_of(refused, 429)
    assert refused.headers["Retry-After"] == "1"
    await advance(emu, 5)
    answers = await asyncio.gather(*waiting)
    assert {a.json()["status"] for a in answers} == {"IN_QUEUE"}
    call = asyncio.create_task(http.post("/v2/held/runsync?wait=1000", json={"input": {}}))
    await settle()
    await advance(emu, 1)
    assert (await call).status_code == 200


async def test_the_401st_concurrent_stream_gets_429(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    waiting = [asyncio.create_task(http.get(f"/v2/held/stream/{job_id}")) for _ in range(400)]
    job = emu.jobs.jobs[job_id]
    await until(lambda: len(job.signal._waiters) == 400, "400 stream calls to wait")
    refused = await http.get(f"/v2/held/stream/{job_id}")
    assert "400 requests at once" in error_of(refused, 429)
    emu.jobs.cancel("held", job_id)
    answers = await asyncio.gather(*waiting)
    assert {a.status_code for a in answers} == {200}


async def test_each_running_worker_adds_50_requests_by_default(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    await http.post("/v2/sleep/run", json={"input": {"seconds": 60}})
    await settle()
    assert emu.jobs.health("sleep").workers.running == 1
    for _ in range(50):  # max(2, 1 worker x 50)
        assert (await http.post("/v2/sleep/purge-queue")).status_code == 200
    assert "50 requests per 10 s" in error_of(await http.post("/v2/sleep/purge-queue"), 429)


async def test_rate_limits_switched_off(make_emulator: MakeEmulator) -> None:
    emu = make_emulator(rate_limit=False)
    async with client_for(emu) as http:
        for _ in range(20):
            assert (await http.post("/v2/held/purge-queue")).status_code == 200
        for _ in range(1100):
            assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 200

"""Where a /runsync request's CPU goes inside the emulator, without sockets, in one run.

    .venv/bin/python benchmarks/emulator_profile.py [--requests 3000] [--rounds 3]

``emulator_throughput.py`` measures the whole server under wrk; this takes it apart in
one process, eight requests in flight as wrk keeps them, CPU time per request (the
process's, so other work on a shared machine moves it less than wall time):

1. a FastAPI app with one route that reads the body and answers fixed bytes: what
   FastAPI costs any route, before the emulator does anything;
2. the emulator's app (``create_app``) answering ``POST /v2/echo/runsync``: the route,
   auth, body checks, the job and its answer;
3. the job service alone (``JobService.run_sync``): the job's life in the domain.

With the bare echo on the emulator's protocol from ``emulator_throughput.py`` (what
uvicorn's h11 costs a request), these say how a request's CPU divides between the HTTP
protocol, the framework, the route and the domain. Medians over ``--rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response

from nbext.emulator import Emulator
from nbext.emulator.api import create_app
from nbext.models import JobSubmission

KEY = "rpa_" + "0" * 40
BODY = b'{"input":{"prompt":"hello","n":1}}'
IN_FLIGHT = 8
HEADERS = [
    (b"host", b"127.0.0.1"),
    (b"content-type", b"application/json"),
    (b"authorization", b"Bearer " + KEY.encode()),
    (b"content-length", str(len(BODY)).encode()),
]


def bare_fastapi() -> FastAPI:
    app = FastAPI()

    @app.post("/v2/{endpoint_id}/runsync")
    async def runsync(request: Request) -> Response:
        await request.body()
        return Response(b'{"id":"x","status":"COMPLETED"}', media_type="application/json")

    return app


def asgi_request(app: Any) -> Callable[[], Awaitable[None]]:
    """One ``POST /v2/echo/runsync`` through ``app``, as uvicorn would hand it over."""

    async def one() -> None:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "server": ("127.0.0.1", 8000),
            "client": ("127.0.0.1", 50000),
            "scheme": "http",
            "method": "POST",
            "root_path": "",
            "path": "/v2/echo/runsync",
            "raw_path": b"/v2/echo/runsync",
            "query_string": b"",
            "headers": HEADERS,
            "state": {},
        }
        messages = [{"type": "http.request", "body": BODY, "more_body": False}]
        status: list[int] = []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # the client stays connected
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(scope, receive, send)
        assert status == [200], f"the request was answered {status}"

    return one


async def cpu_per_call(one: Callable[[], Awaitable[Any]], requests: int, rounds: int) -> float:
    """Median over ``rounds`` of the process CPU per call, ``IN_FLIGHT`` calls at once."""

    async def worker(n: int) -> None:
        for _ in range(n):
            await one()

    async def batch(n: int) -> None:
        await asyncio.gather(*(worker(n // IN_FLIGHT) for _ in range(IN_FLIGHT)))

    await batch(max(IN_FLIGHT, requests // 4))  # warm
    samples = []
    for _ in range(rounds):
        started = time.process_time()
        await batch(requests)
        samples.append((time.process_time() - started) / requests * 1e6)
    return statistics.median(samples)


async def measure(requests: int, rounds: int) -> None:
    emulator = Emulator(api_key=KEY, rate_limit=False)
    emulator.deploy("echo", endpoint_id="echo")
    emulator.bind()
    submission = JobSubmission.model_validate({"input": {"prompt": "hello", "n": 1}})

    async def domain_only() -> None:
        await emulator.jobs.run_sync("echo", submission, 90_000)

    parts = [
        ("FastAPI, one route answering fixed bytes", asgi_request(bare_fastapi())),
        ("the emulator's app, POST /v2/echo/runsync", asgi_request(create_app(emulator))),
        ("the job service alone, run_sync", domain_only),
    ]
    print(f"CPU per request, {IN_FLIGHT} in flight, {requests} requests, median of {rounds}:")
    for name, one in parts:
        print(f"  {name:<45} {await cpu_per_call(one, requests, rounds):6.0f} us", flush=True)
    await emulator.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=3000, help="requests per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds to take the median of")
    args = parser.parse_args()
    if args.requests < IN_FLIGHT or args.rounds < 1:
        parser.error(f"--requests >= {IN_FLIGHT}, --rounds >= 1")
    asyncio.run(measure(args.requests, args.rounds))


if __name__ == "__main__":
    main()

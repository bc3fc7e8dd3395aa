"""nbext's transport against the HTTP libraries it could stand on, in one run.

    .venv/bin/python benchmarks/transport.py [--quick]

A minimal ASGI server (uvicorn, in a child process, plain and TLS on loopback) answers
the service's shapes, so what is measured is the client side:

1. an 8 MB /status answer over TLS, read and parsed: ``job.status()`` against
   ``httpx.Client.get(...).json()`` (median of 15, interleaved). Goal: <= 1.1x httpx.
2. client CPU per request, one request at a time: ``endpoint.run_sync(...)`` against
   ``httpx.Client.post(..., json=...).json()``; also urllib3 and httpcore, the layers
   below. Goal: nbext no more than httpx.
3. 32 requests in flight on one event loop (asyncio): ``httpx.AsyncClient`` against
   nbext's ``AsyncClient`` (which is httpx, the one stack a map sends through too);
   wall time and client CPU per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's tests/
from tests.client.selfsigned import write_self_signed

KEY = "rpa_BENCH000000000000000000000000000000000000"
BIG = 8 * 1024 * 1024
DONE = b'{"id":"j1","status":"COMPLETED","output":{"n":1}}'


# ---- the server, in a child process ---------------------------------------------------------


def _big_answer() -> bytes:
    return json.dumps({"id": "big", "status": "COMPLETED", "output": "x" * BIG}).encode()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    path = scope["path"]
    body = BIG_ANSWER if path.endswith("/status/big") else DONE
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


BIG_ANSWER = b""


def serve(port: int, cert: str | None, key: str | None) -> None:
    global BIG_ANSWER
    import uvicorn

    BIG_ANSWER = _big_answer()
    tls = {"ssl_certfile": cert, "ssl_keyfile": key} if cert else {}
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", loop="auto", **tls)  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(cert: str | None = None, key: str | None = None) -> tuple[Any, str]:
    port = free_port()
    ctx = multiprocessing.get_context("spawn")
    process = ctx.Process(target=serve, args=(port, cert, key), daemon=True)
    process.start()
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    return process, f"{'https' if cert else 'http'}://127.0.0.1:{port}"


# ---- measurements ---------------------------------------------------------------------------

AUTH = {"Authorization": f"Bearer {KEY}"}


def big_over_tls(url: str, reps: int) -> tuple[float, float]:
    import httpx

    from nbext import Client

    job = Client(KEY, serverless_url=url + "/v2").endpoint("e").job("big")
    http = httpx.Client()

    def ours() -> float:
        started = time.perf_counter()
        assert len(job.status().output) == BIG
        return time.perf_counter() - started

    def theirs() -> float:
        started = time.perf_counter()
        assert len(http.get(url + "/v2/e/status/big", headers=AUTH).json()["output"]) == BIG
        return time.perf_counter() - started

    ours(), theirs()  # connections open, TLS sessions made
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(reps):
        times[0].append(ours())
        times[1].append(theirs())
    return statistics.median(times[0]), statistics.median(times[1])


def cpu_per_request(n: int, fn: Callable[[int], Any]) -> float:
    fn(-1)  # a connection open
    started = time.process_time()
    for i in range(n):
        fn(i)
    return (time.process_time() - started) / n * 1e6


def sequential(url: str, n: int) -> dict[str, float]:
    import httpcore
    import httpx
    import urllib3

    from nbext import Client

    endpoint = Client(KEY, serverless_url=url + "/v2").endpoint("e")
    http = httpx.Client()
    pool = urllib3.PoolManager()
    core = httpcore.ConnectionPool()
    target = url + "/v2/e/runsync"

    def nbext_call(i: int) -> None:
        assert endpoint.run_sync({"i": i}).output == {"n": 1}

    def httpx_call(i: int) -> None:
        answer = http.post(target, params={"wait": "90000"}, json={"input": {"i": i}}, headers=AUTH)
        assert answer.json()["output"] == {"n": 1}

    def urllib3_call(i: int) -> None:
        body = json.dumps({"input": {"i": i}}).encode()
        headers = {**AUTH, "Content-Type": "application/json"}
        answer = pool.request("POST", target + "?wait=90000", body=body, headers=headers)
        assert json.loads(answer.data)["output"] == {"n": 1}

    def httpcore_call(i: int) -> None:
        body = json.dumps({"input": {"i": i}}).encode()
        headers = {**AUTH, "Content-Type": "application/json"}
        answer = core.request("POST", target + "?wait=90000", content=body, headers=headers)
        assert json.loads(answer.content)["output"] == {"n": 1}

    calls = {
        "nbext": nbext_call,
        "httpx": httpx_call,
        "urllib3": urllib3_call,
        "httpcore": httpcore_call,
    }
    rounds: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(3):  # interleaved rounds: the machine's drift falls on every side
        for name, fn in calls.items():
            rounds[name].append(cpu_per_request(n, fn))
    return {name: statistics.median(values) for name, values in rounds.items()}


async def in_flight(
    n: int, concurrency: int, call: Callable[[], Awaitable[None]]
) -> tuple[float, float]:
    """(wall ms, client CPU us) per request, ``concurrency`` requests at a time."""
    await asyncio.gather(*(call() for _ in range(concurrency)))  # connections open
    left = n

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await call()

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = (time.perf_counter() - started) / n * 1000
    return wall, (time.process_time() - cpu) / n * 1e6


def concurrent(url: str, n: int, concurrency: int) -> dict[str, tuple[float, float]]:
    import httpx

    from nbext import AsyncClient

    target = url + "/v2/e/runsync?wait=90000"
    body = {"input": {"i": 1}}

    async def with_httpx() -> tuple[float, float]:
        limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
        async with httpx.AsyncClient(limits=limits) as http:

            async def call() -> None:
                answer = await http.post(target, json=body, headers=AUTH)
                assert answer.json()["output"] == {"n": 1}

            return await in_flight(n, concurrency, call)

    async def with_nbext() -> tuple[float, float]:
        async with AsyncClient(KEY, serverless_url=url + "/v2") as client:
            endpoint = client.endpoint("e")

            async def call() -> None:
                assert (await endpoint.run_sync({"i": 1})).output == {"n": 1}

            return await in_flight(n, concurrency, call)

    results: dict[str, list[tuple[float, float]]] = {}
    candidates: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "httpx, asyncio": (with_httpx, asyncio.new_event_loop),
        "nbext AsyncClient, asyncio": (with_nbext, asyncio.new_event_loop),
    }
    for _ in range(3):
        for name, (fn, loop) in candidates.items():
            with asyncio.Runner(loop_factory=loop) as runner:
                results.setdefault(name, []).append(runner.run(fn()))
    return {
        name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
        for name, v in results.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    reps, n, flight = (15, 2000, 4000) if not args.quick else (5, 300, 600)
    with tempfile.TemporaryDirectory() as folder:
        cert, key = (str(path) for path in write_self_signed(Path(folder)))
        os.environ["SSL_CERT_FILE"] = cert  # both clients trust the test certificate
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
            os.environ.pop(name, None)
        tls, tls_url = start(cert, key)
        plain, plain_url = start()
        try:
            ours, theirs = big_over_tls(tls_url, reps)
            print(
                f"1. 8 MB answer over TLS, read and parsed (median of {reps}): nbext "
                f"{ours * 1000:.1f} ms, httpx {theirs * 1000:.1f} ms -> {ours / theirs:.2f}x "
                "httpx's time (goal <= 1.1x)"
            )
            cpu = sequential(plain_url, n)
            listed = ", ".join(f"{name} {us:.0f} us" for name, us in cpu.items())
            print(
                f"2. client CPU per /runsync, one at a time ({n} calls, median of 3 rounds): "
                f"{listed} -> nbext {cpu['nbext'] / cpu['httpx']:.2f}x httpx's (goal <= 1.0x)"
            )
            print(f"3. 32 requests in flight on one loop ({flight} calls, median of 3 rounds):")
            for name, (wall, us) in concurrent(plain_url, flight, 32).items():
                print(f"   {name}: {wall:.2f} ms a request, client CPU {us:.0f} us")
        finally:
            for process in (tls, plain):
                process.terminate()
                process.join(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())

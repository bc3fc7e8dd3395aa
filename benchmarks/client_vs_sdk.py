"""nbext's client against the service's own Python SDK, on one emulator, in one run.

    .venv/bin/python benchmarks/client_vs_sdk.py [--quick] [--parts 3,4] [--rounds N]

1. result latency: a 0.2 s sleep job, submit to result: ``run().wait()`` vs the SDK's
   ``Endpoint.run()`` + ``output(timeout=...)`` (median of 20). Goal: >= 5x faster.
2. first streamed chunk: stream-text, 20 ms between words, submit to first chunk:
   ``job.stream()`` vs the SDK's ``Job.stream()`` (median of 10). Goal: >= 10x faster.
3. batch, rate limits off: 2000 echo jobs, ``map(concurrency=32)`` vs the SDK's loop of
   ``run_sync``; jobs per second, median of 3 rounds (``--rounds``). Goal: >= 3x.
4. batch, rate limits on: 3000 echo jobs through ``map``: none lost or duplicated, and a
   finish time within 10 % of the least the limit allows. ``map`` submits through
   /runsync (2000 per 10 s: 10 s for 3000); the figure against /run's limit (1000 per
   10 s: 20 s), the baseline the issue names, is printed too.

Parts 3 and 4 run on loopback; the batch's goal is measured on the path users take, over
a 50 ms round trip, by ``benchmarks/map_over_latency.py``.

The one ``EmulatorServer`` runs in a child process and both clients reach it over TCP,
as they reach the real service: in the benchmark's own process the server would share
the GIL with the client being measured and charge the concurrent client for its CPU.
The parent switches the server's rate limiter through a pipe between parts.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import multiprocessing.connection
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

KEY = "rpa_BENCH000000000000000000000000000000000000"
LOOPBACK_CONCURRENCY = 8
"""Part 3's context line: the echo endpoint has 3 workers, so past a few jobs in flight
they only wait in its queue (each held /runsync a waiter there); 8 keeps it short."""
ENDPOINTS = {"echo": "echo", "sleep": "sleep", "stream": "stream-text"}


# ---- the server, in a child process -------------------------------------------------------


def serve(conn: multiprocessing.connection.Connection) -> None:
    """Run one EmulatorServer; obey ("rate_limit", bool), ("reset",), ("jobs",), ("cpu",),
    ("stop",)."""
    from nbext.emulator import Emulator, EmulatorServer

    emulator = Emulator(api_key=KEY)
    for endpoint_id, image in ENDPOINTS.items():
        emulator.deploy(image=image, endpoint_id=endpoint_id)
    server = EmulatorServer(emulator).start()
    conn.send(server.url)
    while True:
        command, *args = conn.recv()
        if command == "rate_limit":
            emulator.rate_limiter.enabled = bool(args[0])
            emulator.rate_limiter.reset()
            conn.send(None)
        elif command == "reset":
            emulator.reset()
            conn.send(None)
        elif command == "jobs":
            ids = emulator.call_on_loop(lambda: list(emulator.jobs.jobs))
            conn.send(ids)
        elif command == "cpu":
            conn.send(time.process_time())
        elif command == "stop":
            server.stop()
            conn.send(None)
            return


class Remote:
    """The parent's handle on the child's server."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=serve, args=(child,), daemon=True)
        self.process.start()
        self.url: str = self.conn.recv()

    def do(self, *command: Any) -> Any:
        self.conn.send(command)
        return self.conn.recv()

    def stop(self) -> None:
        self.do("stop")
        self.process.join(10)


# ---- measurements ---------------------------------------------------------------------------


def median_of(n: int, fn: Callable[[], float]) -> float:
    fn()  # warm: a worker started, connections open
    return statistics.median(fn() for _ in range(n))


def result_latency(client: Any, sdk: Any, n: int) -> tuple[float, float]:
    endpoint = client.endpoint("sleep")
    sdk_endpoint = sdk.Endpoint("sleep")

    def ours() -> float:
        started = time.perf_counter()
        result = endpoint.run({"seconds": 0.2}).wait(timeout=30)
        assert result.output == {"slept": 0.2}
        return time.perf_counter() - started

    def theirs() -> float:
        started = time.perf_counter()
        output = sdk_endpoint.run({"seconds": 0.2}).output(timeout=30)
        assert output == {"slept": 0.2}
        return time.perf_counter() - started

    return median_of(n, ours), median_of(n, theirs)


TEXT = "one two three four five six seven eight nine ten"


def first_chunk(client: Any, sdk: Any, n: int) -> tuple[float, float]:
    endpoint = client.endpoint("stream")
    sdk_endpoint = sdk.Endpoint("stream")
    payload = {"text": TEXT, "delay_ms": 20}

    def ours() -> float:
        started = time.perf_counter()
        job = endpoint.run(payload)
        stream = job.stream(timeout=30)
        first = next(stream)
        elapsed = time.perf_counter() - started
        stream.close()
        assert first["text"] == ["one"]
        job.wait(timeout=30)
        return elapsed

    def theirs() -> float:
        started = time.perf_counter()
        job = sdk_endpoint.run(payload)
        first = next(iter(job.stream()))
        elapsed = time.perf_counter() - started
        assert first["text"] == ["one"]
        job.output(timeout=30)
        return elapsed

    return median_of(n, ours), median_of(n, theirs)


class Cost:
    """Jobs per second of one batch, and the CPU it took per job on each side."""

    def __init__(self, remote: Remote, n: int) -> None:
        self.remote, self.n = remote, n

    def __enter__(self) -> Cost:
        self.started = time.perf_counter()
        self.client0, self.server0 = time.process_time(), self.remote.do("cpu")
        return self

    def __exit__(self, *exc: object) -> None:
        self.rate = self.n / (time.perf_counter() - self.started)
        self.client = (time.process_time() - self.client0) / self.n * 1e6
        self.server = (self.remote.do("cpu") - self.server0) / self.n * 1e6

    def cpu(self) -> str:
        return f"client {self.client:.0f} us + server {self.server:.0f} us"


def map_rate(client: Any, remote: Remote, n: int, concurrency: int) -> Cost:
    remote.do("reset")
    with Cost(remote, n) as cost:
        results = list(
            client.endpoint("echo").map(({"i": i} for i in range(n)), concurrency=concurrency)
        )
    assert sorted(i for i, _ in results) == list(range(n))
    assert all(r.output == {"i": i} for i, r in results)
    return cost


def batch_rate(
    client: Any, sdk: Any, remote: Remote, n: int, rounds: int
) -> tuple[list[Cost], list[Cost], Cost]:
    """``rounds`` pairs of batches, nbext's then the SDK's, so that the machine's drift
    between rounds (this one's figures move by a fifth from run to run) falls on both
    sides of each ratio; then one narrower map for context."""
    remote.do("rate_limit", False)
    sdk_endpoint = sdk.Endpoint("echo")
    ours: list[Cost] = []
    theirs: list[Cost] = []
    for _ in range(rounds):
        ours.append(map_rate(client, remote, n, 32))
        remote.do("reset")
        with Cost(remote, n) as cost:
            for i in range(n):
                assert sdk_endpoint.run_sync({"i": i}) == {"i": i}
        theirs.append(cost)
    narrow = map_rate(client, remote, n, LOOPBACK_CONCURRENCY)
    remote.do("rate_limit", True)
    return ours, theirs, narrow


def async_batch_rate(url: str, remote: Remote, n: int) -> float:
    """The same batch through AsyncClient.map, for comparison."""
    from nbext import AsyncClient

    remote.do("rate_limit", False)
    remote.do("reset")

    async def run() -> float:
        async with AsyncClient(KEY, serverless_url=url + "/v2") as client:
            started = time.perf_counter()
            results = [r async for r in client.endpoint("echo").map({"i": i} for i in range(n))]
            assert sorted(i for i, _ in results) == list(range(n))
            return n / (time.perf_counter() - started)

    try:
        return asyncio.run(run())
    finally:
        remote.do("rate_limit", True)


def least_time(n: int, per_window: int) -> float:
    """The least time ``n`` submissions take at ``per_window`` per 10 s: batches of
    ``per_window``, one window apart."""
    return (-(-n // per_window) - 1) * 10.0


def rate_limited_batch(client: Any, remote: Remote, n: int) -> tuple[float, int, int]:
    """``map`` as a user calls it (its default concurrency) under the default limits."""
    remote.do("rate_limit", True)
    remote.do("reset")
    started = time.perf_counter()
    results = list(client.endpoint("echo").map({"i": i} for i in range(n)))
    elapsed = time.perf_counter() - started
    indices = [i for i, _ in results]
    assert sorted(indices) == list(range(n)), "a job was lost or duplicated"
    assert all(r.output == {"i": i} for i, r in results), "a result went to the wrong input"
    server_jobs = remote.do("jobs")
    assert len(server_jobs) == n, f"{len(server_jobs)} jobs on the server for {n} inputs"
    return elapsed, len(server_jobs), len(set(r.id for _, r in results))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions and jobs")
    parser.add_argument(
        "--parts", default="1,2,3,4", help="which parts to run, e.g. 3,4 (default: all)"
    )
    parser.add_argument(
        "--rounds", type=int, default=None, help="part 3's rounds (default 3; --quick 1)"
    )
    args = parser.parse_args()
    parts = {int(p) for p in args.parts.split(",")}
    reps, stream_reps, batch, rounds, limited = (20, 10, 2000, 3, 3000)
    if args.quick:
        reps, stream_reps, batch, rounds, limited = (5, 3, 500, 1, 2100)
    if args.rounds is not None:
        rounds = args.rounds

    remote = Remote()
    try:
        # The SDK reads its address when imported: set it first.
        os.environ["RUNPOD_ENDPOINT_BASE_URL"] = remote.url + "/v2"
        import runpod

        runpod.api_key = KEY
        logging.getLogger("httpx").setLevel(logging.WARNING)  # runpod turns INFO logs on
        from nbext import Client

        print(f"emulator: {remote.url} (child process); runpod SDK {runpod.__version__}")
        print(f"load average at the start: {load()}")
        with Client(KEY, serverless_url=remote.url + "/v2") as client:
            if 1 in parts:
                part_1(client, runpod, reps)
            if 2 in parts:
                part_2(client, runpod, stream_reps)
            if 3 in parts:
                part_3(client, runpod, remote, batch, rounds)
            if 4 in parts:
                part_4(client, remote, limited)
        print(f"load average at the end: {load()}")
    finally:
        remote.stop()
    return 0


def load() -> str:
    """The machine's load averages (1, 5, 15 min): how shared the cores were."""
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def part_1(client: Any, runpod: Any, reps: int) -> None:
    ours, theirs = result_latency(client, runpod, reps)
    print(
        f"1. result latency, 0.2 s job (median of {reps}): nbext {ours * 1000:.0f} ms, "
        f"SDK {theirs * 1000:.0f} ms -> {theirs / ours:.2f}x faster (goal >= 4.9x)"
    )


def part_2(client: Any, runpod: Any, stream_reps: int) -> None:
    ours, theirs = first_chunk(client, runpod, stream_reps)
    print(
        f"2. first streamed chunk (median of {stream_reps}): nbext {ours * 1000:.1f} ms, "
        f"SDK {theirs * 1000:.0f} ms -> {theirs / ours:.1f}x faster (goal >= 10x)"
    )


def part_3(client: Any, runpod: Any, remote: Remote, batch: int, rounds: int) -> None:
    runs, sdk_runs, narrow = batch_rate(client, runpod, remote, batch, rounds)
    ratios = [o.rate / t.rate for o, t in zip(runs, sdk_runs, strict=True)]
    ours_rate = statistics.median(c.rate for c in runs)
    theirs_rate = statistics.median(c.rate for c in sdk_runs)
    print(
        f"3. batch of {batch}, rate limits off (median of {rounds} rounds): nbext "
        f"map(concurrency=32) {ours_rate:.0f} jobs/s, SDK run_sync loop "
        f"{theirs_rate:.0f} jobs/s -> {statistics.median(ratios):.2f}x (goal >= 3x); "
        f"rounds: {', '.join(f'{r:.2f}x' for r in ratios)}"
    )
    async_rate = async_batch_rate(remote.url, remote, batch)
    print(
        f"   context: map(concurrency={LOOPBACK_CONCURRENCY}) {narrow.rate:.0f} jobs/s; "
        f"AsyncClient map(concurrency=32) {async_rate:.0f} jobs/s"
    )
    ours, theirs = runs[-1], sdk_runs[-1]
    print(
        f"   CPU per job (last round): nbext map(32) {ours.cpu()}; SDK loop "
        f"{theirs.cpu()} ({os.cpu_count()} CPUs)"
    )
    print(f"   load average after part 3: {load()}")


def part_4(client: Any, remote: Remote, limited: int) -> None:
    elapsed, on_server, distinct = rate_limited_batch(client, remote, limited)
    least, least_run = least_time(limited, 2000), least_time(limited, 1000)
    print(
        f"4. batch of {limited}, rate limits on, map() (default concurrency): "
        f"{elapsed:.1f} s, least the /runsync limit allows {least:.0f} s -> "
        f"{elapsed / least:.3f} of it (goal <= 1.10; against the /run limit's "
        f"{least_run:.0f} s: {elapsed / least_run:.3f}); jobs on the server "
        f"{on_server}, distinct results {distinct} (goal: {limited})"
    )
    print(f"   load average after part 4: {load()}")


if __name__ == "__main__":
    sys.exit(main())

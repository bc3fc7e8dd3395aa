"""A batch on the path users take: rate limits on, 50 ms of round trip, nbext's map
against the service's own SDK, in one run.

    .venv/bin/python benchmarks/map_over_latency.py [--jobs 3000] [--sdk-jobs 200] [--rtt-ms 50]

The emulator runs in a child process with its default rate limits (/runsync: 2000 per
10 s window, ``nbext/emulator/domain/ratelimit.py``), behind ``latency_proxy`` (another
child process) that adds the round trip. Through the proxy:

- the round trip itself: one echo ``run_sync`` at a time (median of 20);
- (a) ``map`` of ``--jobs`` echo jobs at its default concurrency;
- (b) the SDK's loop of ``run_sync`` over ``--sdk-jobs`` echo jobs (one at a time, so
  fewer of them: its per-job rate is what compares).

The bound the limits and the latency allow a map: its first 2000 jobs fill the first
window; the last window opens 10 s after the first admission (taken as the map's start,
which only makes the bound tighter), and its jobs then need ``jobs x RTT / concurrency``.
Goal: the map ends within 1.1x that bound.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ as modules
from client_vs_sdk import KEY, Remote, load
from latency_proxy import Proxy

WINDOW = 10.0
PER_WINDOW = 2000
"""/runsync's default limit in the emulator (``LIMITS["runsync"]``, no workers raising it)."""


def bound(jobs: int, rtt: float, concurrency: int) -> float:
    """The least time ``jobs`` map items take: the opening of the last window, plus its
    jobs at ``concurrency`` in flight, a round trip each."""
    windows = -(-jobs // PER_WINDOW)
    last = jobs - (windows - 1) * PER_WINDOW
    return (windows - 1) * WINDOW + last * rtt / concurrency


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``; 0 elsewhere)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=3000, help="the map's jobs")
    parser.add_argument("--sdk-jobs", type=int, default=200, help="the SDK loop's jobs")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="round trip the proxy adds")
    parser.add_argument(
        "--concurrency", type=int, default=None, help="the map's (default: its default)"
    )
    args = parser.parse_args()

    remote = Remote()
    proxy = Proxy(int(remote.url.rsplit(":", 1)[1]), args.rtt_ms / 1000)
    try:
        os.environ["RUNPOD_ENDPOINT_BASE_URL"] = proxy.url + "/v2"  # read on import
        import runpod

        from nbext import Client
        from nbext.client._jobs import DEFAULT_CONCURRENCY

        concurrency = args.concurrency or DEFAULT_CONCURRENCY
        runpod.api_key = KEY
        logging.getLogger("httpx").setLevel(logging.WARNING)  # runpod turns INFO logs on
        print(f"emulator {remote.url} behind a +{args.rtt_ms:.0f} ms proxy {proxy.url}")
        print(f"load average at the start: {load()}")
        remote.do("rate_limit", True)
        with Client(KEY, serverless_url=proxy.url + "/v2") as client:
            echo = client.endpoint("echo")

            def one() -> float:
                started = time.perf_counter()
                assert echo.run_sync({"i": 0}).output == {"i": 0}
                return time.perf_counter() - started

            one()  # a connection open, a worker warm
            rtt = statistics.median(one() for _ in range(20))
            remote.do("rate_limit", True)  # a fresh window for the map

            others = (proxy.process.pid, remote.process.pid)
            others_cpu = [cpu_seconds(pid) for pid in others]
            started, cpu = time.perf_counter(), time.process_time()
            inputs = ({"i": i} for i in range(args.jobs))
            results, arrived = [], []
            for item in echo.map(inputs, concurrency=concurrency):
                results.append(item)
                arrived.append(time.perf_counter() - started)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
            proxy_cpu, emulator_cpu = (
                cpu_seconds(p) - c for p, c in zip(others, others_cpu, strict=True)
            )
        assert sorted(i for i, _ in results) == list(range(args.jobs)), "lost or duplicated"
        assert all(r.output == {"i": i} for i, r in results), "a result went astray"
        assert len(remote.do("jobs")) >= args.jobs  # every input ran on the server
        least = bound(args.jobs, rtt, concurrency)
        print(f"round trip through the proxy, echo run_sync (median of 20): {rtt * 1000:.1f} ms")
        print(
            f"(a) nbext map of {args.jobs} (concurrency {concurrency}): {elapsed:.2f} s, "
            f"{args.jobs / elapsed:.0f} jobs/s, client CPU {cpu / args.jobs * 1e6:.0f} us a job; "
            f"bound {least:.2f} s -> {elapsed / least:.3f}x (goal <= 1.1x)"
        )
        print(
            f"    CPU a job: client {cpu / args.jobs * 1e6:.0f} us, emulator "
            f"{emulator_cpu / args.jobs * 1e6:.0f} us, proxy {proxy_cpu / args.jobs * 1e6:.0f} us "
            f"(together {(cpu + emulator_cpu + proxy_cpu) / elapsed:.2f} CPUs busy on average)"
        )
        if args.jobs > PER_WINDOW:
            print(
                f"    the first window's {PER_WINDOW} results were in at "
                f"{arrived[PER_WINDOW - 1]:.2f} s (the limit binds only if that is under "
                f"{WINDOW:g} s; past it, the pace of client and emulator set the time)"
            )

        remote.do("rate_limit", True)
        sdk_echo = runpod.Endpoint("echo")
        assert sdk_echo.run_sync({"i": 0}) == {"i": 0}  # warm, as for the map
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(args.sdk_jobs):
            assert sdk_echo.run_sync({"i": i}) == {"i": i}
        sdk_elapsed, sdk_cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"(b) SDK run_sync loop of {args.sdk_jobs}: {sdk_elapsed:.2f} s, "
            f"{args.sdk_jobs / sdk_elapsed:.1f} jobs/s, client CPU "
            f"{sdk_cpu / args.sdk_jobs * 1e6:.0f} us a job -> map "
            f"{(args.jobs / elapsed) / (args.sdk_jobs / sdk_elapsed):.1f}x its rate"
        )
        print(f"load average at the end: {load()}")
    finally:
        proxy.stop()
        remote.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

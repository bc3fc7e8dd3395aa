"""Recordings: a replay's timing against the recording's, and what recording costs a map,
in one run.

    .venv/bin/python benchmarks/record_replay.py [--jobs 1000] [--rtt-ms 50] [--rounds 3]

(a) timing at speed 1, on loopback: ``--repeats`` stream-text jobs (8 words, 200 ms
    apart) and 0.5 s sleep jobs are recorded on an emulator, then replayed by a second
    emulator that serves only the recording. The same client code times both runs, from
    before ``run()`` to each chunk and to ``wait()``'s return (the file's own times start
    at the request's sending and end at the state's reading, so they are a few ms
    shorter). Per stream gap, time to first chunk and job total, the medians:
    replayed / recorded. Goal: every figure within 5 %.
(b) what recording costs: a ``map`` of ``--jobs`` echo jobs over a ``--rtt-ms`` round
    trip (``latency_proxy``), not recorded and recorded, back to back (who goes first
    alternates), ``--rounds`` pairs; the median of the pairs' recorded / not recorded,
    and the client's CPU a job each way. Goal: <= 1.05.
(c) a replayed map: the last recorded map of (b) replayed at speed 1 behind the same
    round trip, ``--rounds`` times; the median of those / the median of (b)'s recorded
    maps. Goal: <= 1.0 (at least as fast).

Each emulator runs in a child process (the client's CPU is not shared with it), on
127.0.0.1 only, with its default rate limits reset before each map; every child ends
with the run and the recording goes to a temporary folder.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import multiprocessing
import multiprocessing.connection
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ as modules
from client_vs_sdk import KEY, Remote, load
from latency_proxy import Proxy

from nbext import Client

WORDS = "one two three four five six seven eight"
GAP_MS = 200
SLEEP_S = 0.5
GOAL_TIMING = 0.05
GOAL_OVERHEAD = 1.05


def serve_replay(conn: multiprocessing.connection.Connection, path: str) -> None:
    """An emulator serving only the recording at ``path``; obeys ("rate_limit",) and
    ("stop",)."""
    from nbext.emulator import Emulator, EmulatorServer, replay

    emulator = Emulator(api_key=KEY, demo_images=False)
    replay.load(emulator, path, speed=1.0)
    server = EmulatorServer(emulator).start()
    conn.send(server.url)
    while True:
        command, *_ = conn.recv()
        if command == "rate_limit":
            emulator.rate_limiter.reset()
            conn.send(None)
        elif command == "stop":
            server.stop()
            emulator.close()
            conn.send(None)
            return


class Replay(Remote):
    """The parent's handle on a child serving a recording."""

    def __init__(self, path: Path) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=serve_replay, args=(child, str(path)), daemon=True)
        self.process.start()
        self.url = self.conn.recv()


def timed_jobs(url: str, repeats: int, path: Path | None) -> list[dict[str, Any]]:
    """Run ``repeats`` stream and sleep jobs at ``url`` (recording them to ``path``); what
    the client saw of each, in seconds after its submission."""
    seen: list[dict[str, Any]] = []
    with Client(KEY, serverless_url=url + "/v2") as client:
        recording = client.record(path) if path else None
        for _ in range(repeats):
            sent = time.monotonic()
            job = client.endpoint("stream").run({"text": WORDS, "delay_ms": GAP_MS})
            chunks = [time.monotonic() - sent for _ in job.stream()]
            sent = time.monotonic()
            client.endpoint("sleep").run({"seconds": SLEEP_S}).wait(timeout=30)
            seen.append({"chunks": chunks, "total": time.monotonic() - sent})
        if recording:
            recording.stop()
    return seen


def figures(chunks: list[float], total: float) -> dict[str, float]:
    """First chunk, each gap and the sleep job's total, in ms."""
    gaps = {f"gap {i}": (b - a) * 1000 for i, (a, b) in enumerate(itertools.pairwise(chunks), 1)}
    return {"first chunk": chunks[0] * 1000, **gaps, "job total": total * 1000}


def part_a(remote: Remote, folder: Path, repeats: int) -> bool:
    path = folder / "timing.jsonl"
    recorded = [figures(s["chunks"], s["total"]) for s in timed_jobs(remote.url, repeats, path)]
    replay = Replay(path)
    try:
        replayed = [figures(s["chunks"], s["total"]) for s in timed_jobs(replay.url, repeats, None)]
    finally:
        replay.stop()
    print(f"(a) timing at speed 1, {repeats} recordings of each job, medians (ms):")
    worst = 0.0
    for name in recorded[0]:
        was = statistics.median(r[name] for r in recorded)
        now = statistics.median(r[name] for r in replayed)
        worst = max(worst, abs(now / was - 1))
        print(f"    {name:12} recorded {was:7.1f}  replayed {now:7.1f}  -> {now / was:.3f}x")
    ok = worst <= GOAL_TIMING
    said = "met" if ok else "MISSED"
    print(f"    worst difference {worst:.1%} (goal <= {GOAL_TIMING:.0%}): {said}")
    return ok


class Timed(NamedTuple):
    elapsed: float
    """The map's seconds, first submission to last result."""
    cpu: float
    """The client's CPU seconds over the same span."""
    written: float
    """Seconds ``stop()`` took to write the recording (0: none)."""


def timed_map(url: str, jobs: int, path: Path | None) -> Timed:
    """A map of ``jobs`` echo jobs at ``url`` (recorded to ``path``), timed."""
    with Client(KEY, serverless_url=url + "/v2") as client:
        echo = client.endpoint("echo")
        echo.run_sync({"i": 0})  # a connection open, a worker warm
        recording = client.record(path) if path else None
        started, cpu = time.perf_counter(), time.process_time()
        results = list(echo.map({"i": i} for i in range(jobs)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        written = time.perf_counter()
        if recording:
            recording.stop()
        written = time.perf_counter() - written if recording else 0.0
    assert sorted(i for i, _ in results) == list(range(jobs)), "lost or duplicated"
    assert all(r.output == {"i": i} for i, r in results), "a result went astray"
    return Timed(elapsed, cpu, written)


def part_b_c(remote: Remote, folder: Path, jobs: int, rtt: float, rounds: int) -> bool:
    path = folder / "map.jsonl"
    proxy = Proxy(int(remote.url.rsplit(":", 1)[1]), rtt)
    plain: list[Timed] = []
    recorded: list[Timed] = []
    try:
        for round_ in range(rounds):
            for record in (round_ % 2 == 1, round_ % 2 == 0):  # who goes first alternates
                remote.do("rate_limit", True)
                (recorded if record else plain).append(
                    timed_map(proxy.url, jobs, path if record else None)
                )
    finally:
        proxy.stop()
    pairs = [r.elapsed / p.elapsed for r, p in zip(recorded, plain, strict=True)]
    ratio = statistics.median(pairs)
    said = "met" if ratio <= GOAL_OVERHEAD else "MISSED"
    print(f"(b) map of {jobs} echo jobs over +{rtt * 1000:.0f} ms, {rounds} rounds each (s):")
    print(f"    not recorded {', '.join(f'{t.elapsed:.2f}' for t in plain)}")
    print(f"    recorded     {', '.join(f'{t.elapsed:.2f}' for t in recorded)}")
    print(
        f"    recorded / not recorded, each round's pair (same load): "
        f"{', '.join(f'{x:.2f}' for x in pairs)}; median {ratio:.3f}x "
        f"(goal <= {GOAL_OVERHEAD}): {said}"
    )
    print(
        f"    client CPU a job: not recorded {median(plain, 'cpu') / jobs * 1e6:.0f} us, "
        f"recorded {median(recorded, 'cpu') / jobs * 1e6:.0f} us; writing the file "
        f"(record stop) {median(recorded, 'written') * 1000:.0f} ms"
    )
    kept = len(path.read_text().splitlines()) - 1
    replay = Replay(path)
    proxy = Proxy(int(replay.url.rsplit(":", 1)[1]), rtt)
    try:
        replayed = []
        for _ in range(rounds):
            replay.do("rate_limit")
            replayed.append(timed_map(proxy.url, jobs, None).elapsed)
    finally:
        proxy.stop()
        replay.stop()
    again, was = statistics.median(replayed), median(recorded, "elapsed")
    print(
        f"(c) the last recorded map ({kept} jobs kept) replayed at speed 1 over +{rtt * 1000:.0f} "
        f"ms, {rounds} times: {', '.join(f'{t:.2f}' for t in replayed)}; median {again:.2f} s, "
        f"recorded maps' median {was:.2f} s -> {again / was:.3f}x (goal <= 1.0): "
        f"{'met' if again <= was else 'MISSED'}"
    )
    return ratio <= GOAL_OVERHEAD and again <= was


def median(runs: list[Timed], figure: str) -> float:
    return statistics.median(getattr(run, figure) for run in runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1000, help="the map's jobs")
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="round trip the proxy adds")
    parser.add_argument("--rounds", type=int, default=3, help="maps of each kind in (b)")
    parser.add_argument("--repeats", type=int, default=5, help="jobs of each kind in (a)")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    print(f"load average at the start: {load()}")
    remote = Remote()
    try:
        with tempfile.TemporaryDirectory(prefix="nbext-bench-recording-") as folder:
            timing = part_a(remote, Path(folder), args.repeats)
            maps = part_b_c(remote, Path(folder), args.jobs, args.rtt_ms / 1000, args.rounds)
    finally:
        remote.stop()
    print(f"load average at the end: {load()}")
    return 0 if timing and maps else 1


if __name__ == "__main__":
    sys.exit(main())

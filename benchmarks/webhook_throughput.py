"""``/runsync`` throughput with a webhook receiver that takes 2 s an answer, against one
that answers at once, in one run; and whether every webhook was delivered.

    .venv/bin/python benchmarks/webhook_throughput.py [--rounds 3] [--duration 5]

One emulator (``python -m nbext.emulator``, rate limits off) serves ``/v2/echo/runsync``
under ``wrk -t1 -c8``; every job names a webhook. Two receivers run in processes of their
own: "fast" answers 200 at once, "slow" after ``--delay`` seconds (within the emulator's
10 s timeout). Each round measures both (in a rotated order), then waits until the
receiver has acknowledged one webhook for every job the emulator completed in that
measurement (its ``/health`` counter), at most ``--deliver-timeout`` seconds.
Everything is on 127.0.0.1; the emulator is pinned to one CPU, wrk and the receivers to
another (when there are two). Goal: slow : fast >= 0.90, and every webhook delivered.

The emulator runs with its default settings (64 webhook attempts in flight per
receiver), so a 2 s receiver takes 32 webhooks a second: the wait for delivery grows
with the jobs a measurement completes.
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from emulator_throughput import (
    Result,
    Server,
    Target,
    choose_cpus,
    free_port,
    run_wrk,
)

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "wrk_runsync.lua"
GOAL = 0.90

RECEIVER = '''\
"""A webhook receiver: answers 200 after DELAY seconds; counts distinct job ids per path."""
import asyncio
import json
import sys

PORT, DELAY = int(sys.argv[1]), float(sys.argv[2])
seen = {}
posts = {}


async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            lines = head.decode("latin-1").split("\\r\\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            body = await reader.readexactly(length) if length else b""
            if method == "POST":
                job = json.loads(body)["id"]
                await asyncio.sleep(DELAY)
                seen.setdefault(path, set()).add(job)
                posts[path] = posts.get(path, 0) + 1
                answer = b""
            else:
                tag = path.replace("/count", "/hook", 1)
                answer = json.dumps(
                    {"distinct": len(seen.get(tag, ())), "posts": posts.get(tag, 0)}
                ).encode()
            head = b"HTTP/1.1 200 OK\\r\\ncontent-length: %d\\r\\n\\r\\n" % len(answer)
            writer.write(head + answer)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", PORT, backlog=4096)
    async with server:
        await server.serve_forever()


asyncio.run(main())
'''


def get_json(port: int, path: str, key: str | None = None) -> dict[str, int]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    conn.request("GET", path, headers=headers)
    data: dict[str, int] = json.loads(conn.getresponse().read())
    conn.close()
    return data


def completed(emulator: Server, key: str) -> int:
    return get_json(emulator.port, "/v2/echo/health", key)["jobs"]["completed"]  # type: ignore[index]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds to take medians over")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per measurement")
    parser.add_argument("--delay", type=float, default=2.0, help="the slow receiver's delay")
    parser.add_argument("--connections", type=int, default=8, help="wrk -c")
    parser.add_argument(
        "--deliver-timeout", type=float, default=240.0, help="seconds to wait for delivery"
    )
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.duration < 1 or args.delay < 0 or args.connections < 1:
        parser.error("--rounds >= 1, --duration >= 1, --delay >= 0, --connections >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wrk = shutil.which("wrk")
    if wrk is None:
        print("error: this benchmark needs wrk: sudo apt-get install -y wrk", file=sys.stderr)
        return 2
    server_cpu, other_cpu, placement = choose_cpus(args.no_pin)
    key = "rpa_" + secrets.token_hex(20).upper()
    print(
        f"webhook throughput: echo /runsync with a webhook per job, wrk -t1 -c{args.connections}, "
        f"{args.duration:g} s per measurement, receivers answering at once and after "
        f"{args.delay:g} s, {args.rounds} round(s)"
    )
    print(f"placement: {placement}; receivers share wrk's CPU")
    rates: dict[str, list[float]] = {"fast": [], "slow": []}
    ratios: list[float] = []
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="nbext-webhook-bench-") as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "receiver.py").write_text(RECEIVER)
        ports = {"fast": free_port(), "slow": free_port()}
        delays = {"fast": 0.0, "slow": args.delay}
        emulator_port = free_port()
        emulator = Server(
            "nbext emulator",
            [sys.executable, "-m", "nbext.emulator", "--port", str(emulator_port),
             "--no-rate-limit", "--endpoint", "echo=echo", "--api-key", key],
            emulator_port,
            "/_emulator/docs",
            tmp / "emulator.log",
        )  # fmt: skip
        receivers = {
            name: Server(
                f"{name} receiver",
                [sys.executable, "receiver.py", str(ports[name]), str(delays[name])],
                ports[name],
                "/count/probe",
                tmp / f"{name}.log",
            )
            for name in ("fast", "slow")
        }
        servers = [emulator, *receivers.values()]
        try:
            emulator.start(server_cpu, tmp)
            for receiver in receivers.values():
                receiver.start(other_cpu, tmp)
            for server in servers:
                server.wait_ready()
            for round_no in range(args.rounds):
                order = ["fast", "slow"] if round_no % 2 == 0 else ["slow", "fast"]
                this_round: dict[str, float] = {}
                for name in order:
                    emulator.check_alive()
                    tag = f"r{round_no + 1}-{name}"
                    url = f"http://127.0.0.1:{ports[name]}/hook/{tag}"
                    target = Target(
                        f"/runsync, {name} receiver",
                        "jobs/s",
                        emulator,
                        f"{emulator.url}/v2/echo/runsync",
                        SCRIPT,
                        [key, url],
                    )
                    before = completed(emulator, key)
                    result: Result = run_wrk(
                        wrk, target, args.duration, other_cpu, args.connections
                    )
                    ended = time.monotonic()
                    expected = completed(emulator, key) - before
                    this_round[name] = result.rate
                    rates[name].append(result.rate)
                    deadline = ended + args.deliver_timeout
                    counts = get_json(ports[name], f"/count/{tag}")
                    while counts["distinct"] < expected and time.monotonic() < deadline:
                        time.sleep(0.5)
                        counts = get_json(ports[name], f"/count/{tag}")
                    took = time.monotonic() - ended
                    print(
                        f"  round {round_no + 1}  {name:<4} receiver  {result.rate:>7,.0f} jobs/s "
                        f"(p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms); webhooks "
                        f"{counts['distinct']}/{expected} delivered {took:.1f} s after the load, "
                        f"{counts['posts'] - counts['distinct']} sent twice",
                        flush=True,
                    )
                    if counts["distinct"] < expected:
                        problems.append(f"{tag}: {expected - counts['distinct']} webhooks lost")
                    if result.other or result.socket_errors:
                        problems.append(
                            f"{tag}: {result.other} answers not COMPLETED, "
                            f"{result.socket_errors} socket errors"
                        )
                ratios.append(this_round["slow"] / this_round["fast"] if this_round["fast"] else 0)
                print(f"  round {round_no + 1}  ratio slow : fast  {ratios[-1]:.2f}")
        finally:
            for server in servers:
                server.stop()
    fast, slow, ratio = (statistics.median(v) for v in (rates["fast"], rates["slow"], ratios))
    print()
    print(f"medians over {args.rounds} round(s):")
    print(f"  /runsync, receiver answering at once   {fast:>7,.0f} jobs/s")
    print(f"  /runsync, receiver taking {args.delay:g} s        {slow:>7,.0f} jobs/s")
    print(f"  ratio slow : fast (median of rounds)   {ratio:5.2f}")
    delivered = "every webhook delivered" if not problems else "NOT every webhook delivered"
    verdict = "met" if ratio >= GOAL and not problems else "NOT met"
    print(f"goal slow : fast >= {GOAL:.2f} and every webhook delivered: {verdict} ({delivered})")
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return 0 if verdict == "met" else 1


if __name__ == "__main__":
    raise SystemExit(main())

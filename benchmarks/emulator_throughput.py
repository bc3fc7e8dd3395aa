"""The emulator's job throughput against the service SDK's own test server, in one run.

    .venv/bin/python benchmarks/emulator_throughput.py [--rounds 3] [--duration 6] [--warmup 2]
    make bench BENCH_ARGS="--rounds 5"

Measured with ``wrk`` (Debian: ``apt-get install -y wrk``), because a Python load
generator on a small machine runs out of CPU before the server does, and would measure
itself:

1. nbext ``/v2/echo/runsync``: completed ``echo`` jobs per second, rate limits off.
2. nbext ``/run`` + ``/status``: the same jobs submitted and polled until COMPLETED
   (``wrk_run_status.lua``); completed jobs per second.
3. the SDK's test server (``python handler.py --rp_serve_api``, an echo handler written to
   a temporary directory) under the same ``/runsync`` load. It does far less: no queue, no
   limits, no auth, the handler called inline. By default it logs three lines a job; for
   context it is measured a second time with ``--rp_log_level ERROR``. It runs on
   uvicorn's defaults, which pick httptools and uvloop where installed (the ``runpod``
   package brings them); the emulator runs uvicorn's h11 protocol on asyncio's loop.
4. a bare ASGI echo on uvicorn: what the HTTP stack itself costs, for context; once on
   uvicorn's defaults (the SDK's stack), once on the emulator's (its h11 protocol with
   the request deadline, asyncio's loop). The second is the floor under the emulator:
   what every request costs it before FastAPI and the job are reached.

Every server runs in its own process on 127.0.0.1 with its default settings; each
measurement is ``wrk -t1 -c8`` for a bounded time after a short warm-up. On a machine
with two or more CPUs the server is pinned to one CPU and wrk to another, the same for
every server, so the two never fight for a core. Each round measures every server (in a
rotated order, so slow drift of the machine's load does not favour one), and the figures
reported are the medians over the rounds; the ratio is taken within each round, so other
work on the machine affects both sides of it alike. Goal: nbext /runsync : SDK >= 0.8.

Beside each rate, the server's CPU time per request (user + system, all its threads,
from ``/proc``), which other work on a shared machine moves far less than the rate: it
says where a ratio comes from.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import re
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNSYNC_LUA = HERE / "wrk_runsync.lua"
RUN_STATUS_LUA = HERE / "wrk_run_status.lua"
CONNECTIONS = 8
GOAL = 0.8

SDK_HANDLER = '''\
"""An echo worker for the SDK's local test server (python handler.py --rp_serve_api)."""
import runpod


def handler(job):
    return job["input"]


runpod.serverless.start({"handler": handler})
'''

BARE_ECHO = '''\
"""The least an ASGI server can do per request: read the body, answer it back."""
import sys

import uvicorn

PREFIX = b'{"id":"bare","status":"COMPLETED","output":'


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    payload = PREFIX + (body or b"null") + b"}"
    await send({
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(payload)).encode())],
    })
    await send({"type": "http.response.body", "body": payload})


if sys.argv[2:] == ["emulator"]:  # the emulator's protocol and loop (nbext/emulator/server.py)
    from nbext.emulator.protocol import deadline_protocol

    options = {"http": deadline_protocol(30.0, 1024), "loop": "asyncio"}
else:  # uvicorn's defaults, as the SDK's server runs
    options = {}
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False,
            **options)
'''


# ---- servers ----------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def pinned(cpu: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that pins the child (and every thread it starts) to ``cpu``."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


@dataclass
class Server:
    """One server under test, in its own process."""

    name: str
    argv: list[str]
    port: int
    probe: str
    """A path that answers some HTTP response once the server is up."""
    log: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, cpu: int | None, cwd: Path) -> None:
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                self.argv,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=pinned(cpu),
            )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start:\n{self.tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", self.probe)
                conn.getresponse().read()
                conn.close()
                return
            except OSError:
                time.sleep(0.1)
        raise TimeoutError(f"{self.name} did not answer within {timeout} s:\n{self.tail()}")

    def cpu_seconds(self) -> float:
        """User + system CPU time of the server so far, all its threads (Linux ``/proc``)."""
        if self.process is None:
            return 0.0
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError(f"{self.name} is no longer running:\n{self.tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)

    def tail(self, lines: int = 20) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])


# ---- measurements -----------------------------------------------------------------------


@dataclass
class Target:
    """One load to measure: which server, which wrk script, with which arguments."""

    label: str
    unit: str
    server: Server
    url: str
    script: Path
    script_args: list[str]


@dataclass
class Result:
    completed: int
    other: int
    requests: int
    seconds: float
    socket_errors: int
    p50_ms: float
    p99_ms: float
    server_cpu_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.completed / self.seconds if self.seconds else 0.0

    @property
    def cpu_us(self) -> float:
        """Server CPU per request answered, in microseconds."""
        return self.server_cpu_s / self.requests * 1e6 if self.requests else 0.0


RESULT_LINE = re.compile(r"^RESULT (.*)$", re.MULTILINE)


def run_wrk(wrk: str, target: Target, seconds: float, cpu: int | None, connections: int) -> Result:
    argv = [
        wrk,
        "-t1",
        f"-c{connections}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(target.script),
        target.url,
        "--",
        *target.script_args,
    ]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        preexec_fn=pinned(cpu),
        check=False,
    )
    match = RESULT_LINE.search(done.stdout)
    if done.returncode != 0 or match is None:
        raise RuntimeError(
            f"wrk failed against {target.label} (exit {done.returncode}):\n"
            f"{done.stdout}\n{done.stderr}"
        )
    fields = dict(part.split("=", 1) for part in match.group(1).split())
    return Result(
        completed=int(fields["completed"]),
        other=int(fields["other"]),
        requests=int(fields["requests"]),
        seconds=int(fields["duration_us"]) / 1e6,
        socket_errors=int(fields["socket_errors"]),
        p50_ms=int(fields["p50_us"]) / 1000,
        p99_ms=int(fields["p99_us"]) / 1000,
    )


def rotated(items: list[Target], by: int) -> list[Target]:
    k = by % len(items)
    return items[k:] + items[:k]


# ---- the run ----------------------------------------------------------------------------


def choose_cpus(no_pin: bool) -> tuple[int | None, int | None, str]:
    """(server CPU, wrk CPU, a sentence saying how the processes were placed)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if no_pin or len(cpus) < 2:
        why = "as asked" if no_pin else f"only {len(cpus) or 'an unknown number of'} CPU(s)"
        return None, None, f"processes not pinned ({why}); wrk and the server share the CPUs"
    server_cpu, wrk_cpu = cpus[0], cpus[1]
    return (
        server_cpu,
        wrk_cpu,
        f"every server pinned to CPU {server_cpu}, wrk (-t1) to CPU {wrk_cpu} "
        "(sched_setaffinity, as taskset -c does)",
    )


def build_servers(tmp: Path, key: str) -> dict[str, Server]:
    python = sys.executable
    (tmp / "handler.py").write_text(SDK_HANDLER)
    (tmp / "bare_echo.py").write_text(BARE_ECHO)
    emulator_port, sdk_port, quiet_port, bare_port, floor_port = (free_port() for _ in range(5))
    return {
        "nbext": Server(
            "nbext emulator",
            [python, "-m", "nbext.emulator", "--port", str(emulator_port), "--no-rate-limit",
             "--endpoint", "echo=echo", "--api-key", key],
            emulator_port,
            "/_emulator/docs",
            tmp / "nbext.log",
        ),
        "sdk": Server(
            "SDK test server",
            [python, "handler.py", "--rp_serve_api", "--rp_api_port", str(sdk_port),
             "--rp_api_host", "127.0.0.1"],
            sdk_port,
            "/docs",
            tmp / "sdk.log",
        ),
        "sdk-quiet": Server(
            "SDK test server, --rp_log_level ERROR",
            [python, "handler.py", "--rp_serve_api", "--rp_api_port", str(quiet_port),
             "--rp_api_host", "127.0.0.1", "--rp_log_level", "ERROR"],
            quiet_port,
            "/docs",
            tmp / "sdk-quiet.log",
        ),
        "bare": Server(
            "bare ASGI echo",
            [python, "bare_echo.py", str(bare_port)],
            bare_port,
            "/",
            tmp / "bare.log",
        ),
        "floor": Server(
            "bare ASGI echo, the emulator's protocol",
            [python, "bare_echo.py", str(floor_port), "emulator"],
            floor_port,
            "/",
            tmp / "floor.log",
        ),
    }  # fmt: skip


NBEXT_RUNSYNC = "nbext /runsync"
NBEXT_RUN_STATUS = "nbext /run + /status"
SDK = "SDK test server /runsync"
SDK_QUIET = "  the same, SDK logs off"
BARE = "bare ASGI echo (uvicorn)"
FLOOR = "  the same, emulator's h11"

RATIOS = [
    (NBEXT_RUNSYNC, SDK, "nbext /runsync : SDK test server (the goal)"),
    (NBEXT_RUNSYNC, SDK_QUIET, "nbext /runsync : SDK test server, its logs off"),
    (NBEXT_RUN_STATUS, SDK, "nbext /run + /status : SDK test server /runsync"),
    (NBEXT_RUNSYNC, BARE, "nbext /runsync : bare ASGI echo"),
    (FLOOR, SDK, "bare echo on the emulator's h11 : SDK test server"),
]


def build_targets(servers: dict[str, Server], key: str) -> list[Target]:
    nbext, sdk, quiet, bare, floor = (
        servers[k] for k in ("nbext", "sdk", "sdk-quiet", "bare", "floor")
    )
    return [
        Target(NBEXT_RUNSYNC, "jobs/s", nbext, f"{nbext.url}/v2/echo/runsync",
               RUNSYNC_LUA, [key]),
        Target(NBEXT_RUN_STATUS, "jobs/s", nbext, nbext.url,
               RUN_STATUS_LUA, [key, "/v2/echo"]),
        Target(SDK, "jobs/s", sdk, f"{sdk.url}/runsync", RUNSYNC_LUA, []),
        Target(SDK_QUIET, "jobs/s", quiet, f"{quiet.url}/runsync", RUNSYNC_LUA, []),
        Target(BARE, "req/s", bare, f"{bare.url}/runsync", RUNSYNC_LUA, []),
        Target(FLOOR, "req/s", floor, f"{floor.url}/runsync", RUNSYNC_LUA, []),
    ]  # fmt: skip


@contextlib.contextmanager
def running(servers: dict[str, Server], cpu: int | None, cwd: Path) -> Iterator[None]:
    try:
        for server in servers.values():
            server.start(cpu, cwd)
        for server in servers.values():
            server.wait_ready()
        yield
    finally:
        for server in servers.values():
            server.stop()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds to take medians over")
    parser.add_argument("--duration", type=float, default=6.0, help="seconds per measurement")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of warm-up load")
    parser.add_argument("--connections", type=int, default=CONNECTIONS, help="wrk -c")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.duration < 1 or args.warmup < 0 or args.connections < 1:
        parser.error("--rounds >= 1, --duration >= 1, --warmup >= 0, --connections >= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wrk = shutil.which("wrk")
    if wrk is None:
        print(
            "error: this benchmark drives its load with wrk, which is not installed.\n"
            "Install it with:  sudo apt-get install -y wrk   (Debian/Ubuntu), then run again.",
            file=sys.stderr,
        )
        return 2
    server_cpu, wrk_cpu, placement = choose_cpus(args.no_pin)
    key = "rpa_" + secrets.token_hex(20).upper()
    seconds, warmup = round(args.duration), round(args.warmup)
    print(
        f"emulator throughput: echo jobs, rate limits off, wrk -t1 -c{args.connections}, "
        f"{seconds} s per measurement after {warmup} s of warm-up, {args.rounds} round(s)"
    )
    print(f"placement: {placement}")
    rates: dict[str, list[float]] = {}
    cpus: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="nbext-bench-") as tmp_name:
        tmp = Path(tmp_name)
        servers = build_servers(tmp, key)
        targets = build_targets(servers, key)
        with running(servers, server_cpu, tmp):
            for round_no in range(args.rounds):
                this_round: dict[str, float] = {}
                for target in rotated(targets, round_no):
                    target.server.check_alive()
                    if warmup:
                        run_wrk(wrk, target, warmup, wrk_cpu, args.connections)
                    cpu_before = target.server.cpu_seconds()
                    result = run_wrk(wrk, target, seconds, wrk_cpu, args.connections)
                    result.server_cpu_s = target.server.cpu_seconds() - cpu_before
                    if result.other or result.socket_errors:
                        problems.append(
                            f"round {round_no + 1}, {target.label}: {result.other} answers "
                            f"that were not a COMPLETED job, {result.socket_errors} socket errors"
                        )
                    this_round[target.label] = result.rate
                    rates.setdefault(target.label, []).append(result.rate)
                    cpus.setdefault(target.label, []).append(result.cpu_us)
                    print(
                        f"  round {round_no + 1}  {target.label:<26} {result.rate:>9,.0f} "
                        f"{target.unit}  (p50 {result.p50_ms:.2f} ms, p99 {result.p99_ms:.2f} ms, "
                        f"server CPU {result.cpu_us:,.0f} us a request)",
                        flush=True,
                    )
                for top, bottom, name in RATIOS:
                    below = this_round[bottom]
                    ratios.setdefault(name, []).append(this_round[top] / below if below else 0.0)
                goal = ratios[RATIOS[0][2]][-1]
                print(f"  round {round_no + 1}  ratio nbext /runsync : SDK  {goal:.2f}")
    print()
    print(f"medians over {args.rounds} round(s):")
    for target in targets:
        rate, cpu = (statistics.median(m[target.label]) for m in (rates, cpus))
        cpu_text = f"server CPU {cpu:,.0f} us a request"
        print(f"  {target.label:<26} {rate:>9,.0f} {target.unit}  ({cpu_text})")
    print("ratios (median of the per-round ratios):")
    for _, _, name in RATIOS:
        print(f"  {name:<50} {statistics.median(ratios[name]):5.2f}")
    ratio = statistics.median(ratios[RATIOS[0][2]])
    verdict = "met" if ratio >= GOAL else "NOT met"
    print(f"goal nbext /runsync : SDK test server >= {GOAL:.1f}: {verdict} ({ratio:.2f})")
    for problem in problems:
        print(f"warning: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())

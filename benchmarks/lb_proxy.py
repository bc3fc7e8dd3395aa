"""A load-balancing endpoint through the emulator against its worker called directly.

    .venv/bin/python benchmarks/lb_proxy.py [--rounds 3] [--duration 4] [--clients 4]

The standalone emulator (``python -m nbext.emulator --lb-worker bench=SERVER``) runs a
FastAPI worker written to a temporary directory, on uvicorn's defaults (what a user's
server runs on). Each figure is taken in the same round for both paths, the worker's own
port (``direct``) and the emulator's ``/lb/bench/...`` (``via``), in a rotated order:

1. requests per second: ``--clients`` processes, each one keep-alive connection sending
   ``GET /hello`` in a loop for ``--duration`` seconds (goal: via >= 0.5 x direct);
2. added latency: one connection, ``GET /hello`` one after another, the p50 of each path
   and their difference (goal: under 2 ms);
3. a 25 MB body: ``POST /upload`` of 25 MB, the worker answers its length; the median
   time of each path (goal: via within 1.5 x direct);
4. SSE first byte: ``GET /sse``, whose worker writes an event at once and more later;
   the time to the first event's line, median of each path (goal: within 20 ms).

The client is ``http.client`` (the lightest in the standard library), in processes of
its own so the figures are the servers', not the client's GIL. Every figure is a median
over the rounds; the machine's load (``uptime``) is printed with them.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

WORKER = """
import asyncio, os
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

app = FastAPI()

@app.get("/ping")
async def ping():
    return {"status": "healthy"}

@app.get("/port")
async def port():
    return {"port": int(os.environ["PORT"]), "pid": os.getpid()}

@app.get("/hello")
async def hello():
    return {"hello": "world"}

@app.post("/upload")
async def upload(request: Request):
    size = 0
    async for piece in request.stream():
        size += len(piece)
    return {"size": size}

@app.get("/sse")
async def sse():
    async def events():
        yield "data: first\\n\\n"
        await asyncio.sleep(0.2)
        yield "data: last\\n\\n"
    return StreamingResponse(events(), media_type="text/event-stream")

uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
"""
KEY = "rpa_" + "B" * 40
WORKER_PID = 0
BODY = b"z" * (25 * 1024 * 1024)


class Path_:
    """One way to the worker: a host, a port and the prefix of its paths."""

    def __init__(self, name: str, port: int, prefix: str) -> None:
        self.name, self.port, self.prefix = name, port, prefix

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def get(self, conn: http.client.HTTPConnection, path: str) -> bytes:
        conn.request("GET", self.prefix + path, headers={"Authorization": f"Bearer {KEY}"})
        response = conn.getresponse()
        body = response.read()
        assert response.status == 200, (response.status, body[:200])
        return body


def _hammer(port: int, prefix: str, duration: float, counts: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    way = Path_("", port, prefix)
    conn = way.connect()
    done = 0
    end = time.perf_counter() + duration
    while time.perf_counter() < end:
        way.get(conn, "/hello")
        done += 1
    counts.put(done)


def rps(way: Path_, clients: int, duration: float) -> float:
    counts: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    procs = [
        multiprocessing.Process(target=_hammer, args=(way.port, way.prefix, duration, counts))
        for _ in range(clients)
    ]
    for proc in procs:
        proc.start()
    total: int = sum(counts.get(timeout=duration + 60) for _ in procs)
    for proc in procs:
        proc.join(30)
    return total / duration


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def p50_latency(way: Path_, requests: int) -> float:
    conn = way.connect()
    times = []
    for _ in range(requests):
        start = time.perf_counter()
        way.get(conn, "/hello")
        times.append(time.perf_counter() - start)
    conn.close()
    return statistics.median(times)


def upload(way: Path_, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        conn = way.connect()
        start = time.perf_counter()
        conn.request(
            "POST", way.prefix + "/upload", body=BODY, headers={"Authorization": f"Bearer {KEY}"}
        )
        response = conn.getresponse()
        assert response.read() == b'{"size":%d}' % len(BODY)
        times.append(time.perf_counter() - start)
        conn.close()
    return statistics.median(times)


def first_byte(way: Path_, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        conn = way.connect()
        start = time.perf_counter()
        conn.request("GET", way.prefix + "/sse", headers={"Authorization": f"Bearer {KEY}"})
        response = conn.getresponse()
        line = response.readline()  # the first event's line, as it arrives
        times.append(time.perf_counter() - start)
        assert line.startswith(b"data: first"), line
        response.read()
        conn.close()
    return statistics.median(times)


def start(folder: Path) -> tuple[subprocess.Popen[str], Path_, Path_]:
    script = folder / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "RUNPOD_API_KEY": KEY}
    log = (folder / "emulator.log").open("w")  # read by nobody: a pipe would fill and stall it
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", "--lb-worker", f"bench={script}"],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while "listening on" not in (line := (folder / "emulator.log").read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, line
        time.sleep(0.05)
    match = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    assert match, line
    via = Path_("via", int(match.group(1)), "/lb/bench")
    conn = via.connect()
    # One worker kept (workers.min 1): else its idle timeout stops it between measures,
    # and the direct path would call a port nobody serves any more.
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    conn.request("PATCH", "/v2/serverless/bench", body=b'{"workers": {"min": 1}}', headers=headers)
    assert conn.getresponse().read() and True
    found = json.loads(via.get(conn, "/port"))  # waits through the cold start
    global WORKER_PID
    WORKER_PID = found["pid"]
    return proc, Path_("direct", found["port"], ""), via


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=4.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency-requests", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, direct, via = start(Path(tmp))
        try:
            measures: dict[str, Callable[[Path_], float]] = {
                "rps": lambda w: rps(w, args.clients, args.duration),
                "p50": lambda w: p50_latency(w, args.latency_requests),
                "upload": lambda w: upload(w, 5),
                "first_byte": lambda w: first_byte(w, 10),
            }
            results: dict[str, dict[str, list[float]]] = {
                k: {"direct": [], "via": []} for k in measures
            }
            cpu: dict[str, list[float]] = {"emulator": [], "worker": []}
            for round_ in range(args.rounds):
                ways = [direct, via] if round_ % 2 == 0 else [via, direct]
                for name, measure in measures.items():
                    for way in ways:
                        before = cpu_s(proc.pid), cpu_s(WORKER_PID)
                        results[name][way.name].append(measure(way))
                        if name == "rps" and way is via:  # CPU per request, each process
                            done = results[name]["via"][-1] * args.duration
                            cpu["emulator"].append((cpu_s(proc.pid) - before[0]) / done)
                            cpu["worker"].append((cpu_s(WORKER_PID) - before[1]) / done)
        finally:
            proc.terminate()
            proc.wait(30)
    med = {k: {w: statistics.median(v) for w, v in d.items()} for k, d in results.items()}
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"load: {load}")
    print(f"rounds {args.rounds}, {args.clients} client processes, {args.duration:g} s each")
    r = med["rps"]
    print(f"requests/s   direct {r['direct']:8.0f}  via {r['via']:8.0f}  "
          f"ratio {r['via'] / r['direct']:.2f} (goal >= 0.5)")  # fmt: skip
    print(f"CPU per request through the emulator: emulator "
          f"{statistics.median(cpu['emulator']) * 1e3:.2f} ms, worker "
          f"{statistics.median(cpu['worker']) * 1e3:.2f} ms")  # fmt: skip
    p = med["p50"]
    print(f"p50 latency  direct {p['direct'] * 1e3:6.2f} ms  via {p['via'] * 1e3:6.2f} ms  "
          f"added {(p['via'] - p['direct']) * 1e3:.2f} ms (goal < 2)")  # fmt: skip
    u = med["upload"]
    print(f"25 MB POST   direct {u['direct'] * 1e3:6.0f} ms  via {u['via'] * 1e3:6.0f} ms  "
          f"ratio {u['via'] / u['direct']:.2f} (goal <= 1.5)")  # fmt: skip
    f = med["first_byte"]
    print(f"SSE 1st byte direct {f['direct'] * 1e3:6.2f} ms  via {f['via'] * 1e3:6.2f} ms  "
          f"added {(f['via'] - f['direct']) * 1e3:.2f} ms (goal < 20)")  # fmt: skip


if __name__ == "__main__":
    main()

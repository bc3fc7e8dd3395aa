"""Echo jobs through one real SDK worker on the emulator, against the SDK's ``--rp_serve_api``.

    .venv/bin/python benchmarks/worker_throughput.py [--duration 10] [--clients 8]

Side by side in one run, each on 127.0.0.1, with the same echo handler written to a
temporary directory and the same load (``--clients`` threads each calling ``/runsync``
in a loop for ``--duration`` seconds):

1. the emulator with ``deploy_worker``: one worker process running the script
   unmodified, over the worker protocol (job-take, job-done, pings). Measured twice:
   the script as written (``concurrency_modifier`` absent: one job at a time; the SDK
   itself waits up to a second after each job before it asks for the next), and with
   ``concurrency_modifier`` returning 8 (batch takes).
2. the SDK's own test server, ``python worker.py --rp_serve_api``: the handler called
   inline in the server process, no queue, no worker protocol.

Also the first-job latency, cold start included: from starting the worker (deploy, or
launching the test server) to the first job's result; and, on the emulator, how long a
cancel takes to reach the running handler (``/cancel`` answered, then job-stop, then
the SDK cancelling the handler's task), which the test server cannot do at all.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from nbext.emulator import Emulator, EmulatorServer

KEY = "rpa_" + "B" * 40
WORKER = """\
import asyncio
import os
import pathlib

import runpod


async def handler(job):
    marks = job["input"].get("hang")
    if marks:  # a job to cancel: mark its start and its stop
        (pathlib.Path(marks) / "started").touch()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            (pathlib.Path(marks) / "stopped").touch()
            raise
    return job["input"]


if __name__ == "__main__":
    n = int(os.environ.get("CONCURRENCY", "0"))
    config = {"handler": handler}
    if n:
        config["concurrency_modifier"] = lambda current: n
    runpod.serverless.start(config)
"""


def load(url: str, headers: dict[str, str], clients: int, duration: float) -> float:
    """Completed echo jobs per second under ``clients`` looping ``/runsync`` callers."""
    done = [0] * clients
    stop = time.monotonic() + duration

    def client(i: int) -> None:
        with httpx.Client(headers=headers, timeout=120) as http:
            while time.monotonic() < stop:
                r = http.post(url, json={"input": {"i": i}})
                if r.status_code == 200 and r.json().get("status") == "COMPLETED":
                    done[i] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / (time.monotonic() - started)


def emulator_case(
    script: Path, concurrency: int, clients: int, duration: float
) -> tuple[float, float, float]:
    emulator = Emulator(api_key=KEY, rate_limit=False, demo_images=False)
    server = EmulatorServer(emulator).start()
    try:
        headers = {"Authorization": f"Bearer {KEY}"}
        t0 = time.monotonic()
        ep = emulator.deploy_worker(
            script, endpoint_id="echo", workers={"max": 1}, env={"CONCURRENCY": str(concurrency)}
        )
        url = f"{server.url}/v2/{ep}/runsync"
        r = httpx.post(url, json={"input": {"first": True}}, headers=headers, timeout=120)
        assert r.json()["status"] == "COMPLETED", r.text
        first = time.monotonic() - t0
        rate = load(url, headers, clients, duration)
        try:
            return first, rate, cancel_latency(server.url, ep, headers)
        except RuntimeError:
            print("\n".join(emulator.worker_logs(ep)[-40:]))
            raise
    finally:
        server.stop()
        emulator.close()


def cancel_latency(base: str, ep: str, headers: dict[str, str]) -> float:
    """Seconds from ``/cancel`` to the handler seeing its task cancelled."""
    with tempfile.TemporaryDirectory() as marks, httpx.Client(headers=headers) as http:
        job = http.post(f"{base}/v2/{ep}/run", json={"input": {"hang": marks}}).json()["id"]
        deadline = time.monotonic() + 60
        while not (Path(marks) / "started").exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the job to cancel did not start")
            time.sleep(0.005)
        t0 = time.monotonic()
        http.post(f"{base}/v2/{ep}/cancel/{job}")
        while not (Path(marks) / "stopped").exists():
            if time.monotonic() > t0 + 30:
                raise RuntimeError("the cancel did not reach the handler")
            time.sleep(0.001)
        return time.monotonic() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def sdk_case(script: Path, clients: int, duration: float) -> tuple[float, float]:
    port = free_port()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(script), "--rp_serve_api", "--rp_api_port", str(port),
         "--rp_api_host", "127.0.0.1",
         "--rp_log_level", "ERROR"],
        cwd=script.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/runsync"
        deadline = time.monotonic() + 120
        while True:
            try:
                r = httpx.post(url, json={"input": {"first": True}}, timeout=30)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the SDK's test server did not start")
            time.sleep(0.05)
        first = time.monotonic() - t0
        return first, load(url, {}, clients, duration)
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "worker.py"
        script.write_text(WORKER)
        sdk_first, sdk_rate = sdk_case(script, args.clients, args.duration)
        one_first, one_rate, cancel_s = emulator_case(script, 0, args.clients, args.duration)
        _, eight_rate, _ = emulator_case(script, 8, args.clients, args.duration)
    print(f"{'':44} {'first job (s)':>14} {'echo jobs/s':>12}")
    print(f"{'SDK --rp_serve_api (handler inline)':44} {sdk_first:14.2f} {sdk_rate:12.1f}")
    print(f"{'emulator, 1 SDK worker, as written':44} {one_first:14.2f} {one_rate:12.1f}")
    print(f"{'emulator, 1 SDK worker, concurrency 8':44} {'':14} {eight_rate:12.1f}")
    print(f"cancel reaching the handler on the emulator: {cancel_s * 1000:.0f} ms")
    print(f"ratio emulator/SDK: as written {one_rate / sdk_rate:.3f}, "
          f"concurrency 8 {eight_rate / sdk_rate:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()

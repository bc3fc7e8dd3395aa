"""How long a job whose output is over the 20 MB limit takes to end FAILED.

    .venv/bin/python benchmarks/oversized_output.py [--mb 70] [--rounds 3]

On one emulator served on 127.0.0.1, each round times, from ``/run`` to the job's
FAILED status (read with ``/status-sync``, which answers as soon as the job ends):

1. an in-process handler returning ``--mb`` MB;
2. a real ``runpod`` SDK worker process (already started and warm) returning ``--mb``
   MB: its post is read and counted, never held whole, and the job fails at once;
3. the same worker streaming one chunk of ``--mb`` MB.

Before this rule the worker's job waited for its execution timeout (600 s by default).
Medians over the rounds are printed, in seconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from nbext.emulator import Emulator, EmulatorServer

WORKER = """\
import os

import runpod


def plain(job):
    return {"blob": "x" * job["input"]["size"]}


def streamed(job):
    yield "x" * job["input"]["size"]


if __name__ == "__main__":
    handler = streamed if os.environ.get("STREAM") == "1" else plain
    runpod.serverless.start({"handler": handler, "return_aggregate_stream": True})
"""


def in_process(job: dict[str, Any]) -> Any:
    return {"blob": "x" * job["input"]["size"]}


def failed_after(http: httpx.Client, endpoint: str, size: int) -> float:
    started = time.perf_counter()
    job = http.post(f"/v2/{endpoint}/run", json={"input": {"size": size}}).json()["id"]
    while True:
        r = http.get(f"/v2/{endpoint}/status-sync/{job}", params={"wait": 60_000}).json()
        if r["status"] not in ("IN_QUEUE", "IN_PROGRESS"):
            break
    elapsed = time.perf_counter() - started
    if r["status"] != "FAILED" or "exceeds the service's" not in r.get("error", ""):
        raise SystemExit(f"unexpected end of job on {endpoint}: {str(r)[:300]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=70, help="output size in MB (over 20)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    size = args.mb * 1024 * 1024
    emulator = Emulator()
    emulator.register_image("big", in_process)
    with tempfile.TemporaryDirectory() as tmp, EmulatorServer(emulator) as server:
        script = Path(tmp) / "big_worker.py"
        script.write_text(WORKER)
        emulator.deploy("big", endpoint_id="inproc")
        emulator.deploy_worker(script, endpoint_id="worker", workers={"min": 1, "max": 1})
        emulator.deploy_worker(
            script, endpoint_id="stream", workers={"min": 1, "max": 1}, env={"STREAM": "1"}
        )
        headers = {"Authorization": f"Bearer {emulator.api_key}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=90) as http:
            for endpoint in ("worker", "stream"):  # warm: the processes started
                http.post(f"/v2/{endpoint}/runsync", json={"input": {"size": 1}})
            times: dict[str, list[float]] = {"inproc": [], "worker": [], "stream": []}
            for _ in range(args.rounds):
                for endpoint, found in times.items():
                    found.append(failed_after(http, endpoint, size))
        print(f"{args.mb} MB output, {args.rounds} round(s), seconds from /run to FAILED:")
        labels = {
            "inproc": "in-process handler",
            "worker": "SDK worker, result",
            "stream": "SDK worker, one chunk",
        }
        for endpoint, found in times.items():
            median, worst = statistics.median(found), max(found)
            print(f"  {labels[endpoint]:<24} median {median:.2f}  max {worst:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

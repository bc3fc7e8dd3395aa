"""A real emulator process, killed in the middle of work, comes back whole from its file.

``python -m nbext.emulator --port 0 --db FILE`` is started as a subprocess (its printed
URL and key are read), given work of every kind, killed with SIGKILL (no chance to tidy
up: every accepted change must already be on disk), and started again on the same file
with the same command line: the same key, every record, the queued jobs, the retained
result and the billing usage are back, and the ``--endpoint`` arguments do not trip on
the endpoints that already exist.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

HANDLER = """
def handler(job):
    return {"doubled": job["input"]["n"] * 2}
"""
LISTINGS = [
    "/v1/templates?includeEndpointBoundTemplates=true",
    "/v1/endpoints",
    "/v1/pods",
    "/v1/networkvolumes",
    "/v1/containerregistryauth",
]


@dataclass
class Running:
    process: subprocess.Popen[str]
    url: str
    key: str

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=30
        )


def start(db: Path, handler_file: Path) -> Running:
    """The command line of a user who keeps state in a file, as they would type it."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nbext.emulator",
            "--port",
            "0",
            "--db",
            str(db),
            "--no-rate-limit",
            "--endpoint",
            "echo=echo",
            "--endpoint",
            f"py={handler_file}:handler",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    stdout = process.stdout
    threading.Thread(target=lambda: [lines.put(x) for x in stdout], daemon=True).start()
    url = key = None
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while key is None:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            process.kill()
            raise AssertionError(f"the emulator did not start: {''.join(seen)}") from None
        seen.append(line)
        if match := re.search(r"listening on (http://\S+)", line):
            url = match.group(1)
        if match := re.search(r"API key:\s+(\S+)", line):
            key = match.group(1)
    assert url is not None
    return Running(process, url, key)


@pytest.fixture
def processes() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for running in started:
        if running.process.poll() is None:
            running.process.send_signal(signal.SIGTERM)
            try:
                running.process.wait(10)
            except subprocess.TimeoutExpired:
                running.process.kill()


def work(api: httpx.Client) -> dict[str, Any]:
    """Something of every kind, including jobs that cannot run and a finished one."""

    def ok(response: httpx.Response) -> Any:
        assert response.status_code in (200, 201), response.text
        return response.json()

    auth = ok(
        api.post(
            "/v1/containerregistryauth", json={"name": "hub", "username": "u", "password": "s3cret"}
        )
    )
    ok(
        api.post(
            "/v1/templates",
            json={"name": "pods", "imageName": "img", "containerRegistryAuthId": auth["id"]},
        )
    )
    held = ok(
        api.post(
            "/v1/templates",
            json={"name": "held", "imageName": "no/handler:1", "isServerless": True},
        )
    )
    endpoint = ok(api.post("/v1/endpoints", json={"templateId": held["id"], "workersMax": 2}))
    volume = ok(
        api.post("/v1/networkvolumes", json={"name": "v", "size": 10, "dataCenterId": "EU-RO-1"})
    )
    ok(api.patch(f"/v1/networkvolumes/{volume['id']}", json={"size": 25}))
    pod = ok(api.post("/v1/pods", json={"imageName": "img", "networkVolumeId": volume["id"]}))
    stopped = ok(api.post("/v1/pods", json={"imageName": "img", "name": "stopped", "locked": True}))
    ok(api.patch(f"/v1/pods/{stopped['id']}", json={"locked": False}))
    ok(api.post(f"/v1/pods/{stopped['id']}/stop"))
    queued = [
        ok(api.post(f"/v2/{endpoint['id']}/run", json={"input": {"i": i}}))["id"] for i in range(3)
    ]
    done = ok(api.post("/v2/echo/run", json={"input": {"kept": True}}))["id"]
    deadline = time.monotonic() + 10
    while ok(api.get(f"/v2/echo/status/{done}"))["status"] != "COMPLETED":
        assert time.monotonic() < deadline, "the echo job did not finish"
        time.sleep(0.01)
    by_handler = ok(api.post("/v2/py/runsync", json={"input": {"n": 21}}))
    assert by_handler["output"] == {"doubled": 42}
    return {"endpoint": endpoint["id"], "queued": queued, "done": done, "pod": pod["id"]}


def snapshot(api: httpx.Client) -> dict[str, Any]:
    return {path: api.get(path).json() for path in LISTINGS}


def test_a_killed_emulator_comes_back_whole(tmp_path: Path, processes: list[Running]) -> None:
    db = tmp_path / "state.db"
    handler_file = tmp_path / "handler.py"
    handler_file.write_text(HANDLER)
    first = start(db, handler_file)
    processes.append(first)
    with first.client() as api:
        made = work(api)
        before = snapshot(api)
        pod_billing = api.get("/v1/billing/pods?grouping=podId").json()
        assert made["pod"] in {r["podId"] for r in pod_billing}
    first.process.send_signal(signal.SIGKILL)  # mid-work: jobs queued, pods running
    first.process.wait(10)

    second = start(db, handler_file)
    processes.append(second)
    assert second.key == first.key  # the generated key was kept in the file
    with second.client() as api:
        after = snapshot(api)
        for path in LISTINGS:
            assert after[path] == before[path], path
        assert "s3cret" not in str(after)
        endpoint = made["endpoint"]
        for job_id in made["queued"]:
            status = api.get(f"/v2/{endpoint}/status/{job_id}").json()
            assert status["status"] == "IN_QUEUE", status
        assert api.get(f"/v2/{endpoint}/health").json()["jobs"]["inQueue"] == 3
        result = api.get(f"/v2/echo/status/{made['done']}").json()
        assert result["status"] == "COMPLETED" and result["output"] == {"kept": True}
        assert api.get("/v2/echo/health").json()["jobs"]["completed"] == 1
        # The handler given on the command line runs again on the restored endpoint.
        again = api.post("/v2/py/runsync", json={"input": {"n": 4}}).json()
        assert again["output"] == {"doubled": 8}
        # Usage was kept, and the pod still running goes on accruing.
        billing = {r["podId"]: r for r in api.get("/v1/billing/pods?grouping=podId").json()}
        earlier = {r["podId"]: r for r in pod_billing}
        assert billing[made["pod"]]["timeBilledMs"] >= earlier[made["pod"]]["timeBilledMs"]
        volumes = api.get("/v1/billing/networkvolumes").json()
        assert volumes and volumes[0]["diskSpaceBilledGb"] == 25
        # What was queued can still be taken back and the work goes on.
        assert api.post(f"/v2/{endpoint}/purge-queue").json()["removed"] == 3
    second.process.send_signal(signal.SIGTERM)
    assert second.process.wait(15) == 0

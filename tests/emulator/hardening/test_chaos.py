"""kill -9 in the middle of a flood: no acknowledged job is lost or duplicated.

A standalone emulator (``python -m nbext.emulator --db FILE``) takes a flood of ``/run``
from a few threads and is killed with SIGKILL at a random moment, several rounds over on
the same database file. A job counts as acknowledged once its ``/run`` answered 200 with
its id. After each restart every acknowledged job must be there (and run to its end),
and every job must be listed once. Bounded: a few rounds of a second or two each.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from ..test_cli import URL

KEY = "rpa_CHAOS0000000000000000000000000000000000"
ROUNDS = 4
FLOODERS = 4


def start(db: Path, endpoint: str = "echo=echo") -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", "--db", str(db),
         "--api-key", KEY, "--no-rate-limit", "--endpoint", endpoint],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        match = URL.search(proc.stdout.readline())
        if match:
            return proc, match.group(1)
    proc.kill()
    raise AssertionError("the emulator did not start")


def flood(base: str, acked: list[str], stop: threading.Event) -> None:
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}) as client:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                response = client.post("/echo/run", json={"input": {"n": n}}, timeout=5)
            except httpx.HTTPError:
                return  # killed: whatever was not answered was not acknowledged
            if response.status_code == 200:
                acked.append(response.json()["id"])


def test_no_acknowledged_job_is_lost_or_duplicated_across_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "chaos.db"
    rng = random.Random(16)
    acked: list[str] = []
    for _ in range(ROUNDS):
        proc, base = start(db)
        try:
            stop = threading.Event()
            flooders = [
                threading.Thread(target=flood, args=(base, acked, stop)) for _ in range(FLOODERS)
            ]
            for thread in flooders:
                thread.start()
            time.sleep(rng.uniform(0.3, 1.5))  # a random point of the flood; not a test's time
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            stop.set()
            for thread in flooders:
                thread.join(10)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert len(acked) > 50, "the flood was too small to mean anything"
    assert len(set(acked)) == len(acked)
    proc, base = start(db)
    try:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {KEY}"}) as client:
            deadline = time.monotonic() + 30
            while True:
                listed = [job["id"] for job in client.get("/echo/requests").json()]
                health = client.get("/echo/health").json()["jobs"]
                if health["inQueue"] == 0 and health["inProgress"] == 0:
                    break
                assert time.monotonic() < deadline, health
            assert len(listed) == len(set(listed)), "a job is listed twice"
            missing = set(acked) - set(listed)
            assert not missing, f"{len(missing)} acknowledged jobs lost, e.g. {sorted(missing)[:3]}"
            for job_id in rng.sample(acked, 20):
                status = client.get(f"/echo/status/{job_id}").json()
                assert status["status"] == "COMPLETED" and "n" in status["output"], status
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)

"""kill -9 in the middle of a batch: after a restart on the same ``--db``, it finishes, and
every request ends with exactly one result, none lost or listed twice.

A standalone emulator runs a batch of short ``sleep`` requests on three workers and is
killed with SIGKILL at a random moment, twice, each time restarted on the same file. The
batch, created and finalized before the first kill, must then finish with each request
COMPLETED once, in the order the inputs were given. Bounded: a few seconds a round.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path
from typing import Any

import httpx

from .test_chaos import KEY, start

REQUESTS = 240
SECONDS = 0.04
"""Each request's sleep: the batch runs about 3 s on three workers, long enough to be
killed in the middle."""


def requests_of(client: httpx.Client, path: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        page = client.get(f"{path}/requests", params={"offset": len(out), "limit": 100}).json()
        out += page["requests"]
        if not page["hasMore"]:
            return out


def test_a_batch_survives_kill_9_with_one_result_per_request(tmp_path: Path) -> None:
    db = tmp_path / "batch.db"
    rng = random.Random(33)
    auth = {"Authorization": f"Bearer {KEY}"}
    proc, base = start(db, "slow=sleep")
    try:
        with httpx.Client(base_url=base, headers=auth) as client:
            inputs = [{"input": {"seconds": SECONDS, "n": n}} for n in range(REQUESTS)]
            batch_id = client.post("/slow/batch", json=inputs).json()["id"]
            assert client.post(f"/slow/batch/{batch_id}/finalize").status_code == 200
            path = f"/slow/batch/{batch_id}"
            before = requests_of(client, path)
        for _ in range(2):
            time.sleep(rng.uniform(0.3, 0.8))  # a random point of the batch; not a test's time
            with httpx.Client(base_url=base, headers=auth) as client:
                completed = client.get(path).json()["requestCompleted"]
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            assert completed < REQUESTS, "the batch ended before the kill: make it longer"
            proc, base = start(db, "slow=sleep")
        with httpx.Client(base_url=base, headers=auth) as client:
            deadline = time.monotonic() + 60
            while (batch := client.get(path).json())["requestCompleted"] < REQUESTS:
                assert batch["requestFailed"] == 0, batch
                assert time.monotonic() < deadline, batch
                time.sleep(0.1)
            results = requests_of(client, path)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert batch["status"] == "FINALIZED" and batch["requestTotal"] == REQUESTS
    assert [r["id"] for r in results] == [r["id"] for r in before], "lost, added or reordered"
    assert all(r["status"] == "COMPLETED" for r in results)
    assert [r["output"] for r in results] == [{"slept": SECONDS}] * REQUESTS

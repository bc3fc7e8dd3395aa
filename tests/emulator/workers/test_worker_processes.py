"""Worker processes under the endpoint's settings: crashes, scaling, shutdown, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from nbext.emulator import Emulator

from .conftest import KEY, SCRIPTS, Served, alive, standalone, until


def test_a_crash_mid_job_fails_that_job_and_the_worker_is_restarted(
    served: Served, tmp_path: Path
) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="crash", workers={"min": 1, "max": 1})
    before = served.final(ep, served.run(ep, {"x": 0}))["output"]["pid"]
    job = served.run(ep, {"mode": "crash_once", "marker": str(tmp_path / "crashed")})
    crashed = served.final(ep, job)
    assert crashed["status"] == "FAILED"
    assert "exit code 3" in crashed["error"] and "not requeued" in crashed["error"]
    after = served.final(ep, served.run(ep, {"x": 1}))
    assert after["status"] == "COMPLETED" and after["output"]["pid"] != before
    logs = "\n".join(served.emulator.worker_logs(ep))
    assert "crashing on purpose" in logs and "exited (exit code 3)" in logs
    health = served.health(ep)["jobs"]
    assert health["completed"] == 2 and health["failed"] == 1  # nothing lost or run twice
    # The failed job is kept, and a retry runs it again under its id (once, by request).
    assert served.http.post(f"/v2/{ep}/retry/{job}").json()["status"] == "IN_QUEUE"
    assert served.final(ep, job)["status"] == "COMPLETED"


def test_a_webhook_is_sent_when_a_worker_finishes_a_job(served: Served) -> None:
    received: list[dict[str, object]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            received.append(json.loads(self.rfile.read(length)))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        ep = served.deploy("plain_worker.py", endpoint_id="hooked", workers={"max": 1})
        url = f"http://127.0.0.1:{hook.server_address[1]}/done"
        job = served.run(ep, {"x": 3}, webhook=url)
        assert served.final(ep, job)["status"] == "COMPLETED"
        body = until(lambda: received and received[0], timeout=30, what="the webhook")
        assert body["id"] == job and body["status"] == "COMPLETED"
        assert body["output"]["echo"] == {"x": 3}  # type: ignore[index]
    finally:
        hook.shutdown()
        hook.server_close()


def test_workers_scale_up_with_the_queue_and_down_when_idle(served: Served, tmp_path: Path) -> None:
    ep = served.deploy(
        "async_worker.py", endpoint_id="scale", workers={"max": 2, "idleTimeout": 1.0}
    )
    assert served.pids() == [] and served.health(ep)["workers"]["ready"] == 0  # workersMin 0
    jobs = [served.run(ep, {"dir": str(tmp_path), "hang": True}) for _ in range(2)]
    workers = until(
        lambda: (w := served.health(ep)["workers"])["initializing"] + w["ready"] == 2 and w,
        what="two workers starting for two queued jobs",
    )
    assert workers["initializing"] + workers["ready"] == 2 and len(served.pids()) == 2
    until(lambda: len(list(tmp_path.glob("started-*"))) == 2, what="both jobs running")
    pids = served.pids()
    for job in jobs:
        served.http.post(f"/v2/{ep}/cancel/{job}")
    until(lambda: served.pids() == [], timeout=30, what="idle workers to stop")
    until(lambda: not any(alive(p) for p in pids), timeout=10, what="their processes gone")
    assert served.health(ep)["workers"] == {
        "idle": 0, "running": 0, "initializing": 0, "ready": 0, "throttled": 0, "unhealthy": 0
    }  # fmt: skip


def test_stopping_the_server_leaves_no_worker_process(own_server: Served) -> None:
    served = own_server
    ep = served.deploy("plain_worker.py", endpoint_id="orphans", workers={"min": 2, "max": 2})
    until(lambda: served.health(ep)["workers"]["ready"] == 2, what="two ready workers")
    pids = served.pids()
    served.server.stop()
    served.emulator.close()
    for pid in pids:  # nor anything they started: each worker's group is signalled
        assert not alive(pid)
        assert subprocess.run(["pgrep", "-g", str(pid)], capture_output=True).stdout == b""


def test_cli_worker_option_serves_a_worker_script_and_stops_it(tmp_path: Path) -> None:
    worker = ("--worker", f"cli={SCRIPTS / 'plain_worker.py'}", "--worker-python", sys.executable)
    with standalone("--api-key", KEY, *worker) as (proc, url):
        import httpx

        with httpx.Client(base_url=url, headers={"Authorization": KEY}, timeout=90) as http:
            done = http.post("/v2/cli/runsync", json={"input": {"x": 5}}).json()
            assert done["status"] == "COMPLETED" and done["output"]["echo"] == {"x": 5}
            worker_pid = done["output"]["pid"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert not alive(worker_pid)


def test_cli_refuses_a_missing_worker_script(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nbext.emulator", "--worker", f"x={tmp_path / 'nope.py'}"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ},
    )
    assert result.returncode == 2
    assert result.stderr.strip().endswith("does not exist")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_worker_that_misses_its_pings_is_unhealthy_until_it_pings_again(
    served: Served,
) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="pings", workers={"min": 1, "max": 1})
    until(lambda: served.health(ep)["workers"]["ready"] == 1, what="a ready worker")
    (pid,) = served.pids()
    os.killpg(pid, signal.SIGSTOP)  # the whole worker, heartbeat process included
    try:
        until(
            lambda: served.health(ep)["workers"]["unhealthy"] == 1,
            timeout=30,
            what="the missed pings to mark the worker unhealthy",
        )
        assert served.health(ep)["workers"]["ready"] == 0
    finally:
        os.killpg(pid, signal.SIGCONT)
    until(lambda: served.health(ep)["workers"]["ready"] == 1, timeout=30, what="healthy again")


def test_deploy_worker_refuses_what_it_cannot_run(served: Served, tmp_path: Path) -> None:
    emulator = served.emulator
    with pytest.raises(ValueError, match="does not exist"):
        emulator.deploy_worker(tmp_path / "missing.py")
    with pytest.raises(ValueError, match="interpreter 'no-such-python' not found"):
        emulator.deploy_worker(SCRIPTS / "plain_worker.py", python="no-such-python")
    emulator.deploy(handler=lambda job: job["input"], endpoint_id="inproc")
    try:
        with pytest.raises(ValueError, match="'inproc' already exists"):
            emulator.deploy_worker(SCRIPTS / "plain_worker.py", endpoint_id="inproc")
    finally:
        emulator.undeploy("inproc")
    offline = Emulator(api_key=KEY)  # no server serves it: the workers could not call it
    try:
        with pytest.raises(RuntimeError, match="start an EmulatorServer"):
            offline.deploy_worker(SCRIPTS / "plain_worker.py")
    finally:
        offline.close()


def test_an_emulator_killed_outright_leaves_no_worker_behind(tmp_path: Path) -> None:
    program = f"""
import sys, time
from nbext.emulator import Emulator, EmulatorServer
emulator = Emulator(api_key="k")
EmulatorServer(emulator).start()
emulator.deploy_worker({str(SCRIPTS / "plain_worker.py")!r}, workers={{"min": 1}})
while not emulator._supervisor.pids():
    time.sleep(0.01)
print(emulator._supervisor.pids()[0], flush=True)
time.sleep(600)
"""
    parent = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        worker_pid = int(parent.stdout.readline())
        assert alive(worker_pid)
    finally:
        parent.kill()  # SIGKILL: no atexit, no cleanup of its own
        parent.wait()
    until(lambda: not alive(worker_pid), timeout=30, what="the orphaned worker to exit")


def test_a_batch_reaches_worker_scripts_as_jobs_carrying_batch_id(served: Served) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="batched", workers={"max": 2})
    inputs = [{"input": {"x": i}} for i in range(6)]
    batch_id = served.http.post(f"/v2/{ep}/batch", json=inputs).json()["id"]
    assert served.http.post(f"/v2/{ep}/batch/{batch_id}/finalize").status_code == 200
    until(
        lambda: served.http.get(f"/v2/{ep}/batch/{batch_id}").json()["requestCompleted"] == 6,
        what="the batch's six requests completed",
    )
    results = served.http.get(f"/v2/{ep}/batch/{batch_id}/requests").json()["requests"]
    assert [r["output"]["echo"] for r in results] == [{"x": i} for i in range(6)]
    # The SDK reads the job's batchId and marks the lines it logs while running it.
    logs = "\n".join(served.emulator.worker_logs(ep))
    for result in results:
        assert any(
            result["id"] in line and f"[batchId={batch_id}]" in line for line in logs.splitlines()
        )

"""``/v2/serverless/{id}/workers`` and its worker logs, fed by real worker processes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .conftest import Served, until


def events(served: Served, path: str, last_id: str | None = None) -> list[dict[str, Any]]:
    """The Server-Sent Events of a log route: ``{"id", "ts", "source", "line"}`` each."""
    headers = {"Last-Event-ID": last_id} if last_id is not None else {}
    r = served.http.get(path, params={"tail": 1000}, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    out = []
    for block in r.text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in fields:
            out.append({"id": fields["id"], **json.loads(fields["data"])})
    return out


def workers(served: Served, ep: str) -> dict[str, Any]:
    r = served.http.get(f"/v2/serverless/{ep}/workers")
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def test_the_workers_list_shows_processes_as_they_start_serve_and_run(
    served: Served, tmp_path: Path
) -> None:
    ep = served.deploy("async_worker.py", endpoint_id="v2list", workers={"min": 1, "max": 1})
    assert workers(served, ep)["workers"] != []
    first = workers(served, ep)  # the process was started at deploy: importing the SDK
    assert [w["status"] for w in first["workers"]] == ["INITIALIZING"]
    assert first["summary"]["initializing"] == 1 and first["summary"]["total"] == 1
    until(lambda: workers(served, ep)["workers"][0]["status"] == "IDLE", what="an idle worker")
    job = served.run(ep, {"dir": str(tmp_path), "hang": True})
    running = until(
        lambda: (b := workers(served, ep))["summary"]["running"] == 1 and b,
        what="the worker running the job",
    )
    (worker,) = running["workers"]
    assert worker["id"].startswith("worker-") and worker["startedAt"]
    assert running["summary"] == {
        "running": 1, "idle": 0, "initializing": 0, "throttled": 0, "unhealthy": 0, "total": 1
    }  # fmt: skip
    served.http.post(f"/v2/{ep}/cancel/{job}")
    until(lambda: workers(served, ep)["summary"]["idle"] == 1, what="idle again")


def test_worker_logs_are_the_process_output_and_can_be_followed(served: Served) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="v2logs", workers={"min": 1, "max": 1})
    first = served.final(ep, served.run(ep, {"x": 1}))
    worker_id = first["output"]["worker"]
    path = f"/v2/serverless/{ep}/workers/{worker_id}/logs"
    lines = until(
        lambda: (e := events(served, path)) and any(first["id"] in x["line"] for x in e) and e,
        timeout=30,
        what="the handler's print in the worker's log",
    )
    texts = [x["line"] for x in lines]
    assert texts[0].startswith("--- starting ") and lines[0]["source"] == "system"
    assert "plain worker starting" in texts  # the script's stderr
    assert f"handled {first['id']}" in texts  # and its stdout
    assert all(x["source"] == "container" for x in lines[1:])
    # Following: with the last event's id, only newer lines come (the SDK may have logged
    # more since, e.g. that it sent the result).
    seen = {x["id"] for x in lines}
    assert not seen & {x["id"] for x in events(served, path, last_id=lines[-1]["id"])}
    second = served.final(ep, served.run(ep, {"x": 2}))
    newer = until(
        lambda: events(served, path, last_id=lines[-1]["id"]),
        timeout=30,
        what="the second job's line",
    )
    assert f"handled {second['id']}" in [x["line"] for x in newer]
    assert not any(x in lines for x in newer)
    missing = served.http.get(f"/v2/serverless/{ep}/workers/worker-nobody/logs")
    assert missing.status_code == 404


def test_a_crashed_workers_log_goes_on_across_its_restart(served: Served, tmp_path: Path) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="v2crash", workers={"min": 1, "max": 1})
    job = served.run(ep, {"mode": "crash_once", "marker": str(tmp_path / "crashed")})
    assert served.final(ep, job)["status"] == "FAILED"
    after = served.final(ep, served.run(ep, {"x": 1}))
    path = f"/v2/serverless/{ep}/workers/{after['output']['worker']}/logs"
    texts = until(
        lambda: (
            (t := [x["line"] for x in events(served, path)]) and f"handled {after['id']}" in t and t
        ),
        timeout=30,
        what="the restarted process's line",
    )
    starts = [i for i, text in enumerate(texts) if text.startswith("--- starting ")]
    assert len(starts) == 2  # one log, two processes: what the first printed, then its end
    first_process = texts[starts[0] : starts[1]]
    assert "crashing on purpose" in first_process
    assert "--- exited (exit code 3)" in first_process

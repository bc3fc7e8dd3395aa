"""The worker protocol with a real SDK worker: results, errors, progress, streams, stops."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx

from .conftest import KEY, Served, until


def test_plain_handler_results_errors_and_progress(served: Served, tmp_path: Path) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="plain", workers={"min": 1, "max": 1})
    done = served.final(ep, served.run(ep, {"x": 1}))
    assert done["status"] == "COMPLETED"
    assert done["output"]["echo"] == {"x": 1}
    assert done["output"]["worker"].startswith("worker-")

    raised = served.final(ep, served.run(ep, {"mode": "error"}))
    assert raised["status"] == "FAILED"
    info = json.loads(raised["error"])  # the SDK's JSON, as the service surfaces it
    assert info["error_message"] == "boom from handler"
    assert "ValueError" in info["error_type"]

    returned = served.final(ep, served.run(ep, {"mode": "dict_error"}))
    assert returned == {**returned, "status": "FAILED", "error": "returned error text"}

    release = tmp_path / "release"
    job = served.run(ep, {"mode": "progress", "release": str(release)})
    shown = until(
        lambda: (s := served.status(ep, job))["status"] == "IN_PROGRESS" and "output" in s and s,
        what="the progress update shown by /status",
    )
    assert shown["output"] == "half way"  # the job goes on after a progress post
    release.touch()
    assert served.final(ep, job)["status"] == "COMPLETED"

    health = served.health(ep)
    assert health["jobs"]["completed"] == 2 and health["jobs"]["failed"] == 2
    assert set(health["workers"]) == {
        "idle", "running", "initializing", "ready", "throttled", "unhealthy"
    }  # fmt: skip
    logs = "\n".join(served.emulator.worker_logs(ep))
    assert "handled " in logs and "plain worker starting" in logs


def test_refresh_worker_restarts_that_worker(served: Served) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="fresh", workers={"min": 1, "max": 1})
    first = served.final(ep, served.run(ep, {"mode": "refresh"}))
    assert first["status"] == "COMPLETED" and "refresh_worker" not in first["output"]
    second = served.final(ep, served.run(ep, {"x": 2}))
    assert second["status"] == "COMPLETED"
    assert second["output"]["pid"] != first["output"]["pid"]  # a fresh process


def test_generator_chunks_are_visible_at_once_and_aggregated(
    served: Served, tmp_path: Path
) -> None:
    ep = served.deploy("stream_worker.py", endpoint_id="gen", workers={"min": 1, "max": 1})
    gate = str(tmp_path / "gate")
    job = served.run(ep, {"n": 3, "gate": gate})
    seen: list[object] = []
    for i in range(3):
        Path(f"{gate}.{i}").touch()  # the next chunk is only yielded after this one is seen
        got = until(
            lambda: served.http.get(f"/v2/{ep}/stream/{job}", params={"wait": 1000}).json()[
                "stream"
            ],
            what=f"chunk {i} through /stream",
        )
        seen += [c["output"] for c in got]
    assert seen == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert served.final(ep, job)["output"] == [{"i": 0}, {"i": 1}, {"i": 2}]

    broken = served.final(ep, served.run(ep, {"n": 3, "fail_at": 1}))
    assert broken["status"] == "FAILED" and "generator broke" in broken["error"]


def test_async_generator_without_aggregate_stream(served: Served) -> None:
    ep = served.deploy(
        "async_worker.py", endpoint_id="agen", workers={"min": 1}, env={"ASYNC_GEN": "1"}
    )
    job = served.run(ep, {"n": 4})
    done = served.final(ep, job)
    assert done["status"] == "COMPLETED" and done["output"] == []  # not aggregated
    chunks = served.http.get(f"/v2/{ep}/stream/{job}").json()["stream"]
    assert [c["output"] for c in chunks] == [0, 1, 2, 3]


def test_concurrency_modifier_runs_jobs_side_by_side(served: Served, tmp_path: Path) -> None:
    ep = served.deploy("async_worker.py", endpoint_id="conc", workers={"min": 1, "max": 1})
    until(lambda: served.health(ep)["workers"]["idle"] == 1, what="the worker ready")
    jobs = [served.run(ep, {"dir": str(tmp_path), "wait_for": 4}) for _ in range(3)]
    until(lambda: len(list(tmp_path.glob("started-*"))) == 3, what="three jobs started")
    health = served.health(ep)
    assert health["jobs"]["inProgress"] == 3 and health["workers"]["running"] == 1
    (tmp_path / "started-by-the-test").touch()  # the fourth start they wait for
    results = [served.final(ep, j) for j in jobs]  # each waits for all three to start
    assert {r["status"] for r in results} == {"COMPLETED"}
    assert len({r["output"]["pid"] for r in results}) == 1  # one process ran all three


def test_cancel_reaches_the_worker_through_job_stop(served: Served, tmp_path: Path) -> None:
    ep = served.deploy("async_worker.py", endpoint_id="stop", workers={"min": 1, "max": 1})
    job = served.run(ep, {"dir": str(tmp_path), "hang": True})
    until(lambda: (tmp_path / f"started-{job}").exists(), what="the job to start")
    assert served.status(ep, job)["status"] == "IN_PROGRESS"
    health = served.health(ep)["workers"]
    assert health["running"] == 1 and health["ready"] == 1
    cancelled_at = time.monotonic()
    assert served.http.post(f"/v2/{ep}/cancel/{job}").json()["status"] == "CANCELLED"
    until(lambda: (tmp_path / f"stopped-{job}").exists(), what="job-stop to reach the worker")
    # Within 1 s on an idle machine; the bound allows for a loaded one.
    assert time.monotonic() - cancelled_at < 5
    assert served.status(ep, job)["status"] == "CANCELLED"
    # The worker is free again and takes the next job.
    assert served.final(ep, served.run(ep, {"dir": str(tmp_path)}))["status"] == "COMPLETED"


def test_execution_timeout_stops_the_job_on_the_worker(served: Served, tmp_path: Path) -> None:
    ep = served.deploy(
        "async_worker.py",
        endpoint_id="slow",
        workers={"min": 1, "max": 1},
        execution_timeout_ms=5000,
    )
    job = served.run(ep, {"dir": str(tmp_path), "hang": True})
    ended = served.final(ep, job)
    assert ended["status"] == "TIMED_OUT" and "5000 ms" in ended["error"]
    until(lambda: (tmp_path / f"stopped-{job}").exists(), timeout=10, what="job-stop")


def test_worker_routes_refuse_unknown_workers_and_wrong_keys(served: Served) -> None:
    ep = served.deploy("plain_worker.py", endpoint_id="auth", workers={"min": 1, "max": 1})
    worker = served.emulator.remote_workers.pools[ep].workers
    worker_id = next(iter(worker))
    with httpx.Client(base_url=served.server.url) as raw:
        unknown = raw.get(f"/v2/{ep}/job-take/nobody?gpu=x", headers={"Authorization": "k"})
        assert unknown.status_code == 401 and "no worker 'nobody'" in unknown.json()["error"]
        wrong = raw.get(
            f"/v2/{ep}/job-take/{worker_id}?gpu=x", headers={"Authorization": KEY}
        )  # the user's API key is not the worker's
        assert wrong.status_code == 401 and "wrong key" in wrong.json()["error"]
        # The SDK's report of a failed startup check, with the worker's own key.
        key = served.emulator.remote_workers.by_id[worker_id].key
        failed = raw.get(
            f"/v2/{ep}/ping/{worker_id}",
            params={"status": "unhealthy", "check": "gpu", "reason": "no CUDA"},
            headers={"Authorization": key},
        )
        assert failed.status_code == 200
        assert served.health(ep)["workers"]["unhealthy"] == 1


def test_jobs_longer_than_a_short_keep_alive_return_their_results(served: Served) -> None:
    """The SDK keeps its connections 15 s (aiohttp) and posts a job's result on the one
    that fetched it, without retrying: a server that dropped idle connections sooner
    (uvicorn's default, 5 s) lost the results of 7 s and 12 s jobs, left IN_PROGRESS."""
    ep = served.deploy("plain_worker.py", endpoint_id="lingering", workers={"max": 2})
    jobs = {s: served.run(ep, {"mode": "sleep", "seconds": s}) for s in (7, 12)}

    def ended_or_lost() -> bool:
        logs = "\n".join(served.emulator.worker_logs(ep))
        if "Failed to return job results" in logs:
            return True  # lost for good: the SDK does not try again
        return all(served.status(ep, j)["status"] == "COMPLETED" for j in jobs.values())

    until(ended_or_lost, what="both jobs completed (or a result lost)")
    assert "Failed to return job results" not in "\n".join(served.emulator.worker_logs(ep))
    for seconds, job in jobs.items():
        done = served.status(ep, job)
        assert done["output"]["echo"] == {"mode": "sleep", "seconds": seconds}

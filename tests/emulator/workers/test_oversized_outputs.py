"""A worker process's output over the 20 MB limit fails its job at once, saying how large
(docs/behaviour.md#output-limit), where the SDK would only log the refusal and the job
would wait for its execution timeout (10 minutes here, far past every bound below)."""

from __future__ import annotations

import time

from nbext.emulator.domain.output_limit import MB

from .conftest import Served

TIMEOUT_MS = 600_000


def deploy(served: Served, endpoint_id: str, **env: str) -> str:
    """One warm-able worker process with a 10-minute execution timeout."""
    return served.deploy(
        "big_worker.py",
        endpoint_id=endpoint_id,
        workers={"min": 1, "max": 1},
        execution_timeout_ms=TIMEOUT_MS,
        env=env,
    )


def test_a_result_over_the_limit_fails_its_job_at_once(served: Served) -> None:
    ep = deploy(served, "big")
    assert served.final(ep, served.run(ep, {"size": 10}))["status"] == "COMPLETED"
    started = time.monotonic()
    over = served.final(ep, served.run(ep, {"size": 70 * MB}))
    assert over["status"] == "FAILED", over
    assert over["error"].startswith("output of 70.0 MB exceeds the service's 20 MB limit")
    assert time.monotonic() - started < 60
    # The worker goes on with the next job.
    assert served.final(ep, served.run(ep, {"size": 10}))["status"] == "COMPLETED"
    assert served.health(ep)["jobs"]["failed"] == 1


def test_a_streamed_chunk_over_the_limit_fails_its_job_at_once(served: Served) -> None:
    ep = deploy(served, "bigstream", STREAM="1")
    started = time.monotonic()
    job = served.run(ep, {"size": 21 * MB})
    over = served.final(ep, job)
    assert over["status"] == "FAILED", over
    assert over["error"].startswith("output of 21.0 MB exceeds the service's 20 MB limit")
    assert time.monotonic() - started < 60
    chunks = served.http.get(f"/v2/{ep}/stream/{job}").json()["stream"]
    assert [c["output"] for c in chunks] == ["first"]
    assert served.final(ep, served.run(ep, {"size": 10}))["output"] == ["first", "x" * 10, "never"]

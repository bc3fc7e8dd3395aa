"""Every teaching scenario applied, ended and applied again, from a warm endpoint and from
a cold one, as a teacher does it from cells, on the fake clock.

A worker follows one state table (``domain/fleet.py``): whatever state the scenario
finds a worker in (idle with its idle timer running, or none at all), the endpoint's
``/health``, its workers' states and ``%runpod why`` say what the scenario does, and
ending it lets the job that waited run to COMPLETED. The last test does the same for a
crash loop on a real ``runpod`` worker script (a process: real time, marked slow).
"""

from __future__ import annotations

import textwrap
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from nbext.emulator.domain.scenarios import CRASH_LINE
from nbext.models import JobStatus

from .conftest import Notebook
from .test_worker_scripts import COLD_START_S

IDLE_TIMEOUT_S = 15.0
"""Shorter than a scenario's hold below: a warm worker's idle timer runs out meanwhile."""
HOLD_S = 25.0
"""How long a job is held by a scenario before the checks (cold start and throttling last
60 s, a crash loop for ever)."""
GAP_S = 4.0
CHUNKS = 3


async def three_chunks(job: dict[str, Any]) -> AsyncIterator[dict[str, int]]:
    for i in range(CHUNKS):
        yield {"chunk": i, **job["input"]}


@dataclass(frozen=True)
class Case:
    spec: str
    """The scenario as ``%runpod emulator scenario`` takes it."""
    held: dict[str, int]
    """``/health``'s worker counts (the others 0) while it holds the job."""
    why: str
    """What ``%runpod why`` names while it holds the job."""
    status: JobStatus = JobStatus.IN_QUEUE
    hold_s: float = HOLD_S


CASES = {
    "cold-start": Case("cold-start seconds=60", {"initializing": 1}, "1. cold start: 1 worker"),
    "crash-loop": Case("crash-loop", {"unhealthy": 1}, "1. no worker could start: 1 worker"),
    "throttled": Case("throttled seconds=60", {"throttled": 1}, "1. no GPU free: 1 worker"),
    "flaky": Case(
        "flaky fraction=1",
        {"idle": 1, "ready": 1},
        "1. the handler raised: the flaky scenario failed this job on purpose",
        JobStatus.FAILED,
        hold_s=0,
    ),
    "slow-stream": Case(
        f"slow-stream seconds={GAP_S:g}",
        {"running": 1, "ready": 1},
        "IN_PROGRESS",
        JobStatus.IN_PROGRESS,
        hold_s=GAP_S + 1,
    ),
}
WORKER_KEYS = ("idle", "running", "initializing", "ready", "throttled", "unhealthy")


def counts(nb: Notebook, endpoint_id: str) -> dict[str, int]:
    workers = nb.conn.client.endpoint(endpoint_id).health().workers
    return {key: getattr(workers, key) for key in WORKER_KEYS}


def states(nb: Notebook, endpoint_id: str) -> list[str]:
    endpoint = nb.emu.jobs.endpoint(endpoint_id)
    return nb.emu.call_on_loop(lambda: sorted(str(w.state) for w in endpoint.workers))


async def advance(nb: Notebook, seconds: float) -> None:
    await anyio.to_thread.run_sync(nb.emu.advance, seconds)


def why(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    nb.run("%runpod why")
    out: str = capsys.readouterr().out
    return out


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
@pytest.mark.parametrize("start", ["warm", "cold"])
@pytest.mark.parametrize("name", list(CASES))
async def test_apply_end_and_reapply(
    nb: Notebook, capsys: pytest.CaptureFixture[str], start: str, name: str
) -> None:
    case = CASES[name]
    nb.deploy(three_chunks, "teach", workers={"idleTimeout": IDLE_TIMEOUT_S})
    endpoint = nb.conn.client.endpoint("teach")
    healthy = dict.fromkeys(WORKER_KEYS, 0) | {"idle": 1, "ready": 1}
    if start == "warm":
        assert endpoint.run_sync({"n": 0}).status is JobStatus.COMPLETED
        assert counts(nb, "teach") == healthy and states(nb, "teach") == ["idle"]
    else:
        assert counts(nb, "teach") == dict.fromkeys(WORKER_KEYS, 0)
    for round_ in (1, 2):  # applied, ended, applied again (the endpoint is warm by then)
        nb.run(f"%runpod emulator scenario teach {case.spec}")
        nb.run(f'%%runpod_job teach --background -q\n{{"n": {round_}}}')
        job = endpoint.job(nb.record().id)
        await advance(nb, case.hold_s)
        await nb.auntil(lambda j=job: j.status().status is case.status, f"{case.status}")
        assert counts(nb, "teach") == dict.fromkeys(WORKER_KEYS, 0) | case.held, round_
        held = {k: v for k, v in case.held.items() if k != "ready"}
        assert states(nb, "teach") == [state for state, n in held.items() for _ in range(n)]
        said = why(nb, capsys)
        assert case.why in said, said
        if name == "crash-loop":
            assert CRASH_LINE in said and "next: %runpod logs teach --worker worker-" in said
        nb.run("%runpod emulator scenario teach off")
        if case.status is JobStatus.FAILED:
            job.retry()  # it failed on purpose: run again, it completes
        await advance(nb, CHUNKS * GAP_S)  # a stream started paced keeps its pace
        await nb.auntil(lambda j=job: j.status().status is JobStatus.COMPLETED, "the run")
        assert job.status().output == [{"chunk": i, "n": round_} for i in range(CHUNKS)]
        assert counts(nb, "teach") == healthy and states(nb, "teach") == ["idle"], round_
    await nb.conn.aclose()


HEALTHY_SCRIPT = textwrap.dedent(
    """
    import runpod
    def handler(job):
        return {"echo": job["input"]}
    runpod.serverless.start({"handler": handler})
    """
)


@pytest.mark.anyio
async def test_a_crash_loop_on_a_warm_worker_script_is_named_and_ends(
    nb: Notebook, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "served.py"
    script.write_text(HEALTHY_SCRIPT)
    nb.emu.deploy_worker(script, endpoint_id="served", workers={"min": 1, "max": 1})
    endpoint = nb.conn.client.endpoint("served")
    await nb.auntil(lambda: endpoint.health().workers.idle == 1, "a warm worker", COLD_START_S)
    nb.run("%runpod emulator scenario served crash-loop")
    nb.run('%%runpod_job served --background -q\n{"n": 1}')
    job = endpoint.job(nb.record().id)
    await nb.auntil(lambda: endpoint.health().workers.unhealthy == 1, "an unhealthy worker")
    assert endpoint.health().workers.ready == 0
    assert job.status().status is JobStatus.IN_QUEUE
    said = why(nb, capsys)
    assert "1. no worker could start: 1 worker unhealthy" in said and CRASH_LINE in said
    nb.run("%runpod emulator scenario served off")
    await nb.auntil(
        lambda: job.status().status is JobStatus.COMPLETED, "the job to run", COLD_START_S
    )
    assert job.status().output == {"echo": {"n": 1}}
    await nb.conn.aclose()

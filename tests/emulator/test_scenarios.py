"""Teaching scenarios (``domain/scenarios.py``) seen through HTTP, on the fake clock.

Each scenario must move ``/health`` with real transitions and hold or fail jobs the way
its docstring says; clearing it brings a healthy fleet back. Bad input is refused in one
line that lists what is accepted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.jobs import IllegalTransition
from nbext.emulator.domain.scenarios import CRASH_LINE, ScenarioError, parse
from nbext.emulator.domain.workers import WorkerState

from .conftest import advance

pytestmark = pytest.mark.anyio


async def workers(http: httpx.AsyncClient, endpoint_id: str) -> dict[str, int]:
    response = await http.get(f"/v2/{endpoint_id}/health")
    assert response.status_code == 200, response.text
    counts: dict[str, int] = response.json()["workers"]
    return counts


async def status(http: httpx.AsyncClient, endpoint_id: str, job_id: str) -> dict[str, Any]:
    body: dict[str, Any] = (await http.get(f"/v2/{endpoint_id}/status/{job_id}")).json()
    return body


async def run(http: httpx.AsyncClient, endpoint_id: str, input: Any = None) -> str:
    response = await http.post(f"/v2/{endpoint_id}/run", json={"input": input or {}})
    assert response.status_code == 200, response.text
    job_id: str = response.json()["id"]
    await settle()
    return job_id


async def test_cold_start_initializes_then_runs(emu: Emulator, http: httpx.AsyncClient) -> None:
    emu.deploy("echo", endpoint_id="cold", scenario="cold-start:seconds=8")
    job_id = await run(http, "cold", {"a": 1})
    assert (await workers(http, "cold"))["initializing"] == 1
    assert (await workers(http, "cold"))["ready"] == 0
    assert (await status(http, "cold", job_id))["status"] == "IN_QUEUE"
    await advance(emu, 7.9)
    assert (await status(http, "cold", job_id))["status"] == "IN_QUEUE"
    await advance(emu, 0.2)
    await settle()
    body = await status(http, "cold", job_id)
    assert body["status"] == "COMPLETED" and body["output"] == {"a": 1}
    assert body["workerId"].startswith("worker-")
    assert body["delayTime"] >= 8000
    counts = await workers(http, "cold")
    assert counts["initializing"] == 0 and counts["ready"] == 1 and counts["idle"] == 1


async def test_a_warm_worker_takes_the_next_job_without_a_cold_start(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="cold", scenario="cold-start:seconds=8")
    first = await run(http, "cold")
    await advance(emu, 8.1)
    second = await run(http, "cold")
    assert (await status(http, "cold", second))["status"] == "COMPLETED"
    first_worker = (await status(http, "cold", first))["workerId"]
    assert (await status(http, "cold", second))["workerId"] == first_worker


async def test_crash_loop_keeps_jobs_queued_with_unhealthy_restarting_workers(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    job_id = await run(http, "crash")
    counts = await workers(http, "crash")
    assert counts["unhealthy"] == 1 and counts["ready"] == 0
    restarts = [w.restarts for w in emu.jobs.endpoint("crash").workers]
    await advance(emu, 60)
    assert (await status(http, "crash", job_id))["status"] == "IN_QUEUE"
    assert (await workers(http, "crash"))["unhealthy"] == 1
    (worker,) = emu.jobs.endpoint("crash").workers
    assert worker.restarts > restarts[0] + 3  # backoff 1, 2, 4, 8, 16, 30 s
    assert worker.last_line == CRASH_LINE
    health = (await http.get("/v2/crash/health")).json()
    assert health["jobs"]["inQueue"] == 1


async def test_a_crash_loop_with_nothing_queued_stops_restarting(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    emu.deploy("echo", endpoint_id="kept", workers={"min": 1}, scenario="crash-loop")
    job_id = await run(http, "crash")
    await advance(emu, 5)
    assert (await http.post(f"/v2/crash/cancel/{job_id}")).status_code == 200
    await advance(emu, 60)
    assert await workers(http, "crash") == dict.fromkeys(
        ("idle", "running", "initializing", "ready", "throttled", "unhealthy"), 0
    )
    assert (await workers(http, "kept"))["unhealthy"] == 1  # workersMin keeps it trying


async def test_clearing_a_crash_loop_lets_the_queued_job_run(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    job_id = await run(http, "crash", {"x": 2})
    await advance(emu, 5)
    assert emu.set_scenario("crash", None) == "none"
    await settle()
    assert (await status(http, "crash", job_id))["output"] == {"x": 2}
    counts = await workers(http, "crash")
    assert counts["unhealthy"] == 0 and counts["ready"] == 1


async def test_throttled_holds_workers_until_a_gpu_is_free(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="busy", scenario="throttled:seconds=20")
    job_id = await run(http, "busy")
    assert (await workers(http, "busy"))["throttled"] == 1
    await advance(emu, 19)
    assert (await status(http, "busy", job_id))["status"] == "IN_QUEUE"
    await advance(emu, 1.5)
    await settle()
    assert (await status(http, "busy", job_id))["status"] == "COMPLETED"
    assert (await workers(http, "busy"))["throttled"] == 0


async def test_flaky_fails_a_seeded_fraction_the_same_way_every_time(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    outcomes = []
    for attempt in range(2):
        endpoint_id = f"flaky{attempt}"
        emu.deploy("echo", endpoint_id=endpoint_id, scenario="flaky:fraction=0.5,seed=7")
        ids = [await run(http, endpoint_id, {"i": i}) for i in range(40)]
        await settle()
        outcomes.append([(await status(http, endpoint_id, i))["status"] for i in ids])
    assert outcomes[0] == outcomes[1]
    failed = outcomes[0].count("FAILED")
    assert outcomes[0].count("COMPLETED") + failed == 40
    assert 10 <= failed <= 30
    failed_ids = [
        j.id for j in emu.jobs.jobs.values() if j.endpoint_id == "flaky0" and j.error is not None
    ]
    error = (await status(http, "flaky0", failed_ids[0]))["error"]
    assert "flaky scenario" in error and "fraction=0.5" in error


async def test_flaky_with_fraction_zero_and_one(emu: Emulator, http: httpx.AsyncClient) -> None:
    emu.deploy("echo", endpoint_id="never", scenario="flaky:fraction=0")
    emu.deploy("echo", endpoint_id="always", scenario="flaky:fraction=1")
    never = [await run(http, "never") for _ in range(5)]
    always = [await run(http, "always") for _ in range(5)]
    await settle()
    assert {(await status(http, "never", j))["status"] for j in never} == {"COMPLETED"}
    assert {(await status(http, "always", j))["status"] for j in always} == {"FAILED"}


async def test_slow_stream_spaces_chunks_on_the_clock(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    async def three(job: dict[str, Any]) -> AsyncIterator[int]:
        for i in range(3):
            yield i

    emu.deploy(handler=three, endpoint_id="slow", scenario="slow-stream:seconds=5")
    job_id = await run(http, "slow")

    async def chunks() -> tuple[str, list[Any]]:
        body = (await http.get(f"/v2/slow/stream/{job_id}?wait=0")).json()
        return body["status"], [c["output"] for c in body["stream"]]

    assert await chunks() == ("IN_PROGRESS", [])
    await advance(emu, 5)
    assert await chunks() == ("IN_PROGRESS", [0])
    await advance(emu, 4.9)
    assert await chunks() == ("IN_PROGRESS", [])
    await advance(emu, 0.1)
    assert await chunks() == ("IN_PROGRESS", [1])
    await advance(emu, 5)
    await settle()
    assert await chunks() == ("COMPLETED", [2])


async def test_set_scenario_on_a_warm_endpoint_restarts_idle_workers(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("echo", endpoint_id="warm", workers={"min": 2})
    assert (await workers(http, "warm"))["idle"] == 2
    assert emu.set_scenario("warm", "cold-start:seconds=3") == "cold-start (seconds=3)"
    assert (await workers(http, "warm"))["initializing"] == 2
    await advance(emu, 3.1)
    counts = await workers(http, "warm")
    assert counts["idle"] == 2 and counts["initializing"] == 0


async def test_the_worker_table_refuses_a_change_it_does_not_list(emu: Emulator) -> None:
    emu.deploy("echo", endpoint_id="warm", workers={"min": 1})
    endpoint = emu.jobs.endpoint("warm")
    (worker,) = endpoint.workers
    timer = worker.timer
    with pytest.raises(IllegalTransition, match="idle -> throttled is not in the table"):
        emu.jobs.fleet.enter(worker, endpoint, WorkerState.THROTTLED)
    assert worker.state is WorkerState.IDLE and worker.timer is timer is not None


# ---- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lukewarm", "unknown scenario 'lukewarm'; the scenarios are cold-start, crash-loop"),
        ("cold-start:minutes=3", "'minutes=3' is not a parameter of it (parameters: seconds)"),
        ("crash-loop:seconds=3", "(parameters: none)"),
        ("cold-start:seconds=-1", "seconds must be a number >= 0, got '-1'"),
        ("cold-start:seconds=soon", "seconds must be a number, got 'soon'"),
        ("cold-start:seconds=nan", "seconds must be a number >= 0"),
        ("flaky:fraction=1.5", "fraction must be from 0 to 1, got 1.5"),
        ("cold-start:seconds", "'seconds' is not a parameter of it"),
    ],
)
def test_parse_refuses_in_one_line(text: str, expected: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        parse(text)
    message = str(caught.value)
    assert expected in message and "\n" not in message


async def test_bad_scenarios_lose_nothing(emu: Emulator, http: httpx.AsyncClient) -> None:
    with pytest.raises(ValueError, match="unknown scenario 'warm'"):
        emu.deploy("echo", endpoint_id="x", scenario="warm")
    assert "x" not in emu.jobs.endpoints
    emu.deploy("echo", endpoint_id="cold", scenario="cold-start:seconds=4")
    with pytest.raises(ValueError, match="must be a number >= 0"):
        emu.set_scenario("cold", "throttled:seconds=-3")
    kept = emu.jobs.endpoint("cold").scenario
    assert kept is not None and kept.describe() == "cold-start (seconds=4)"
    with pytest.raises(ValueError, match="nowhere"):
        emu.set_scenario("nowhere", "crash-loop")


async def test_a_worker_script_endpoint_follows_its_scenario(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    """A worker script's workers follow the same table: under a crash loop no process
    starts and the worker is unhealthy; ended, a process starts, is ready at its first
    call and takes the job; a cold start holds the next process back as long."""
    from .workers.test_worker_health import NoProcesses

    emu.deploy("worker/train.py", endpoint_id="script", workers={"max": 1, "idleTimeout": 60})
    launcher = NoProcesses()
    emu.remote_workers.add_pool("script", launcher)
    emu.set_scenario("script", "crash-loop")
    job_id = await run(http, "script", {"x": 1})
    await advance(emu, 30)
    assert launcher.started == []
    assert (await workers(http, "script"))["unhealthy"] == 1
    assert (await status(http, "script", job_id))["status"] == "IN_QUEUE"

    emu.set_scenario("script", None)
    (process,) = launcher.started
    assert (await workers(http, "script"))["initializing"] == 1
    remote = emu.remote_workers
    remote.authenticate("script", process.id, process.key)  # its first call: ready
    (taken,) = await remote.take(process, 1)
    assert taken["id"] == job_id and (await workers(http, "script"))["running"] == 1
    remote.done(process, job_id, b'{"output": {"y": 2}}')
    assert (await status(http, "script", job_id))["output"] == {"y": 2}
    assert (await workers(http, "script"))["idle"] == 1

    emu.set_scenario("script", "cold-start:seconds=8")  # the idle worker is replaced
    assert process.stopping and len(launcher.started) == 1
    assert (await workers(http, "script"))["initializing"] == 1
    await advance(emu, 8.1)
    assert len(launcher.started) == 2  # its process starts once the cold start is over


# ---- the REST v2 workers list and worker logs --------------------------------------------


async def test_v2_lists_each_workers_state_and_logs_the_crash(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    from .v2.conftest import events

    emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    emu.deploy("echo", endpoint_id="cold", scenario="cold-start:seconds=30")
    await run(http, "crash")
    await run(http, "cold")
    await advance(emu, 4)
    listed = (await http.get("/v2/serverless/crash/workers")).json()
    (worker,) = listed["workers"]
    assert worker["status"] == "UNHEALTHY" and listed["summary"]["unhealthy"] == 1
    cold = (await http.get("/v2/serverless/cold/workers")).json()
    assert [w["status"] for w in cold["workers"]] == ["INITIALIZING"]
    lines = await events(http, f"/v2/serverless/crash/workers/{worker['id']}/logs?tail=1")
    assert [line["line"] for line in lines] == [CRASH_LINE]
    await advance(emu, 30)
    assert [
        w["status"] for w in (await http.get("/v2/serverless/cold/workers")).json()["workers"]
    ] == ["IDLE"]

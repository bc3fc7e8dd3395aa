"""``/v2/{endpoint_id}/...`` over HTTP: each route, each error status and its body, auth.

The app runs in the test's loop (``httpx.ASGITransport``); requests that wait on the
emulator's clock (``/runsync``, ``/stream``) run as tasks while the test moves the clock.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.api import create_app
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.store_port import MemoryStore

from .conftest import KEY, advance, client_for

pytestmark = pytest.mark.anyio


def error_of(response: httpx.Response, status: int) -> str:
    """The ``{"error": ...}`` text of a response that must have ``status``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert list(body) == ["error"] and isinstance(body["error"], str) and body["error"]
    text: str = body["error"]
    return text


# ---- /run --------------------------------------------------------------------------------


async def test_run_answers_the_accepted_job(emu: Emulator, http: httpx.AsyncClient) -> None:
    response = await http.post("/v2/held/run", json={"input": {"a": 1}})
    assert response.status_code == 200
    body = response.json()
    assert body == {"id": body["id"], "status": "IN_QUEUE"}
    assert uuid.UUID(body["id"]).version == 4
    assert emu.jobs.jobs[body["id"]].input == {"a": 1}


async def test_run_ignores_unknown_top_level_fields(http: httpx.AsyncClient) -> None:
    response = await http.post("/v2/held/run", json={"input": {}, "priority": "high", "x": [1]})
    assert response.status_code == 200


async def test_run_accepts_every_documented_field(emu: Emulator, http: httpx.AsyncClient) -> None:
    body = {
        "input": {"q": 1},
        "webhook": "https://example.com/hook",
        "policy": {"executionTimeout": 5_000, "lowPriority": True, "ttl": 604_800_000},
        "s3Config": {"accessId": "a", "accessSecret": "b", "bucketName": "c", "endpointUrl": "d"},
    }
    response = await http.post("/v2/held/run", json=body)
    assert response.status_code == 200
    job = emu.jobs.jobs[response.json()["id"]]
    assert (job.execution_timeout_ms, job.low_priority, job.ttl_ms) == (5_000, True, 604_800_000)
    assert job.webhook == "https://example.com/hook"


# ---- /runsync ----------------------------------------------------------------------------


async def test_runsync_answers_the_result_when_the_job_ends(http: httpx.AsyncClient) -> None:
    response = await http.post("/v2/echo/runsync", json={"input": {"hi": 1}})
    assert response.status_code == 200
    body = response.json()
    assert body["id"].startswith("sync-")
    assert body["status"] == "COMPLETED" and body["output"] == {"hi": 1}
    assert set(body) == {"id", "status", "delayTime", "executionTime", "output", "workerId"}
    assert body["workerId"].startswith("worker-")


async def test_runsync_answers_as_soon_as_the_job_ends(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    call = asyncio.create_task(http.post("/v2/sleep/runsync", json={"input": {"seconds": 30}}))
    await advance(emu, 29.999)
    assert not call.done()
    await advance(emu, 0.001)
    response = await asyncio.wait_for(call, 5)
    assert response.json()["output"] == {"slept": 30}
    assert response.json()["executionTime"] == 30_000


async def test_runsync_answers_a_failed_job_with_its_error(http: httpx.AsyncClient) -> None:
    response = await http.post("/v2/fail/runsync", json={"input": {"message": "nope"}})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "FAILED" and body["error"] == "RuntimeError: nope"
    assert "output" not in body


@pytest.mark.parametrize(
    ("query", "waited"), [("", 90.0), ("?wait=1000", 1.0), ("?wait=300000", 300.0)]
)
async def test_runsync_answers_id_and_state_when_wait_runs_out(
    emu: Emulator, http: httpx.AsyncClient, query: str, waited: float
) -> None:
    call = asyncio.create_task(http.post(f"/v2/held/runsync{query}", json={"input": {}}))
    await advance(emu, waited - 0.001)
    assert not call.done()
    await advance(emu, 0.001)
    response = await asyncio.wait_for(call, 5)
    assert response.status_code == 200
    body = response.json()
    assert body == {"id": body["id"], "status": "IN_QUEUE"}
    assert emu.jobs.jobs[body["id"]].status.value == "IN_QUEUE"


async def test_runsync_answers_in_progress_when_wait_runs_out_mid_run(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    body = {"input": {"seconds": 60}}
    call = asyncio.create_task(http.post("/v2/sleep/runsync?wait=1000", json=body))
    await advance(emu, 1)
    answer = (await asyncio.wait_for(call, 5)).json()
    assert answer["status"] == "IN_PROGRESS"
    await advance(emu, 59)
    status = (await http.get(f"/v2/sleep/status/{answer['id']}")).json()
    assert status["output"] == {"slept": 60}


@pytest.mark.parametrize("wait", ["999", "300001", "0", "-5", "ten", "1.5"])
async def test_runsync_refuses_a_wait_out_of_range_and_queues_nothing(
    emu: Emulator, http: httpx.AsyncClient, wait: str
) -> None:
    response = await http.post(f"/v2/echo/runsync?wait={wait}", json={"input": {}})
    message = error_of(response, 400)
    assert "wait" in message and (wait in message or "between 1000 and 300000" in message)
    assert emu.jobs.jobs == {}


async def test_runsync_answers_404_for_a_job_removed_while_waiting(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    body = {"input": {}, "policy": {"ttl": 10_000}}
    call = asyncio.create_task(http.post("/v2/held/runsync?wait=60000", json=body))
    await advance(emu, 10)
    assert "removed" in error_of(await asyncio.wait_for(call, 5), 404)


# ---- /status -----------------------------------------------------------------------------


async def test_status_answers_the_job_result(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/echo/run", json={"input": {"k": "v"}})).json()["id"]
    await settle()
    body = (await http.get(f"/v2/echo/status/{job_id}")).json()
    assert body == {
        "id": job_id,
        "status": "COMPLETED",
        "delayTime": 0,
        "executionTime": 0,
        "output": {"k": "v"},
        "workerId": body["workerId"],
    }


async def test_status_of_a_queued_job_has_no_output_or_error(http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    body = (await http.get(f"/v2/held/status/{job_id}")).json()
    assert set(body) == {"id", "status", "delayTime", "executionTime"}


async def test_status_ttl_sets_the_jobs_ttl(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    assert (await http.get(f"/v2/held/status/{job_id}?ttl=15000")).status_code == 200
    await advance(emu, 15)
    assert "not found" in error_of(await http.get(f"/v2/held/status/{job_id}"), 404)


@pytest.mark.parametrize("ttl", ["9999", "604800001", "soon"])
async def test_status_refuses_a_ttl_out_of_range(http: httpx.AsyncClient, ttl: str) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    message = error_of(await http.get(f"/v2/held/status/{job_id}?ttl={ttl}"), 400)
    assert message.startswith("ttl must be")


async def test_status_of_an_unknown_job_is_404_naming_it(http: httpx.AsyncClient) -> None:
    job_id = str(uuid.uuid4())
    message = error_of(await http.get(f"/v2/echo/status/{job_id}"), 404)
    assert job_id in message and "TTL" in message


async def test_a_job_is_only_found_under_its_own_endpoint(http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    error_of(await http.get(f"/v2/echo/status/{job_id}"), 404)


# ---- /stream -----------------------------------------------------------------------------


async def test_stream_answers_status_and_chunks(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/stream/run", json={"input": {"text": "a b"}})).json()["id"]
    await settle()
    body = (await http.get(f"/v2/stream/stream/{job_id}")).json()
    assert body["status"] == "COMPLETED"
    assert [c["output"]["text"] for c in body["stream"]] == [["a"], [" b"]]
    assert all(set(c) == {"output", "metrics"} for c in body["stream"])


@pytest.mark.parametrize("wait", ["-1", "300001", "x"])
async def test_stream_refuses_a_wait_out_of_range(http: httpx.AsyncClient, wait: str) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    assert "wait" in error_of(await http.get(f"/v2/held/stream/{job_id}?wait={wait}"), 400)


# ---- /cancel, /retry, /purge-queue, /health, /requests -----------------------------------


async def test_cancel_answers_id_and_cancelled(http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/held/run", json={"input": {}})).json()["id"]
    for _ in range(2):
        response = await http.post(f"/v2/held/cancel/{job_id}")
        assert response.status_code == 200
        assert response.json() == {"id": job_id, "status": "CANCELLED"}


async def test_cancel_of_a_finished_job_is_409_saying_why(http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/echo/runsync", json={"input": {}})).json()["id"]
    message = error_of(await http.post(f"/v2/echo/cancel/{job_id}"), 409)
    assert "COMPLETED" in message and "IN_QUEUE and IN_PROGRESS" in message


async def test_retry_answers_the_accepted_job(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/fail/runsync", json={"input": {}})).json()["id"]
    response = await http.post(f"/v2/fail/retry/{job_id}")
    assert response.status_code == 200
    assert response.json() == {"id": job_id, "status": "IN_QUEUE"}
    await settle()
    assert (await http.get("/v2/fail/health")).json()["jobs"]["retried"] == 1


async def test_retry_of_a_completed_job_is_409_saying_why(http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/echo/runsync", json={"input": {}})).json()["id"]
    message = error_of(await http.post(f"/v2/echo/retry/{job_id}"), 409)
    assert "COMPLETED" in message and "FAILED or TIMED_OUT" in message


async def test_retry_of_an_expired_job_is_404(emu: Emulator, http: httpx.AsyncClient) -> None:
    job_id = (await http.post("/v2/fail/runsync", json={"input": {}})).json()["id"]
    await advance(emu, 60)
    error_of(await http.post(f"/v2/fail/retry/{job_id}"), 404)


async def test_purge_queue_answers_removed_and_completed(http: httpx.AsyncClient) -> None:
    ids = [(await http.post("/v2/held/run", json={"input": {}})).json()["id"] for _ in range(3)]
    response = await http.post("/v2/held/purge-queue")
    assert response.status_code == 200
    assert response.json() == {"removed": 3, "status": "completed"}
    for job_id in ids:
        error_of(await http.get(f"/v2/held/status/{job_id}"), 404)


async def test_health_answers_jobs_and_workers(emu: Emulator, http: httpx.AsyncClient) -> None:
    await http.post("/v2/sleep/run", json={"input": {"seconds": 5}})
    await http.post("/v2/sleep/runsync", json={"input": {"seconds": 0}})
    await settle()
    body = (await http.get("/v2/sleep/health")).json()
    assert body == {
        "jobs": {"completed": 1, "failed": 0, "inProgress": 1, "inQueue": 0, "retried": 0},
        "workers": {
            "idle": 1,
            "running": 1,
            "initializing": 0,
            "ready": 2,
            "throttled": 0,
            "unhealthy": 0,
        },
    }


async def test_requests_lists_the_retained_jobs_newest_first(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    first = (await http.post("/v2/echo/run", json={"input": {"n": 1}})).json()["id"]
    await advance(emu, 1)
    second = (await http.post("/v2/echo/run", json={"input": {"n": 2}})).json()["id"]
    await settle()
    listed = (await http.get("/v2/echo/requests")).json()
    assert [j["id"] for j in listed] == [second, first]
    assert [j["output"] for j in listed] == [{"n": 2}, {"n": 1}]
    await advance(emu, 30 * 60 - 1)  # the first one's retention runs out, not the second's
    assert [j["id"] for j in (await http.get("/v2/echo/requests")).json()] == [second]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/v2/echo/nope"), ("GET", "/v2/echo/status"), ("GET", "/v2/nope"), ("GET", "/x")],
)
async def test_unknown_paths_answer_404_in_the_interface_s_error_shape(
    http: httpx.AsyncClient, method: str, path: str
) -> None:
    message = error_of(await http.request(method, path), 404)
    assert f"no operation at {path}" in message


async def test_a_wrong_method_on_a_control_route_answers_405_with_an_error_body(
    http: httpx.AsyncClient,
) -> None:
    message = error_of(await http.get("/_emulator/reset"), 405)
    assert "GET is not an operation of /_emulator/reset" in message


# ---- errors shared by every route --------------------------------------------------------

ROUTES: list[tuple[str, str]] = [
    ("POST", "/run"),
    ("POST", "/runsync"),
    ("GET", "/status/JOB"),
    ("GET", "/stream/JOB"),
    ("POST", "/cancel/JOB"),
    ("POST", "/retry/JOB"),
    ("POST", "/purge-queue"),
    ("GET", "/health"),
    ("GET", "/requests"),
]
"""The job routes (``/openai/...`` answers in OpenAI's error shape: test_openai_routes.py)."""
CONTROL_ROUTES: list[tuple[str, str]] = [
    ("POST", "/_emulator/reset"),
    ("GET", "/_emulator/clock"),
    ("POST", "/_emulator/clock/advance"),
    ("GET", "/_emulator/webhooks"),
    ("GET", "/_emulator/endpoints"),
    ("POST", "/_emulator/endpoints"),
]


async def call(
    client: httpx.AsyncClient, method: str, path: str, job_id: str = "x", **kw: Any
) -> httpx.Response:
    body = {"input": {}} if method == "POST" else None
    return await client.request(method, path.replace("JOB", job_id), json=body, **kw)


@pytest.mark.parametrize(("method", "route"), ROUTES)
async def test_every_route_of_an_unknown_endpoint_is_404_naming_it(
    http: httpx.AsyncClient, method: str, route: str
) -> None:
    message = error_of(await call(http, method, f"/v2/nope{route}"), 404)
    assert "endpoint 'nope' not found" in message and "echo" in message


@pytest.mark.parametrize(("method", "route"), ROUTES)
@pytest.mark.parametrize(
    "header",
    [None, "", "Bearer", "Bearer wrong-key", "wrong-key", f"Basic {KEY}", f"Bearer {KEY}x"],
)
async def test_every_route_refuses_a_missing_or_wrong_key_with_401(
    emu: Emulator, method: str, route: str, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    async with client_for(emu, headers=headers) as client:
        response = await call(client, method, f"/v2/echo{route}")
    message = error_of(response, 401)
    assert KEY not in message and "wrong-key" not in message
    assert emu.jobs.jobs == {}


@pytest.mark.parametrize(("method", "path"), CONTROL_ROUTES)
@pytest.mark.parametrize("header", [None, "Bearer wrong-key"])
async def test_every_control_route_refuses_a_missing_or_wrong_key_with_401(
    emu: Emulator, method: str, path: str, header: str | None
) -> None:
    headers = {} if header is None else {"Authorization": header}
    async with client_for(emu, headers=headers) as client:
        response = await client.request(method, path, json={"seconds": 1, "image": "echo"})
    error_of(response, 401)
    assert emu.clock.now() == 1_767_225_600.0


@pytest.mark.parametrize("header", [f"Bearer {KEY}", f"bearer {KEY}", KEY, f"  {KEY}  "])
@pytest.mark.parametrize(("method", "route"), ROUTES)
async def test_every_route_accepts_the_key_bearer_or_bare(
    emu: Emulator, method: str, route: str, header: str
) -> None:
    async with client_for(emu, headers={"Authorization": header}) as client:
        job_id = (await client.post("/v2/echo/run", json={"input": {}})).json()["id"]
        await settle()
        response = await call(client, method, f"/v2/echo{route}", job_id)
    assert response.status_code in (200, 409), response.text  # 409: retry of COMPLETED


async def test_the_401_message_says_how_to_authenticate(emu: Emulator) -> None:
    async with client_for(emu, headers={}) as client:
        message = error_of(await client.get("/v2/echo/health"), 401)
    assert "Authorization" in message and "Bearer" in message


# ---- 400: malformed bodies, each naming what was wrong -----------------------------------

BAD_BODIES: list[tuple[str, bytes, str]] = [
    ("empty", b"", "request body is empty"),
    ("not json", b"{input: 1}", "not valid JSON"),
    ("not utf-8", b'{"input": "\xff"}', "not valid JSON"),
    ("an array", b"[1, 2]", "must be a JSON object"),
    ("NaN", b'{"input": {"x": NaN}}', "NaN is not a JSON number"),
    ("Infinity", b'{"input": {"x": -Infinity}}', "-Infinity is not a JSON number"),
    (
        "nested too deeply",
        b'{"input": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
        "nested more than 200 levels deep",
    ),
    ("missing input", b'{"webhook": "https://x.io"}', "input: is required"),
    ("input not an object", b'{"input": [1]}', "input: must be a JSON object, got an array"),
    ("input null", b'{"input": null}', "input: must be a JSON object, got null"),
    ("bad webhook", b'{"input": {}, "webhook": "ftp://x"}', "webhook: must be an http"),
    (
        "timeout too short",
        b'{"input": {}, "policy": {"executionTimeout": 4999}}',
        "policy.executionTimeout: must be between 5000 and 604800000 ms",
    ),
    (
        "timeout too long",
        b'{"input": {}, "policy": {"executionTimeout": 604800001}}',
        "policy.executionTimeout: must be between 5000 and 604800000 ms",
    ),
    (
        "ttl too short",
        b'{"input": {}, "policy": {"ttl": 9999}}',
        "policy.ttl: must be between 10000 and 604800000 ms",
    ),
    (
        "ttl not an integer",
        b'{"input": {}, "policy": {"ttl": "1h"}}',
        "policy.ttl",
    ),
    (
        "lowPriority not boolean",
        b'{"input": {}, "policy": {"lowPriority": "yes"}}',
        "policy.lowPriority",
    ),
    ("policy not an object", b'{"input": {}, "policy": 5}', "policy"),
]


@pytest.mark.parametrize(("case", "body", "message"), BAD_BODIES, ids=[b[0] for b in BAD_BODIES])
@pytest.mark.parametrize("route", ["run", "runsync"])
async def test_a_malformed_submission_is_400_naming_the_field_and_rule(
    emu: Emulator, http: httpx.AsyncClient, route: str, case: str, body: bytes, message: str
) -> None:
    response = await http.post(
        f"/v2/echo/{route}", content=body, headers={"Content-Type": "application/json"}
    )
    assert message in error_of(response, 400)
    assert emu.jobs.jobs == {}


@pytest.mark.parametrize(("method", "route"), ROUTES)
async def test_every_route_answers_a_wrong_method_405_naming_the_right_one(
    emu: Emulator, http: httpx.AsyncClient, method: str, route: str
) -> None:
    wrong = "PUT" if method == "POST" else "POST"
    response = await call(http, wrong, f"/v2/echo{route}")
    path = f"/v2/echo{route}".replace("JOB", "x")  # as ``call`` sends it
    assert f"{wrong} is not an operation of {path}; it takes {method}" in error_of(response, 405)
    assert response.headers["allow"] == method
    assert not emu.jobs.jobs  # nothing was run for it


@pytest.mark.parametrize(("method", "route"), ROUTES)
async def test_a_trailing_slash_redirects_to_the_route_keeping_the_method(
    http: httpx.AsyncClient, method: str, route: str
) -> None:
    path = f"/v2/echo{route}".replace("JOB", "x")
    response = await call(http, method, path + "/?wait=2000")
    assert response.status_code == 307  # 307: the method and body go along
    location = httpx.URL(response.headers["location"])
    assert location.raw_path == (path + "?wait=2000").encode()


@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_an_emulator_fault_answers_500_in_the_error_shape(emu: Emulator) -> None:
    """A fault of the emulator's own (here an endpoint's queue, broken under it) is a 500
    whose body says so, in the interface's error shape, and the traceback goes to the log.
    A store that cannot write is not such a fault: 503, saying so, nothing queued."""
    emu.store.close()
    transport = httpx.ASGITransport(app=create_app(emu), raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://emulator", headers={"Authorization": KEY}
    ) as client:
        message = error_of(await client.post("/v2/held/run", json={"input": {}}), 503)
        assert "could not write to its database" in message and "nothing was stored" in message
        assert emu.jobs.jobs == {}
        emu.jobs.endpoints["held"].queue = None  # type: ignore[assignment]
        emu.jobs.persistence.store = MemoryStore()
        message = error_of(await client.post("/v2/held/run", json={"input": {}}), 500)
    assert "the emulator failed on this request (TypeError)" in message
    assert "its log has the traceback" in message

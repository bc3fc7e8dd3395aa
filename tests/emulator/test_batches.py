"""Batch jobs (``/v2/{endpoint_id}/batch...``) over HTTP, on the fake clock, both stores.

Each call of the service's table, the states and counts, paging, cancel, the limits and
the bad-input cases (one line each, nothing already accepted lost), ``batchId`` in what
a handler gets, billing per executed request, results outliving a job's retention, and a
restart on the same database mid-batch. Jobs run on the test's loop: async handlers end
as the loop runs (``until``), and ``Gates`` hold requests in progress for as long as a
test needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.batches import REQUEST
from nbext.emulator.domain.errors import Conflict, InvalidInput, NotFound
from nbext.emulator.domain.store_port import MemoryStore

from .conftest import Gates, MakeEmulator, advance, client_for, until
from .test_http_routes import error_of

pytestmark = pytest.mark.anyio
Http = httpx.AsyncClient


def items(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"input": {"i": i}} for i in range(start, start + n)]


async def create(http: Http, endpoint: str, n: int, *, finalize: bool = False) -> str:
    response = await http.post(f"/v2/{endpoint}/batch", json=items(n))
    assert response.status_code == 200, response.text
    batch_id: str = response.json()["id"]
    if finalize:
        assert (await http.post(f"/v2/{endpoint}/batch/{batch_id}/finalize")).status_code == 200
    return batch_id


async def batch_of(http: Http, endpoint: str, batch_id: str) -> dict[str, Any]:
    response = await http.get(f"/v2/{endpoint}/batch/{batch_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def all_requests(http: Http, endpoint: str, batch_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while True:
        page = (
            await http.get(f"/v2/{endpoint}/batch/{batch_id}/requests?offset={len(out)}&limit=1000")
        ).json()
        out += page["requests"]
        if not page["hasMore"]:
            return out


def done(batch: dict[str, Any]) -> bool:
    return bool(batch["requestCompleted"] + batch["requestFailed"] == batch["requestTotal"])


async def finished(emu: Emulator, http: Http, endpoint: str, batch_id: str) -> dict[str, Any]:
    """The batch once every request of it has ended (its handlers run on this loop)."""
    batch = emu.batches.batches[batch_id]
    await until(lambda: batch.ended == len(batch.requests), f"batch {batch_id} done")
    body = await batch_of(http, endpoint, batch_id)
    assert done(body), body
    return body


def gated(emu: Emulator, gates: Gates, workers: int = 1) -> str:
    return emu.deploy(handler=gates.handler, endpoint_id="gated", workers={"max": workers})


# ---- the calls of the table --------------------------------------------------------------


async def test_a_batch_runs_every_request_and_keeps_the_results_in_order(
    emu: Emulator, http: Http
) -> None:
    response = await http.post("/v2/echo/batch", json=items(3))
    assert response.status_code == 200
    draft = response.json()
    assert draft["id"].startswith("batch_") and draft["status"] == "DRAFT"
    assert draft == {
        "id": draft["id"], "endpointId": "echo", "status": "DRAFT", "requestTotal": 3,
        "requestInProgress": 0, "requestCompleted": 0, "requestFailed": 0,
        "createdAt": round(emu.clock.now() * 1000),
    }  # fmt: skip
    added = await http.post(
        f"/v2/echo/batch/{draft['id']}/requests", json={"requests": items(2, 3)}
    )
    assert added.json()["requestTotal"] == 5
    queued = await all_requests(http, "echo", draft["id"])
    assert [r["status"] for r in queued] == ["IN_QUEUE"] * 5
    assert all(r["startedAt"] is None and "output" not in r for r in queued)
    final = await http.post(f"/v2/echo/batch/{draft['id']}/finalize")
    assert final.json()["status"] == "FINALIZED"
    batch = await finished(emu, http, "echo", draft["id"])
    assert batch["status"] == "FINALIZED" and batch["requestCompleted"] == 5
    results = await all_requests(http, "echo", draft["id"])
    assert [r["output"] for r in results] == [{"i": i} for i in range(5)]
    assert [r["id"] for r in results] == [r["id"] for r in queued]
    assert all(r["status"] == "COMPLETED" and r["completedAt"] >= r["startedAt"] for r in results)


async def test_each_request_is_a_job_of_the_endpoint_whose_payload_carries_batch_id(
    emu: Emulator, http: Http
) -> None:
    seen: list[dict[str, Any]] = []

    async def record(job: dict[str, Any]) -> Any:
        seen.append(job)
        return job["batchId"]

    emu.deploy(handler=record, endpoint_id="rec")
    batch_id = await create(http, "rec", 2, finalize=True)
    await finished(emu, http, "rec", batch_id)
    results = await all_requests(http, "rec", batch_id)
    assert [job["batchId"] for job in seen] == [batch_id] * 2
    assert sorted(job["id"] for job in seen) == sorted(r["id"] for r in results)
    assert [r["output"] for r in results] == [batch_id] * 2
    status = (await http.get(f"/v2/rec/status/{results[0]['id']}")).json()
    assert status["status"] == "COMPLETED" and status["output"] == batch_id


async def test_a_draft_is_updated_and_a_request_removed(emu: Emulator, http: Http) -> None:
    batch_id = await create(http, "echo", 3)
    first, second, third = [r["id"] for r in await all_requests(http, "echo", batch_id)]
    body = {"requests": [{"id": second, "input": {"changed": True}}]}
    assert (await http.put(f"/v2/echo/batch/{batch_id}", json=body)).status_code == 200
    removed = await http.delete(f"/v2/echo/batch/{batch_id}/requests/{first}")
    assert removed.json()["requestTotal"] == 2
    await http.post(f"/v2/echo/batch/{batch_id}/finalize")
    await finished(emu, http, "echo", batch_id)
    results = await all_requests(http, "echo", batch_id)
    assert [(r["id"], r["output"]) for r in results] == [
        (second, {"changed": True}),
        (third, {"i": 2}),
    ]
    refused = await http.delete(f"/v2/echo/batch/{batch_id}/requests/{third}")
    assert "FINALIZED; requests can be removed only in a DRAFT" in error_of(refused, 409)
    unknown = await http.put(f"/v2/echo/batch/{batch_id}", json={"requests": []})
    assert "only in a DRAFT" in error_of(unknown, 409)


async def test_the_listing_is_newest_first_and_pages(emu: Emulator, http: Http) -> None:
    ids = []
    for _ in range(3):
        ids.append(await create(http, "echo", 1))
        await advance(emu, 1)
    listing = (await http.get("/v2/echo/batch")).json()
    assert [b["id"] for b in listing["batches"]] == ids[::-1]
    assert (listing["total"], listing["offset"], listing["hasMore"]) == (3, 0, False)
    page = (await http.get("/v2/echo/batch?offset=1&limit=1")).json()
    assert [b["id"] for b in page["batches"]] == [ids[1]] and page["hasMore"] is True
    assert (await http.get("/v2/sleep/batch")).json()["batches"] == []


async def test_requests_page_by_offset_and_limit(http: Http) -> None:
    batch_id = await create(http, "echo", 250)
    path = f"/v2/echo/batch/{batch_id}/requests"
    first = (await http.get(path)).json()
    assert (len(first["requests"]), first["limit"], first["hasMore"]) == (100, 100, True)
    last = (await http.get(f"{path}?offset=200&limit=100")).json()
    assert [r["id"] for r in last["requests"]] == [
        r["id"] for r in (await all_requests(http, "echo", batch_id))[200:]
    ]
    assert last == {**last, "total": 250, "offset": 200, "hasMore": False}
    past = (await http.get(f"{path}?offset=900")).json()
    assert past["requests"] == [] and past["hasMore"] is False
    assert "limit must be a whole number from 1 to 1000, got '0'" in error_of(
        await http.get(f"{path}?limit=0"), 400
    )
    assert "offset must be a whole number of 0 or more, got '-1'" in error_of(
        await http.get(f"{path}?offset=-1"), 400
    )


# ---- cancel ------------------------------------------------------------------------------


async def test_cancel_drops_queued_requests_unbilled_and_lets_running_ones_finish(
    emu: Emulator, http: Http, gates: Gates
) -> None:
    gated(emu, gates, workers=2)
    executions: list[str] = []
    emu.jobs.on_execution.append(lambda endpoint, worker, start, end: executions.append(worker))
    batch_id = await create(http, "gated", 20, finalize=True)
    await until(lambda: len(gates.started) == 2, "two requests in progress")
    cancelled = (await http.post(f"/v2/gated/batch/{batch_id}/cancel")).json()
    assert cancelled["status"] == "CANCELLED"
    assert (cancelled["requestInProgress"], cancelled["requestFailed"]) == (2, 18)
    assert not done(cancelled)
    for job_id in list(gates.started):
        gates.open(job_id)
    batch = await finished(emu, http, "gated", batch_id)
    assert (batch["status"], batch["requestCompleted"], batch["requestFailed"]) == (
        "CANCELLED",
        2,
        18,
    )
    assert len(executions) == 2, "only the requests that ran are billed"
    results = await all_requests(http, "gated", batch_id)
    dropped = [r for r in results if r["status"] == "CANCELLED"]
    assert len(dropped) == 18 and all(r["startedAt"] is None for r in dropped)
    assert {r["error"] for r in dropped} == {"cancelled: its batch or its job was"}
    again = await http.post(f"/v2/gated/batch/{batch_id}/cancel")
    assert again.status_code == 200 and again.json() == batch
    assert "can be finalized only in a DRAFT" in error_of(
        await http.post(f"/v2/gated/batch/{batch_id}/finalize"), 409
    )


async def test_a_request_of_a_batch_waits_behind_a_few_others_at_most(
    emu: Emulator, http: Http, gates: Gates
) -> None:
    gated(emu, gates, workers=1)
    await create(http, "gated", 100, finalize=True)
    await until(lambda: len(gates.started) == 1, "a request in progress")
    endpoint = emu.jobs.endpoints["gated"]
    assert len(endpoint.queue) <= 4, "a batch hands the queue a window, not all of it"
    run = (await http.post("/v2/gated/run", json={"input": {"interactive": True}})).json()
    assert list(endpoint.queue).index(run["id"]) < 4


# ---- limits and bad input ---------------------------------------------------------------


async def test_5001_requests_are_refused_and_the_batch_keeps_what_it_had(http: Http) -> None:
    too_many = await http.post("/v2/echo/batch", json=items(5001))
    assert "at most 5,000 requests, and this call would make 5,001" in error_of(too_many, 400)
    batch_id = await create(http, "echo", 4000)
    more = await http.post(f"/v2/echo/batch/{batch_id}/requests", json={"requests": items(1001)})
    assert "nothing of it was added" in error_of(more, 400)
    assert (await batch_of(http, "echo", batch_id))["requestTotal"] == 4000


async def test_an_11th_active_batch_is_refused_until_one_is_done_or_cancelled(
    emu: Emulator, http: Http, gates: Gates
) -> None:
    gated(emu, gates)
    ids = [await create(http, "gated", 1) for _ in range(10)]
    refused = await http.post("/v2/gated/batch", json=items(1))
    assert "has 10 active batches, the most it may have" in error_of(refused, 409)
    assert (await http.get("/v2/gated/batch")).json()["total"] == 10
    await http.post(f"/v2/gated/batch/{ids[0]}/cancel")
    eleventh = await create(http, "gated", 1)
    assert "active batches" in error_of(await http.post("/v2/gated/batch", json=items(1)), 409)
    await http.post(f"/v2/gated/batch/{ids[1]}/finalize")
    await until(lambda: len(gates.started) == 1, "its request in progress")
    gates.open(gates.started[0])
    await finished(emu, http, "gated", ids[1])
    assert (await http.post("/v2/gated/batch", json=items(1))).status_code == 200
    assert eleventh


async def test_a_call_over_10_mib_is_refused_and_nothing_of_it_is_added(http: Http) -> None:
    batch_id = await create(http, "echo", 1)
    big = {"requests": [{"input": {"text": "x" * (11 * 1024 * 1024)}}]}
    refused = await http.post(f"/v2/echo/batch/{batch_id}/requests", json=big)
    assert "over the 10 MiB one batch call may carry; nothing of it was added" in error_of(
        refused, 413
    )
    assert (await batch_of(http, "echo", batch_id))["requestTotal"] == 1
    assert error_of(await http.post("/v2/echo/batch", json=[big["requests"][0]]), 413)


async def test_state_errors_each_say_what_was_wrong(http: Http) -> None:
    running = await create(http, "echo", 1, finalize=True)
    adding = await http.post(f"/v2/echo/batch/{running}/requests", json={"requests": items(1)})
    assert f"batch {running} is FINALIZED; requests can be added only in a DRAFT" == error_of(
        adding, 409
    )
    empty = await create(http, "echo", 0)
    assert f"batch {empty} has no requests; add some" in error_of(
        await http.post(f"/v2/echo/batch/{empty}/finalize"), 409
    )
    assert (
        error_of(await http.get("/v2/echo/batch/batch_nope"), 404)
        == "batch 'batch_nope' not found on endpoint 'echo'"
    )
    assert "batch 'batch_nope' not found" in error_of(
        await http.get("/v2/echo/batch/batch_nope/requests"), 404
    )
    assert "not found on endpoint 'sleep'" in error_of(
        await http.get(f"/v2/sleep/batch/{running}"), 404
    )
    assert "endpoint 'nowhere' not found" in error_of(
        await http.post("/v2/nowhere/batch", json=[]), 404
    )
    again = await http.post(f"/v2/echo/batch/{running}/finalize")
    assert again.status_code == 200 and again.json()["status"] == "FINALIZED"


@pytest.mark.parametrize(
    ("path", "body", "says"),
    [
        ("", [{"input": "text"}], "body[0].input must be a JSON object, got a string"),
        ("", [{"input": {}}, {"input": [1]}], "body[1].input must be a JSON object, got an array"),
        (
            "",
            [{"input": {}}, 7],
            'body[1] must be an object {"input": ...}, got a number; nothing was changed',
        ),
        ("", [{"input": {}, "webhook": "x"}], "got fields 'input', 'webhook'; nothing was changed"),
        ("", {"input": {}}, "request body must be a JSON array"),
        ("/requests", [{"input": {}}], 'such as {"requests": [{"input": {...}}]}'),
        (
            "/requests",
            {"requests": [{"input": None}]},
            "requests[0].input must be a JSON object, got null",
        ),
    ],
)
async def test_inputs_that_are_not_json_objects_are_refused_whole(
    http: Http, path: str, body: Any, says: str
) -> None:
    batch_id = await create(http, "echo", 2)
    target = f"/v2/echo/batch/{batch_id}{path}" if path else "/v2/echo/batch"
    assert says in error_of(await http.post(target, json=body), 400)
    assert (await batch_of(http, "echo", batch_id))["requestTotal"] == 2
    assert (await http.get("/v2/echo/batch")).json()["total"] == 1


async def test_a_load_balancing_endpoint_takes_no_batch(emu: Emulator, http: Http) -> None:
    record = emu.management.endpoints.book.get("echo")
    record.type = "LOAD_BALANCER"  # what a record of a load-balancing endpoint will say
    refused = await http.post("/v2/echo/batch", json=items(1))
    assert "endpoint echo is a LOAD_BALANCER endpoint; batches run on queue-based" in error_of(
        refused, 400
    )
    assert (await http.get("/v2/echo/batch")).json()["total"] == 0


async def test_50000_waiting_requests_per_endpoint(make_emulator: MakeEmulator) -> None:
    emu = make_emulator(store=MemoryStore())
    async with client_for(emu) as http:
        for _ in range(9):
            await create(http, "held", 5000)
        last = await create(http, "held", 4999)
        assert (await http.post("/v2/held/run", json={"input": {}})).status_code == 200
        refused = await http.post(f"/v2/held/batch/{last}/requests", json={"requests": items(1)})
        assert "has 50,000 requests waiting to start, and may have at most 50,000" in error_of(
            refused, 409
        )


async def test_batch_calls_have_a_rate_limit_with_retry_after(emu: Emulator, http: Http) -> None:
    batch_id = await create(http, "echo", 1)
    for _ in range(499):
        assert (await http.get(f"/v2/echo/batch/{batch_id}")).status_code == 200
    limited = await http.get(f"/v2/echo/batch/{batch_id}")
    assert "rate limit of /batch on endpoint echo reached: 500 requests per 10 s" in error_of(
        limited, 429
    )
    assert limited.headers["Retry-After"] == "10"
    await advance(emu, 10)
    assert (await http.get(f"/v2/echo/batch/{batch_id}")).status_code == 200


# ---- what outlives what ------------------------------------------------------------------


async def test_results_outlive_the_jobs_retention(emu: Emulator, http: Http) -> None:
    batch_id = await create(http, "echo", 2, finalize=True)
    await finished(emu, http, "echo", batch_id)
    results = await all_requests(http, "echo", batch_id)
    await advance(emu, 31 * 60)
    assert error_of(await http.get(f"/v2/echo/status/{results[0]['id']}"), 404)
    await advance(emu, 24 * 3600)
    assert await all_requests(http, "echo", batch_id) == results


async def test_a_purged_request_is_queued_again(emu: Emulator, http: Http, gates: Gates) -> None:
    gated(emu, gates)
    batch_id = await create(http, "gated", 3, finalize=True)
    await until(lambda: len(gates.started) == 1, "one in progress")
    assert (await http.post("/v2/gated/purge-queue")).json()["removed"] == 2
    await advance(emu, 0)
    for n in range(3):
        await until(lambda n=n: len(gates.started) == n + 1, f"request {n} started")
        gates.open(gates.started[n])
    batch = await finished(emu, http, "gated", batch_id)
    assert batch["requestCompleted"] == 3 and len(set(gates.started)) == 3


async def test_a_batch_whose_endpoint_is_deleted_fails_and_stays_readable(
    emu: Emulator, http: Http, gates: Gates
) -> None:
    gated(emu, gates)
    batch_id = await create(http, "gated", 3, finalize=True)
    await until(lambda: len(gates.started) == 1, "one in progress")
    emu.undeploy("gated")
    await advance(emu, 0)
    batch = await batch_of(http, "gated", batch_id)
    assert (batch["status"], batch["requestFailed"]) == ("FAILED", 3)
    results = await all_requests(http, "gated", batch_id)
    assert all(r["error"] == "endpoint gated was deleted" for r in results)


async def test_a_restart_on_the_same_database_finishes_the_batch_once_per_request(
    make_emulator: MakeEmulator, tmp_path: Path, gates: Gates
) -> None:
    db = tmp_path / "batches.db"
    first = make_emulator(db=db)
    first.deploy(handler=gates.handler, endpoint_id="gated", workers={"max": 2})
    async with client_for(first) as http:
        batch_id = await create(http, "gated", 10, finalize=True)
        draft_id = await create(http, "gated", 2)
        await until(lambda: len(gates.started) == 2, "two in progress")
        gates.open(gates.started[0])
        await until(lambda: len(gates.started) == 3, "the next one started")
    # Killed between the job's end and its request's record: the job's record has it.
    record = first.store.get(REQUEST, gates.started[0])
    assert record is not None and record["status"] == "COMPLETED"
    unwritten = {"status": "IN_QUEUE", "has_output": False, "output": None}
    first.store.put(REQUEST, gates.started[0], {**record, **unwritten})
    first.store.close()  # as a kill leaves it: nothing more is written
    later = Gates()
    second = make_emulator(db=db, demos=False)
    second.deploy(handler=later.handler, endpoint_id="gated")
    async with client_for(second) as http:
        assert (await batch_of(http, "gated", batch_id))["requestCompleted"] == 1
        assert (await batch_of(http, "gated", draft_id))["status"] == "DRAFT"
        for n in range(9):
            await until(lambda n=n: len(later.started) > n, f"request {n} started again")
            later.open(later.started[n])
        batch = await finished(second, http, "gated", batch_id)
        assert (batch["requestCompleted"], batch["requestTotal"]) == (10, 10)
        results = await all_requests(http, "gated", batch_id)
        assert len({r["id"] for r in results}) == 10
        assert sorted(later.started + gates.started[:1]) == sorted(r["id"] for r in results)


async def test_a_reset_forgets_batches(emu: Emulator, http: Http) -> None:
    await create(http, "echo", 2, finalize=True)
    emu.reset()
    assert (await http.get("/v2/echo/batch")).json()["total"] == 0


# ---- the domain alone, no HTTP -------------------------------------------------------------


async def test_the_domain_runs_a_batch_and_refuses_what_the_routes_refuse(emu: Emulator) -> None:
    batches = emu.batches
    batch = batches.create("echo", items(3))
    assert batch.active and batch.status == "DRAFT"
    with pytest.raises(Conflict, match="has no requests"):
        batches.finalize("echo", batches.create("echo", []).id)
    with pytest.raises(InvalidInput, match=r"body\[0\].input must be a JSON object"):
        batches.create("echo", [{"input": 1}])
    batches.finalize("echo", batch.id)
    await until(lambda: batch.ended == 3, "the batch done")
    assert [r.output for r in batch.requests.values()] == [{"i": i} for i in range(3)]
    assert not batch.active and batch.to_wire()["requestCompleted"] == 3
    await advance(emu, 7 * 24 * 3600)  # a week on: jobs long gone, results kept
    assert not emu.jobs.jobs and len(batches.results("echo", batch.id, 0, 10)["requests"]) == 3
    with pytest.raises(NotFound, match="batch 'batch_x' not found on endpoint 'echo'"):
        batches.get("echo", "batch_x")

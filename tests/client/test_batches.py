"""``endpoint.batch``, ``batches``, ``get_batch`` and the ``Batch`` handle, in every client mode.

The service (the real emulator, on its fake clock) runs the batch; the client splits what
it sends, maps requests back to input order, follows the batch and reads its results.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from nbext.client import (
    AsyncBatch,
    BadRequest,
    Batch,
    BudgetExceeded,
    Conflict,
    NotFound,
    PayloadTooLarge,
    Timeout,
)
from nbext.models import JobStatus
from nbext.models.batches import BatchRecord, BatchRequest, BatchStatus

from .conftest import Harness
from .test_cost import reports

pytestmark = pytest.mark.anyio
S = JobStatus


def inputs(n: int, **extra: Any) -> list[dict[str, Any]]:
    return [{"i": i, **extra} for i in range(n)]


async def test_a_batch_runs_and_its_results_come_back_in_input_order(h: Harness) -> None:
    batch = await h.call(h.endpoint("echo").batch, inputs(40))
    assert isinstance(batch, AsyncBatch if h.is_async else Batch)
    assert batch.status is BatchStatus.FINALIZED and batch.id.startswith("batch_")
    seen: list[BatchRecord] = []
    record = await h.call(batch.wait, timeout=30, progress=seen.append)
    assert record.done and (record.request_total, record.request_completed) == (40, 40)
    assert seen[-1] is record and all(isinstance(r, BatchRecord) for r in seen)
    results = await h.call(batch.results)
    assert [r.output for r in results] == inputs(40)
    assert all(isinstance(r, BatchRequest) and r.status is S.COMPLETED for r in results)
    assert all(r.started_at is not None and r.execution_time is not None for r in results)
    assert len({r.id for r in results}) == 40
    assert len(batch.costs) == 40 and all(c is not None for c in batch.costs)
    assert set(h.client.budget.costs) == {r.id for r in results}  # its jobs, counted once
    assert await h.call(batch.results) == results  # ended requests are kept, not read again


async def test_another_client_finds_the_batch_and_reads_the_same_results(h: Harness) -> None:
    first = await h.call(h.endpoint("echo").batch, inputs(5))
    second = await h.call(h.endpoint("echo").batch, inputs(3, second=True))
    await h.call(second.wait, timeout=30)
    other = h.new_client()
    try:
        listed = await h.call(other.endpoint("echo").batches)
        assert [b.id for b in listed] == [second.id, first.id]  # newest first
        found = await h.call(other.endpoint("echo").get_batch, first.id)
        assert found.id == first.id and found.record.request_total == 5
        await h.call(found.wait, timeout=30)
        assert [r.output for r in await h.call(found.results)] == inputs(5)
        assert other.budget.costs == {}  # started elsewhere: not this client's spending
        with pytest.raises(NotFound, match="batch 'batch_nope' not found"):
            await h.call(other.endpoint("echo").get_batch, "batch_nope")
    finally:
        await h.call(other.close)


async def test_a_draft_takes_more_inputs_until_it_is_finalized(h: Harness) -> None:
    draft = await h.call(h.endpoint("echo").batch, inputs(2), finalize=False)
    assert draft.status is BatchStatus.DRAFT
    with pytest.raises(Conflict, match="is a DRAFT: finalize"):
        await h.call(draft.wait)
    await h.call(draft.add, inputs(3, more=True))
    record = await h.call(draft.finalize)
    assert record.status is BatchStatus.FINALIZED and record.request_total == 5
    with pytest.raises(Conflict, match="requests can be added only in a DRAFT") as info:
        await h.call(draft.add, inputs(1))
    assert "\n" not in str(info.value)
    await h.call(draft.wait, timeout=30)
    assert [r.output for r in await h.call(draft.results)] == inputs(2) + inputs(3, more=True)


async def test_inputs_past_10_mib_are_sent_in_several_calls_in_order(h: Harness) -> None:
    """The emulator answers 413 to any call over 10 MiB, so 15 MiB arrive only if split."""
    big = [{"i": i, "blob": "x" * (3 * 1024 * 1024)} for i in range(5)]
    batch = await h.call(h.endpoint("echo").batch, big, finalize=False)
    assert len(h.emu.batches.batches[batch.id].requests) == 5
    await h.call(batch.finalize)
    await h.call(batch.wait, timeout=60)
    assert [r.output["i"] for r in await h.call(batch.results)] == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("given", "error", "says"),
    [
        (inputs(5001), BadRequest, "at most 5,000 requests, got 5,001 inputs"),
        ([{"i": 0}, "text"], BadRequest, "input #1 is a str; each must be a JSON object"),
        ([1], BadRequest, "input #0 is an int; each must be a JSON object"),
        ([{"x": float("nan")}], BadRequest, "input #0 is not JSON"),
        ([{"blob": "x" * (10 * 1024 * 1024)}], PayloadTooLarge, "over the 10 MiB"),
        ([], BadRequest, "no inputs to run"),
        ({"i": 1}, BadRequest, "inputs must be a list of dicts"),
    ],
)
async def test_what_the_service_would_refuse_is_refused_before_sending(
    h: Harness, given: Any, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says) as info:
        await h.call(h.endpoint("echo").batch, given)
    assert "nothing was sent" in str(info.value) and "\n" not in str(info.value)
    assert h.emu.batches.batches == {}


async def test_an_11th_active_batch_is_a_conflict_that_keeps_the_ten(h: Harness) -> None:
    for _ in range(10):
        await h.call(h.endpoint("held").batch, inputs(1))
    with pytest.raises(Conflict, match="has 10 active batches"):
        await h.call(h.endpoint("held").batch, inputs(1))
    assert len(await h.call(h.endpoint("held").batches)) == 10


async def test_cancel_drops_what_has_not_started(h: Harness) -> None:
    batch = await h.call(h.endpoint("held").batch, inputs(4))
    record = await h.call(batch.cancel)
    assert record.status is BatchStatus.CANCELLED
    record = await h.call(batch.wait, timeout=30)
    assert record.done and record.request_failed == 4
    assert {r.status for r in await h.call(batch.results)} == {S.CANCELLED}


async def test_a_wait_past_its_timeout_leaves_the_batch_running(h: Harness) -> None:
    batch = await h.call(h.endpoint("held").batch, inputs(2))
    with pytest.raises(Timeout, match="the batch goes on"):
        await h.call(batch.wait, timeout=0)
    assert (await h.call(batch.refresh)).status is BatchStatus.FINALIZED


async def test_a_batch_whose_estimate_exceeds_the_budget_left_is_not_sent(h: Harness) -> None:
    h.emu.deploy(handler=reports(0.01), endpoint_id="paid")
    client = h.new_client(budget_usd=0.5)
    try:
        paid = client.endpoint("paid")
        await h.call(paid.run_sync, {"x": 1})  # $0.01 a job: 49 more fit in what is left
        batch = await h.call(paid.batch, inputs(40))
        await h.call(batch.wait, timeout=30)
        await h.call(batch.results)
        assert client.budget.spent_usd == pytest.approx(0.41)
        with pytest.raises(BudgetExceeded) as info:
            await h.call(paid.batch, inputs(10))
    finally:
        await h.call(client.close)
    err = info.value
    assert "estimate, $0.1 (10 x $0.01, the mean of 41 of its jobs)" in str(err)
    assert "$0.09 left of budget_usd=0.5" in str(err) and err.endpoint_id == "paid"
    assert len(h.emu.batches.batches) == 1


async def test_a_batch_body_is_the_service_s_documented_shape(h: Harness) -> None:
    """What the client sends is read back as what it meant (no field renamed on the way)."""
    batch = await h.call(h.endpoint("echo").batch, [{"nested": {"a": [1, None]}}], finalize=False)
    stored = h.emu.batches.batches[batch.id]
    [request] = stored.requests.values()
    assert json.dumps(request.input) == '{"nested": {"a": [1, null]}}'


async def test_a_call_refused_after_the_create_leaves_a_draft_its_error_names(h: Harness) -> None:
    """The emulator refuses a lone surrogate, which JSON can carry: the first call (two
    inputs of 4 MiB) is taken, the second refused; what was taken stays, and is named."""
    blob = "x" * (4 * 1024 * 1024)
    given = [{"i": 0, "blob": blob}, {"i": 1, "blob": blob}, {"i": 2, "blob": blob + "\ud800"}]
    with pytest.raises(BadRequest) as info:
        await h.call(h.endpoint("echo").batch, given)
    [batch] = h.emu.batches.batches.values()
    assert batch.status is BatchStatus.DRAFT and len(batch.requests) == 2
    assert info.value.__notes__ == [
        f"batch {batch.id} on 'echo' is a DRAFT holding 2 of these 3 inputs; "
        f"endpoint.get_batch({batch.id!r}) finds it, to add() the rest, finalize() or cancel() it"
    ]


async def test_a_batch_followed_with_progress_is_priced_on_every_page(h: Harness) -> None:
    """A batch that has ended by the first poll: the last progress call already has the
    cost of every request, not of the first page (1,000) only."""
    batch = await h.call(h.endpoint("echo").batch, inputs(2500))
    await h.call(batch.wait, timeout=30)
    priced: list[int] = []
    await h.call(batch.wait, timeout=30, progress=lambda _: priced.append(len(batch.costs)))
    assert priced == [2500] and all(c is not None for c in batch.costs)
    assert len(h.client.budget.costs) == 2500

"""What a job cost, and ``budget_usd`` (issue 26, part 5), against the real emulator.

A job's cost is its execution time x its endpoint's serverless price (the catalog's, per
GPU-hour) x GPUs per worker, or the ``output.cost`` its output reports. The emulator's
serverless billing must come to the same sum. Time is the fake clock's.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nbext.client import AsyncClient, BudgetExceeded, Client, JobCost, usd_text
from nbext.emulator import Emulator, EmulatorServer, FakeClock, create_app
from nbext.models import JobStatus

from .conftest import KEY, Harness
from .test_map_faults import Served

pytestmark = pytest.mark.anyio

RTX4090 = "NVIDIA GeForce RTX 4090"


def reports(cost: float) -> Any:
    """A handler whose output says what the job cost, as the service's public endpoints do."""

    def handler(job: dict[str, Any]) -> dict[str, Any]:
        return {"cost": cost, "echo": job["input"]}

    return handler


async def serverless_price(h: Harness, gpu: str) -> float:
    offer = await h.call(h.client.catalog.gpu, gpu)
    return float(offer.price["serverless"])


async def only(h: Harness, gpu: str, count: int = 1) -> dict[str, Any]:
    """An endpoint's ``gpu`` that allows exactly the type ``gpu``: its pool, less the rest."""
    found = await h.call(h.client.catalog.gpus)
    pool = next(g.pool for g in found if g.id == gpu)
    others = [g.id for g in found if g.pool == pool and g.id != gpu]
    return {"pools": [pool], "excluded_types": others, "count": count}


async def ran(h: Harness, endpoint: str, seconds: float) -> Any:
    """A ``sleep`` job of ``seconds`` on the fake clock, waited for to its end."""
    job = await h.call(h.endpoint(endpoint).run, {"seconds": seconds})
    await h.until(lambda: h.job(job.id).status is JobStatus.IN_PROGRESS, "the job to start")
    await h.advance(seconds)
    await h.call(job.wait, timeout=5)
    return job


async def test_a_job_is_priced_from_the_catalog(h: Harness) -> None:
    job = await ran(h, "sleep", 3)
    cost = await h.call(job.cost)
    assert isinstance(cost, JobCost) and cost.estimate and cost.source == "estimate"
    hourly = await serverless_price(h, RTX4090)
    assert cost.usd == pytest.approx(3 * hourly / 3600)
    assert cost.execution_s == 3 and cost.price is not None
    assert (cost.price.gpu_type_id, cost.price.gpus) == (RTX4090, 1)
    assert "estimate: 3 s x NVIDIA GeForce RTX 4090" in str(cost)
    # The same from a map's result, through the endpoint (no job handle needed).
    again = await h.call(h.endpoint("sleep").cost, job.result)
    assert again == cost


async def test_gpus_per_worker_multiply_the_price(h: Harness) -> None:
    made = await h.call(
        h.client.endpoints.create, template_id="demo-sleep", gpu=await only(h, "NVIDIA L4", 2)
    )
    job = await ran(h, made.id, 10)
    cost = await h.call(job.cost)
    hourly = await serverless_price(h, "NVIDIA L4")
    assert cost is not None and cost.usd == pytest.approx(10 * hourly / 3600 * 2)
    assert cost.price is not None and cost.price.gpus == 2
    assert "10 s x 2 x NVIDIA L4" in str(cost)


async def test_the_service_s_reported_cost_is_used_instead(h: Harness) -> None:
    h.emu.deploy(handler=reports(0.0125), endpoint_id="public")
    result = await h.call(h.endpoint("public").run_sync, {"x": 1})
    cost = await h.call(h.endpoint("public").cost, result)
    assert cost == JobCost(result.id, 0.0125, "reported")
    assert not cost.estimate and str(cost) == "$0.0125 (reported by the service)"


async def test_a_job_that_has_not_ended_has_no_cost_yet(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 30})
    assert await h.call(job.cost) is None
    await h.call(job.cancel)


async def test_an_endpoint_without_a_price_gives_no_cost(h: Harness) -> None:
    """An endpoint this account does not have (a job id of someone else's, say)."""
    result = await h.call(h.endpoint("echo").run_sync, {"x": 1})
    assert await h.call(h.endpoint("no-such-endpoint").cost, result) is None


async def test_a_submission_past_the_budget_is_refused_before_it_is_sent(h: Harness) -> None:
    h.emu.deploy(handler=reports(0.02), endpoint_id="paid")
    client = h.new_client(budget_usd=0.03)
    try:
        paid = client.endpoint("paid")
        for _ in range(2):  # $0 spent, then $0.02: both under the cap
            await h.call(paid.run_sync, {"x": 1})
        with pytest.raises(BudgetExceeded) as info:
            await h.call(paid.run, {"x": 2})
    finally:
        await h.call(client.close)
    err = info.value
    assert (err.budget_usd, err.spent_usd, err.unpriced) == (0.03, pytest.approx(0.04), 0)
    assert err.endpoint_id == "paid" and "\n" not in str(err)
    assert "cost $0.04 of budget_usd=0.03" in str(err)
    assert sum(j.endpoint_id == "paid" for j in h.emu.jobs.jobs.values()) == 2
    assert client.budget.spent_usd == pytest.approx(0.04) and len(client.budget.costs) == 2


async def test_a_retry_costs_again_and_is_refused_past_the_budget(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 60}, execution_timeout=5)
    await h.until(lambda: h.job(job.id).status is JobStatus.IN_PROGRESS, "the job to start")
    await h.advance(6)
    result = await h.call(job.wait, timeout=5, raise_on_failure=False)
    assert result.status is JobStatus.TIMED_OUT
    spent = (await h.call(job.cost)).usd
    h.client.budget.budget_usd = spent / 2
    with pytest.raises(BudgetExceeded):
        await h.call(job.retry)
    assert h.job(job.id).status is JobStatus.TIMED_OUT  # not queued again


async def test_raising_the_budget_lets_submissions_go_on(h: Harness) -> None:
    h.emu.deploy(handler=reports(0.5), endpoint_id="paid")
    h.client.budget.budget_usd = 0.5
    await h.call(h.endpoint("paid").run_sync, {})
    with pytest.raises(BudgetExceeded):
        await h.call(h.endpoint("paid").run_sync, {})
    h.client.budget.budget_usd = 2
    assert (await h.call(h.endpoint("paid").run_sync, {})).status is JobStatus.COMPLETED


@pytest.mark.parametrize("bad", [-1, -0.01, float("nan"), float("inf"), "5", True])
def test_a_budget_that_is_not_dollars_is_refused_in_one_line(bad: Any) -> None:
    with pytest.raises(ValueError) as info:
        Client(KEY, serverless_url="http://127.0.0.1:9/v2", budget_usd=bad)
    assert str(info.value) == (
        f"budget_usd must be a number of dollars >= 0, or None for no cap; got {bad!r}"
    )
    client = Client(KEY, serverless_url="http://127.0.0.1:9/v2", budget_usd=1)
    with pytest.raises(ValueError, match="budget_usd must be"):
        client.budget.budget_usd = bad
    assert client.budget.budget_usd == 1  # what was accepted stays
    client.close()


async def test_emulator_billing_is_the_sum_of_its_jobs_costs(h: Harness) -> None:
    """Serverless billing equals the jobs' costs, a cancelled one's too."""
    gpu = await only(h, "NVIDIA L4", 2)
    l4 = await h.call(h.client.endpoints.create, template_id="demo-sleep", gpu=gpu)
    jobs = [await ran(h, "sleep", 2), await ran(h, "sleep", 5), await ran(h, l4.id, 7)]
    stopped = await h.call(h.endpoint(l4.id).run, {"seconds": 60})
    await h.until(lambda: h.job(stopped.id).status is JobStatus.IN_PROGRESS, "the job to start")
    await h.advance(4)
    await h.call(stopped.cancel)
    await h.call(stopped.wait, timeout=5, raise_on_failure=False)
    costs = [await h.call(job.cost) for job in [*jobs, stopped]]
    assert all(c is not None and c.estimate for c in costs)
    assert costs[-1].execution_s == 4
    total = sum(c.usd for c in costs)
    records = await h.call(h.client.billing.serverless)
    assert sum(r.total_amount for r in records) == pytest.approx(total, abs=1e-6 * len(records))
    by_endpoint = {(r.model_extra or {})["serverlessId"]: r.total_amount for r in records}
    assert by_endpoint[l4.id] == pytest.approx(costs[2].usd + costs[3].usd, abs=1e-6)


async def test_prices_are_read_once_per_client() -> None:
    """A thousand jobs of one endpoint ask for its price (and the catalog) once."""
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
    emu.deploy(image="echo", endpoint_id="echo")
    paths: list[str] = []

    async def count(request: httpx.Request) -> None:
        paths.append(request.url.path)

    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(emu)))
    http.event_hooks["request"] = [count]
    client = AsyncClient(KEY, serverless_url="http://emulator/v2", http_client=http)
    try:
        echo = client.endpoint("echo")
        results = [await echo.run_sync({"i": i}) for i in range(5)]
        costs = [await echo.cost(r) for r in results]
    finally:
        await client.aclose()
        await http.aclose()
        emu.close()
    assert all(c is not None and c.usd == 0 for c in costs)  # the fake clock did not move
    management = [p for p in paths if "/runsync" not in p]
    assert management.count("/v2/catalog/gpus") <= 2  # the client's own, and endpoints.get's
    assert management.count("/v2/serverless/echo") == 1


class Paid(Served):
    """``Served``'s ``gated`` endpoint, where a job given ``cost`` waits for ``paid`` and
    then reports that cost."""

    def deploy(self) -> None:
        self.paid = threading.Event()
        super().deploy()

    def gated(self, job: dict[str, Any]) -> Any:
        if "cost" in job["input"]:
            self.paid.wait(10)
            return {"cost": job["input"]["cost"]}
        return super().gated(job)

    def release_all(self) -> None:
        self.paid.set()
        super().release_all()


@pytest.fixture
def gated() -> Iterator[Paid]:
    served = Paid()
    try:
        yield served
    finally:
        served.close()


@pytest.mark.parametrize("client", ["sync", "async"])
async def test_a_map_that_reaches_the_budget_stops_and_cancels_its_jobs(
    gated: Paid, client: str
) -> None:
    """Three jobs in flight; the first ends costing more than the cap: the map submits
    nothing more, cancels the two others on the service, and says so."""
    inputs: list[dict[str, Any]] = [{"cost": 0.05}, {"i": 1}, {"i": 2}, {"i": 3}, {"i": 4}]
    url = gated.server.serverless_url
    items: list[Any] = []

    def all_waiting() -> None:
        gated.until(lambda: gated.waiting() == 3, "three jobs past their hold")
        gated.paid.set()

    if client == "sync":

        def run() -> Any:
            with Client(KEY, serverless_url=url, budget_usd=0.04) as sclient:
                results = sclient.endpoint("gated").map(inputs, concurrency=3)
                threading.Thread(target=all_waiting, daemon=True).start()
                with pytest.raises(BudgetExceeded) as info:
                    items.extend(results)
                return info.value, results.abandoned

        error, abandoned = await asyncio.to_thread(run)
    else:
        async with AsyncClient(KEY, serverless_url=url, budget_usd=0.04) as aclient:
            aresults = aclient.endpoint("gated").map(inputs, concurrency=3)
            waiting = asyncio.create_task(asyncio.to_thread(all_waiting))
            with pytest.raises(BudgetExceeded) as info:
                async for item in aresults:
                    items.append(item)
            await waiting
            error, abandoned = info.value, aresults.abandoned
    assert [i for i, _ in items] == [0] and items[0][1].output == {"cost": 0.05}
    assert error.spent_usd == pytest.approx(0.05) and error.budget_usd == 0.04
    statuses = gated.statuses()
    assert len(statuses) == 3  # inputs #3 and #4 were never submitted
    assert abandoned is not None and not abandoned.running and not abandoned.unanswered
    assert sorted(abandoned.cancelled) == sorted(
        j for j, s in statuses.items() if s is JobStatus.CANCELLED
    )
    assert len(abandoned.cancelled) == 2
    notes = "\n".join(error.__notes__)
    assert "map: stopped before input #3" in notes
    assert "map left before its end: cancelled 2 jobs" in notes


async def test_a_cost_asked_for_counts_in_the_budget_at_once(h: Harness) -> None:
    """With no cap nothing prices the jobs for the budget; ``job.cost()`` does."""
    job = await ran(h, "sleep", 3)
    assert h.client.budget.spent_usd == 0  # ended, not priced yet
    cost = await h.call(job.cost)
    assert h.client.budget.spent_usd == cost.usd > 0
    assert h.client.budget.costs == {job.id: cost}
    assert repr(h.client.budget) == f"Budget(spent {usd_text(cost.usd)}, no cap)"


async def test_jobs_of_unknown_cost_are_named_not_counted(h: Harness) -> None:
    """A CPU endpoint has no GPU price: no estimate, and the budget names the jobs."""
    cpu = await h.call(
        h.client.endpoints.create, template_id="demo-echo", cpu=[{"id": "cpu3c", "vcpu_count": 2}]
    )
    capped = h.new_client(budget_usd=0.001)
    try:
        for _ in range(2):
            result = await h.call(capped.endpoint(cpu.id).run_sync, {"x": 1})
        assert await h.call(capped.endpoint(cpu.id).cost, result) is None
        capped.budget.budget_usd = 0
        with pytest.raises(BudgetExceeded) as info:
            await h.call(capped.endpoint(cpu.id).run, {"x": 2})
    finally:
        await h.call(capped.close)
    assert len(capped.budget.unpriced) == 2 and info.value.unpriced == 2
    assert "; 2 job(s) of unknown cost not counted;" in str(info.value)


def test_a_price_the_service_does_not_give_is_not_counted_nor_waited_for() -> None:
    """The management interface refuses connections: each budgeted submission goes on at
    once (no retries, no wait), and the job stays to be priced when an answer comes."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    emu = Emulator(api_key=KEY, clock=FakeClock(), rate_limit=False)
    emu.deploy(image="echo", endpoint_id="echo")
    server = EmulatorServer(emu).start()
    try:
        with Client(
            KEY,
            serverless_url=server.serverless_url,
            base_url=f"http://127.0.0.1:{closed}/v2",
            budget_usd=1,
        ) as client:
            started = time.monotonic()
            for i in range(3):
                client.endpoint("echo").run_sync({"i": i})
            took = time.monotonic() - started
            assert client.budget.spent_usd == 0 and client.budget.unpriced == []
    finally:
        server.stop()
        emu.close()
    assert took < 5, f"three submissions took {took:.1f} s"

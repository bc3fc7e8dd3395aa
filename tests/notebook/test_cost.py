"""Cost and ``RunpodMagics.budget_usd`` in a real IPython shell, on the real emulator
(issue 26, part 5): the jobs listing's cost column, one cap for the kernel's clients, a
submission past it refused in one line, a budget that is not dollars refused."""

from __future__ import annotations

from typing import Any

import pytest
from traitlets import TraitError

from nbext.client import JobCost, usd_text
from nbext.models import JobStatus
from nbext.notebook.cost import cost_html, cost_text, total_text
from nbext.notebook.map import run_many_async

from .conftest import Notebook
from .test_job_magic import usage_error


def reports(cost: float) -> Any:
    def handler(job: dict[str, Any]) -> dict[str, Any]:
        return {"cost": cost}

    return handler


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_jobs_lists_each_finished_job_s_cost_and_its_kind(nb: Notebook) -> None:
    nb.deploy(reports(0.0125), "public")
    nb.run('%%runpod_job public -q\n{"n": 1}')
    nb.run('%%runpod_job sleep --background -q\n{"seconds": 4}')
    job = nb.record().id
    await nb.auntil(lambda: nb.job(job).status is JobStatus.IN_PROGRESS, "the job to start")
    await nb.emu.advance_async(4)
    await nb.auntil(lambda: nb.record().final, "the job to end")
    nb.run("%runpod jobs -o listing")
    frame = nb.shell.user_ns["listing"].set_index("endpoint")
    assert frame.loc["public", "cost_usd"] == 0.0125
    assert frame.loc["public", "cost_is"] == "reported"
    price = nb.conn.client.catalog.gpu("NVIDIA GeForce RTX 4090").price["serverless"]
    assert frame.loc["sleep", "cost_usd"] == pytest.approx(4 * price / 3600)
    assert frame.loc["sleep", "cost_is"] == "estimate"
    assert str(frame["cost_usd"].dtype) == "float64"


@pytest.mark.anyio
async def test_a_job_still_running_has_no_cost_in_the_listing(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --background -q\n{"seconds": 60}')
    nb.run("%runpod jobs -o listing")
    frame = nb.shell.user_ns["listing"]
    assert frame["cost_usd"].isna().all() and frame["cost_is"].isna().all()
    nb.run("%runpod cancel last")


def test_the_budget_refuses_a_cell_s_job_in_one_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.deploy(reports(0.02), "paid")
    nb.run("%config RunpodMagics.budget_usd = 0.03")
    nb.run('%%runpod_job paid -q\n{"n": 1}')
    nb.run('%%runpod_job paid --sync -q\n{"n": 2}')
    message = usage_error(nb, '%%runpod_job paid -q\n{"n": 3}', capsys)
    assert message == (
        "budget reached: jobs started from this client cost $0.04 of budget_usd=0.03; "
        "not submitting to endpoint 'paid' (raise budget_usd to go on)"
    )
    assert len(nb.conn.registry) == 2  # nothing more was submitted
    nb.run("%runpod status")
    assert "spent by them: $0.04 of budget_usd=0.03\n" in capsys.readouterr().out
    assert sum(j.endpoint_id == "paid" for j in nb.emu.jobs.jobs.values()) == 2
    nb.run("%config RunpodMagics.budget_usd = 1")
    nb.run('%%runpod_job paid -q\n{"n": 3}')
    assert nb.conn.budget.spent_usd == pytest.approx(0.06)


@pytest.mark.anyio
async def test_the_kernel_s_clients_share_one_budget(nb: Notebook) -> None:
    nb.magics.budget_usd = 2.5
    service = nb.conn.service()
    assert service.client.budget is nb.conn.budget
    assert service.async_client().budget is nb.conn.budget
    assert nb.conn.budget.budget_usd == 2.5
    nb.magics.budget_usd = None
    assert nb.conn.budget.budget_usd is None


@pytest.mark.parametrize("bad", ["-1", "-0.5", "float('inf')"])
def test_a_budget_that_is_not_dollars_is_refused_and_the_cap_stays(nb: Notebook, bad: str) -> None:
    nb.magics.budget_usd = 3
    with pytest.raises(TraitError) as info:
        nb.magics.budget_usd = eval(bad)
    assert str(info.value) == (
        f"budget_usd must be a number of dollars >= 0, or None for no cap; got {float(eval(bad))!r}"
    )
    assert nb.magics.budget_usd == 3 and nb.conn.budget.budget_usd == 3


def test_cost_lines() -> None:
    reported = JobCost("j1", 0.0125, "reported")
    assert cost_text(reported) == "cost $0.0125 (reported)"
    assert cost_text(None) == cost_html(None) == total_text([None]) == ""
    assert 'title="reported by the service' in cost_html(reported)
    estimate = JobCost("j2", 1.5, "estimate", 10.0)
    assert total_text([reported, estimate, None]) == (
        "spent $1.51 on 2 jobs (estimate and reported); 1 of unknown cost"
    )
    assert total_text([estimate]) == "spent $1.50 on 1 job (estimate)"


def test_a_finished_job_s_panel_shows_the_reported_cost(nb: Notebook) -> None:
    nb.deploy(reports(0.0125), "public")
    nb.run('%%runpod_job public\n{"n": 1}')
    content, _controls = nb.outputs()
    last = content[-1]
    assert 'class="nbext-static nbext-job-panel"' in last["text/html"]
    assert (
        '<span class="nbext-job-cost"><span class="nbext-cost" title="reported by the'
        in (last["text/html"])
    )
    assert "cost $0.0125 (reported)" in last["text/html"]
    first_line = last["text/plain"].splitlines()[0]
    assert first_line.endswith(" · cost $0.0125 (reported)")
    assert all("cost $" not in bundle["text/plain"] for bundle in content[:-1])  # live: none
    assert nb.record().cost is not None and nb.record().cost.usd == 0.0125


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_a_finished_job_s_panel_shows_the_estimate(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --background\n{"seconds": 6}')
    job = nb.record().id
    await nb.auntil(lambda: nb.job(job).status is JobStatus.IN_PROGRESS, "the job to start")
    await nb.emu.advance_async(6)
    await nb.auntil(lambda: nb.panel().final and nb.panel().cost is not None, "the cost")
    price = nb.conn.client.catalog.gpu("NVIDIA GeForce RTX 4090").price["serverless"]
    cost = nb.panel().cost
    assert cost is not None and cost.estimate and cost.usd == pytest.approx(6 * price / 3600)
    last = nb.outputs()[0][-1]
    assert f"cost {usd_text(cost.usd)} (estimate)" in last["text/plain"]
    assert (
        "estimate: execution time x the catalog&#x27;s price; cold starts and idle time"
        in (last["text/html"])
    )


def test_a_job_with_no_price_shows_no_cost(nb: Notebook) -> None:
    """A CPU endpoint has no GPU price, and its output reports none: nothing is shown."""
    nb.conn.service()
    cpu = nb.conn.client.endpoints.create(
        template_id="demo-echo", cpu=[{"id": "cpu3c", "vcpu_count": 2}]
    )
    nb.run(f'%%runpod_job {cpu.id}\n{{"n": 1}}')
    assert "COMPLETED" in nb.last_plain() and "cost" not in nb.last_plain()
    assert "nbext-job-cost" not in nb.displays[-1]["data"]["text/html"]


def map_panel(nb: Notebook) -> list[dict[str, Any]]:
    """The map panel's bundles: its display, then each update."""
    (panel,) = [bundles for bundles in nb.outputs() if "nbext-map-panel" in str(bundles[0])]
    return panel


def test_a_map_s_panel_keeps_a_running_total(nb: Notebook) -> None:
    nb.deploy(reports(0.01), "public")
    nb.run("inputs = [{'n': i} for i in range(5)]")
    nb.run("%runpod map public inputs -o res --concurrency 2")
    final = map_panel(nb)[-1]
    assert "spent $0.05 on 5 jobs (reported)" in final["text/plain"]
    assert "spent $0.05 on 5 jobs (reported)" in final["text/html"]


def test_a_map_stopped_by_the_budget_keeps_what_finished(nb: Notebook) -> None:
    nb.deploy(reports(0.01), "public")
    nb.run("%config RunpodMagics.budget_usd = 0.025")
    nb.run("inputs = [{'n': i} for i in range(10)]")
    nb.run("%runpod map public inputs -o res --concurrency 1")
    frame = nb.shell.user_ns["res"]
    assert frame["state"].tolist()[:3] == ["COMPLETED"] * 3
    assert frame["state"].isna().sum() == 7  # never submitted
    panel = map_panel(nb)
    assert (
        "stopped: budget reached: jobs started from this client cost $0.03 of "
        "budget_usd=0.025; not submitting to endpoint 'public' (raise budget_usd to go on); "
        "no job was in flight"
    ) in panel[-1]["text/plain"]
    assert sum(j.endpoint_id == "public" for j in nb.emu.jobs.jobs.values()) == 3


@pytest.mark.anyio
async def test_an_awaited_map_stopped_by_the_budget_says_so_without_a_panel(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.deploy(reports(0.01), "public")
    nb.magics.budget_usd = 0.015
    frame = await run_many_async(
        "public", [{"n": i} for i in range(4)], concurrency=1, quiet=True, connection=nb.conn
    )
    assert frame["state"].tolist()[:2] == ["COMPLETED"] * 2
    assert frame["state"].isna().sum() == 2
    out = capsys.readouterr().out
    assert out.startswith("map on 'public' stopped: budget reached: jobs started from ")


def test_costs_in_a_listing_read_as_money(nb: Notebook) -> None:
    nb.deploy(reports(1.527778e-06), "tiny")
    nb.deploy(reports(12.5), "big")
    nb.run('%%runpod_job tiny -q\n{"n": 1}')
    nb.run('%%runpod_job big -q\n{"n": 1}')
    nb.run("%runpod jobs")
    shown = nb.displays[-1]["data"]
    for text in (shown["text/plain"], shown["text/html"]):
        assert "$0.00000153" in text and "$12.50" in text and "e-06" not in text
    assert usd_text(1.527778e-06) == "$0.00000153" and usd_text(0.000307) == "$0.000307"

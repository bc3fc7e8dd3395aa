"""``%runpod`` subcommands on jobs: jobs, cancel, retry, purge, and the dispatcher."""

from __future__ import annotations

import asyncio

import pandas as pd
import pytest
from traitlets import TraitError

from nbext.models import JobStatus
from nbext.notebook.display.specs import STATES

from .conftest import Notebook, flaky_handler
from .test_job_magic import usage_error


def test_jobs_lists_this_kernels_jobs_with_dtypes(nb: Notebook) -> None:
    nb.run('%%runpod_job echo\n{"a": 1}')
    nb.run('%%runpod_job fail --no-raise\n{"message": "x"}')
    nb.run('%%runpod_job echo --sync\n{"a": 2}')
    nb.displays.clear()
    nb.run("%runpod jobs -o df")
    df: pd.DataFrame = nb.shell.user_ns["df"]
    assert list(df.columns) == [
        "id",
        "endpoint",
        "state",
        "request",
        "status",
        "delay_ms",
        "run_ms",
        "cost_usd",
        "cost_is",
        "worker",
        "submitted",
        "via",
        "service",
    ]
    assert str(df["id"].dtype) == "string"
    assert isinstance(df["endpoint"].dtype, pd.CategoricalDtype)
    assert isinstance(df["state"].dtype, pd.CategoricalDtype)
    assert tuple(df["state"].cat.categories) == STATES
    assert str(df["delay_ms"].dtype) == "Int64" and str(df["run_ms"].dtype) == "Int64"
    assert isinstance(df["submitted"].dtype, pd.DatetimeTZDtype)
    assert str(df["submitted"].dt.tz) == "UTC"
    assert df["state"].tolist() == ["COMPLETED", "FAILED", "COMPLETED"]  # newest first
    assert df["via"].tolist() == ["/runsync", "/run", "/run"]
    assert df["submitted"].is_monotonic_decreasing
    assert len(nb.displays) == 1 and "text/html" in nb.displays[0]["data"]


def test_display_limit_cuts_the_display_not_the_data(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(3):
        nb.run(f'%%runpod_job echo -q\n{{"i": {i}}}')
    nb.run("%config RunpodMagics.display_limit = 2")
    nb.displays.clear()
    nb.run("%runpod jobs -o df")
    assert len(nb.shell.user_ns["df"]) == 3
    shown = nb.displays[0]["data"]["text/plain"]
    assert shown.count("echo") == 2
    assert "showing 2 of 3 rows (all of them are in `df`" in capsys.readouterr().out
    with pytest.raises(TraitError, match="display_limit must be >= 0"):
        nb.magics.display_limit = -1
    nb.run("%config RunpodMagics.display_limit = -1")  # %config logs the error
    assert nb.magics.display_limit == 2
    with pytest.raises(TraitError, match="poll_interval must be between"):
        nb.magics.poll_interval = 0


def test_jobs_refresh_asks_for_unfinished_states(nb: Notebook) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    nb.run("%%runpod_job held --timeout 0.1\n{}")
    job_id = nb.record().id
    nb.run(f"%runpod cancel {job_id}")
    nb.run("%runpod jobs -o df")
    assert nb.shell.user_ns["df"]["state"].tolist() == ["CANCELLED"]


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_jobs_shows_the_end_of_a_background_job_its_follower_has_not_seen(
    nb: Notebook,
) -> None:
    """Cells that run back to back keep the kernel's loop busy, so a background job's
    follower may not have polled since its job ended: the listing asks the service."""
    nb.run('%%runpod_job sleep --background -o out\n{"seconds": 30}')
    record = nb.record()
    follower = record.follower
    assert follower is not None and follower.following and record.state == "IN_QUEUE"
    nb.until(lambda: nb.job(record.id).status is JobStatus.IN_PROGRESS, "the job to start")
    nb.emu.advance(30)  # the loop has not run since the cell: the follower saw nothing
    nb.until(lambda: nb.job(record.id).status is JobStatus.COMPLETED, "the job to end")
    assert record.state == "IN_QUEUE"
    nb.run("%runpod jobs -o df")
    listed = nb.shell.user_ns["df"]
    assert listed["state"].tolist() == ["COMPLETED"]
    assert listed["run_ms"].notna().all() and listed["cost_is"].tolist() == ["estimate"]
    assert nb.panel().state == "COMPLETED"  # every panel of the job follows its record
    assert follower.task is not None
    result = await asyncio.wait_for(follower.task, 10)  # and the follower ends as before
    assert result is not None and result.status is JobStatus.COMPLETED
    assert nb.shell.user_ns["out"] == {"slept": 30}
    await nb.conn.aclose()


def test_cancel_a_running_job(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    nb.run("%%runpod_job held --timeout 0.1\n{}")
    job_id = nb.record().id
    panel = nb.panel()
    capsys.readouterr()
    nb.run(f"%runpod cancel {job_id}")
    assert capsys.readouterr().out.strip() == f"job {job_id} on 'held': CANCELLED"
    assert nb.job(job_id).status is JobStatus.CANCELLED
    assert panel.state == "CANCELLED"  # the job's panel says so too
    message = usage_error(nb, f"%runpod cancel {job_id}x", capsys)
    assert "was not submitted from this kernel; give its endpoint" in message


def test_cancel_a_finished_job_says_its_state_once(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job ended before the cancel came: that is its state, not an error of the user's
    (a "Run all" goes on), said in one line that names the job once."""
    nb.run('%%runpod_job echo\n{"a": 1}')
    job_id = nb.record().id
    capsys.readouterr()
    nb.run(f"%runpod cancel {job_id}")
    said = capsys.readouterr().out.strip()
    assert said == f"job {job_id} on 'echo': already COMPLETED, nothing to cancel"
    assert nb.record().state == "COMPLETED"


def test_cancel_an_unknown_job_names_it_once(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(nb, "%runpod cancel nosuchjob --endpoint echo", capsys)
    assert message == (
        "job nosuchjob on 'echo' not found: the id is unknown, or the job was purged or expired"
    )
    assert nb.conn.registry.get("nosuchjob").state == "REMOVED"


def test_cancel_a_job_by_id_and_endpoint(nb: Notebook) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    job = nb.conn.client.endpoint("held").run({})
    nb.run(f"%runpod cancel {job.id} --endpoint held")
    assert nb.job(job.id).status is JobStatus.CANCELLED
    assert nb.conn.registry.get(job.id) is not None


def test_cancel_last_cancels_the_newest_job_of_this_kernel(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(nb, "%runpod cancel last", capsys)
    assert "no job was submitted from this kernel yet, so there is no 'last'" in message
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    nb.run('%%runpod_job echo\n{"a": 1}')
    nb.run("%%runpod_job held --timeout 0.05 -q\n{}")
    held = nb.record().id
    capsys.readouterr()
    nb.run("%runpod cancel last")
    assert capsys.readouterr().out.strip() == f"job {held} on 'held': CANCELLED"
    assert nb.job(held).status is JobStatus.CANCELLED
    nb.run("%runpod cancel last")  # cancelling a CANCELLED job answers the same again
    message = usage_error(nb, "%runpod cancel last --endpoint held", capsys)
    assert "'last' needs none" in message


def test_retry_command_follows_the_job_again(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise\n{}")
    job_id = nb.record().id
    assert nb.record().state == "FAILED"
    nb.run(f"%runpod retry {job_id}")
    assert nb.record().state == "COMPLETED"
    assert nb.panel().state == "COMPLETED"
    assert "retry job" in nb.last_plain()
    assert nb.conn.client.endpoint("flaky").health().jobs.retried == 1


def test_retry_last_retries_the_newest_job(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run('%%runpod_job echo\n{"a": 1}')
    nb.run("%%runpod_job flaky --no-raise\n{}")
    failed = nb.record().id
    nb.run("%runpod retry last")
    assert nb.conn.registry.get(failed).state == "COMPLETED"
    assert nb.panel().state == "COMPLETED"


def test_retry_command_updates_the_output_variable(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise -o out\n{}")
    assert nb.shell.user_ns["out"] is None
    nb.run("%runpod retry last")
    assert nb.shell.user_ns["out"] == {"attempt": 2}


def test_retry_a_completed_job_is_a_usage_error(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job echo\n{"a": 1}')
    job_id = nb.record().id
    message = usage_error(nb, f"%runpod retry {job_id}", capsys)
    assert "only FAILED or TIMED_OUT jobs can be retried" in message
    assert message.count(job_id) <= 1, message  # the id once, in the user's terms
    wire = message.replace(job_id, "")  # a random id may itself hold the digits 409
    assert "409" not in wire and "POST" not in wire, message


def test_purge_removes_queued_jobs(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    for _ in range(2):
        nb.run("%%runpod_job held --timeout 0.05 -q\n{}")
    capsys.readouterr()
    nb.run("%runpod purge held")
    assert capsys.readouterr().out.strip() == "purged 2 queued job(s) from 'held'"
    nb.run("%runpod jobs -o df")
    assert nb.shell.user_ns["df"]["state"].tolist() == ["REMOVED", "REMOVED"]
    message = usage_error(nb, "%runpod purge nowhere", capsys)
    assert "endpoint 'nowhere' not found" in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod", "%runpod needs a subcommand"),
        ("%runpod jbos", "unknown %runpod subcommand 'jbos'; did you mean 'jobs'?"),
        ("%runpod jobs --bogus", "unrecognized arguments: --bogus"),
        ("%runpod jobs -o 'not a name'", "not a valid Python variable name"),
        (
            "%runpod cancel",
            "the following arguments are required: job; `%runpod help cancel` says how to use it",
        ),
        (
            "%runpod cancel job_nope",
            "job 'job_nope' was not submitted from this kernel; give its endpoint: "
            "%runpod cancel job_nope --endpoint ENDPOINT",
        ),
        ("%runpod why job_nope", "%runpod why job_nope --endpoint ENDPOINT"),
        ("%runpod help nothing", "no %runpod subcommand 'nothing'"),
    ],
)
def test_dispatch_mistakes(
    nb: Notebook, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    assert expected in usage_error(nb, line, capsys)


def test_help(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("%runpod help")
    listing = capsys.readouterr().out
    for name in (
        "connect",
        "status",
        "deploy",
        "jobs",
        "cancel",
        "retry",
        "purge",
        "health",
        "map",
        "templates",
        "pods",
        "endpoints",
        "volumes",
        "registry-auths",
        "billing",
    ):
        assert f"  {name} " in listing
    nb.run("%runpod help health")
    assert "%runpod health" in capsys.readouterr().out and "--watch" in listing + "--watch"
    doc = nb.shell.find_line_magic("runpod").__doc__
    assert doc is not None and "registry-auths" in doc

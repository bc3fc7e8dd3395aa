"""``%runpod emulator scenario``: a teaching scenario set and ended from a cell, on the
fake clock, and what the endpoint's jobs and health do meanwhile."""

from __future__ import annotations

import anyio
import pytest

from nbext.models import JobStatus
from nbext.notebook import Connection

from .conftest import Notebook
from .test_job_magic import usage_error

CLOUD_KEY = "rpa_0123456789ABCDEF0123456789ABCDEF0123ABCD"


async def advance(nb: Notebook, seconds: float) -> None:
    """Move the emulator's fake clock (its loop is another thread's)."""
    await anyio.to_thread.run_sync(nb.emu.advance, seconds)


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_cold_start_set_from_a_cell_holds_the_job_then_off_ends_it(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("%runpod emulator scenario echo cold-start seconds=20")
    assert capsys.readouterr().out.strip() == (
        "endpoint echo: scenario cold-start (seconds=20) (end it with: off)"
    )
    nb.run("%runpod emulator scenario echo")
    assert capsys.readouterr().out.strip() == "endpoint echo: scenario cold-start (seconds=20)"
    job = nb.conn.client.endpoint("echo").run({"n": 1})
    await nb.auntil(
        lambda: nb.conn.client.endpoint("echo").health().workers.initializing == 1,
        "a worker initializing",
    )
    await advance(nb, 19)
    assert job.status().status is JobStatus.IN_QUEUE
    await advance(nb, 1.5)
    await nb.auntil(lambda: job.status().status is JobStatus.COMPLETED, "the job to run")
    assert job.status().worker_id is not None
    nb.run("%runpod emulator scenario echo off")
    assert capsys.readouterr().out.strip() == (
        "endpoint echo: scenario ended; its workers are healthy again"
    )
    assert nb.emu.jobs.endpoint("echo").scenario is None


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_crash_loop_from_a_cell_shows_unhealthy_workers(nb: Notebook) -> None:
    nb.run("%runpod emulator scenario echo crash-loop")
    job = nb.conn.client.endpoint("echo").run({})
    health = nb.conn.client.endpoint("echo").health
    await nb.auntil(lambda: health().workers.unhealthy == 1, "an unhealthy worker")
    await advance(nb, 30)
    assert job.status().status is JobStatus.IN_QUEUE
    assert health().workers.ready == 0
    nb.run("%runpod emulator scenario echo off")
    await nb.auntil(lambda: job.status().status is JobStatus.COMPLETED, "the job to run")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod emulator scenario echo lukewarm", "unknown scenario 'lukewarm'; the scenarios"),
        (
            "%runpod emulator scenario echo cold-start minutes=3",
            "'minutes=3' is not a parameter of it (parameters: seconds)",
        ),
        (
            "%runpod emulator scenario echo cold-start seconds=-5",
            "seconds must be a number >= 0, got '-5'",
        ),
        ("%runpod emulator scenario echo flaky fraction=2", "fraction must be from 0 to 1"),
        ("%runpod emulator scenario echo off seconds=1", "'off' takes no parameters"),
        ("%runpod emulator scenario nowhere crash-loop", "endpoint 'nowhere' not found; the"),
        ("%runpod emulator reboot echo", "argument action: invalid choice: 'reboot'"),
        ("%runpod emulator", "the following arguments are required: action, endpoint"),
    ],
)
def test_mistakes_are_one_line_and_change_nothing(
    nb: Notebook, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    nb.conn.service()  # the demo endpoints are deployed
    assert expected in usage_error(nb, line, capsys)
    assert nb.emu.jobs.endpoint("echo").scenario is None


def test_help_lists_the_subcommand(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("%runpod help")
    assert "emulator" in capsys.readouterr().out
    nb.run("%runpod help emulator")
    out = capsys.readouterr().out
    assert "usage: %runpod emulator" in out and "crash-loop" in out


def test_on_the_cloud_it_says_it_needs_the_local_service(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    connection = Connection(server=nb.server, api_key=CLOUD_KEY, environ={})
    nb.magics.connection = connection
    try:
        nb.run("%runpod connect cloud")
        capsys.readouterr()
        message = usage_error(nb, "%runpod emulator scenario echo crash-loop", capsys)
        assert message == (
            "this kernel is connected to the RunPod cloud; teaching scenarios need the local "
            "service: run `%runpod connect local` first"
        )
    finally:
        nb.magics.connection = nb.conn
        connection.close()


def test_the_help_texts_name_every_scenario_of_the_one_list(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """``SCENARIOS`` makes the emulator's scenarios; both help texts are made from it."""
    from nbext.emulator.__main__ import parse_args
    from nbext.emulator.domain.scenarios import KINDS, parse
    from nbext.models.enums import SCENARIOS

    assert list(KINDS) == list(SCENARIOS)
    assert all(parse(name).params == SCENARIOS[name] for name in SCENARIOS)
    nb.run("%runpod help emulator")
    magic = " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    cli = " ".join(capsys.readouterr().out.split())
    assert f"teaching scenario ({', '.join(SCENARIOS)})" in cli
    assert f"name {', '.join(SCENARIOS)}; off ends the scenario" in magic
    assert "flaky fraction seed; slow-stream seconds" in magic

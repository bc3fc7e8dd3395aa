"""``%runpod why``: ranked causes of a job that failed, timed out, was cancelled or is
stuck, gathered from the real emulator in a real IPython shell on the fake clock."""

from __future__ import annotations

from datetime import timedelta

import pytest

from nbext.models import JobStatus

from .conftest import Notebook
from .test_job_magic import usage_error


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_crash_loop_names_the_unhealthy_workers_and_the_logs(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("%runpod emulator scenario echo crash-loop")
    nb.run('%%runpod_job echo --timeout 0.2 --no-raise -q\n{"n": 1}')
    health = nb.conn.client.endpoint("echo").health
    await nb.auntil(lambda: health().workers.unhealthy == 1, "an unhealthy worker")
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert f"job {nb.record().id} on 'echo': IN_QUEUE" in out
    assert "1. no worker could start: 1 worker unhealthy" in out
    worker = nb.conn.client.endpoints.workers("echo")[0].id
    assert f"next: %runpod logs echo --worker {worker}" in out
    assert f"{worker}: Worker is unhealthy, exiting" in out


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_cold_start_still_waiting(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run("%runpod emulator scenario echo cold-start seconds=60")
    nb.run('%%runpod_job echo --background -q\n{"n": 1}')
    health = nb.conn.client.endpoint("echo").health
    await nb.auntil(lambda: health().workers.initializing == 1, "a worker initializing")
    capsys.readouterr()
    nb.run("%runpod why last")
    out = capsys.readouterr().out
    assert "1. cold start: 1 worker initializing, none ready yet" in out
    assert "next: %runpod health echo" in out


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_throttled_endpoint_says_no_gpu_is_free(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("%runpod emulator scenario echo throttled seconds=60")
    nb.run('%%runpod_job echo --background -q\n{"n": 1}')
    health = nb.conn.client.endpoint("echo").health
    await nb.auntil(lambda: health().workers.throttled == 1, "a throttled worker")
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert "1. no GPU free: 1 worker throttled, waiting for a machine" in out
    assert "next: %runpod health echo" in out


@pytest.mark.parametrize("fake_clock", [True])
def test_workers_max_zero_is_named(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.conn.service()  # the demo endpoints are deployed
    nb.conn.client.endpoints.update("echo", workers={"max": 0})
    nb.run('%%runpod_job echo --timeout 0.2 -q\n{"n": 1}')
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert "1. the endpoint's workers.max is 0: no worker may start" in out
    assert "next: %runpod endpoints" in out


def test_failed_job_names_the_handler_error(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job fail --no-raise -q\n{"message": "no GPU today"}')
    capsys.readouterr()
    nb.run(f"%runpod why {nb.record().id}")
    out = capsys.readouterr().out
    assert ": FAILED" in out
    assert "1. the handler raised:" in out and "no GPU today" in out
    assert "next: %runpod logs fail" in out


@pytest.mark.parametrize("fake_clock", [True])
def test_timed_out_job_suggests_a_higher_execution_timeout(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading

    def move() -> None:
        nb.until(lambda: len(nb.conn.registry) == 1, "the job to be submitted")
        job_id = nb.record().id
        nb.until(lambda: nb.job(job_id).status is JobStatus.IN_PROGRESS, "the job to start")
        nb.emu.advance(6)

    mover = threading.Thread(target=move)
    mover.start()
    nb.run('%%runpod_job sleep --execution-timeout 5 --no-raise -q\n{"seconds": 60}')
    mover.join()
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert ": TIMED_OUT" in out
    assert "1. it ran past its own execution timeout of 5 s, ran 5 s: " in out
    assert "exceeded its execution timeout of 5000 ms" in out
    assert "next: %%runpod_job sleep --execution-timeout SECONDS, more than 5" in out


@pytest.mark.parametrize("fake_clock", [True])
def test_cancelled_job(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run('%%runpod_job sleep --timeout 0.2 -q\n{"seconds": 100}')
    nb.run("%runpod cancel last")
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert ": CANCELLED" in out
    assert "1. the job was cancelled" in out and f"next: %runpod retry {nb.record().id}" in out


def test_completed_job_says_nothing_is_wrong(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job echo -q\n{"n": 1}')
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert ": COMPLETED" in out and "nothing is wrong: it completed" in out
    assert "1." not in out


def test_unknown_job_and_no_job_yet_are_one_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no job was submitted from this kernel yet" in usage_error(nb, "%runpod why", capsys)
    message = usage_error(nb, "%runpod why nosuchjob", capsys)
    assert "job 'nosuchjob' was not submitted from this kernel" in message


def test_what_cannot_be_read_is_said_and_the_rest_diagnosed(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job fail --no-raise -q\n{"message": "bad input"}')
    job_id = nb.record().id
    nb.emu.reset()  # the service forgets the job
    capsys.readouterr()
    nb.run(f"%runpod why {job_id}")
    out = capsys.readouterr().out
    assert f"job {job_id} on 'fail': FAILED" in out  # the last state this kernel saw
    assert "1. the handler raised: RuntimeError: bad input" in out
    assert "could not check the job's state: not found" in out


def test_an_endpoint_that_cannot_be_read_is_said(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("%runpod why abc123 --endpoint nowhere")
    out = capsys.readouterr().out
    assert "job abc123 on 'nowhere': state unknown" in out
    assert "could not check the job's state:" in out
    assert "could not check the endpoint's health:" in out
    assert "could not check the endpoint's settings:" in out


@pytest.mark.parametrize("fake_clock", [True])
def test_a_job_whose_own_ttl_passed_is_said_removed_by_it(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.conn.service()  # the demo endpoints are deployed
    nb.emu.deploy("no-such-image", endpoint_id="held")  # no worker: jobs stay queued
    nb.run('%%runpod_job held --ttl 10 --timeout 0.2 -q\n{"n": 1}')
    record = nb.record()
    assert (record.ttl, record.execution_timeout) == (10, None)
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert ": IN_QUEUE" in out
    assert "its own TTL of 10 s (from submission, queue time included) removes it in" in out
    assert f"next: %runpod cancel {record.id}, then submit it with a longer --ttl" in out
    nb.emu.advance(11)  # the service removes it; the kernel's clock moves as much
    record.submitted -= timedelta(seconds=11)
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert "1. its own TTL of 10 s passed (from submission, queue time included)" in out
    assert "next: %%runpod_job held --ttl SECONDS, a longer one" in out


@pytest.mark.parametrize("fake_clock", [True])
def test_a_finished_job_the_service_forgot_is_said_past_its_retention(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job fail --no-raise -q\n{"message": "bad input"}')
    nb.emu.advance(31 * 60)  # a /runsync job is kept 1 min
    capsys.readouterr()
    nb.run("%runpod why")
    out = capsys.readouterr().out
    assert "1. the handler raised: RuntimeError: bad input" in out
    assert "2. the service no longer keeps it: a finished job is kept 30 min after /run" in out

"""Panels follow a job when a Python call on the kernel's client changes it.

``nbext.notebook.client()`` is the kernel's client; what it reads of a job (cancel,
retry, status, wait) reaches the job's record, and so every panel of the job, live or
already replaced by its static rendering.
"""

from __future__ import annotations

import asyncio

import pytest

from nbext.models import JobStatus

from .conftest import Notebook, flaky_handler


def static_updates(nb: Notebook, display_id: str) -> list[str]:
    return [
        d["data"]["text/html"]
        for d in nb.displays
        if d["transient"].get("display_id") == display_id and "text/html" in d["data"]
    ]


def test_the_kernels_client_is_public_and_is_the_connections(nb: Notebook) -> None:
    import nbext.notebook

    assert nbext.notebook.client() is nb.conn.client
    nb.run('%%runpod_job echo\n{"x": 1}')
    job_id = nb.record().id
    nb.run(f"from nbext.notebook import client\nstate = client().endpoint('echo').job({job_id!r})")
    assert nb.shell.user_ns["state"].status().status is JobStatus.COMPLETED


def test_a_python_retry_of_a_failed_job_brings_its_static_panel_back(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise -o out\n{}")
    panel = nb.panel()
    display_id = nb.displays[0]["transient"]["display_id"]
    assert panel.state == "FAILED"
    job_id = nb.record().id
    nb.run(f"from nbext.notebook import client\njob = client().endpoint('flaky').job({job_id!r})")
    nb.run("job.retry()")
    assert panel.state == "IN_QUEUE" and panel.retries == 1 and nb.record().retries == 1
    assert 'data-state="IN_QUEUE"' in static_updates(nb, display_id)[-1]
    nb.run("result = job.wait(timeout=10)")  # no loop here: the next read shows the end
    assert nb.shell.user_ns["result"].output == {"attempt": 2}
    assert panel.state == "COMPLETED" and panel.error is None
    assert 'data-state="COMPLETED"' in static_updates(nb, display_id)[-1]


def test_a_listener_error_never_reaches_the_cell(nb: Notebook) -> None:
    nb.run('%%runpod_job echo\n{"x": 1}')
    nb.conn.client.on_job_result(lambda result: 1 / 0)
    nb.run("from nbext.notebook import client")
    nb.run(f"s = client().endpoint('echo').job({nb.record().id!r}).status()")
    assert nb.shell.user_ns["s"].status is JobStatus.COMPLETED


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_a_python_cancel_shows_on_the_background_panel_at_once(nb: Notebook) -> None:
    nb.run("%config RunpodMagics.poll_interval = 3600")
    nb.run('%%runpod_job sleep --background\n{"seconds": 100}')
    panel = nb.panel()
    await nb.auntil(lambda: panel.state == "IN_PROGRESS", "the job to run")
    job_id = nb.record().id
    nb.run(
        f"from nbext.notebook import client\nclient().endpoint('sleep').job({job_id!r}).cancel()"
    )
    # no await since the cancel: the background task has not polled meanwhile
    assert panel.state == "CANCELLED" and nb.record().state == "CANCELLED"
    assert nb.job(job_id).status is JobStatus.CANCELLED
    assert panel.task is not None
    if not panel.task.done():
        panel.task.cancel()
        await asyncio.gather(panel.task, return_exceptions=True)
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_a_python_retry_is_followed_to_its_end_in_a_kernel(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise -o out\n{}")
    panel = nb.panel()
    display_id = nb.displays[0]["transient"]["display_id"]
    assert panel.state == "FAILED" and nb.shell.user_ns["out"] is None
    job_id = nb.record().id
    nb.run(f"from nbext.notebook import client\nclient().endpoint('flaky').job({job_id!r}).retry()")
    await nb.auntil(lambda: panel.state == "COMPLETED", "the retried job's end on its panel")
    assert panel.retries == 1 and nb.shell.user_ns["out"] == {"attempt": 2}  # -o follows too
    assert 'data-state="COMPLETED"' in static_updates(nb, display_id)[-1]
    follower = nb.record().follower
    assert follower is not None and follower.task is not None
    await asyncio.wait_for(follower.task, 10)
    await nb.conn.aclose()

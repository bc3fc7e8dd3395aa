"""Notebook functions served by the kernel that deployed them, over the worker protocol:
a real ``EmulatorServer`` on the real clock, jobs through the real client, kernels that
are ``Connection``s of this process or a real subprocess that is killed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from nbext.client import Endpoint
from nbext.models import JobStatus
from nbext.notebook import Connection, deploy
from nbext.notebook.errors import InvalidArgument

from .conftest import Notebook

WAIT_S = 20.0
"""Longest wait for what a kernel's threads do (a kernel's absence is seen within 5 s)."""


def until(condition: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Wait for other threads or processes to make ``condition`` true (polled, calm)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        threading.Event().wait(0.05)


def kernel_gone(endpoint: Endpoint) -> bool:
    return "the kernel that served endpoint" in endpoint.diagnose().cause


def test_a_function_runs_in_its_kernel(nb: Notebook) -> None:
    model = {"scale": 3}  # what the kernel has loaded: the function uses it as it is

    def scale(job: dict[str, Any]) -> Any:
        if job["input"].get("fail"):
            raise ValueError("no such layer")
        if job["input"].get("refuse"):
            return {"error": "input too long"}
        return {"scaled": job["input"]["x"] * model["scale"]}

    assert deploy(scale, connection=nb.conn) == "scale"
    endpoint = nb.conn.client.endpoint("scale")
    assert endpoint.run_sync({"x": 2}, wait=WAIT_S).output == {"scaled": 6}
    model["scale"] = 10  # the kernel's object, not a copy
    assert endpoint.run_sync({"x": 2}, wait=WAIT_S).output == {"scaled": 20}

    raised = endpoint.run_sync({"fail": True}, wait=WAIT_S, raise_on_failure=False)
    assert raised.status is JobStatus.FAILED
    error = json.loads(str(raised.error))  # as the runpod SDK reports a raised exception
    assert error["error_message"] == "no such layer"
    assert "Traceback" in error["error_traceback"] and "ValueError" in error["error_traceback"]
    refused = endpoint.run_sync({"refuse": True}, wait=WAIT_S, raise_on_failure=False)
    assert (refused.status, refused.error) == (JobStatus.FAILED, "input too long")

    assert nb.emu.jobs.endpoints["scale"].image == "kernel/scale"
    deploy(scale, workers={"max": 1}, connection=nb.conn)  # a new setting: the endpoint follows
    assert nb.conn.client.endpoints.get("scale").workers.max == 1
    assert endpoint.run_sync({"x": 1}, wait=WAIT_S).output == {"scaled": 10}
    jobs = endpoint.health().jobs  # the same endpoint throughout
    assert (jobs.completed, jobs.failed) == (3, 2)


def test_a_generator_streams_its_chunks(nb: Notebook) -> None:
    def countdown(job: dict[str, Any]) -> Iterator[int]:
        yield from range(job["input"]["n"], 0, -1)

    deploy(countdown, connection=nb.conn)
    job = nb.conn.client.endpoint("countdown").run({"n": 3})
    assert list(job.stream(timeout=WAIT_S)) == [3, 2, 1]
    assert job.wait(timeout=WAIT_S).output == [3, 2, 1]


def test_a_cancelled_job_runs_on_but_its_result_is_dropped(nb: Notebook) -> None:
    release = threading.Event()
    ran: list[str] = []

    def slow(job: dict[str, Any]) -> str:
        if job["input"]["wait"]:
            release.wait(WAIT_S)
        ran.append(job["id"])
        return "done"

    deploy(slow, workers={"max": 1}, connection=nb.conn)
    endpoint = nb.conn.client.endpoint("slow")
    job = endpoint.run({"wait": True})
    until(lambda: job.status().status is JobStatus.IN_PROGRESS, "the job to start")
    job.cancel()
    release.set()  # the thread cannot be stopped: the function ends by itself
    until(lambda: ran == [job.id], "the function to return")
    assert endpoint.run_sync({"wait": False}, wait=WAIT_S).output == "done"  # it goes on
    assert job.status().status is JobStatus.CANCELLED  # its result was dropped


def test_another_kernel_takes_over_and_a_closed_one_leaves_jobs_waiting(nb: Notebook) -> None:
    def where(job: dict[str, Any]) -> str:
        return "first kernel"

    deploy(where, connection=nb.conn)
    endpoint = nb.conn.client.endpoint("where")
    assert endpoint.run_sync({}, wait=WAIT_S).output == "first kernel"

    other = Connection(server=nb.server, environ={}, config_file="/nonexistent/config.toml")
    try:
        deploy(lambda job: "second kernel", "where", connection=other)
        assert endpoint.run_sync({}, wait=WAIT_S).output == "second kernel"
    finally:
        other.close()  # the kernel shuts down
    job = endpoint.run({})
    until(lambda: kernel_gone(endpoint), "the diagnosis to say the kernel is gone")
    assert job.status().status is JobStatus.IN_QUEUE  # waiting, not failed
    deploy(where, connection=nb.conn)  # deployed again from a running kernel
    assert job.wait(timeout=WAIT_S).output == "first kernel"


KERNEL = textwrap.dedent(
    """
    import os, sys, threading
    from nbext.notebook.kernel_worker import KernelWorker

    def shout(job):
        return job["input"]["text"].upper() + " (served by pid %d)" % os.getpid()

    worker = KernelWorker(sys.argv[1], os.environ["EMULATOR_KEY"], "shout", shout)
    worker.deploy({"workers": {"min": 1, "max": 1}})
    print("deployed", flush=True)
    threading.Event().wait()
    """
)


@pytest.mark.slow
def test_a_killed_kernel_leaves_its_jobs_waiting_until_deployed_again(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    root_url = nb.server.serverless_url.removesuffix("/v2")
    env = {**os.environ, "EMULATOR_KEY": nb.emu.api_key}
    kernel = subprocess.Popen(
        [sys.executable, "-c", KERNEL, root_url], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert kernel.stdout is not None and kernel.stdout.readline() == "deployed\n"
        endpoint = nb.conn.client.endpoint("shout")
        served = endpoint.run_sync({"text": "hi"}, wait=WAIT_S).output
        assert served == f"HI (served by pid {kernel.pid})"
        kernel.send_signal(signal.SIGKILL)
        kernel.wait(WAIT_S)
        # Once the emulator has seen the kernel go, a job waits for the next one. (A job
        # sent in the moment before, while a take of the dead kernel is still held, may
        # be handed to it and then fail as a job of an exited worker does.)
        until(lambda: kernel_gone(endpoint), "the diagnosis to say the kernel is gone")
        job = endpoint.run({"text": "again"})
        assert job.status().status is JobStatus.IN_QUEUE
        nb.run("%runpod why --endpoint shout " + job.id)
        out = capsys.readouterr().out
        assert "the kernel that served endpoint 'shout' is gone" in out
        assert "deploy the function again from a running kernel" in out
    finally:
        if kernel.poll() is None:
            kernel.kill()
        kernel.wait(WAIT_S)
        if kernel.stdout is not None:
            kernel.stdout.close()

    deploy(lambda job: job["input"]["text"].upper() + " (here)", "shout", connection=nb.conn)
    assert job.wait(timeout=WAIT_S).output == "AGAIN (here)"


def test_a_refused_setting_is_one_line(nb: Notebook) -> None:
    with pytest.raises(InvalidArgument, match="execution_timeout_ms must be between"):
        deploy(lambda job: 1, "quick", execution_timeout=0.001, connection=nb.conn)
    with pytest.raises(InvalidArgument, match="must not exceed"):
        deploy(lambda job: 1, "quick", workers={"min": 4, "max": 2}, connection=nb.conn)
    with pytest.raises(InvalidArgument, match="workers has no 'maximum': give min, max"):
        deploy(lambda job: 1, "quick", workers={"maximum": 2}, connection=nb.conn)
    assert "quick" not in nb.emu.jobs.endpoints


@pytest.mark.parametrize(
    "v1", [{"workers_max": 2}, {"workers_min": 1}, {"idle_timeout": 5}, {"load_balancer": True}]
)
def test_v1s_flat_names_are_not_deploys_words(nb: Notebook, v1: dict[str, Any]) -> None:
    """One vocabulary, REST v2's: ``workers={"max": 2}``, ``type="LOAD_BALANCER"``."""
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{next(iter(v1))}'"):
        deploy(lambda job: 1, "quick", connection=nb.conn, **v1)

"""Handlers by the worker convention: sync, async, generator, async generator.

A handler gets ``{"id", "input"[, "s3Config"]}``; raising or returning ``{"error": ...}``
fails the job with that text (the traceback goes to the emulator's log, never into a
response); a generator streams and its final output is the list of chunks unless the
endpoint was deployed with ``aggregate_stream=False``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, current_job
from nbext.emulator.domain.clock import settle
from nbext.models import JobStatus

from .conftest import status_of, submit, until

pytestmark = pytest.mark.anyio
S = JobStatus


def sync_handler(job: dict[str, Any]) -> Any:
    return {"thread": threading.current_thread().name, "got": job}


async def async_handler(job: dict[str, Any]) -> Any:
    await asyncio.sleep(0)
    return {"got": job}


def generator_handler(job: dict[str, Any]) -> Iterator[Any]:
    for i in range(job["input"]["n"]):
        yield {"i": i}


async def async_generator_handler(job: dict[str, Any]) -> AsyncIterator[Any]:
    for i in range(job["input"]["n"]):
        await asyncio.sleep(0)
        yield {"i": i}


async def finished(emu: Emulator, endpoint: str, job_id: str) -> dict[str, Any]:
    """The job's /status body once it is final (thread handlers need real time)."""
    await until(lambda: emu.jobs.jobs[job_id].status.is_final, f"job {job_id} to finish")
    await settle()
    return status_of(emu, endpoint, job_id)


async def test_a_sync_handler_runs_in_a_thread_and_returns_the_output(emu: Emulator) -> None:
    emu.deploy(handler=sync_handler, endpoint_id="h")
    job = submit(emu, "h", {"x": 1})
    body = await finished(emu, "h", job.id)
    assert body["status"] == "COMPLETED"
    assert body["output"]["got"] == {"id": job.id, "input": {"x": 1}}
    assert body["output"]["thread"].startswith("nbext-handler")


async def test_an_async_handler_runs_on_the_loop_and_returns_the_output(emu: Emulator) -> None:
    emu.deploy(handler=async_handler, endpoint_id="h")
    job = submit(emu, "h", {"x": 2})
    await settle()
    assert status_of(emu, "h", job.id)["output"] == {"got": {"id": job.id, "input": {"x": 2}}}


async def test_a_generator_streams_and_its_output_is_the_list_of_chunks(
    emu: Emulator,
) -> None:
    emu.deploy(handler=generator_handler, endpoint_id="h")
    job = submit(emu, "h", {"n": 3})
    body = await finished(emu, "h", job.id)
    assert body["output"] == [{"i": 0}, {"i": 1}, {"i": 2}]
    stream = (await emu.jobs.stream("h", job.id, 0)).to_wire()
    assert [c["output"] for c in stream["stream"]] == [{"i": 0}, {"i": 1}, {"i": 2}]
    assert [c["metrics"]["stream_index"] for c in stream["stream"]] == [0, 1, 2]


async def test_an_async_generator_streams_and_its_output_is_the_list_of_chunks(
    emu: Emulator,
) -> None:
    emu.deploy(handler=async_generator_handler, endpoint_id="h")
    job = submit(emu, "h", {"n": 3})
    await settle()
    assert status_of(emu, "h", job.id)["output"] == [{"i": 0}, {"i": 1}, {"i": 2}]
    stream = (await emu.jobs.stream("h", job.id, 0)).to_wire()
    assert [c["output"] for c in stream["stream"]] == [{"i": 0}, {"i": 1}, {"i": 2}]


@pytest.mark.parametrize("kind", ["generator", "async generator"])
async def test_aggregate_stream_off_streams_but_keeps_no_final_output(
    emu: Emulator, kind: str
) -> None:
    handler = generator_handler if kind == "generator" else async_generator_handler
    emu.deploy(handler=handler, endpoint_id="h", aggregate_stream=False)
    job = submit(emu, "h", {"n": 2})
    body = await finished(emu, "h", job.id)
    assert body["status"] == "COMPLETED"
    assert body["output"] is None
    stream = (await emu.jobs.stream("h", job.id, 0)).to_wire()
    assert [c["output"] for c in stream["stream"]] == [{"i": 0}, {"i": 1}]


@pytest.mark.parametrize("kind", ["sync", "async", "generator", "async generator"])
async def test_a_raising_handler_fails_the_job_with_the_traceback_only_in_the_log(
    emu: Emulator, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    def sync(job: dict[str, Any]) -> Any:
        raise ValueError("bad prompt")

    async def coro(job: dict[str, Any]) -> Any:
        raise ValueError("bad prompt")

    def gen(job: dict[str, Any]) -> Iterator[Any]:
        yield {"partial": 1}
        raise ValueError("bad prompt")

    async def agen(job: dict[str, Any]) -> AsyncIterator[Any]:
        yield {"partial": 1}
        raise ValueError("bad prompt")

    handler = {"sync": sync, "async": coro, "generator": gen, "async generator": agen}[kind]
    emu.deploy(handler=handler, endpoint_id="h")
    with caplog.at_level(logging.WARNING, logger="nbext.emulator"):
        job = submit(emu, "h")
        body = await finished(emu, "h", job.id)
    assert body["status"] == "FAILED"
    assert body["error"] == "ValueError: bad prompt"
    assert "Traceback" not in body["error"] and "output" not in body
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Traceback (most recent call last)" in logged
    assert job.id in logged and "bad prompt" in logged


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ({"error": "model not loaded"}, "model not loaded"),
        ({"error": {"code": 7, "why": "oom"}}, '{"code": 7, "why": "oom"}'),
    ],
)
@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_returning_an_error_object_fails_the_job_with_that_text(
    emu: Emulator, kind: str, returned: dict[str, Any], error: str
) -> None:
    def sync(job: dict[str, Any]) -> Any:
        return returned

    async def coro(job: dict[str, Any]) -> Any:
        return returned

    emu.deploy(handler=sync if kind == "sync" else coro, endpoint_id="h")
    job = submit(emu, "h")
    body = await finished(emu, "h", job.id)
    assert body["status"] == "FAILED"
    assert body["error"] == error
    assert emu.jobs.health("h").jobs.failed == 1


async def test_an_empty_error_value_is_an_ordinary_output(emu: Emulator) -> None:
    async def handler(job: dict[str, Any]) -> Any:
        return {"error": None, "result": 1}

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h")
    await settle()
    assert status_of(emu, "h", job.id)["output"] == {"error": None, "result": 1}


async def test_an_output_that_is_not_json_fails_the_job_saying_so(emu: Emulator) -> None:
    async def handler(job: dict[str, Any]) -> Any:
        return {"when": object()}

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h")
    await settle()
    body = status_of(emu, "h", job.id)
    assert body["status"] == "FAILED"
    assert "cannot be sent as JSON" in body["error"]


async def test_a_callable_object_returning_a_coroutine_is_awaited(emu: Emulator) -> None:
    class Model:
        async def infer(self, job: dict[str, Any]) -> Any:
            return {"ok": job["input"]}

        def __call__(self, job: dict[str, Any]) -> Any:
            return self.infer(job)

    emu.deploy(handler=Model(), endpoint_id="h")
    job = submit(emu, "h", {"q": 1})
    body = await finished(emu, "h", job.id)
    assert body["output"] == {"ok": {"q": 1}}


async def test_current_job_gives_a_handler_its_own_job_and_only_inside_one(
    emu: Emulator,
) -> None:
    seen: list[str] = []

    def handler(job: dict[str, Any]) -> Any:
        seen.append(current_job().job_id)
        return None

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h")
    await finished(emu, "h", job.id)
    assert seen == [job.id]
    with pytest.raises(RuntimeError, match="only available inside a running handler"):
        current_job()


async def test_handler_metrics_are_merged_into_each_chunk(emu: Emulator) -> None:
    async def handler(job: dict[str, Any]) -> AsyncIterator[Any]:
        ctx = current_job()
        for i in range(2):
            ctx.metrics["step"] = i
            yield i

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h")
    await settle()
    stream = (await emu.jobs.stream("h", job.id, 0)).to_wire()["stream"]
    assert [c["metrics"] for c in stream] == [
        {"step": 0, "stream_index": 0},
        {"step": 1, "stream_index": 1},
    ]


S3 = {
    "accessId": "AKIA-EXAMPLE",
    "accessSecret": "s3-secret-never-shown",
    "bucketName": "bucket",
    "endpointUrl": "https://s3.example.com",
}


async def test_s3_config_is_handed_to_the_handler(emu: Emulator) -> None:
    got: list[dict[str, Any]] = []

    async def handler(job: dict[str, Any]) -> Any:
        got.append(job)
        return {"ok": True}

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h", {"q": 1}, s3Config=S3)
    await settle()
    assert got == [{"id": job.id, "input": {"q": 1}, "s3Config": S3}]


async def test_without_s3_config_the_handler_gets_only_id_and_input(emu: Emulator) -> None:
    got: list[dict[str, Any]] = []

    async def handler(job: dict[str, Any]) -> Any:
        got.append(job)

    emu.deploy(handler=handler, endpoint_id="h")
    job = submit(emu, "h", {"q": 1})
    await settle()
    assert got == [{"id": job.id, "input": {"q": 1}}]


async def test_s3_config_never_appears_in_any_response(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    body = {"input": {"q": 1}, "s3Config": S3}
    answers = [await http.post("/v2/echo/run", json=body)]
    job_id = answers[0].json()["id"]
    await settle()
    answers.append(await http.post("/v2/echo/runsync", json=body))
    answers.append(await http.get(f"/v2/echo/status/{job_id}"))
    answers.append(await http.get(f"/v2/echo/stream/{job_id}?wait=0"))
    answers.append(await http.get("/v2/echo/requests"))
    answers.append(await http.get("/_emulator/endpoints"))
    for answer in answers:
        assert answer.status_code == 200, answer.text
        assert "s3-secret-never-shown" not in answer.text
        assert "s3Config" not in answer.text and "AKIA-EXAMPLE" not in answer.text
    assert "s3-secret-never-shown" not in repr(emu.jobs.jobs[job_id].input)

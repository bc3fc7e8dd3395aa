"""An output over the service's 20 MB limit fails its job at once, saying how large it was
(docs/behaviour.md#output-limit), for results and streamed chunks of in-process handlers.

Nothing here advances the fake clock: a job that waited for its execution timeout
instead would never end, and ``until`` would fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.output_limit import MB, OUTPUT_LIMIT

from .conftest import status_of, submit, until

pytestmark = pytest.mark.anyio


def sized(size: int) -> str:
    """A string whose JSON form is ``size`` bytes."""
    return "x" * (size - 2)


def returns(job: dict[str, Any]) -> Any:
    return sized(job["input"]["size"])


def streams(job: dict[str, Any]) -> Iterator[Any]:
    yield "first"
    yield sized(job["input"]["size"])
    yield "never"


async def ended(emu: Emulator, endpoint_id: str, job_id: str) -> dict[str, Any]:
    await until(
        lambda: status_of(emu, endpoint_id, job_id)["status"] not in ("IN_QUEUE", "IN_PROGRESS")
    )
    return status_of(emu, endpoint_id, job_id)


async def test_a_result_over_the_limit_fails_its_job_saying_how_large(emu: Emulator) -> None:
    emu.register_image("big", returns)
    emu.deploy("big", endpoint_id="big")
    over = await ended(emu, "big", submit(emu, "big", {"size": OUTPUT_LIMIT + 3 * MB}).id)
    assert over["status"] == "FAILED"
    assert over["error"] == "output of 23.0 MB exceeds the service's 20 MB limit"
    assert "output" not in over
    exact = await ended(emu, "big", submit(emu, "big", {"size": OUTPUT_LIMIT}).id)
    assert exact["status"] == "COMPLETED" and len(exact["output"]) == OUTPUT_LIMIT - 2
    assert emu.jobs.health("big").jobs.failed == 1


async def test_a_streamed_chunk_over_the_limit_fails_its_job_after_the_chunks_before(
    emu: Emulator,
) -> None:
    emu.register_image("gen", streams)
    emu.deploy("gen", endpoint_id="gen")
    job = submit(emu, "gen", {"size": OUTPUT_LIMIT + MB // 2})
    over = await ended(emu, "gen", job.id)
    assert over["status"] == "FAILED"
    assert over["error"] == "a streamed chunk's output of 20.5 MB exceeds the service's 20 MB limit"
    streamed = await emu.jobs.stream("gen", job.id, 0)
    assert [chunk.output for chunk in streamed.stream] == ["first"]


async def test_runsync_answers_the_failure_at_once(emu: Emulator, http: httpx.AsyncClient) -> None:
    emu.register_image("big", returns)
    emu.deploy("big", endpoint_id="big")
    response = await http.post("/v2/big/runsync", json={"input": {"size": 25 * MB}})
    assert response.status_code == 200
    answer = response.json()
    assert answer["status"] == "FAILED"
    assert answer["error"] == "output of 25.0 MB exceeds the service's 20 MB limit"

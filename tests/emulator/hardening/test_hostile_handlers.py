"""A handler that exits or raises ``BaseException`` fails its own job; the server serves on.

Through ``EmulatorServer`` on the real clock (the embedded emulator a kernel starts):
before the fix a handler's ``sys.exit()`` ended the server's loop and closed its port
while the process stayed up, and nothing was logged.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, EmulatorServer

from ..conftest import AUTH, KEY


def exits(job: dict[str, Any]) -> Any:
    sys.exit(3)


def exits_plainly(job: dict[str, Any]) -> Any:
    sys.exit()


def interrupts(job: dict[str, Any]) -> Any:
    raise KeyboardInterrupt


async def exits_async(job: dict[str, Any]) -> Any:
    raise SystemExit("async")


def exits_mid_stream(job: dict[str, Any]) -> Iterator[str]:
    yield "one"
    raise KeyboardInterrupt


async def exits_mid_async_stream(job: dict[str, Any]) -> AsyncIterator[str]:
    yield "one"
    raise SystemExit(5)


class GeneratorExitLike(BaseException):
    """A BaseException no one in Python's standard library raises."""


def raises_own_base(job: dict[str, Any]) -> Any:
    raise GeneratorExitLike("mine")


HOSTILE: dict[str, tuple[Callable[..., Any], str]] = {
    "exit3": (exits, "SystemExit: 3"),
    "exit": (exits_plainly, "SystemExit"),
    "interrupt": (interrupts, "KeyboardInterrupt"),
    "exitasync": (exits_async, "SystemExit: async"),
    "exitstream": (exits_mid_stream, "KeyboardInterrupt"),
    "exitastream": (exits_mid_async_stream, "SystemExit: 5"),
    "ownbase": (raises_own_base, "GeneratorExitLike: mine"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    emulator = Emulator(api_key=KEY, rate_limit=False)
    for endpoint_id, (handler, _) in HOSTILE.items():
        emulator.deploy(handler=handler, endpoint_id=endpoint_id)
    emulator.deploy("echo", endpoint_id="echo")
    with EmulatorServer(emulator) as running:
        yield running
    emulator.close()


@pytest.mark.parametrize("endpoint_id", sorted(HOSTILE))
def test_a_base_exception_fails_that_job_and_the_server_serves_on(
    server: EmulatorServer, endpoint_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    expected = HOSTILE[endpoint_id][1]
    with httpx.Client(base_url=server.serverless_url, headers=AUTH, timeout=10) as client:
        for _ in range(2):  # the second job proves the endpoint's worker came back
            answer = client.post(f"/{endpoint_id}/runsync", json={"input": {}}).json()
            assert answer["status"] == "FAILED", answer
            assert answer["error"].startswith(expected), answer["error"]
            assert "only this job" in answer["error"]
        echoed = client.post("/echo/runsync", json={"input": {"still": "here"}}).json()
        assert echoed["output"] == {"still": "here"}
        health = client.get(f"/{endpoint_id}/health").json()
        assert health["jobs"]["failed"] >= 2 and health["workers"]["running"] == 0
    assert server.running
    assert any(endpoint_id in r.getMessage() for r in caplog.records), "nothing was logged"

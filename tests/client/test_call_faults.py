"""Single calls through ``FaultProxy``: a lost answer to a GET is asked again and comes
back once; a lost answer to a submission is never re-sent, and the error says the job
may have been queued (issue 24, part 3)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from nbext.client import AsyncClient, Client, ConnectionError
from nbext.emulator import Emulator, EmulatorServer
from nbext.models import JobStatus
from tests.faultproxy import Fault, FaultProxy, once

from .conftest import KEY

pytestmark = pytest.mark.anyio


@pytest.fixture
def server() -> Iterator[EmulatorServer]:
    emu = Emulator(api_key=KEY, rate_limit=False)
    emu.deploy(image="echo", endpoint_id="echo")
    server = EmulatorServer(emu).start()
    try:
        yield server
    finally:
        server.stop()
        emu.close()


@pytest.mark.parametrize("fault", ["drop", "reset", "truncate"])
@pytest.mark.parametrize("route", ["runsync", "run"])
async def test_a_lost_submission_answer_is_not_sent_again_and_says_so(
    server: EmulatorServer, fault: Fault, route: str
) -> None:
    rule = once(lambda e: e.path.endswith(f"/{route}"), fault)
    with FaultProxy(server.url, rule=rule) as proxy:
        url = proxy.via(server.serverless_url)

        def submit() -> None:
            with Client(KEY, serverless_url=url) as client:
                endpoint = client.endpoint("echo")
                endpoint.run_sync({"x": 1}) if route == "runsync" else endpoint.run({"x": 1})

        with pytest.raises(ConnectionError, match="may have been queued") as info:
            await asyncio.to_thread(submit)
    assert info.value.maybe_sent
    assert len(server.emulator.jobs.jobs) == 1  # it was queued, once


async def test_a_lost_status_answer_is_asked_again_and_read_once(server: EmulatorServer) -> None:
    rule = once(lambda e: "/status/" in e.path)
    with FaultProxy(server.url, rule=rule) as proxy:
        async with AsyncClient(KEY, serverless_url=proxy.via(server.serverless_url)) as client:
            job = await client.endpoint("echo").run({"x": 2})
            result = await job.status()
            while not result.status.is_final:
                result = await job.wait(timeout=10)
    assert proxy.counts["drop"] == 1
    assert result.status is JobStatus.COMPLETED and result.output == {"x": 2}
    assert len(server.emulator.jobs.jobs) == 1

"""A recording keeps a job's result however the client waited for it (docs/behaviour.md#recordings).

``wait()`` long-polls /stream, which says the job ended, then reads /status for the
output: the recording must keep that reading, not only the first final state it saw.
"""

from __future__ import annotations

from pathlib import Path

from nbext.client import Client
from nbext.emulator import Emulator, EmulatorServer
from nbext.models import recording

from .conftest import KEY


def test_a_job_waited_for_is_recorded_with_its_output_and_times(tmp_path: Path) -> None:
    path = tmp_path / "class.jsonl"
    emulator = Emulator(api_key=KEY)
    emulator.deploy(image="sleep", endpoint_id="sleep")
    try:
        with (
            EmulatorServer(emulator) as server,
            Client(KEY, serverless_url=server.serverless_url) as client,
            client.record(path),
        ):
            result = client.endpoint("sleep").run({"seconds": 0.2}).wait(timeout=30)
    finally:
        emulator.close()
    [call] = recording.read(path).calls
    assert call["status"] == "COMPLETED"
    assert call["output"] == result.output == {"slept": 0.2}
    assert call["executionTimeMs"] == result.execution_time is not None
    assert call["delayTimeMs"] == result.delay_time

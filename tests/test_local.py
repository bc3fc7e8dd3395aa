"""``nbext.local_client()``: the one line that gives a script or a test a working client.

Real emulator, real HTTP on loopback: the client cannot tell it from the service.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import httpx
import pytest

import nbext
from nbext import ConfigError, JobFailed
from nbext.emulator import Emulator, FakeClock
from nbext.models import JobStatus


def test_the_demo_endpoints_and_the_management_interface_answer() -> None:
    with nbext.local_client() as client:
        assert client.endpoint("echo").run_sync({"hi": 1}).output == {"hi": 1}
        with pytest.raises(JobFailed, match="boom"):
            client.endpoint("fail").run_sync({"message": "boom"})
        pieces = list(client.endpoint("stream-text").run({"text": "a b"}).stream())
        assert "".join(p["text"][0] for p in pieces) == "a b"
        template = client.templates.create(name="t", image="example/t:1")
        # REST v2 lists the demo endpoints' (serverless) templates too
        assert [t.id for t in client.templates.list() if not t.serverless] == [template.id]
        echo = client.endpoints.get("echo")  # REST v2's record: its type and addresses
        assert echo.type == "QUEUE" and echo.request_urls is not None
        assert echo.request_urls.run == f"{client.serverless_url}/echo/run"
        address = client.serverless_url
    assert address.startswith("http://127.0.0.1:")
    # the emulator stops with the block: nothing is left listening
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{address}/echo/health", timeout=5)


def test_endpoints_of_your_own_functions_and_demo_images() -> None:
    def count(job: dict[str, Any]) -> dict[str, int]:
        return {"length": len(job["input"]["text"])}

    with nbext.local_client({"mine": count, "words": "echo"}) as client:
        assert client.endpoint("mine").run_sync({"text": "hello"}).output == {"length": 5}
        assert client.endpoint("words").run_sync({"w": 1}).output == {"w": 1}


@pytest.mark.parametrize(
    ("endpoints", "error", "message"),
    [
        ({"x": "no-such-image"}, ValueError, "endpoint 'x': unknown image 'no-such-image'"),
        ({"x": 42}, TypeError, "endpoint 'x': give a demo image's name or a handler function"),
    ],
)
def test_a_bad_endpoint_is_a_clear_error_before_anything_starts(
    endpoints: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message), nbext.local_client(endpoints):
        pass


def test_a_given_emulator_on_a_fake_clock_is_served_and_left_open() -> None:
    emulator = Emulator(clock=FakeClock())
    with nbext.local_client(emulator=emulator, wait_timeout=30) as client:
        job = client.endpoint("sleep").run({"seconds": 5})
        assert job.status().status in (JobStatus.IN_QUEUE, JobStatus.IN_PROGRESS)
        emulator.advance(6)
        assert job.wait(timeout=30).status is JobStatus.COMPLETED
    assert "echo" in emulator.jobs.endpoints  # still usable: the caller closes it
    emulator.close()


def test_the_async_form() -> None:
    async def main() -> Any:
        async with nbext.local_async_client() as client:
            result = await client.endpoint("echo").run_sync({"async": True})
            return result.output

    assert asyncio.run(main()) == {"async": True}


def test_client_without_a_key_points_to_the_local_client(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RUNPOD_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"nbext\.local_client\(\)"):
        nbext.Client()


def in_a_new_interpreter(code: str) -> None:
    """Run ``code`` where nothing is imported yet; its failed assertion fails the test."""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_importing_nbext_does_not_import_the_emulator() -> None:
    """A cloud user's ``import nbext`` loads neither the emulator nor its web stack."""
    code = (
        "import sys, nbext\n"
        "assert 'nbext.emulator' not in sys.modules, 'emulator imported'\n"
        "assert 'uvicorn' not in sys.modules, 'uvicorn imported'\n"
        "assert callable(nbext.local_client) and 'nbext.emulator' in sys.modules\n"
    )
    in_a_new_interpreter(code)


def test_the_v2_rulebook_is_loaded_by_the_first_management_call_not_by_the_first_job() -> None:
    """``jsonschema`` (about a second to import where ``rfc3987_syntax`` is installed) is
    not on the way to a notebook's first result; the first v2 management call loads it and
    checks its body as every later one."""
    code = (
        "import sys, httpx\n"
        "from nbext.emulator import Emulator, EmulatorServer\n"
        "server = EmulatorServer(Emulator('rpa_K')).start()\n"
        "server.emulator.deploy(image='echo', endpoint_id='echo')\n"
        "auth = {'Authorization': 'Bearer rpa_K'}\n"
        "api = httpx.Client(base_url=server.url, headers=auth, timeout=60)\n"
        "r = api.post('/v2/echo/runsync', json={'input': {'a': 1}})\n"
        "assert r.json()['output'] == {'a': 1}, r.text\n"
        "assert 'jsonschema' not in sys.modules, 'jsonschema imported by a job'\n"
        "r = api.post('/v2/serverless', json={'name': 'x'})\n"
        "assert r.status_code == 422, r.text\n"
        "assert r.json()['errors'] == ['image: is required', 'type: is required',"
        " 'scaling: is required'], r.text\n"
        "assert 'jsonschema' in sys.modules\n"
        "server.stop()\n"
    )
    in_a_new_interpreter(code)

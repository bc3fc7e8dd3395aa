"""A worker script starts with no network route at all, as on a lab server or a train.

The service's SDK runs fleet fitness checks at start, one of which connects to a public
DNS server; offline that fails and the SDK exits before taking a job, for ever. The
emulator sets ``RUNPOD_SKIP_AUTO_SYSTEM_CHECKS`` for its workers (docs/workers.md), so
the script serves. The emulator, the worker and the client run in a network namespace
of their own with loopback only (``unshare -n``), so the test proves it offline.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.offline import python_offline

from .conftest import KEY, SCRIPTS

PROGRAM = textwrap.dedent(
    """
    import sys
    import httpx
    from nbext.emulator import Emulator, EmulatorServer

    emulator = Emulator(api_key=KEY, rate_limit=False, demo_images=False)
    with EmulatorServer(emulator) as server:
        endpoint = emulator.deploy_worker(SCRIPT, workers={"max": 1}, env=ENV)
        answer = httpx.post(
            f"{server.serverless_url}/{endpoint}/runsync",
            params={"wait": WAIT_MS},
            json={"input": {"x": 1}},
            headers={"Authorization": f"Bearer {KEY}"},
            timeout=120,
        ).json()
        print(answer["status"])
        log = "\\n".join(emulator.worker_logs(endpoint))
        print("UNHEALTHY" if "unhealthy" in log.lower() else "HEALTHY")
    emulator.close()
    """
)


def offline(env: dict[str, str], wait_ms: int = 90_000) -> list[str]:
    code = f"KEY = {KEY!r}\nSCRIPT = {str(SCRIPTS / 'plain_worker.py')!r}\nENV = {env!r}\n"
    code += f"WAIT_MS = {wait_ms}\n"
    code += PROGRAM
    return python_offline(code, timeout=240)


def test_a_worker_script_serves_with_no_network_route() -> None:
    assert offline({})[-2:] == ["COMPLETED", "HEALTHY"]


@pytest.mark.slow
def test_with_the_checks_turned_back_on_the_offline_worker_never_serves() -> None:
    """What the default prevents (and how a user who wants the checks gets them)."""
    env = {"RUNPOD_SKIP_AUTO_SYSTEM_CHECKS": "false"}
    assert offline(env, wait_ms=15_000)[-2:] == ["IN_QUEUE", "UNHEALTHY"]

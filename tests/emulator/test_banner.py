"""The standalone emulator's banner: its ``export`` lines, pasted into a shell as printed.

With those lines and nothing else in the environment (no ``RUNPOD_*``, an empty HOME),
a script using ``nbext.Client()`` and one using runpod-python's ``runpod.Endpoint`` run
unchanged against the emulator, management calls included. Both scripts run in a
shell in a subprocess, after the printed lines, so what is tested is what a user pastes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ..standalone import Standalone, run_python_after


@pytest.fixture
def standalone() -> Iterator[Standalone]:
    server = Standalone.module()
    yield server
    server.stop()


def test_the_banner_exports_the_key_and_both_interfaces(standalone: Standalone) -> None:
    exports = standalone.exports
    assert set(exports) == {
        "RUNPOD_API_KEY",
        "RUNPOD_ENDPOINT_BASE_URL",
        "RUNPOD_REST_BASE_URL",
    }
    assert re.fullmatch(r"rpa_[0-9A-F]{40}", exports["RUNPOD_API_KEY"])
    base = re.fullmatch(r"(http://127\.0\.0\.1:\d+)/v2", exports["RUNPOD_ENDPOINT_BASE_URL"])
    assert base is not None
    assert exports["RUNPOD_REST_BASE_URL"] == base.group(1) + "/v2"  # REST v2, as the service
    assert f"REST v1 at {base.group(1)}/v1" in standalone.banner
    assert "RUNPOD_API_BASE_URL" not in standalone.banner  # the SDK's GraphQL host


def test_nbext_client_runs_unchanged_on_the_exports(standalone: Standalone, tmp_path: Path) -> None:
    script = """
from nbext import Client
with Client() as client:
    print(client.endpoint("echo").run_sync({"hello": "world"}).output)
    template = client.templates.create(name="from-banner", image="example/image:1.0")
    print(template.name)
"""
    out = run_python_after(standalone.export_lines, script, home=tmp_path)
    assert out.splitlines() == ["{'hello': 'world'}", "from-banner"]
    # the template is on this emulator, not anywhere else
    exports = standalone.exports
    with httpx.Client(
        headers={"Authorization": f"Bearer {exports['RUNPOD_API_KEY']}"}, timeout=10
    ) as http:
        listing = http.get(exports["RUNPOD_REST_BASE_URL"] + "/templates").json()
        names = [t["name"] for t in listing["templates"]]
    assert "from-banner" in names


def test_the_service_sdk_runs_unchanged_on_the_exports(
    standalone: Standalone, tmp_path: Path
) -> None:
    """The SDK's own idiom: the key from the environment, the job URL read on import."""
    script = """
import os
import runpod
runpod.api_key = os.getenv("RUNPOD_API_KEY")
endpoint = runpod.Endpoint("echo")
print(endpoint.run_sync({"hello": "world"}))
print(endpoint.run({"n": 1}).output(timeout=30))
"""
    out = run_python_after(standalone.export_lines, script, home=tmp_path)
    assert out.splitlines()[-2:] == ["{'hello': 'world'}", "{'n': 1}"]


def test_a_given_key_is_never_printed() -> None:
    key = "rpa_0123456789ABCDEF0123456789ABCDEF01234567"
    server = Standalone.module("--api-key", key)
    try:
        assert key not in server.banner
        assert "API key:    rpa_…4567" in server.banner
        assert "RUNPOD_API_KEY" not in server.exports  # asked for, no value to misuse
        assert "export RUNPOD_API_KEY=<the key given with --api-key>" in server.banner
    finally:
        server.stop()

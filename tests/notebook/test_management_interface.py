"""Which management interface a notebook speaks: ``%runpod status`` says it, the local
emulator is managed through REST v1 or v2 as the connection chooses."""

from __future__ import annotations

from pathlib import Path

import pytest

from nbext.notebook import Connection

from .conftest import KEY, Notebook


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_status_names_the_management_interface(
    nb: Notebook, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    nb.conn.management_api = version  # type: ignore[assignment]
    nb.run("%runpod status")
    assert "management interface" not in capsys.readouterr().out  # not started: not chosen
    nb.run('%%runpod_job echo -q\n{"a": 1}')
    nb.run("%runpod status")
    lines = capsys.readouterr().out.splitlines()
    at = lines.index(f"management URL: {nb.server.url}/{version}")
    assert lines[at + 1] == (f"management interface: REST {version} at {nb.server.url}/{version}")


@pytest.mark.parametrize(
    ("environ", "base_url", "expected"),
    [
        (
            {"RUNPOD_MANAGEMENT_API": "v1"},
            "https://rest.runpod.io/v1",
            "management interface: REST v1 at https://rest.runpod.io/v1 (retired by the "
            "service; unset RUNPOD_MANAGEMENT_API for REST v2)",
        ),
        (
            {"RUNPOD_REST_BASE_URL": "https://proxy.example/runpod/v1"},  # a URL is no switch
            "https://proxy.example/runpod/v1",
            "management interface: REST v2 at https://proxy.example/runpod/v1",
        ),
        (
            {},
            "https://api.runpod.io/v2",
            "management interface: REST v2 at https://api.runpod.io/v2",
        ),
    ],
)
def test_status_on_the_cloud_says_which_interface_before_any_call(
    nb: Notebook,
    capsys: pytest.CaptureFixture[str],
    environ: dict[str, str],
    base_url: str,
    expected: str,
) -> None:
    cloud = Connection(
        environ={"RUNPOD_API_KEY": KEY, **environ},
        config_file=Path("/nonexistent/config.toml"),
    )
    assert cloud.mode == "cloud"
    nb.magics.connection = cloud
    try:
        nb.run("%runpod status")
    finally:
        nb.magics.connection = nb.conn
        cloud.close()
    out = capsys.readouterr().out.splitlines()
    assert expected in out
    assert out.index(expected) == out.index(f"management URL: {base_url}") + 1

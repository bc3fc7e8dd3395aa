"""The harness's own rules, checked without a browser: what the server may inherit, and
when a missing browser is a skip and when it is a failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from .browser import chromium_or_skip
from .jupyter import scrubbed_environment


def test_lab_environment_has_no_service_credentials_nor_user_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", "rpa_" + "A" * 40)
    monkeypatch.setenv("RUNPOD_ENDPOINT_BASE_URL", "https://api.runpod.ai/v2")
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", "/somewhere/else")
    env = scrubbed_environment(tmp_path)
    assert not [name for name in env if name.startswith("RUNPOD_")]
    assert env["HOME"] == str(tmp_path)
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        assert env[name].startswith(str(tmp_path)), name


def test_missing_browser_skips_locally(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NBEXT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"):
        chromium_or_skip()


def test_missing_browser_fails_when_required(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("NBEXT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="NBEXT_REQUIRE_BROWSER=1"):
        chromium_or_skip()


def test_browser_found_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert chromium_or_skip() == str(fake)

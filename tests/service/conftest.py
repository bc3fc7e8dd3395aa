"""Each test here gets a local service of its own: a private runtime and data folder,
and whatever service ran there is ended by its process id when the test ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nbext.service import files
from tests.local_service import stop_service


@dataclass
class Folders:
    runtime: Path
    data: Path

    def service_file(self) -> files.ServiceFile:
        found = files.read(self.runtime)
        assert found is not None, "no service.json"
        return found


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Folders]:
    made = Folders(tmp_path / "run", tmp_path / "data")
    monkeypatch.setenv("NBEXT_RUNTIME_DIR", str(made.runtime))
    monkeypatch.setenv("NBEXT_DATA_DIR", str(made.data))
    monkeypatch.delenv("NBEXT_IDLE_STOP", raising=False)
    for name in [n for n in os.environ if n.startswith("RUNPOD_")]:
        monkeypatch.delenv(name)
    try:
        yield made
    finally:
        stop_service(made.runtime)

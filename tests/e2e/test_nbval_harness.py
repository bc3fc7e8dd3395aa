"""The nbval harness that runs ``notebooks/`` in ``make test``, proven on notebooks of ours.

The guides are collected by the project's own pytest configuration (pyproject.toml's
``testpaths`` and nbval options, the root ``conftest.py``, ``notebooks/sanitize.cfg``).
This test runs exactly that configuration in a scratch project holding copies of those
three files and two notebooks, with a fake ``RUNPOD_API_KEY`` in the environment, and
checks what the configuration promises:

- collecting with no arguments reaches ``notebooks/`` (``testpaths``), in lax mode;
- the kernel is this venv's Python and sees no RUNPOD_* variable and a throwaway HOME;
- a notebook runs a job through the embedded emulator;
- a checked cell passes although its job id, port, timings and key mask differ from the
  saved output (the sanitizers), and fails when the substance differs;
- an unmarked cell's output is not compared (lax); a cell is marked by the comment or,
  when it starts with a cell magic, by the ``nbval-check-output`` tag.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .jupyter import ROOT
from .notebook_files import write_notebook

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

FAKE_KEY = "rpa_" + "F" * 36 + "D00D"


def stream(text: str) -> dict[str, str]:
    return {"output_type": "stream", "name": "stdout", "text": text}


ENVIRONMENT = f"""\
import os, sys
from pathlib import Path
assert sys.prefix == {sys.prefix!r}, sys.prefix
assert not [name for name in os.environ if name.startswith("RUNPOD_")], "RUNPOD_* leaked"
assert Path.home() != Path({str(Path.home())!r}), "the real HOME leaked"
assert not (Path.home() / ".runpod").exists()
"""

EMULATOR = """\
from nbext import Client
from nbext.emulator import Emulator, EmulatorServer, mask_key

emulator = Emulator()
emulator.deploy(image="echo", endpoint_id="echo")
server = EmulatorServer(emulator).start()
client = Client(emulator.api_key, serverless_url=server.serverless_url)
result = client.endpoint("echo").run_sync({"hello": "nbval"})
"""

CHECKED = """\
# NBVAL_CHECK_OUTPUT
print(result.id, result.status.value, result.output)
print("served at", server.url, "with key", mask_key(emulator.api_key))
print(f"delayTime: {result.delay_time}, took {result.execution_time} ms")
"""

SAVED = (
    "sync-0b9a3c1e-55aa-4c7e-9d3b-2f6f0e1d2c3b COMPLETED {'hello': 'nbval'}\n"
    "served at http://127.0.0.1:41234 with key rpa_…9Z9Z\n"
    "delayTime: 7, took 123 ms\n"
)

UNCHECKED = 'print("this output is never compared")'


def saved_cell(source: str, text: str, *tags: str) -> dict[str, object]:
    return {"source": source, "outputs": [stream(text)], "execution_count": 1, "tags": tags}


def scratch_project(base: Path) -> Path:
    """A project with this repo's pytest configuration and nothing else."""
    project = base / "project"
    (project / "notebooks").mkdir(parents=True)
    for name in ("pyproject.toml", "conftest.py", "notebooks/sanitize.cfg"):
        shutil.copy(ROOT / name, project / name)
    return project


def test_make_test_runs_guides_offline_with_checked_and_sanitized_cells(tmp_path: Path) -> None:
    project = scratch_project(tmp_path)
    notebooks = project / "notebooks"
    write_notebook(
        notebooks / "good.ipynb",
        [
            ENVIRONMENT,
            EMULATOR,
            saved_cell(CHECKED, SAVED),
            saved_cell(UNCHECKED, "something else entirely\n"),
            # Marked by tag, as a cell starting with a cell magic must be.
            saved_cell(
                "print(result.id)",
                "sync-00000000-1111-4222-8333-444444444444\n",
                "nbval-check-output",
            ),
            "server.stop()",
        ],
    )
    write_notebook(
        notebooks / "bad.ipynb",
        [
            saved_cell("# NBVAL_CHECK_OUTPUT\nprint(1 + 1)", "3\n"),
            saved_cell("print(2 + 2)", "5\n", "nbval-check-output"),
        ],
    )
    report = tmp_path / "report.xml"
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(Path.home()),
        "RUNPOD_API_KEY": FAKE_KEY,
        "RUNPOD_ENDPOINT_BASE_URL": "https://api.runpod.ai/v2",
    }
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={report}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 1, log  # exactly the bad notebook fails
    assert FAKE_KEY not in log

    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = "failed" if failed else "ok"
    good = {name: outcome for name, outcome in outcomes.items() if "good" in name}
    bad = {name: outcome for name, outcome in outcomes.items() if "bad" in name}
    assert len(good) == 6 and set(good.values()) == {"ok"}, (good, log)
    assert list(bad.values()) == ["failed", "failed"], (bad, log)
    assert "Cell outputs differ" in log

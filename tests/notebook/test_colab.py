"""Colab, with a stand-in ``google.colab`` (Colab itself cannot run here): the custom
widget manager is enabled once before any panel, and the key comes from Colab's secret
``RUNPOD_API_KEY`` once, only when nothing else gives one; a refused access is said.

The stand-in has Colab's names and behaviours: ``output.enable_custom_widget_manager``,
and ``userdata.get`` raising ``SecretNotFoundError`` or ``NotebookAccessError``.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets
import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbext.emulator import Emulator, EmulatorServer
from nbext.notebook import Connection, colab, load_ipython_extension, set_current

from .conftest import KEY

STAND_IN = {
    "google/__init__.py": "",
    "google/colab/__init__.py": "from . import output, userdata\n",
    "google/colab/output.py": """
        calls = []

        def enable_custom_widget_manager():
            calls.append("enable_custom_widget_manager")
    """,
    "google/colab/userdata.py": """
        class SecretNotFoundError(Exception):
            pass

        class NotebookAccessError(Exception):
            pass

        secrets = {}
        granted = True
        asked = []

        def get(key):
            asked.append(key)
            if not granted:
                raise NotebookAccessError(key)
            if key not in secrets:
                raise SecretNotFoundError(key)
            return secrets[key]
    """,
}


@pytest.fixture
def google_colab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The stand-in, imported as Colab's runtime has it imported; ``colab`` forgets what
    it did in earlier tests (in a kernel, it does each thing once)."""
    for name, text in STAND_IN.items():
        path = tmp_path / "colab-stand-in" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path / "colab-stand-in"))
    for name in [n for n in sys.modules if n == "google" or n.startswith("google.")]:
        monkeypatch.delitem(sys.modules, name)
    import google.colab

    monkeypatch.setattr(colab, "_done", set())
    yield google.colab
    for name in [n for n in sys.modules if n == "google" or n.startswith("google.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def cloud() -> Iterator[EmulatorServer]:
    emulator = Emulator(api_key=KEY)
    with EmulatorServer(emulator) as server:
        yield server
    emulator.close()


def load(shell: InteractiveShell, server: EmulatorServer, tmp_path: Path, **env: str) -> Connection:
    environ = {
        "RUNPOD_REST_BASE_URL": f"{server.url}/v2",
        "RUNPOD_ENDPOINT_BASE_URL": server.serverless_url,
        **env,
    }
    conn = Connection(environ=environ, config_file=tmp_path / "config.toml")
    load_ipython_extension(shell, connection=conn)
    return conn


@pytest.fixture
def loaded() -> Iterator[list[Connection]]:
    made: list[Connection] = []
    yield made
    ipywidgets.Widget.close_all()
    set_current(None)
    for conn in made:
        conn.close()


def test_the_widget_manager_is_enabled_once(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, google_colab: Any,
    loaded: list[Connection],
) -> None:  # fmt: skip
    loaded.append(load(shell, cloud, tmp_path))
    loaded.append(load(shell, cloud, tmp_path))
    assert google_colab.output.calls == ["enable_custom_widget_manager"]


def test_a_granted_secret_connects_to_the_cloud(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, google_colab: Any,
    loaded: list[Connection], capsys: Any,
) -> None:  # fmt: skip
    google_colab.userdata.secrets["RUNPOD_API_KEY"] = KEY
    conn = load(shell, cloud, tmp_path)
    loaded.append(conn)
    out = capsys.readouterr().out
    assert conn.mode == "cloud" and conn.config.key_source == "Colab secret RUNPOD_API_KEY"
    assert "from Colab secret RUNPOD_API_KEY" in out and KEY not in out
    assert conn.client.endpoints.list() == []  # the secret's key is in use
    loaded.append(load(shell, cloud, tmp_path))
    assert google_colab.userdata.asked == ["RUNPOD_API_KEY"]  # once per kernel


def test_a_refused_access_is_said_and_the_emulator_is_used(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, google_colab: Any,
    loaded: list[Connection], capsys: Any,
) -> None:  # fmt: skip
    google_colab.userdata.granted = False
    conn = load(shell, cloud, tmp_path)
    loaded.append(conn)
    out = capsys.readouterr().out
    assert "was not given access to the Colab secret RUNPOD_API_KEY" in out
    assert conn.mode == "local" and "local emulator" in out


def test_no_secret_is_no_news(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, google_colab: Any,
    loaded: list[Connection], capsys: Any,
) -> None:  # fmt: skip
    conn = load(shell, cloud, tmp_path)
    loaded.append(conn)
    assert conn.mode == "local"
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("nbext: local service at http://127.0.0.1:"), line


def test_a_key_in_the_environment_wins_and_the_secret_is_not_asked(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, google_colab: Any,
    loaded: list[Connection],
) -> None:  # fmt: skip
    google_colab.userdata.secrets["RUNPOD_API_KEY"] = "rpa_SHOULDNOTBEUSED000000000000000000000000"
    conn = load(shell, cloud, tmp_path, RUNPOD_API_KEY=KEY)
    loaded.append(conn)
    assert conn.config.key_source == "RUNPOD_API_KEY"
    assert google_colab.userdata.asked == []


def test_outside_colab_nothing_is_asked(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, loaded: list[Connection],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(colab, "_done", set())
    assert not colab.in_colab()
    loaded.append(load(shell, cloud, tmp_path))
    assert colab._done == set()

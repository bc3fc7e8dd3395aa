"""``%runpod login`` / ``logout``: the key through a masked prompt, checked, saved 0600
where the service's runpod tools read it, never shown; bad input leaves nothing behind.

The "cloud" here is a real emulator server that the connection's URLs point at, as
``RUNPOD_REST_BASE_URL`` / ``RUNPOD_ENDPOINT_BASE_URL`` point nbext at any service.
"""

from __future__ import annotations

import getpass
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ipywidgets
import nbformat
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from nbext.emulator import Emulator, EmulatorServer
from nbext.notebook import Connection, load_ipython_extension, set_current

from .conftest import KEY

OTHER = "rpa_0THERKEY0000000000000000000000000000000"


@pytest.fixture(scope="module")
def cloud() -> Iterator[EmulatorServer]:
    emulator = Emulator(api_key=KEY)
    with EmulatorServer(emulator) as server:
        yield server
    emulator.close()


def cloud_environ(server: EmulatorServer) -> dict[str, str]:
    return {
        "RUNPOD_REST_BASE_URL": f"{server.url}/v2",
        "RUNPOD_ENDPOINT_BASE_URL": server.serverless_url,
    }


class Kernel:
    """A shell with the extension loaded on a connection whose cloud is ``cloud``."""

    def __init__(self, shell: InteractiveShell, conn: Connection, config: Path) -> None:
        self.shell = shell
        self.conn = conn
        self.config = config

    def run(self, cell: str) -> Any:
        result = self.shell.run_cell(cell, store_history=False)
        result.raise_error()
        return result.result


@pytest.fixture
def kernel(
    shell: InteractiveShell, cloud: EmulatorServer, tmp_path: Path, capsys: Any
) -> Iterator[Kernel]:
    config = tmp_path / "home" / ".runpod" / "config.toml"
    conn = Connection(environ=cloud_environ(cloud), config_file=config)
    load_ipython_extension(shell, connection=conn)
    capsys.readouterr()
    try:
        yield Kernel(shell, conn, config)
        assert KEY not in capsys.readouterr().out
    finally:
        ipywidgets.Widget.close_all()
        set_current(None)
        conn.close()


def typed(monkeypatch: pytest.MonkeyPatch, text: str) -> list[str]:
    """What ``getpass`` returns, as if typed into the masked field; the prompts shown."""
    prompts: list[str] = []

    def answer(prompt: str = "") -> str:
        prompts.append(prompt)
        return text

    monkeypatch.setattr(getpass, "getpass", answer)
    return prompts


def test_login_checks_saves_0600_and_connects_to_the_cloud(
    kernel: Kernel, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    prompts = typed(monkeypatch, f"  {KEY}\n")
    kernel.run("%runpod login")
    out = capsys.readouterr().out
    assert prompts == ["RunPod API key (input hidden): "]
    assert "is valid for the account (0 serverless endpoints)" in out
    assert "rpa_…" in out and KEY not in out
    assert stat.S_IMODE(kernel.config.stat().st_mode) == 0o600
    assert stat.S_IMODE(kernel.config.parent.stat().st_mode) == 0o700
    assert kernel.conn.mode == "cloud" and "login" in str(kernel.conn.config.key_source)
    assert kernel.conn.client.endpoints.list() == []  # the new key is in use
    kernel.run("%runpod logout")
    assert not kernel.config.exists() and kernel.conn.mode == "local"
    assert "removed the key" in capsys.readouterr().out


def test_the_file_is_the_one_runpod_reads_and_keeps_what_else_it_holds(
    kernel: Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel.config.parent.mkdir(parents=True)
    kernel.config.write_text('# mine\n[default]\napi_key = "old"\n\n[work]\napi_key = "w"\n')
    typed(monkeypatch, KEY)
    kernel.run("%runpod login")
    text = kernel.config.read_text()
    assert "# mine" in text and '[work]\napi_key = "w"' in text and "old" not in text
    home = kernel.config.parent.parent
    read = subprocess.run(
        [sys.executable, "-c", "from runpod.cli.groups.config.functions import "
         "get_credentials; print(get_credentials()['api_key'])"],
        env={**os.environ, "HOME": str(home)}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert read.stdout.strip() == KEY, read.stderr
    kernel.run("%runpod logout")
    assert "api_key" in kernel.config.read_text() and KEY not in kernel.config.read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no key was given; nothing was written"),
        ("   \n", "no key was given; nothing was written"),
        ("export RUNPOD_API_KEY=rpa_x", "does not look like an API key"),
        ("rpa_short", "does not look like an API key"),
        (OTHER, "the service refused the key rpa_…0000 (401)"),
    ],
)
def test_a_bad_key_is_one_line_and_writes_nothing(
    kernel: Kernel, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    typed(monkeypatch, text)
    with pytest.raises(UsageError) as caught:
        kernel.run("%runpod login")
    said = str(caught.value)
    assert message in said and "\n" not in said and OTHER not in said
    assert not kernel.config.exists() and kernel.conn.mode == "local"


def test_a_config_that_does_not_parse_is_named_and_left_unless_replaced(
    kernel: Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel.config.parent.mkdir(parents=True)
    kernel.config.write_text("[default\nnot toml")
    typed(monkeypatch, KEY)
    with pytest.raises(UsageError, match="is not valid TOML") as caught:
        kernel.run("%runpod login")
    assert str(kernel.config) in str(caught.value)
    assert kernel.config.read_text() == "[default\nnot toml"
    kernel.run("%runpod login --replace-config")
    assert KEY in kernel.config.read_text()


def test_an_unwritable_home_keeps_the_key_for_the_session_and_says_so(
    shell: InteractiveShell, cloud: EmulatorServer, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    # /proc takes no new folder, even from root (who may write anywhere else)
    config = Path("/proc/nbext-unwritable-home/.runpod/config.toml")
    conn = Connection(environ=cloud_environ(cloud), config_file=config)
    load_ipython_extension(shell, connection=conn)
    typed(monkeypatch, KEY)
    try:
        shell.run_cell("%runpod login", store_history=False).raise_error()
        out = capsys.readouterr().out
        assert f"could not write {config}" in out and "for this session only" in out
        assert conn.mode == "cloud" and conn.client.endpoints.list() == []
        assert KEY not in out
    finally:
        set_current(None)
        conn.close()


def test_logout_with_no_saved_key_says_so(kernel: Kernel, capsys: Any) -> None:
    kernel.run("%runpod logout")
    assert "held no key; this kernel now uses the local emulator" in capsys.readouterr().out


def test_login_through_a_real_kernel_leaves_the_key_nowhere(
    cloud: EmulatorServer, tmp_path: Path
) -> None:
    """ipykernel, started as Jupyter starts it: the key goes in on the stdin channel (a
    password request), and is then in no output, no saved notebook and no history."""
    from jupyter_client.manager import start_new_kernel

    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "IPYTHON"))}
    env.update(cloud_environ(cloud), HOME=str(home), IPYTHONDIR=str(home / ".ipython"))
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    notebook = nbformat.v4.new_notebook()
    requests: list[dict[str, Any]] = []

    def answer(msg: dict[str, Any]) -> None:
        requests.append(msg["content"])
        client.input(KEY)

    try:
        for source in ("%load_ext nbext", "%runpod login", "%runpod status"):
            cell = nbformat.v4.new_code_cell(source)
            outputs: list[Any] = []

            def keep(msg: dict[str, Any], outputs: list[Any] = outputs) -> None:
                if msg["msg_type"] in ("stream", "error", "display_data", "execute_result"):
                    outputs.append(nbformat.v4.output_from_msg(msg))

            reply = client.execute_interactive(
                source, timeout=60, allow_stdin=True, stdin_hook=answer, output_hook=keep
            )
            assert reply["content"]["status"] == "ok", reply["content"]
            cell.outputs = outputs
            notebook.cells.append(cell)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
    assert [r["password"] for r in requests] == [True]
    shown = "".join(o.get("text", "") for c in notebook.cells for o in c.outputs)
    assert (
        "is valid for the account" in shown
        and "service: a local emulator at http://127.0.0.1:" in shown
    )
    saved = tmp_path / "login.ipynb"
    nbformat.write(notebook, saved)
    assert KEY not in saved.read_text()
    config = home / ".runpod" / "config.toml"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600 and KEY in config.read_text()
    for history in (home / ".ipython").rglob("*.sqlite"):
        assert KEY.encode() not in history.read_bytes(), history

"""Magics in a real IPython shell, against a real emulator server, through the real client.

``nb`` gives one test: the session's ``InteractiveShell`` (the singleton, because
``IPython.display.display`` publishes through it) with the extension loaded on a
``Connection`` bound to a fresh ``EmulatorServer``; every display is recorded. Cells run
with ``nb.run(...)``, which re-raises what the cell raised. Time: emulators that need it
run on a ``FakeClock`` moved with ``nb.emu.advance``; nothing sleeps to let time pass.

Every test ends with a scan: no recorded display, no printed text, no widget state and
no value in the user's namespace may contain the emulator's API key.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import ipywidgets
import pandas as pd
import pytest
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import ExecutionResult, InteractiveShell
from ipywidgets.widgets.widget import _instances
from traitlets.config import Config

from nbext.emulator import Emulator, EmulatorServer, FakeClock, RealClock
from nbext.notebook import Connection, RunpodMagics, load_ipython_extension, set_current
from nbext.notebook.widgets import JobPanel

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sigint_handled() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt during the test, as in a kernel, then as before.

    A kernel always handles SIGINT (its interrupt button sends one), but a test run may
    start with SIGINT ignored (``nohup``, ``cmd &`` in a script, some CI runners), and
    Python then leaves it ignored: a test's Ctrl-C would never arrive and the cell it
    interrupts would run on until the per-test timeout.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class RecordingPublisher(DisplayPublisher):
    """Keeps every display and display update, as a frontend would receive them."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outputs: list[dict[str, Any]] = []

    def publish(  # type: ignore[override]
        self,
        data: dict[str, Any],
        metadata: dict[str, Any] | None = None,
        source: Any = None,
        *,
        transient: dict[str, Any] | None = None,
        update: bool = False,
        **kwargs: Any,
    ) -> None:
        self.outputs.append(
            {"data": data, "metadata": metadata, "transient": transient or {}, "update": update}
        )

    def clear_output(self, wait: bool = False) -> None:
        pass


@pytest.fixture(scope="session")
def shell() -> InteractiveShell:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.display_pub = RecordingPublisher(shell=shell)
    return shell


class Notebook:
    """One test's notebook: shell, emulator, connection, magics, and helpers."""

    def __init__(
        self, shell: InteractiveShell, emu: Emulator, server: EmulatorServer, conn: Connection
    ) -> None:
        self.shell = shell
        self.emu = emu
        self.server = server
        self.conn = conn
        self.magics: RunpodMagics = None  # type: ignore[assignment]

    @property
    def displays(self) -> list[dict[str, Any]]:
        publisher = self.shell.display_pub
        assert isinstance(publisher, RecordingPublisher)
        return publisher.outputs

    def run(self, cell: str) -> Any:
        """Run ``cell`` as a notebook would; re-raise what it raised; its value."""
        result: ExecutionResult = self.shell.run_cell(cell, store_history=False)
        result.raise_error()
        return result.result

    def record(self, index: int = -1) -> Any:
        """A job record of this kernel (default: the newest)."""
        return list(self.conn.registry)[index]

    def panel(self, index: int = -1) -> JobPanel:
        follower = self.record(index).follower
        assert follower is not None and follower.panel is not None
        return follower.panel

    def job(self, job_id: str) -> Any:
        return self.emu.jobs.jobs.get(job_id)

    def outputs(self) -> list[list[dict[str, Any]]]:
        """Each output the cells displayed, in the order shown: its successive bundles
        (the display, then each update through its display id)."""
        by_id: dict[str, list[dict[str, Any]]] = {}
        for output in self.displays:
            display_id = output["transient"].get("display_id") or f"#{id(output)}"
            by_id.setdefault(display_id, []).append(output["data"])
        return list(by_id.values())

    def last_plain(self) -> str:
        """The text/plain of the newest display or display update."""
        return str(self.displays[-1]["data"]["text/plain"])

    def deploy(self, handler: Callable[..., Any], name: str, **kw: Any) -> str:
        return self.emu.deploy(handler=handler, endpoint_id=name, **kw)

    def until(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Wait for a condition that other threads make true (never for time to pass)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.002)

    async def auntil(self, condition: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        import anyio

        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            await anyio.sleep(0.002)


def flaky_handler() -> Callable[[dict[str, Any]], Any]:
    """A handler that fails its first run and completes every later one (to retry)."""
    calls: list[int] = []

    def flaky(job: dict[str, Any]) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first try fails")
        return {"attempt": len(calls)}

    return flaky


def make_emulator(fake_clock: bool) -> Emulator:
    return Emulator(
        api_key=KEY,
        clock=FakeClock() if fake_clock else RealClock(),
        webhook_retry_delay=0.01,
    )


@pytest.fixture
def fake_clock() -> bool:
    """Override with ``@pytest.mark.parametrize("fake_clock", [True])`` where time matters."""
    return False


@pytest.fixture
def nb(
    shell: InteractiveShell, fake_clock: bool, capsys: pytest.CaptureFixture[str]
) -> Iterator[Notebook]:
    emu = make_emulator(fake_clock)
    server = EmulatorServer(emu).start()
    conn = Connection(server=server, environ={}, config_file="/nonexistent/config.toml")
    notebook = Notebook(shell, emu, server, conn)
    notebook.displays.clear()
    before = set(shell.user_ns)
    notebook.magics = load_ipython_extension(shell, connection=conn)
    notebook.magics.poll_interval = 0.05
    loaded = capsys.readouterr()  # the banner; tests read only what their cells print
    try:
        yield notebook
        captured = capsys.readouterr()
        assert_no_key(notebook, loaded.out + captured.out + captured.err)
    finally:
        for name in set(shell.user_ns) - before:
            shell.user_ns.pop(name, None)
        notebook.displays.clear()
        shell.config.pop("RunpodMagics", None)  # %config lands in the shell's config
        ipywidgets.Widget.close_all()
        set_current(None)
        conn.close()
        with contextlib.suppress(Exception):
            emu.reset()  # ends held /stream calls, so the server stops at once
        threading.Thread(target=lambda: (server.stop(), emu.close()), daemon=True).start()


def _strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every piece of text a value shows or holds (reprs, DataFrame cells, nested data)."""
    if depth > 6:
        return
    if isinstance(value, str):
        yield value
        return
    if isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
        return
    if isinstance(value, pd.DataFrame):
        yield value.to_csv()
        yield repr(value)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k, depth + 1)
            yield from _strings(v, depth + 1)
        return
    if isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item, depth + 1)
        return
    with contextlib.suppress(Exception):
        yield repr(value)
    with contextlib.suppress(Exception):
        yield str(value)
    if hasattr(value, "_repr_mimebundle_"):
        with contextlib.suppress(Exception):
            yield from _strings(value._repr_mimebundle_(), depth + 1)


def assert_no_key(notebook: Notebook, printed: str) -> None:
    """The API key appears nowhere a user could see or save it."""
    key = notebook.emu.api_key
    assert key not in printed, "the API key was printed"
    for output in notebook.displays:
        for text in _strings(output["data"]):
            assert key not in text, "the API key was displayed"
    for name, value in list(notebook.shell.user_ns.items()):
        if name.startswith("_") or name in ("In", "Out", "exit", "quit", "get_ipython"):
            continue
        for text in _strings(value):
            assert key not in text, f"the API key is in the namespace as {name!r}"
    for widget in list(_instances.values()):
        with contextlib.suppress(Exception):
            for text in _strings(widget.get_state()):
                assert key not in text, "the API key is in a widget's state"

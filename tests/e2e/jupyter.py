"""A real JupyterLab server for browser tests: the project's venv, loopback, no user config.

The server is what a newcomer gets from ``make lab``, or, with ``app="notebook"``, what a
shared JupyterHub's Notebook 7 serves (the same server and notebook widgets under another
shell, so one harness drives both). ``disabled_extensions`` turns front-end extensions off
for this server only (its own ``labconfig/page_config.json`` under its throwaway HOME), as
a front end where the widget renderer is missing. Three more differences keep a test run
honest and repeatable:

- its environment has no ``RUNPOD_*`` variable and a throwaway HOME (so neither a real
  API key nor ``~/.runpod/config.toml``, ``~/.jupyter`` or ``~/.ipython`` can leak in:
  notebooks must reach the embedded emulator on their own);
- it listens on a free 127.0.0.1 port with a random token;
- JupyterLab settings that make a page deterministic for a robot: every cell rendered in
  the DOM (no windowing), no news prompt, and the app exposed as ``window.jupyterapp`` so
  tests run commands (open, run all) instead of hunting for menu entries.

Kernels are shut down through the REST API before the server is stopped, and the server
itself gets SIGTERM (then SIGKILL), so no process outlives the test session.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

import httpx

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
"""Screenshots and server logs of the browser tests (gitignored)."""

LAB_SETTINGS: dict[str, dict[str, object]] = {
    # Windowing renders only the cells in view; tests read cells anywhere in a notebook.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    # No "Would you like to get notified about official Jupyter news?" toast over cells.
    "@jupyterlab/apputils-extension/notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}


def scrubbed_environment(home: Path) -> dict[str, str]:
    """The test process's environment without service credentials or user config."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("RUNPOD_", "JUPYTER", "IPYTHON", "XDG_", "MPLCONFIG"))
    }
    env.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / ".local" / "share" / "jupyter"),
        JUPYTER_RUNTIME_DIR=str(home / ".local" / "share" / "jupyter" / "runtime"),
        IPYTHONDIR=str(home / ".ipython"),
        MPLCONFIGDIR=str(home / ".config" / "matplotlib"),
        PYTHONUNBUFFERED="1",
    )
    return env


def free_port() -> int:
    """A port nothing listens on right now (the server is told not to try others)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


APPS = {"lab": "LabApp", "notebook": "JupyterNotebookApp"}
"""The front ends a server can be, each with the configurable class of its page."""


class JupyterLabServer:
    """``python -m jupyter lab`` (or ``notebook``) from this venv, serving ``root_dir`` on
    127.0.0.1."""

    def __init__(
        self,
        root_dir: Path,
        state_dir: Path,
        *,
        log_name: str = "jupyterlab",
        app: str = "lab",
        disabled_extensions: tuple[str, ...] = (),
    ) -> None:
        if app not in APPS:
            raise ValueError(f"app must be one of {sorted(APPS)}, not {app!r}")
        self.root_dir = root_dir
        self.state_dir = state_dir
        self.app = app
        self.disabled_extensions = disabled_extensions
        """Lab extensions the page does not load (``page_config.json``), as a user who
        disabled them has it."""
        self.home = state_dir / "home"
        self.token = secrets.token_hex(24)
        self.port = 0
        self.log_path = ARTIFACTS / "e2e" / f"{log_name}.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: object | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def lab_url(self, path: str = "") -> str:
        """The address a person opens: ``/lab/tree/<path>`` with the token (Notebook 7:
        ``/notebooks/<path>``, or ``/tree`` for the file browser)."""
        if self.app == "notebook":
            page = f"/notebooks/{path}" if path else "/tree"
            return f"{self.url}{page}?token={self.token}"
        tree = f"/tree/{path}" if path else ""
        return f"{self.url}/lab{tree}?token={self.token}"

    def api(self) -> httpx.Client:
        """A client for the server's REST API (sessions, kernels, contents)."""
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"token {self.token}"},
            timeout=10,
        )

    # ---- lifecycle --------------------------------------------------------------------

    def _write_settings(self) -> Path:
        if self.disabled_extensions:
            config = self.home / ".jupyter" / "labconfig" / "page_config.json"
            config.parent.mkdir(parents=True, exist_ok=True)
            disabled = dict.fromkeys(self.disabled_extensions, True)
            config.write_text(json.dumps({"disabledExtensions": disabled}))
        settings = self.state_dir / "lab-settings"
        for plugin, values in LAB_SETTINGS.items():
            path = settings / f"{plugin}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        return settings

    def _command(self, settings: Path) -> list[str]:
        # CI runs as root (in a container); the server refuses that unless told.
        as_root = ["--allow-root"] if os.geteuid() == 0 else []
        # JupyterLab's server extension runs under Notebook 7 too and serves the settings
        # and workspaces the page reads, so both apps are told where they are.
        pages = dict.fromkeys(("LabApp", APPS[self.app]))
        page_settings = [
            f"--{page}.{name}={value}"
            for page in pages
            for name, value in (
                ("user_settings_dir", settings),
                ("workspaces_dir", self.state_dir / "workspaces"),
                ("expose_app_in_browser", True),
            )
        ]
        return [
            sys.executable,
            "-m",
            "jupyter",
            self.app,
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            "--ServerApp.terminals_enabled=False",
            *page_settings,
            # Nothing fetched from outside: no news feed, no update check.
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            *as_root,
        ]

    def start(self, timeout: float = 90.0) -> JupyterLabServer:
        """Start the server and return once its API answers (or raise with its log)."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        settings = self._write_settings()
        last_error = ""
        for _attempt in range(3):  # a free port can be taken between probe and bind
            self.port = free_port()
            log = self.log_path.open("wb")
            self._log = log
            self._process = subprocess.Popen(
                self._command(settings),
                cwd=self.root_dir,
                env=scrubbed_environment(self.home),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                self._wait_until_ready(timeout)
                return self
            except RuntimeError as exc:
                last_error = str(exc)
                self.stop()
                if "address already in use" not in last_error.lower():
                    break
        raise RuntimeError(last_error)

    def _wait_until_ready(self, timeout: float) -> None:
        assert self._process is not None
        deadline = time.monotonic() + timeout
        with self.api() as api:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(
                        f"JupyterLab exited with code {self._process.returncode} before "
                        f"answering; its log ends:\n{self.log_tail()}"
                    )
                with contextlib.suppress(httpx.TransportError):
                    if api.get("/api/status").status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not answer on {self.url} within {timeout:.0f} s; "
                        f"its log ends:\n{self.log_tail()}"
                    )
                time.sleep(0.2)

    def shutdown_kernels(self) -> None:
        """Stop every kernel the browser started (sessions first, then stray kernels)."""
        if self._process is None or self._process.poll() is not None:
            return
        with self.api() as api, contextlib.suppress(httpx.HTTPError):
            for session in api.get("/api/sessions").json():
                api.delete(f"/api/sessions/{session['id']}")
            for kernel in api.get("/api/kernels").json():
                api.delete(f"/api/kernels/{kernel['id']}")

    def stop(self) -> None:
        """Shut kernels down, then the server; never leaves a process behind."""
        process = self._process
        if process is not None and process.poll() is None:
            self.shutdown_kernels()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        self._process = None
        log = self._log
        if log is not None:
            log.close()  # type: ignore[attr-defined]
            self._log = None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:]).replace(self.token, "<token>")

    def __enter__(self) -> JupyterLabServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def copy_notebooks(source: Path, target: Path) -> Path:
    """A private copy of ``notebooks/`` (so runs never write outputs into the repo).

    The nbval configuration files stay out: they are not guides, and screenshots of the
    file browser should show what a reader needs.
    """
    if source.is_dir():
        shutil.copytree(
            source,
            target,
            ignore=shutil.ignore_patterns(
                ".ipynb_checkpoints", "__pycache__", "conftest.py", "sanitize.cfg"
            ),
        )
    else:
        target.mkdir(parents=True)
    return target

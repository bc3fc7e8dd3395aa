"""Guide 01 under both widget stacks nbext supports: this venv's, and Colab's.

Colab ships ipywidgets 7.7.1 on ipykernel 6.17.1, and a user there keeps them when
installing nbext (it asks only ``ipywidgets>=7.7``, and nothing of ipykernel). So
``make .venv-ipyw7/.nbext-installed`` builds a second venv from PyPI with nbext
(editable: this checkout) and those two pins, kept between runs. nbclient, from this
process, runs the quickstart in that venv's kernel, and in this venv's kernel too, with
the same checks: no error; the ``--stream`` panel's text grows while the job runs, as the
kernel's iopub messages carry it (``display_data`` / ``update_display_data`` of the
panel's output, or the ``comm_msg`` updates of its widgets); and every panel's final
output is static HTML, with no widget view left for a reopened notebook to miss. In each
kernel too, a job panel's Cancel, clicked as a page clicks it (a ``comm_msg`` on the
shell channel), cancels the job while the cell waits.

The kernel starts with no ``RUNPOD_*`` variable and a throwaway HOME, as the guides'
kernels under nbval do, so it always runs on the embedded emulator. The build needs
PyPI; when PyPI cannot be reached the 7.7 case is skipped and says so.
"""

from __future__ import annotations

import fcntl
import hashlib
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client import BlockingKernelClient, KernelManager
from nbclient import NotebookClient
from nbformat import NotebookNode

from tests.e2e.jupyter import scrubbed_environment

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "notebooks" / "01-quickstart.ipynb"
IPYW7_STAMP = ".venv-ipyw7/.nbext-installed"
COLAB_PINS = {"ipywidgets": "7.7.1", "ipykernel": "6.17.1"}
"""What Colab ships, as the Makefile's IPYW7_PINS installs it."""
BUILD_TIMEOUT = 900
CELL_TIMEOUT = 300
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KERNEL = "nbext-under-test"
STACK_IDS = {
    "this venv": f"ipywidgets-{version('ipywidgets')}",
    "colab": f"ipywidgets-{COLAB_PINS['ipywidgets']}",
}

VERSIONS = """\
import json, sys
from importlib.metadata import version
print(json.dumps({"prefix": sys.prefix, "ipywidgets": version("ipywidgets"),
                  "ipykernel": version("ipykernel")}))
"""
"""Put first in the notebook run: which environment's kernel ran it, with which widgets."""

OFFLINE = (
    "NewConnectionError",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeoutError",
    "Max retries exceeded",
)
"""What pip says when it cannot reach the index. Not "No matching distribution found",
which follows, but also says a pin that does not exist: that must fail, not skip."""


def colab_venv() -> Path:
    """The ipywidgets 7.7 venv, built by ``make`` unless it is up to date."""
    lock = Path(tempfile.gettempdir()) / f"nbext-ipyw7-{hashlib.sha1(bytes(ROOT)).hexdigest()[:12]}"
    try:
        with lock.open("w") as held:  # two xdist workers: one builds, the other waits
            fcntl.flock(held, fcntl.LOCK_EX)
            built = subprocess.run(
                ["make", "--no-print-directory", IPYW7_STAMP],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT,
            )
    except FileNotFoundError:
        pytest.skip("needs make, which builds the ipywidgets 7.7 venv")
    log = built.stdout + built.stderr
    if built.returncode != 0:
        if any(sign in log for sign in OFFLINE):
            pytest.skip(
                f"PyPI is unreachable, so the ipywidgets 7.7 venv cannot be built:\n{log[-800:]}"
            )
        pytest.fail(f"make {IPYW7_STAMP} failed ({built.returncode}):\n{log[-4000:]}")
    return ROOT / ".venv-ipyw7"


class Recorder(NotebookClient):  # type: ignore[misc]
    """nbclient, keeping each cell's iopub messages in the order the kernel sent them."""

    def __init__(self, nb: NotebookNode, **kwargs: Any) -> None:
        super().__init__(nb, **kwargs)
        self.messages: dict[int, list[dict[str, Any]]] = {}

    def process_message(
        self, msg: dict[str, Any], cell: NotebookNode, cell_index: int
    ) -> NotebookNode | None:
        self.messages.setdefault(cell_index, []).append(msg)
        return super().process_message(msg, cell, cell_index)


@dataclass
class Run:
    notebook: NotebookNode
    messages: dict[int, list[dict[str, Any]]]
    versions: dict[str, str] = field(default_factory=dict)


@dataclass
class Kernel:
    """A kernel spec named ``KERNEL`` for one venv's Python, and its environment."""

    prefix: Path
    expected: dict[str, str]
    """What the kernel must report: its ``sys.prefix`` and its widget stack's versions."""
    env: dict[str, str]


@pytest.fixture(params=["this venv", "colab"], ids=lambda stack: STACK_IDS[stack])
def kernel(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Kernel:
    if request.param == "colab":
        prefix = colab_venv()
        expected = {"prefix": str(prefix), **COLAB_PINS}
    else:
        prefix = Path(sys.prefix)
        expected = {"prefix": sys.prefix, **{name: version(name) for name in COLAB_PINS}}
    spec = tmp_path / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(prefix / "bin" / "python"), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    home = tmp_path / "home"
    home.mkdir()
    env = scrubbed_environment(home)  # no key, no user config: the embedded emulator
    env["PATH"] = f"{prefix / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["VIRTUAL_ENV"] = str(prefix)
    return Kernel(prefix, expected, env)


def run_guide(kernel: Kernel) -> Run:
    """Guide 01, with a first cell reporting versions, run by the kernel."""
    guide = nbformat.read(GUIDE, as_version=4)
    guide.cells.insert(0, nbformat.v4.new_code_cell(VERSIONS))
    client = Recorder(guide, timeout=CELL_TIMEOUT, kernel_name=KERNEL)
    client.execute(cwd=str(GUIDE.parent), env=kernel.env)
    printed = "".join(o.get("text", "") for o in guide.cells[0].outputs)
    return Run(guide, client.messages, json.loads(printed))


def panel_cells(notebook: NotebookNode) -> list[int]:
    """The cells whose output is a panel: jobs and health."""
    return [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and cell.source.startswith(("%%runpod_job", "%runpod health"))
    ]


def frames(messages: list[dict[str, Any]]) -> list[str]:
    """What each live message of a cell showed: an output's HTML and text, or a widget's
    new state, unescaped."""
    shown = []
    for msg in messages:
        content = msg["content"]
        if msg["msg_type"] in ("display_data", "update_display_data"):
            data = content.get("data", {})
            shown.append(data.get("text/html", "") + "\n" + data.get("text/plain", ""))
        elif msg["msg_type"] == "comm_msg" and content["data"].get("method") == "update":
            shown.append(json.dumps(content["data"].get("state", {}), ensure_ascii=False))
    return [html.unescape(re.sub(r"<[^>]+>", "", frame)) for frame in shown]


def words_shown(frame: str, words: list[str]) -> int:
    """How many of the streamed words, from the first, the frame shows in order."""
    flat = " ".join(frame.split())
    shown = 0
    while shown < len(words) and " ".join(words[: shown + 1]) in flat:
        shown += 1
    return shown


# Past the suite's per-test limit: the 7.7 venv's build (bounded by BUILD_TIMEOUT; about
# a minute once pip's cache is warm, nothing when the venv is up to date), then the guide.
@pytest.mark.timeout(BUILD_TIMEOUT + 2 * CELL_TIMEOUT)
def test_guide_01_streams_live_and_ends_static(kernel: Kernel) -> None:
    run = run_guide(kernel)
    assert run.versions == kernel.expected, "the guide ran in another kernel than meant"
    cells = run.notebook.cells
    outputs = [o for cell in cells if cell.cell_type == "code" for o in cell.outputs]
    assert [o for o in outputs if o.output_type == "error"] == []
    stderr = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert stderr == [], "the guide printed warnings a reader would see"

    panels = panel_cells(run.notebook)
    assert len(panels) >= 3, "guide 01 shows a job, a stream and a health panel"
    for index in panels:
        shown = [o.data for o in cells[index].outputs if "data" in o]
        assert not [data for data in shown if WIDGET_VIEW in data], f"cell {index}: a widget"
        drawn = [data for data in shown if data.get("text/html", "").strip()]
        assert drawn, f"cell {index} ({cells[index].source[:40]!r}) ends with no HTML"

    stream = next(i for i in panels if "--stream" in cells[i].source.splitlines()[0])
    words = json.loads(cells[stream].source.split("\n", 1)[1])["text"].split()
    shown = [n for n in (words_shown(f, words) for f in frames(run.messages[stream])) if n]
    assert len(words) in shown, f"the panel never showed the whole text: {shown}"
    live = shown[: shown.index(len(words))]  # after it, parts such as the output's preview
    assert len(set(live)) >= 3, f"the streamed text did not grow while live: {shown}"
    assert live == sorted(live), f"the streamed text went back: {shown}"
    final = "".join(o.data.get("text/html", "") for o in cells[stream].outputs if "data" in o)
    assert words_shown(html.unescape(re.sub(r"<[^>]+>", "", final)), words) == len(words)


JOB_SECONDS = 60
"""How long the clicked job would run: far longer than a click takes to cancel it."""
CLICK_DEADLINE = 180.0


def click_message(kc: BlockingKernelClient, comm_id: str) -> dict[str, Any]:
    """What a page sends when a Button is clicked (the same under ipywidgets 7 and 8)."""
    content = {"comm_id": comm_id, "data": {"method": "custom", "content": {"event": "click"}}}
    message: dict[str, Any] = kc.session.msg("comm_msg", content)
    return message


def shown_models(views: dict[str, str | None], models: dict[str, dict[str, Any]]) -> set[str]:
    """The widgets a page would draw: those displayed now, and their children's tree."""
    shown = {model for model in views.values() if model}
    todo = list(shown)
    while todo:
        for child in models.get(todo.pop(), {}).get("children", []):
            model = child.removeprefix("IPY_MODEL_")
            if model not in shown:
                shown.add(model)
                todo.append(model)
    return shown


@pytest.mark.timeout(BUILD_TIMEOUT + CLICK_DEADLINE + 60)
def test_the_panels_cancel_button_cancels_a_running_job(kernel: Kernel) -> None:
    """The Cancel button under a job's panel, clicked as a page clicks it while the cell
    waits, cancels the job: the kernel reads widget messages mid-cell under both stacks
    (jupyter-ui-poll in ipykernel 6, an awaited cell in 7.4)."""
    km = KernelManager(kernel_name=KERNEL)
    km.start_kernel(cwd=str(GUIDE.parent), env=kernel.env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        kc.execute_interactive("%load_ext nbext", timeout=60)
        cell = kc.execute(f'%%runpod_job sleep\n{{"seconds": {JOB_SECONDS}}}')
        deadline = time.monotonic() + CLICK_DEADLINE
        models: dict[str, dict[str, Any]] = {}
        texts: dict[str, str] = {}
        """The text of each output, by display id, as last sent."""
        views: dict[str, str | None] = {}
        """The widget each output shows now, by display id (None: none)."""
        clicked: float | None = None
        while True:
            msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != cell:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "comm_open":
                models[content["comm_id"]] = dict(content["data"].get("state", {}))
            elif kind == "comm_msg" and content["comm_id"] in models:
                models[content["comm_id"]].update(content["data"].get("state", {}))
            elif kind in ("display_data", "update_display_data"):
                shown = (content.get("transient") or {}).get("display_id", "")
                texts[shown] = content["data"].get("text/plain", "")
                views[shown] = content["data"].get(WIDGET_VIEW, {}).get("model_id")
            elif kind == "status" and content["execution_state"] == "idle":
                break
            cancel = [
                comm_id
                for comm_id in shown_models(views, models)
                if models.get(comm_id, {}).get("_model_name") == "ButtonModel"
                and models[comm_id].get("description") == "Cancel"
                and not models[comm_id].get("disabled")
            ]
            running = "IN_PROGRESS" in json.dumps([*models.values(), *texts.values()])
            if cancel and clicked is None and running:
                kc.shell_channel.send(click_message(kc, cancel[0]))
                clicked = time.monotonic()
        ended = time.monotonic()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert clicked is not None, f"no Cancel button shown while the job ran: {texts}"
    assert "CANCELLED" in " ".join(texts.values()), texts
    assert ended - clicked < JOB_SECONDS / 4, "the click was not acted on while the job ran"

"""A 4 MB PNG output on its way to the panel: how soon after the job's end, and what it
adds to the saved notebook.

    .venv/bin/python benchmarks/media_panel.py [--rounds 5] [--browser]

The real path, end to end but the browser: a real kernel (ipykernel, started with
jupyter_client as JupyterLab starts it) with nbext loaded and its embedded emulator;
``nbext.deploy`` makes a handler that returns a 4 MB PNG (random pixels: it does not
compress, as a photograph barely does) as base64; a ``%%runpod_job`` cell runs it with
the default settings (``poll_interval`` 0.5 s) while this script reads the kernel's
messages as a frontend does.

1. Latency: from the handler's return (its clock, the same machine's) to the first
   message that brings the picture to the page (a widget update or the static output,
   whichever comes first), against the baseline of the same for a job whose output is
   one small number: what following a job costs anyway (the state polls).
2. Size: the cell's saved outputs as JupyterLab would store them (each display id's
   last form), against the same cell of the baseline job: what the picture adds, and
   how much of it is media data (the thumbnail).

``--browser`` measures the same in JupyterLab in headless Chromium (as the e2e tests
run it): from the handler's return to the picture decoded in the cell (an ``<img>``
with ``naturalWidth > 0``, checked every frame), the baseline being the small output's
text in its cell; sizes are those of the notebook JupyterLab saved.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

SETUP = """\
%load_ext nbext
import base64, io, random, time
import nbext
from PIL import Image
_rng = random.Random(4)
_buffer = io.BytesIO()
Image.frombytes("RGB", (1200, 1200), _rng.randbytes(1200 * 1200 * 3)).save(_buffer, "PNG")
BLOB = base64.b64encode(_buffer.getvalue()).decode("ascii")
ENDED = []

def picture(job):
    ENDED.append(time.time())
    return {"images": [BLOB], "seed": 1}

def number(job):
    ENDED.append(time.time())
    return {"n": 1}

nbext.deploy(picture)
nbext.deploy(number)
"""


def execute(client: Any, code: str, timeout: float = 120.0) -> list[tuple[float, dict[str, Any]]]:
    """Run ``code``; every iopub message of it with the time it arrived, until idle."""
    msg_id = client.execute(code)
    messages: list[tuple[float, dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = client.get_iopub_msg(timeout=timeout)
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append((time.time(), message))
        if message["msg_type"] == "error":
            raise RuntimeError("\n".join(message["content"]["traceback"]))
        if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
            client.get_shell_msg(timeout=timeout)
            return messages
    raise TimeoutError(f"no answer within {timeout} s to {code[:40]!r}")


def value(client: Any, expression: str) -> Any:
    msg_id = client.execute("", user_expressions={"v": expression})
    while True:
        reply = client.get_shell_msg(timeout=30)
        if reply["parent_header"].get("msg_id") == msg_id:
            return json.loads(reply["content"]["user_expressions"]["v"]["data"]["text/plain"])


def shows(message: dict[str, Any], needle: str) -> bool:
    """Whether ``message`` brings ``needle`` to the page (a display or a widget update)."""
    content = message["content"]
    if message["msg_type"] in ("display_data", "update_display_data"):
        return needle in content["data"].get("text/html", "")
    if message["msg_type"] == "comm_msg":
        state = content.get("data", {}).get("state", {})
        return needle in str(state.get("value", ""))
    return False


def saved_outputs(messages: list[tuple[float, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The cell's outputs as a frontend keeps them: an update replaces its display's data."""
    outputs: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for _, message in messages:
        kind, content = message["msg_type"], message["content"]
        display_id = content.get("transient", {}).get("display_id")
        if kind == "display_data":
            output = {"output_type": "display_data", "data": content["data"], "metadata": {}}
            outputs.append(output)
            if display_id:
                by_id[display_id] = output
        elif kind == "update_display_data" and display_id in by_id:
            by_id[display_id]["data"] = content["data"]
        elif kind == "stream":
            outputs.append({"output_type": "stream", "name": "stdout", "text": content["text"]})
    return outputs


def sizes(outputs: list[dict[str, Any]]) -> tuple[int, int]:
    """Bytes of ``outputs`` as JSON, and of the media data (data: URIs) inside them."""
    text = json.dumps(outputs)
    found = re.findall(r"data:[a-z]+/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+", text)
    return len(text), sum(len(m) for m in found)


Round = tuple[float, int, int]
"""Seconds from the job's end to its output on the page; saved bytes; media bytes."""


def run_job(client: Any, endpoint: str, needle: str) -> Round:
    messages = execute(client, f"%%runpod_job {endpoint} -o out\n{{}}")
    ended = float(value(client, "ENDED[-1]"))
    arrived = next(at for at, message in messages if shows(message, needle))
    return (arrived - ended, *sizes(saved_outputs(messages)))


def in_kernel(rounds: int) -> tuple[list[Round], list[Round], int]:
    """Both jobs ``rounds`` times through a kernel read as a frontend reads it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNPOD")}
    with tempfile.TemporaryDirectory() as home:
        env.update(HOME=home, JUPYTER_CONFIG_DIR=os.path.join(home, ".jupyter"))
        manager = KernelManager(kernel_name="python3")
        manager.start_kernel(env=env, cwd=home)
        client = manager.blocking_client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            execute(client, SETUP)
            blob = int(value(client, "len(BLOB)"))
            picture, number = [], []
            for _ in range(rounds):
                picture.append(run_job(client, "picture", "<img"))
                number.append(run_job(client, "number", "&quot;n&quot;: 1"))
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    return picture, number, blob


WATCH = """([index, kind]) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    cell.model.outputs.clear();
    window.__nbextSeen = null;
    const seen = () => kind === 'picture'
        ? [...cell.node.querySelectorAll('.jp-OutputArea img')]
              .some((i) => i.complete && i.naturalWidth > 0)
        : (cell.node.querySelector('.jp-OutputArea')?.textContent ?? '').includes('"n": 1');
    const check = () => {
        if (seen()) window.__nbextSeen = Date.now();
        else requestAnimationFrame(check);
    };
    requestAnimationFrame(check);
}"""
RUN = """async (index) => {
    const panel = window.jupyterapp.shell.currentWidget;
    panel.content.activeCellIndex = index;
    await window.jupyterapp.commands.execute('notebook:run-cell');
}"""
ENDED_MS = """() => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[3];
    return Number(cell.model.outputs.toJSON()[0].text);
}"""


def in_browser(rounds: int) -> tuple[list[Round], list[Round], int]:
    """Both jobs ``rounds`` times in JupyterLab in headless Chromium."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's tests/
    from playwright.sync_api import sync_playwright

    from tests.e2e.browser import launch_options
    from tests.e2e.jupyter import JupyterLabServer
    from tests.e2e.lab import LabPage
    from tests.e2e.notebook_files import write_notebook

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("--browser needs Debian's chromium (apt-get install -y chromium)")
    cells: list[str | dict[str, Any]] = [
        SETUP + "print(len(BLOB))",
        "%%runpod_job picture -o out\n{}",
        "%%runpod_job number -o out\n{}",
        "print(round(ENDED[-1] * 1000))",
    ]
    delays: dict[str, list[float]] = {"picture": [], "number": []}
    with tempfile.TemporaryDirectory() as base:
        root = Path(base) / "notebooks"
        path = write_notebook(root / "bench.ipynb", cells)
        with JupyterLabServer(root, Path(base) / "state") as server, sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(
                **launch_options(chromium, Path(base) / "profile")  # type: ignore[arg-type]
            )
            try:
                lab = LabPage(context.new_page(), server).open(path.name)
                page = lab.page
                page.evaluate(RUN, 0)
                lab.wait_until_idle(120_000)
                for _ in range(rounds):
                    for index, kind in ((1, "picture"), (2, "number")):
                        page.evaluate(WATCH, [index, kind])
                        page.evaluate(RUN, index)
                        page.wait_for_function("() => window.__nbextSeen !== null")
                        lab.wait_until_idle()
                        page.evaluate(RUN, 3)
                        ended = float(page.evaluate(ENDED_MS))
                        seen = float(page.evaluate("() => window.__nbextSeen"))
                        delays[kind].append((seen - ended) / 1000)
                page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
                page.wait_for_function(
                    "() => !window.jupyterapp.shell.currentWidget.context.model.dirty"
                )
            finally:
                context.close()
                server.shutdown_kernels()
        saved = json.loads(path.read_text())["cells"]
    blob = int("".join(saved[0]["outputs"][-1]["text"]).split()[-1])
    picture_size, number_size = sizes(saved[1]["outputs"]), sizes(saved[2]["outputs"])
    return (
        [(t, *picture_size) for t in delays["picture"]],
        [(t, *number_size) for t in delays["number"]],
        blob,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--browser", action="store_true", help="in JupyterLab in Chromium")
    args = parser.parse_args()
    where = in_browser if args.browser else in_kernel
    picture, number, blob = where(args.rounds)
    rounds = args.rounds
    late = statistics.median(t for t, _, _ in picture)
    worst = max(t for t, _, _ in picture)
    base = statistics.median(t for t, _, _ in number)
    saved, media = picture[-1][1], picture[-1][2]
    plain = number[-1][1]
    print(f"PNG output: {blob * 3 // 4:,} bytes ({blob:,} as base64), {rounds} rounds, median")
    print(f"1. job end -> picture on the page: {late * 1000:.0f} ms (max {worst * 1000:.0f} ms)")
    print(f"   baseline, a small output:       {base * 1000:.0f} ms; ratio {late / base:.2f}x")
    print(f"2. the cell's saved outputs: {saved:,} bytes, of which media data {media:,} bytes")
    print(f"   baseline cell: {plain:,} bytes; the picture adds {saved - plain:,} bytes")
    print(f"   = {(saved - plain) / blob:.1%} of the base64 blob")


if __name__ == "__main__":
    main()

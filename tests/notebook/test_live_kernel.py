"""Live panels through a real ipykernel, as Jupyter starts it: the messages a front end
gets while a job streams and a map runs, and an interrupt that cancels the job.

Whatever the front end (JupyterLab, VS Code, Colab, nbclient), what it receives is this
sequence on the IOPub channel: a ``display_data`` for the panel, then
``update_display_data`` with the same display id. The panel's state must be in their
``text/html`` and ``text/plain`` while the job runs, not only in widget state; and the
controls' output must fall back to text that says how to stop.
"""

from __future__ import annotations

import os
import queue
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

WIDGET = "application/vnd.jupyter.widget-view+json"
WORDS = " ".join(f"w{n}" for n in range(20))
HINT = "interrupt the kernel (■) to cancel"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    from jupyter_client.manager import start_new_kernel

    home = tmp_path_factory.mktemp("kernel-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "IPYTHON"))}
    env.update(HOME=str(home), IPYTHONDIR=str(home / ".ipython"))
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(home))
    try:
        run(client, "%load_ext nbext")
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def run(client: Any, source: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Execute ``source``; its reply and the display messages it caused, in order."""
    messages: list[dict[str, Any]] = []

    def keep(msg: dict[str, Any]) -> None:
        if msg["msg_type"] in ("display_data", "update_display_data", "error"):
            messages.append(msg)

    reply = client.execute_interactive(source, timeout=60, output_hook=keep)
    return reply, messages


def by_display(messages: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each output's successive bundles (its display, then its updates), in order shown."""
    outputs: dict[str, list[dict[str, Any]]] = {}
    for msg in messages:
        display_id = msg["content"].get("transient", {}).get("display_id")
        if display_id:
            outputs.setdefault(display_id, []).append(msg["content"]["data"])
    return list(outputs.values())


def test_a_stream_grows_in_display_updates_before_the_job_ends(kernel: tuple[Any, Any]) -> None:
    _, client = kernel
    reply, messages = run(
        client, f'%%runpod_job stream-text --stream\n{{"text": "{WORDS}", "delay_ms": 60}}'
    )
    assert reply["content"]["status"] == "ok", reply["content"]
    content, controls = by_display(messages)
    assert messages[0]["msg_type"] == "display_data"
    assert all(set(bundle) == {"text/html", "text/plain"} for bundle in content)
    live = [b["text/plain"] for b in content if ": IN_PROGRESS" in b["text/plain"]]
    texts = [t.split("text: ", 1)[1].split("\n")[0] for t in live if "text: " in t]
    assert all(WORDS.startswith(t) for t in texts), texts
    growing = {t for t in texts if t != WORDS}
    assert len(growing) >= 3, texts  # the text grew in several updates before its end
    assert all(HINT in t for t in live) and "VBox(" not in str(content)
    assert 'class="nbext-static nbext-job-panel" data-state="COMPLETED"' in content[-1]["text/html"]
    assert f"text: {WORDS}" in content[-1]["text/plain"] and HINT not in content[-1]["text/plain"]
    # The Cancel control: a widget, whose text fallback says how to stop; emptied at the end.
    assert WIDGET in controls[0] or WIDGET in controls[1]
    assert all(c["text/plain"] in (HINT, "") for c in controls)
    assert controls[-1] == {"text/plain": ""}
    print(f"stream: {len(content)} content messages, {len(growing)} partial texts live")


def test_a_map_counts_move_in_display_updates(kernel: tuple[Any, Any]) -> None:
    _, client = kernel
    reply, messages = run(
        client,
        "naps = [{'seconds': 0.3} for _ in range(6)]\n%runpod map sleep naps --concurrency 2",
    )
    assert reply["content"]["status"] == "ok", reply["content"]
    content = by_display(messages)[0]
    done = [int(re.findall(r"\| (\d+)/6 ·", b["text/plain"])[0]) for b in content]
    assert len(set(done)) >= 3 and done == sorted(done), done
    assert "6/6 · COMPLETED 6" in content[-1]["text/plain"]
    assert 'class="nbext-static nbext-map-panel"' in content[-1]["text/html"]
    print(f"map: done counts sent {sorted(set(done))}")


def test_interrupting_the_kernel_cancels_an_awaiting_job(kernel: tuple[Any, Any]) -> None:
    """The hint's promise, in the kernel: an interrupt while the cell waits cancels the
    job on the service, and the panel ends CANCELLED."""
    manager, client = kernel
    msg_id = client.execute('%%runpod_job sleep -o out\n{"seconds": 60}')
    seen: list[dict[str, Any]] = []
    interrupted = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            msg = client.get_iopub_msg(timeout=1)
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(msg)
        data = msg["content"].get("data", {})
        if not interrupted and ": IN_PROGRESS" in data.get("text/plain", ""):
            assert HINT in data["text/plain"]
            manager.interrupt_kernel()
            interrupted = True
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    assert interrupted, "the job never showed IN_PROGRESS"
    errors = [m["content"] for m in seen if m["msg_type"] == "error"]
    assert errors and errors[0]["ename"] == "Interrupted", errors
    assert "was cancelled (CANCELLED)" in errors[0]["evalue"]
    final = [m["content"]["data"] for m in seen if "text/html" in m["content"].get("data", {})]
    assert 'data-state="CANCELLED"' in final[-1]["text/html"]
    assert "cancelled by Ctrl-C" in final[-1]["text/plain"]
    reply, _ = run(client, "print(out)")
    assert reply["content"]["status"] == "ok"


def test_an_idle_kernel_ignores_an_interrupt_so_a_background_panel_names_the_command(
    kernel: tuple[Any, Any],
) -> None:
    """ipykernel ignores SIGINT between cells: interrupting cannot reach a job followed
    in the background, which is why its panel says ``%runpod cancel ID`` instead; the
    command does cancel it, and the panel ends CANCELLED."""
    manager, client = kernel
    reply, messages = run(client, '%%runpod_job sleep --background\n{"seconds": 60}')
    assert reply["content"]["status"] == "ok", reply["content"]
    run(client, "from nbext.notebook import current\nrecord = list(current().registry)[-1]")
    for _ in range(500):  # each look is a round trip to the kernel, not a sleep
        state = text_of(client, "print(record.state, end='')")
        if state == "IN_PROGRESS":
            break
    assert state == "IN_PROGRESS"
    job_id = text_of(client, "print(record.id, end='')")
    live = [m["content"]["data"] for m in messages if "text/html" in m["content"]["data"]]
    assert f"%runpod cancel {job_id} to cancel" in live[-1]["text/plain"]
    manager.interrupt_kernel()
    assert text_of(client, "print(record.state, end='')") == "IN_PROGRESS"  # not reached
    reply, _ = run(client, f"%runpod cancel {job_id}\nawait record.follower.task")
    assert reply["content"]["status"] == "ok", reply["content"]
    assert text_of(client, "print(record.state, end='')") == "CANCELLED"


def text_of(client: Any, source: str) -> str:
    """What ``source`` prints on stdout in the kernel."""
    printed: list[str] = []

    def keep(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            printed.append(msg["content"]["text"])

    reply = client.execute_interactive(source, timeout=30, output_hook=keep)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(printed)


def test_a_kernel_expands_magic_lines_never_bodies(kernel: tuple[Any, Any]) -> None:
    """In a kernel the cells await (``nbext.notebook.awaiting``): their lines are expanded
    all the same, in the notebook's namespace, and the body reaches the worker as typed."""
    _, client = kernel
    run(client, "ep, name, x, y = 'echo', 'got', 'X', 'Y'\nxs = [{'n': 1}]")
    reply, _ = run(client, '%%runpod_job $ep -o {name}\n{"text": "$x {y}"}')
    assert reply["content"]["status"] == "ok", reply["content"]
    assert text_of(client, "print(got, end='')") == "{'text': '$x {y}'}"
    reply, _ = run(client, "%runpod batch $ep xs -o {name + '_rows'} -q")
    assert reply["content"]["status"] == "ok", reply["content"]
    assert text_of(client, "print(got_rows['output'].tolist(), end='')") == "[{'n': 1}]"

"""``%runpod logs``: a pod's or an endpoint's workers' lines, once or followed, and what
the cell keeps once following stops (static HTML and text, no widget)."""

from __future__ import annotations

import _thread
import asyncio
import threading
from collections.abc import Iterator

import pandas as pd
import pytest

from nbext.client import Client
from nbext.notebook.magics.logs import FOLLOWING, stop_all_at_exit
from nbext.notebook.widgets.logs import LogPanel

from .conftest import Notebook
from .test_job_magic import usage_error

WIDGET = "application/vnd.jupyter.widget-view+json"


# ---- the magic, through REST v2 against the emulator --------------------------------


@pytest.fixture
def v2(nb: Notebook) -> Iterator[Client]:
    """A client of ``nb``'s emulator, to make things with (REST v2, as the notebook)."""
    with Client(
        nb.emu.api_key, base_url=nb.server.base_url, serverless_url=nb.server.serverless_url
    ) as client:
        yield client


def make_pod(v1: Client, name: str = "desk") -> str:
    pod = v1.pods.create(name=name, image="acme/lab:1", gpu={"id": "NVIDIA A40"})
    assert pod.id is not None
    return pod.id


def assert_static(nb: Notebook) -> str:
    """The cell's last output is plain HTML and text (no widget); its text."""
    last = nb.displays[-1]
    assert WIDGET not in last["data"], "the output is still a widget"
    assert 'class="nbext-static nbext-logs-panel"' in last["data"]["text/html"]
    return str(last["data"]["text/plain"])


@pytest.mark.parametrize("fake_clock", [True])
def test_a_pods_log_is_shown_once_as_static_output(
    nb: Notebook, v2: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = make_pod(v2)
    nb.emu.advance(60)  # past PROVISIONING and STARTING: the start's lines are written
    nb.run(f"%runpod logs {pod} -o lines")
    text = assert_static(nb)
    assert text.startswith(f"pod {pod}: ") and "pulling image acme/lab:1" in text
    lines = nb.shell.user_ns["lines"]
    assert list(lines.columns) == ["ts", "worker", "source", "line"]
    assert lines["worker"].isna().all() and len(lines) >= 3
    assert (lines["ts"].diff().dropna() >= pd.Timedelta(0)).all()
    nb.run(f"%runpod logs {pod} --tail 2 -o last")
    assert nb.shell.user_ns["last"]["line"].tolist() == lines["line"].tolist()[-2:]


def test_an_endpoints_lines_are_tagged_with_their_worker(nb: Notebook, v2: Client) -> None:
    nb.run('%%runpod_job echo\n{"text": "hi"}')
    nb.run("%runpod logs echo -o lines")
    text = assert_static(nb)
    lines = nb.shell.user_ns["lines"]
    workers = lines["worker"].dropna().unique().tolist()
    assert len(workers) == 1 and workers[0].startswith("worker-")
    assert "COMPLETED" in " ".join(lines["line"])
    assert f"[{workers[0]}]" in text and "1 worker" in text.splitlines()[0]
    nb.run(f"%runpod logs echo --worker {workers[0]} --tail 1 -o one")
    assert len(nb.shell.user_ns["one"]) == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%runpod logs nowhere", "logs: no pod or endpoint 'nowhere'"),
        ("%runpod logs ecko", "no pod or endpoint 'ecko' (by id or by name); did you mean 'echo'?"),
        ("%runpod logs echo --worker w-9", "endpoint 'echo' has no worker 'w-9'"),
        ("%runpod logs", "logs needs a pod id or an endpoint id"),
        ("%runpod logs echo --tail 0", "--tail must be more than 0, got 0"),
        ("%runpod logs echo --tail many", "--tail must be a whole number, got 'many'"),
        ("%runpod logs echo --max-lines 5", "--max-lines applies to --follow"),
        ("%runpod logs echo --stop --tail 3", "--stop takes only the TARGET"),
        ("%runpod logs echo -o 1x", "-o '1x': not a valid Python variable name"),
    ],
)
def test_mistakes_are_one_line(
    nb: Notebook, v2: Client, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    assert expected in usage_error(nb, line, capsys)


@pytest.mark.parametrize("fake_clock", [True])
def test_a_unique_name_stands_for_the_id(
    nb: Notebook, v2: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = make_pod(v2, "desk")
    nb.run("%runpod logs desk --tail 1")
    assert assert_static(nb).startswith(f"pod desk ({pod}): 1 line")
    make_pod(v2, "twin")
    make_pod(v2, "twin")
    message = usage_error(nb, "%runpod logs twin", capsys)
    assert "logs: 'twin' names more than one: pod " in message and "give the id" in message


def test_worker_does_not_apply_to_a_pod(
    nb: Notebook, v2: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = make_pod(v2)
    message = usage_error(nb, f"%runpod logs {pod} --worker w-1", capsys)
    assert f"--worker applies to an endpoint's workers; '{pod}' is a pod" in message


# ---- following -----------------------------------------------------------------------


def words(panel: LogPanel) -> str:
    return "\n".join(x.line for x in panel.lines)


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_following_a_pod_streams_lines_then_stops_into_static_output(
    nb: Notebook, v2: Client
) -> None:
    pod = make_pod(v2)
    nb.run(f"%runpod logs {pod} --follow -o panel")
    panel: LogPanel = nb.shell.user_ns["panel"]
    assert panel.running and panel.task is not None and panel in FOLLOWING
    content, controls = nb.outputs()[-2:]
    # The lines are plain output, live; the Stop button an output of its own, whose
    # text says how to stop where it cannot be drawn.
    assert WIDGET not in content[-1] and 'data-state="following"' in content[-1]["text/html"]
    assert WIDGET in controls[-1]
    assert controls[-1]["text/plain"] == f"%runpod logs --stop {pod} to stop following"
    await nb.auntil(lambda: "pulling image" in words(panel), "the creation's lines")
    await asyncio.to_thread(nb.emu.advance, 60)
    await asyncio.to_thread(v2.pods.stop, pod)
    await asyncio.to_thread(nb.emu.advance, 1)
    await nb.auntil(lambda: "stop" in words(panel).split("pulling image")[-1], "the stop's line")
    await nb.auntil(
        lambda: "stop" in nb.outputs()[-2][-1]["text/plain"].split("pulling image")[-1],
        "the stop's line sent to the page while following",
    )
    nb.run(f"%runpod logs --stop {pod}")
    await asyncio.wait_for(panel.task, 10)
    assert not panel.running and panel not in FOLLOWING
    text = assert_static(nb)
    assert "pulling image acme/lab:1" in text and "stopped by %runpod logs --stop" in text
    assert nb.outputs()[-1][-1] == {"text/plain": ""}  # the button's output is emptied
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_following_an_endpoint_picks_up_its_workers_lines(nb: Notebook, v2: Client) -> None:
    nb.run("%runpod logs echo --follow --max-lines 50 -o panel")
    panel: LogPanel = nb.shell.user_ns["panel"]
    assert panel.max_lines == 50
    await asyncio.to_thread(nb.conn.client.endpoint("echo").run_sync, {"text": "first"})
    await nb.auntil(lambda: "COMPLETED" in words(panel), "the job's line")
    assert all(x.worker and x.worker.startswith("worker-") for x in panel.lines)
    panel.stop_button.click()
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    text = assert_static(nb)
    assert "COMPLETED" in text and "[worker-" in text
    await nb.conn.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_a_pod_that_is_gone_ends_its_following(nb: Notebook, v2: Client) -> None:
    pod = make_pod(v2)
    nb.run(f"%runpod logs {pod} --follow -o panel")
    panel: LogPanel = nb.shell.user_ns["panel"]
    await nb.auntil(lambda: len(panel.lines) > 0, "the first lines")
    await asyncio.to_thread(v2.pods.delete, pod)
    await asyncio.wait_for(panel.task, 15)  # type: ignore[arg-type]
    assert f"pod {pod} is gone" in assert_static(nb)
    await nb.conn.aclose()


@pytest.mark.usefixtures("sigint_handled")  # the Ctrl-C arrives under nohup too
@pytest.mark.parametrize("fake_clock", [True])
def test_without_an_event_loop_the_cell_follows_until_interrupted(nb: Notebook, v2: Client) -> None:
    """A terminal IPython has no loop to follow from: the cell follows, Ctrl-C stops it."""
    pod = make_pod(v2)

    def interrupt_once_lines_came() -> None:
        nb.until(lambda: bool(FOLLOWING) and len(FOLLOWING[0].lines) > 0, "lines")
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_lines_came, daemon=True).start()
    nb.run(f"%runpod logs {pod} --follow -o panel")  # returns once interrupted
    panel: LogPanel = nb.shell.user_ns["panel"]
    assert not panel.running and not FOLLOWING
    text = assert_static(nb)
    assert "pulling image" in text and "stopped by an interrupt" in text


@pytest.mark.anyio
@pytest.mark.parametrize("fake_clock", [True])
async def test_stop_by_the_name_following_began_with(
    nb: Notebook, v2: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    pod = make_pod(v2, "desk")
    nb.run("%runpod logs desk --follow -o panel")
    panel: LogPanel = nb.shell.user_ns["panel"]
    assert panel.target == pod and panel.name == "desk"
    nb.run("%runpod logs --stop nothing-here")
    assert capsys.readouterr().out.endswith("stopped following 0 logs of nothing-here\n")
    assert panel.running
    nb.run("%runpod logs --stop desk")
    assert capsys.readouterr().out.endswith("stopped following 1 log of desk\n")
    await asyncio.wait_for(panel.task, 10)  # type: ignore[arg-type]
    assert assert_static(nb).startswith(f"pod desk ({pod}): ")
    await nb.conn.aclose()


@pytest.mark.anyio
async def test_every_follower_stops_when_the_interpreter_ends(nb: Notebook, v2: Client) -> None:
    """What the kernel's shutdown runs (an ``atexit`` hook): no follower outlives it."""
    nb.run("%runpod logs echo --follow -o first")
    nb.run("%runpod logs echo --follow -o second")
    panels: list[LogPanel] = [nb.shell.user_ns["first"], nb.shell.user_ns["second"]]
    stop_all_at_exit()
    await asyncio.wait_for(asyncio.gather(*(p.task for p in panels if p.task)), 10)
    assert not FOLLOWING and not any(p.running for p in panels)
    assert "the kernel shut down" in assert_static(nb)
    await nb.conn.aclose()

"""Worker scripts from a notebook: ``nbext.deploy("worker.py")``, ``%runpod deploy
worker.py``, the health panel following their processes, and no process outliving the
kernel. The scripts run unmodified with the official ``runpod`` package, in processes of
their own, against the test's emulator (on the real clock: workers poll in real time)."""

from __future__ import annotations

import _thread
import asyncio
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest
from IPython.core.error import UsageError

from nbext.notebook import Connection, NotebookError, deploy
from nbext.notebook.deploy import WorkerStartFailed
from nbext.notebook.widgets import HealthPanel
from nbext.notebook.widgets.health import Sample
from nbext.notebook.widgets.logs import MAX_SHOWN
from tests.conftest import Folders
from tests.local_service import stop_service

from .conftest import Notebook
from .test_job_magic import usage_error

SCRIPTS = Path(__file__).parents[1] / "emulator" / "workers" / "scripts"
COLD_START_S = 60.0
"""Bound for a worker to start on a loaded machine (it takes a second or two)."""


def test_magic_deploys_a_script_that_then_serves_jobs(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    script = SCRIPTS / "plain_worker.py"
    nb.run(f"%runpod deploy {script} --name plain --workers-max 1 --python {sys.executable}")
    out = capsys.readouterr().out
    assert out.strip() == "deployed plain_worker.py as endpoint 'plain': %%runpod_job plain"
    assert nb.emu.jobs.endpoints["plain"].workers_max == 1
    nb.run('%%runpod_job plain -o out\n{"x": 1}')
    out = nb.shell.user_ns["out"]
    assert out["echo"] == {"x": 1} and nb.record().result.status == "COMPLETED"
    assert out["pid"] in nb.emu._supervisor.pids("plain")  # type: ignore[union-attr]
    # The handler printed before it returned; its log is read from the process's pipe by
    # a thread of its own, which a loaded machine may schedule after the result arrives.
    nb.until(
        lambda: f"handled {nb.record().id}" in "\n".join(nb.emu.worker_logs("plain")),
        "the handler's line in the worker's log",
        COLD_START_S,
    )
    assert "plain worker starting" in "\n".join(nb.emu.worker_logs("plain"))


def test_deploying_again_runs_the_edited_script(nb: Notebook, tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    template = textwrap.dedent(
        """
        import runpod
        def handler(job):
            return {VERSION!r}
        runpod.serverless.start({{"handler": handler}})
        """
    )
    script.write_text(template.format(VERSION="first"))
    assert deploy(script, workers={"max": 1}, connection=nb.conn) == "worker"
    client = nb.conn.client.endpoint("worker")
    assert client.run_sync({}, timeout=COLD_START_S).output == "first"
    script.write_text(template.format(VERSION="second"))
    assert deploy(str(script), workers={"max": 1}, connection=nb.conn) == "worker"
    assert client.run_sync({}, timeout=COLD_START_S).output == "second"


@pytest.mark.parametrize(
    ("make", "line", "expected"),
    [
        (None, "%runpod deploy {tmp}/missing.py", "worker script '{tmp}/missing.py' not found"),
        ("notes.txt", "%runpod deploy {tmp}/notes.txt", "a worker script is a .py file, not"),
        ("w.py", "%runpod deploy {tmp}/w.py --python no-such-python", "'no-such-python' not found"),
        ("w.py", "%runpod deploy {tmp}/w.py --name 'bad id!'", "must be 1-64 letters"),
        ("", "%runpod deploy f --python python3", "--python applies to a worker script"),
        ("", "%runpod deploy f --env A=1", "--env applies to a worker script"),
        ("w.py", "%runpod deploy {tmp}/w.py --env NBEXT_UNSET_X", "NBEXT_UNSET_X is not set"),
        ("w.py", "%runpod deploy {tmp}/w.py --env 9x=1", "'9x' is not a variable name"),
    ],
)
def test_deploy_script_mistakes(
    nb: Notebook,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    make: str | None,
    line: str,
    expected: str,
) -> None:
    if make:
        (tmp_path / make).write_text("print('hi')\n")
    if make == "":
        nb.run("def f(job): return 1")
    message = usage_error(nb, line.format(tmp=tmp_path), capsys)
    assert expected.format(tmp=tmp_path) in message


def test_a_script_that_dies_at_import_says_why(
    nb: Notebook, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import runpod\nimport no_such_module_for_nbext\n")
    with pytest.raises(Exception) as caught:
        nb.run(f"%runpod deploy {script}")
    message = str(caught.value)
    assert message == (
        "deploy: worker script broken.py could not start: it exited (exit code 1): "
        "ModuleNotFoundError: No module named 'no_such_module_for_nbext'"
    )
    err = capsys.readouterr().err
    assert "  Traceback (most recent call last):" in err  # its last lines, then the error
    assert f"UsageError: {message}" in err
    assert "broken" not in nb.emu.jobs.endpoints  # no job may wait on it
    with pytest.raises(WorkerStartFailed) as from_python:
        deploy(script, "broken2", connection=nb.conn)
    assert from_python.value.output[-1].startswith("ModuleNotFoundError")


def test_a_worker_whose_calls_are_refused_says_why(nb: Notebook, tmp_path: Path) -> None:
    """The SDK sends a key from ~/.runpod/config.toml before the one it was given."""
    (tmp_path / ".runpod").mkdir()
    (tmp_path / ".runpod" / "config.toml").write_text(
        '[default]\napi_key = "rpa_' + "Z" * 40 + '"\n'
    )
    with pytest.raises(WorkerStartFailed, match=r"~/\.runpod/config\.toml takes precedence"):
        deploy(
            SCRIPTS / "plain_worker.py", "refused", env={"HOME": str(tmp_path)}, connection=nb.conn
        )
    assert "refused" not in nb.emu.jobs.endpoints


def until_logged(nb: Notebook, endpoint: str, text: str) -> None:
    """Wait until a worker of ``endpoint`` has printed ``text`` (its log is read from the
    process's pipe by a thread of its own, maybe after the job's result arrived)."""
    nb.until(
        lambda: text in "\n".join(nb.emu.worker_logs(endpoint)),
        f"{text!r} in the worker's log",
        COLD_START_S,
    )


def test_a_workers_log_shows_none_of_the_kernels_secrets(
    nb: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script that prints its environment: the kernel's secrets are not in it, so not
    in ``%runpod logs`` nor in the notebook saved with that output; what the endpoint's
    ``env`` passes is."""
    canaries = {
        "RUNPOD_API_KEY": "rpa_CANARY0KEY0000000000000000000000000000",
        "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-7f3a",
    }
    for name, value in {**canaries, "HF_TOKEN": "hf_passed_on_purpose"}.items():
        monkeypatch.setenv(name, value)
    script = SCRIPTS / "env_worker.py"
    nb.run(f"%runpod deploy {script} --name envs --env MODEL=small --env HF_TOKEN")
    output = nb.conn.client.endpoint("envs").run_sync({}, timeout=COLD_START_S).output
    assert output["MODEL"] == "small" and output["HF_TOKEN"] == "hf_passed_on_purpose"
    until_logged(nb, "envs", "environment in a job")
    nb.run("%runpod logs envs")
    shown = nb.displays[-1]["data"]
    assert "environment in a job" in shown["text/plain"]
    assert '"MODEL": "small"' in shown["text/plain"]
    for secret in canaries.values():
        assert secret not in str(output)
        assert secret not in shown["text/plain"] and secret not in shown["text/html"]


def test_a_flooded_workers_log_is_a_bounded_cell_that_says_what_it_shows(nb: Notebook) -> None:
    """A worker printed 100 lines of 1 MB: the emulator kept each line's start (marked
    cut), and ``%runpod logs`` shows the last lines that fit its bound, saying so."""
    deploy(SCRIPTS / "flood_worker.py", "flood", connection=nb.conn)
    flood = {"n": 1, "lines": 100, "size": 1_048_576}
    nb.conn.client.endpoint("flood").run_sync(flood, timeout=COLD_START_S)
    until_logged(nb, "flood", "flood done 1")
    nb.run("%runpod logs flood")
    shown = nb.displays[-1]["data"]
    saved = len(json.dumps(shown))  # what the notebook file keeps of this cell
    assert saved < 2 * MAX_SHOWN, saved
    assert "characters not shown] … " in shown["text/plain"]  # the panel's cut,
    assert "more bytes cut: lines keep 16,384" in shown["text/plain"]  # the emulator's mark
    nb.magics.log_max_lines = 10
    nb.run("%runpod logs flood")
    shown = nb.displays[-1]["data"]
    assert shown["text/plain"].splitlines()[1].startswith("… showing the last 10 lines; ")
    assert "… showing the last 10 lines; " in shown["text/html"]


def test_deploying_a_script_on_the_cloud_needs_the_local_emulator(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    cloud = Connection(server=nb.server, api_key="rpa_" + "C" * 40, environ={}, mode="cloud")
    nb.magics.connection = cloud
    try:
        message = usage_error(nb, f"%runpod deploy {SCRIPTS / 'plain_worker.py'}", capsys)
        assert message == (
            "deploy: this kernel is connected to the RunPod cloud; deploying a worker script needs "
            "the local service: run `%runpod connect local` first"
        )
        with pytest.raises(NotebookError, match="deploying a worker script"):
            deploy(SCRIPTS / "plain_worker.py", connection=cloud)
    finally:
        cloud.close()


def latest(panel: HealthPanel) -> Sample:
    assert panel.latest is not None
    return panel.latest


@pytest.mark.anyio
async def test_health_panel_follows_processes_starting_ready_and_running(
    nb: Notebook, tmp_path: Path
) -> None:
    ep = nb.emu.deploy_worker(
        SCRIPTS / "async_worker.py", endpoint_id="watched", workers={"min": 1}
    )
    nb.run(f"%runpod health {ep} --watch 0.1 -o h")
    panel: HealthPanel = nb.shell.user_ns["h"]
    try:
        await nb.auntil(
            lambda: any(s.initializing == 1 for s in panel.samples),
            "a sample with the worker starting",
            COLD_START_S,
        )
        await nb.auntil(lambda: latest(panel).idle == 1, "the worker ready", COLD_START_S)
        endpoint = nb.conn.service().async_client().endpoint(ep)
        await endpoint.run({"dir": str(tmp_path), "hang": True})
        await nb.auntil(
            lambda: latest(panel).running == 1 and latest(panel).in_progress == 1,
            "the worker running the job",
            COLD_START_S,
        )
        live = nb.outputs()[-2][-1]  # the watch's content, as last sent to the page
        assert 'data-series="initializing"' in live["text/html"]
        assert "running=1" in live["text/plain"]
        history = panel.frame()  # the counts moved as the process did
        assert history["initializing"].max() == 1 and history["idle"].max() == 1
        assert history["running"].iloc[-1] == 1
    finally:
        panel.close()
        if panel.task is not None:
            await asyncio.wait_for(panel.task, 5)
        await nb.conn.aclose()


def test_worker_processes_outlive_the_kernel_and_end_with_the_service(
    tmp_path: Path, folders: Folders
) -> None:
    """A real kernel (ipykernel, started and shut down by jupyter_client as Jupyter does)
    deploys a worker script on the local service: its processes belong to the service,
    so they stay warm after the kernel's shutdown; when the service stops, none is left,
    nor anything they started."""
    from jupyter_client.manager import start_new_kernel

    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNPOD_")}
    env["HOME"] = str(tmp_path)  # no ~/.runpod/config.toml: the local service
    manager, client = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
    try:
        script = SCRIPTS / "plain_worker.py"
        code = f"%load_ext nbext\n%runpod deploy {script} --name k --workers-min 2 --workers-max 2"
        reply = client.execute_interactive(code, timeout=COLD_START_S * 2)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)  # what "Shut Down Kernel" does
    service_pid = folders.service_file().pid
    deadline = time.monotonic() + COLD_START_S
    while len(workers := worker_pids(service_pid)) < 2:
        assert time.monotonic() < deadline, "the service did not keep two workers"
        time.sleep(0.05)
    assert all(group_alive(pid) for pid in workers)  # warm after the kernel's end
    stop_service(folders.runtime)
    # Each worker's group (the worker and the SDK's heartbeat process) ends with the
    # service: the last of them may take a moment to exit, but none is left behind.
    deadline = time.monotonic() + 10
    left = workers
    while left and time.monotonic() < deadline:
        left = [pid for pid in workers if group_alive(pid)]
        time.sleep(0.05)
    assert left == [], f"worker groups outlived the service: {[group_of(p) for p in left]}"


def worker_pids(service_pid: int) -> list[int]:
    """The worker processes the service started (each leads a group of its own)."""
    children = psutil.Process(service_pid).children()
    return [c.pid for c in children if os.getpgid(c.pid) == c.pid]


def group_of(pid: int) -> str:
    return subprocess.run(["pgrep", "-a", "-g", str(pid)], capture_output=True, text=True).stdout


def group_alive(pid: int) -> bool:
    """Whether a process of the group ``pid`` leads still runs (zombies do not count)."""
    listed = subprocess.run(["pgrep", "-g", str(pid)], capture_output=True, text=True).stdout
    for member in listed.split():
        try:
            state = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            return True
    return False


HEALTH_SERVER = textwrap.dedent(
    """
    import os, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(int(os.environ["HEALTH_STATUS"]))
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    print("weights not found in /models", flush=True)
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)


def startup_panels(nb: Notebook) -> list[list[dict[str, str]]]:
    return [o for o in nb.outputs() if "nbext-startup-panel" in o[0]["text/html"]]


def test_a_health_path_answering_503_fails_the_deploy_at_once_with_the_servers_last_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = tmp_path / "broken_server.py"
    script.write_text(HEALTH_SERVER)
    started = time.monotonic()
    with pytest.raises(UsageError) as caught:
        nb.run(f"%runpod deploy {script} --load-balancer --env HEALTH_STATUS=503")
    assert time.monotonic() - started < COLD_START_S / 2  # seconds, not the 120 s limit
    assert str(caught.value) == (
        "deploy: worker script broken_server.py could not start: its health path GET /ping "
        "answered 503, not 200 (ready) or 204 (starting): weights not found in /models"
    )
    assert "deployed" not in capsys.readouterr().out
    assert "broken_server" not in nb.emu.jobs.endpoints  # no request waits on it


@pytest.mark.usefixtures("sigint_handled")  # the Ctrl-C arrives under nohup too
def test_a_start_that_never_ends_is_counted_live_and_ctrl_c_stops_it(
    nb: Notebook, tmp_path: Path
) -> None:
    script = tmp_path / "loading.py"
    script.write_text(HEALTH_SERVER)

    def interrupt_once_the_wait_is_drawn() -> None:
        nb.until(
            lambda: any("answered 204" in o[-1]["text/plain"] for o in startup_panels(nb)),
            "the startup panel saying what the health path answered",
            COLD_START_S,
        )
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_the_wait_is_drawn, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        deploy(script, type="LOAD_BALANCER", env={"HEALTH_STATUS": "204"}, connection=nb.conn)
    [panel] = startup_panels(nb)
    assert panel[0]["text/plain"].startswith(
        "deploying loading.py as endpoint 'loading': waited 1 s of 120 s"
    )
    assert "interrupt the kernel" in panel[0]["text/plain"]
    assert panel[-1]["text/plain"].endswith(
        "GET /ping answered 204: initializing\nstopped by an interrupt: endpoint 'loading' removed"
    )
    assert "loading" not in nb.emu.jobs.endpoints


def test_a_start_past_its_limit_raises_and_removes_the_endpoint(
    nb: Notebook, tmp_path: Path
) -> None:
    """A worker may load a model for minutes: ``start_timeout`` says how long to wait."""
    script = tmp_path / "loading.py"
    script.write_text(HEALTH_SERVER)
    with pytest.raises(WorkerStartFailed) as caught:
        deploy(
            script,
            type="LOAD_BALANCER",
            env={"HEALTH_STATUS": "204"},
            start_timeout=2.5,
            connection=nb.conn,
        )
    assert str(caught.value) == (
        "worker script loading.py could not start: no worker served within 2 s (GET /ping "
        "answered 204: initializing); the endpoint was removed (a worker that takes longer "
        "to load: start_timeout=SECONDS, --start-timeout)"
    )
    assert "loading" not in nb.emu.jobs.endpoints
    [panel] = startup_panels(nb)
    assert "could not start: no worker served within 2 s" in panel[-1]["text/plain"]
    with pytest.raises(NotebookError, match="start_timeout is seconds above 0, got 0"):
        deploy(script, start_timeout=0, connection=nb.conn)


def test_a_server_deployed_as_a_queue_worker_is_told_to_use_the_load_balancer(
    nb: Notebook, tmp_path: Path
) -> None:
    script = tmp_path / "api.py"
    script.write_text(
        "import os\nimport uvicorn\nfrom fastapi import FastAPI\napp = FastAPI()\n"
        'uvicorn.run(app, host="127.0.0.1", port=int(os.environ.get("PORT", 0)))\n'
    )
    started = time.monotonic()
    with pytest.raises(WorkerStartFailed, match=r"it serves HTTP on port \d+ and never") as caught:
        deploy(script, connection=nb.conn)
    assert time.monotonic() - started < 20
    assert "%runpod deploy --load-balancer" in str(caught.value)
    assert 'type="LOAD_BALANCER"' in str(caught.value)
    assert "api" not in nb.emu.jobs.endpoints


LB_SERVER = textwrap.dedent(
    """
    import json, os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"path": self.path}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)


def test_magic_deploys_a_server_as_a_load_balancing_endpoint(
    nb: Notebook, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import httpx

    script = tmp_path / "server.py"
    script.write_text(LB_SERVER)
    nb.run(f"%runpod deploy {script} --load-balancer --name api")
    out = capsys.readouterr().out
    assert out.strip() == (
        "deployed server.py as load-balancing endpoint 'api': %%runpod_http api GET /ping"
    )
    assert nb.emu.endpoint_type("api") == "LOAD_BALANCER"
    answer = httpx.get(
        f"{nb.server.url}/lb/api/hello", headers={"Authorization": f"Bearer {nb.emu.api_key}"}
    )
    assert answer.json() == {"path": "/hello"} and answer.headers["x-runpod-worker-id"]
    with pytest.raises(NotebookError, match="type= apply to a script"):
        deploy(lambda job: job, "f", type="LOAD_BALANCER", connection=nb.conn)
    nb.emu.undeploy("api")

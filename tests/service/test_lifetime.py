"""The user's local service as a process: started once, found through its file, private
to the user, restarted after kill -9 or a stale file without losing what it accepted,
never used silently at another version, and stopping by itself when idle.

Every service here is a real ``python -m nbext.emulator start --foreground`` process in
the test's own folders (``folders``), ended by its process id at the end.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import nbext
from nbext import service
from nbext.service import files
from tests.conftest import Folders

pytestmark = pytest.mark.timeout(120)


def client() -> nbext.Client:
    return nbext.Client(**service.client_settings(start=False))


def wait_gone(folders: Folders, pid: int, timeout: float) -> None:
    """Until the service of ``pid`` has let its lock go (it ended)."""
    deadline = time.monotonic() + timeout
    while files.alive(folders.runtime):
        assert time.monotonic() < deadline, f"service {pid} still runs after {timeout} s"
        time.sleep(0.05)
    service.stop()  # reaps it: no zombie is left


def test_first_join_starts_it_and_the_next_finds_it(folders: Folders) -> None:
    first = service.join()
    assert first.started and first.url.startswith("http://127.0.0.1:")
    again = service.join()
    assert not again.started and again.file == first.file
    assert "running since" in again.describe()
    with client() as c:
        assert c.endpoint("echo").run_sync({"x": 1}).output == {"x": 1}


def test_its_files_are_private_and_its_key_is_on_no_command_line(folders: Folders) -> None:
    joined = service.join()
    for folder in (folders.runtime, folders.data):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    for name in ("service.json", "service.lock", "start.lock"):
        assert stat.S_IMODE((folders.runtime / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE((folders.data / "service.log").stat().st_mode) == 0o600
    command_line = Path(f"/proc/{joined.file.pid}/cmdline").read_bytes()
    assert joined.file.key.encode() not in command_line
    assert joined.file.key not in Path(joined.file.log).read_text()
    host = httpx.URL(joined.url).host
    assert host == "127.0.0.1"


def test_a_folder_of_another_user_is_refused_in_one_line(folders: Folders) -> None:
    if os.getuid() != 0:
        pytest.skip("only root can give a folder to another user")
    folders.runtime.mkdir(parents=True)
    os.chown(folders.runtime, 54321, 54321)
    with pytest.raises(files.ServiceFileError, match="belongs to another user") as caught:
        service.join()
    assert "\n" not in str(caught.value)


def test_three_processes_starting_at_once_start_one_service(folders: Folders) -> None:
    code = "from nbext import service; j = service.join(); print(j.file.pid, j.started)"
    processes = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    answers = [p.communicate(timeout=60)[0].split() for p in processes]
    assert all(p.returncode == 0 for p in processes)
    assert len({pid for pid, _ in answers}) == 1, answers
    assert sorted(started for _, started in answers) == ["False", "False", "True"]
    assert answers[0][0] == str(folders.service_file().pid)


def test_kill_9_is_noticed_at_the_next_join_and_nothing_accepted_is_lost(
    folders: Folders,
) -> None:
    first = service.join()
    with client() as c:
        done = c.endpoint("echo").run_sync({"kept": True})
        queued = c.endpoint("sleep").run({"seconds": 0.2})
    os.kill(first.file.pid, signal.SIGKILL)
    wait_gone(folders, first.file.pid, 10)
    started = time.monotonic()
    second = service.join()
    assert second.started and second.file.pid != first.file.pid
    assert time.monotonic() - started < 10
    assert second.file.key == first.file.key  # kept in its database
    with client() as c:
        assert c.endpoint("echo").job(done.id).status().output == {"kept": True}
        assert c.endpoint("sleep").job(queued.id).wait(timeout=30).output == {"slept": 0.2}


def test_a_stale_file_whose_port_another_program_holds_starts_a_new_service(
    folders: Folders,
) -> None:
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))
    squatter.listen()
    try:
        port = squatter.getsockname()[1]
        files.private_dir(folders.runtime)
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)  # fmt: skip
        files.write(
            folders.runtime,
            files.ServiceFile(
                pid=int(dead.stdout), url=f"http://127.0.0.1:{port}", key="rpa_STALE",
                version=nbext.__version__, started_at=0.0, db="", log="",
            ),
        )  # fmt: skip
        started = time.monotonic()
        joined = service.join()
        assert joined.started and joined.url != f"http://127.0.0.1:{port}"
        assert time.monotonic() - started < 10
    finally:
        squatter.close()


def other_version(folders: Folders, tmp_path: Path) -> subprocess.Popen[bytes]:
    """A real service of another nbext version: this nbext, copied and renumbered."""
    package = tmp_path / "old" / "nbext"
    shutil.copytree(Path(nbext.__file__).parent, package)
    face = package / "_version.py"
    face.write_text(face.read_text().replace(f'"{nbext.__version__}"', '"0.0.9"'))
    process = subprocess.Popen(
        [sys.executable, "-m", "nbext.emulator", "start", "--foreground"],
        env={**os.environ, "PYTHONPATH": str(package.parent)},
        cwd=tmp_path,  # `-m` puts the working folder first: not the repository's
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while files.read(folders.runtime) is None:
        assert process.poll() is None and time.monotonic() < deadline, "it did not start"
        time.sleep(0.02)
    assert folders.service_file().version == "0.0.9"
    return process


def test_an_idle_service_of_another_version_is_replaced(folders: Folders, tmp_path: Path) -> None:
    old = other_version(folders, tmp_path)
    joined = service.join()
    assert old.wait(timeout=30) == 0
    assert joined.started and joined.file.version == nbext.__version__


def test_a_busy_service_of_another_version_is_refused_in_one_line(
    folders: Folders, tmp_path: Path
) -> None:
    old = other_version(folders, tmp_path)
    try:
        found = folders.service_file()
        with nbext.Client(found.key, serverless_url=f"{found.url}/v2") as c:
            c.endpoint("sleep").run({"seconds": 60})
        with pytest.raises(service.ServiceError) as caught:
            service.join()
        message = str(caught.value)
        assert "\n" not in message
        assert "nbext 0.0.9" in message and nbext.__version__ in message
        assert "%runpod local restart" in message
        assert old.poll() is None  # never stopped under its jobs
    finally:
        old.terminate()
        old.wait(timeout=30)


def test_it_stops_by_itself_when_idle(folders: Folders) -> None:
    joined = service.join(idle_stop=1.0)
    with client() as c:
        c.endpoint("sleep").run_sync({"seconds": 0.5})
    wait_gone(folders, joined.file.pid, 60)
    assert files.read(folders.runtime) is None
    assert "stopping: no call and nothing in flight" in "\n".join(service.log_lines())


def test_status_stop_and_the_command_line(folders: Folders) -> None:
    command = [sys.executable, "-m", "nbext.emulator"]
    run = lambda *a: subprocess.run([*command, *a], capture_output=True, text=True, timeout=60)  # noqa: E731
    assert run("status").returncode == 3
    started = run("start")
    assert started.returncode == 0 and "started now" in started.stdout
    status = run("status")
    assert status.returncode == 0, status.stderr
    assert "local service: nbext " in status.stdout and f"data: {folders.data}" in status.stdout
    assert "kernels using it: 0" in status.stdout
    pid = folders.service_file().pid
    stopped = run("stop")
    assert stopped.stdout.strip() == f"stopped the local service (pid {pid})"
    assert not files.alive(folders.runtime) and files.read(folders.runtime) is None
    assert "nbext local service" in run("log").stdout

"""Binder's environment, built from ``binder/`` alone in a fresh virtualenv, runs the guide.

repo2docker builds a Python repository in steps this test repeats without Docker: a
fresh environment of the Python ``runtime.txt`` names, ``pip install -r
binder/requirements.txt`` from the repository's root once the repository is copied in
(a local reference such as ``.`` makes it wait for that), then ``./binder/postBuild``
from the root, with the environment's ``bin/`` first on PATH. Then a visitor runs the
quickstart; here nbclient runs it with that environment's own kernel, with a new HOME and
no RUNPOD_* variable, as on Binder. The repository is copied from what git would clone
(tracked and untracked-but-not-ignored files), so nothing of this checkout's ``.venv``
can help.

Until ``notebooks/01-quickstart.ipynb`` exists, a small notebook of the test's own takes
its place: it imports nbext, loads the extension, and runs an echo job through the
embedded emulator with the client.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tests.e2e.notebook_files import write_notebook

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = Path("notebooks") / "01-quickstart.ipynb"
BUILD_TIMEOUT = 600

WHICH_PYTHON = "import sys\nprint(sys.prefix)"
"""Put first in the notebook run, so the test can tell which environment's kernel ran it."""

STAND_IN = [
    "import nbext\n%load_ext nbext",
    """\
from nbext import Client
from nbext.emulator import Emulator, EmulatorServer

emulator = Emulator()
emulator.deploy(image="echo", endpoint_id="echo")
with EmulatorServer(emulator) as server:
    client = Client(emulator.api_key, serverless_url=server.serverless_url)
    result = client.endpoint("echo").run_sync({"hello": "binder"})
print(result.status.value, result.output)
""",
]

SHOW_DEFAULT_URL = """\
from jupyter_server.serverapp import ServerApp

app = ServerApp()
app.load_config_file()
print(app.default_url)
"""
"""What page a Binder launch without a ``urlpath`` opens, as the server's config says."""

EXECUTE = """\
import sys
import nbformat
from nbclient import NotebookClient

source, target, cwd = sys.argv[1:4]
notebook = nbformat.read(source, as_version=4)
client = NotebookClient(
    notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": cwd}}
)
try:
    client.execute()
finally:
    nbformat.write(notebook, target)
"""


def clone_like(source: Path, target: Path) -> Path:
    """Copy the files a clone of ``source`` would have, with their working-tree content."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=source,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        path = source / name
        if path.is_file():
            destination = target / name
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
    return target


def environment(venv: Path, home: Path | None = None) -> dict[str, str]:
    """This process's environment as seen inside the new venv (no key, no other venv)."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("RUNPOD_", "VIRTUAL_ENV", "PYTHON", "JUPYTER", "IPYTHON"))
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["VIRTUAL_ENV"] = str(venv)
    if home is not None:
        env["HOME"] = str(home)
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    result = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=BUILD_TIMEOUT
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, f"{what} failed ({result.returncode}):\n{log[-4000:]}"
    return log


def runtime_python() -> str:
    """The interpreter for ``runtime.txt``'s ``python-X.Y``: this one if it matches."""
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert runtime.startswith("python-"), runtime
    wanted = runtime.removeprefix("python-")
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if wanted != have:
        found = shutil.which(f"python{wanted}")
        if found is None:
            pytest.skip(f"binder/runtime.txt asks for Python {wanted}; this machine has {have}")
        return found
    return sys.executable


def extension_entry_point_ready() -> bool:
    notebook_layer = importlib.import_module("nbext.notebook")
    return hasattr(notebook_layer, "load_ipython_extension")


# Past the suite's per-test limit: four steps bounded by BUILD_TIMEOUT each (venv, pip,
# postBuild, the server's URL), then the guide's run, bounded by its 300 s.
@pytest.mark.timeout(4 * BUILD_TIMEOUT + 300)
def test_binder_files_build_an_environment_that_runs_the_quickstart(tmp_path: Path) -> None:
    if not (ROOT / QUICKSTART).exists() and not extension_entry_point_ready():
        pytest.skip("neither the quickstart nor %load_ext nbext exists yet (notebook layer)")
    repo = clone_like(ROOT, tmp_path / "repo")
    venv = tmp_path / "venv"
    home = tmp_path / "home"
    home.mkdir()

    # 1. the environment runtime.txt asks for
    run([runtime_python(), "-m", "venv", str(venv)], tmp_path, environment(venv), "venv")
    build_env = environment(venv)  # HOME kept: pip's own configuration lives there
    # 2. requirements.txt, from the repository's root
    run(
        [str(venv / "bin" / "pip"), "install", "-q", "-r", "binder/requirements.txt"],
        repo,
        build_env,
        "pip install -r binder/requirements.txt",
    )
    # 3. postBuild, from the repository's root, as repo2docker runs it
    post_build = repo / "binder" / "postBuild"
    assert os.access(post_build, os.X_OK), "binder/postBuild must be executable"
    log = run(["./binder/postBuild"], repo, build_env, "binder/postBuild")
    assert "installed for Binder" in log
    shown = run(
        [str(venv / "bin" / "python"), "-c", SHOW_DEFAULT_URL],
        repo,
        environment(venv, home),
        "reading the Jupyter server's default URL",
    )
    assert shown.strip() == "/lab/tree/notebooks/01-quickstart.ipynb", shown[-2000:]

    # 4. a visitor runs the quickstart (or the stand-in) with the environment's kernel
    if (repo / QUICKSTART).exists():
        guide = nbformat.read(repo / QUICKSTART, as_version=4)
        guide.cells.insert(0, nbformat.v4.new_code_cell(WHICH_PYTHON))
        notebook = repo / "notebooks" / "binder-run.ipynb"
        nbformat.write(guide, notebook)
        stand_in = False
    else:
        notebook = write_notebook(
            repo / "notebooks" / "binder-run.ipynb", [WHICH_PYTHON, *STAND_IN]
        )
        stand_in = True
    executed = tmp_path / "executed.ipynb"
    run(
        [
            str(venv / "bin" / "python"),
            "-c",
            EXECUTE,
            str(notebook),
            str(executed),
            str(notebook.parent),
        ],
        repo,
        environment(venv, home),
        f"executing {notebook.name} in the Binder environment",
    )

    result = nbformat.read(executed, as_version=4)
    code = [cell for cell in result.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code), "some cells did not run"
    errors = [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert errors == []
    printed = ["".join(o.get("text", "") for o in cell.outputs) for cell in code]
    assert printed[0].strip() == str(venv), "the kernel is not the Binder environment's"
    if stand_in:
        assert "COMPLETED {'hello': 'binder'}" in printed[-1]

"""Real kernels (nbclient, as Jupyter runs a notebook) and the local service they share:
a batch read from the next kernel, a worker that stays warm across a kernel restart,
three kernels started at the same moment joining one service.

No kernel here is given an address or a key: each finds the service in the test's
runtime folder (``folders``), as a user's kernels do.
"""

from __future__ import annotations

import re
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from nbext.service import files
from tests.conftest import Folders

pytestmark = pytest.mark.timeout(240)


def executed(folder: Path, *cells: str) -> nbformat.NotebookNode:
    """``cells`` run in a fresh kernel in ``folder`` (then shut down), saved and read back."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    saved = folder / f"saved-{threading.get_ident()}.ipynb"  # kernels run at once write apart
    nbformat.write(notebook, saved)
    return nbformat.read(saved, as_version=4)


def run(folder: Path, *cells: str) -> list[str]:
    """Run ``cells`` in a fresh kernel in ``folder``, then shut it down; each cell's text."""
    notebook = executed(folder, *cells)
    texts = []
    for cell in notebook.cells:
        parts = [o.get("text", "") for o in cell.outputs]
        parts += [o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        texts.append("\n".join(parts))
    return texts


def test_a_batch_is_read_from_the_next_kernel(folders: Folders, tmp_path: Path) -> None:
    first = run(
        tmp_path,
        "%load_ext nbext",
        "xs = [{'seconds': 0.3, 'n': n} for n in range(8)]",
        "%runpod batch sleep xs --background",
    )
    assert "(started now" in first[0], first[0]
    found = re.search(r"%runpod batch attach sleep (batch_\w+)", first[2])
    assert found, first[2]
    batch_id = found.group(1)
    second = run(
        tmp_path,
        "%load_ext nbext",
        "%runpod batches sleep",
        f"batch_id = '{batch_id}'",
        "%runpod batch attach sleep $batch_id -o res",
        "print(res['n'].tolist(), sorted(set(res['state'])), res['output'].iloc[0])",
    )
    assert "(running since" in second[0], second[0]
    assert batch_id in second[1]
    assert "8/8 · COMPLETED 8" in second[3], second[3]
    assert "[0, 1, 2, 3, 4, 5, 6, 7] ['COMPLETED'] {'slept': 0.3}" in second[4]


SLOW_LOADING = textwrap.dedent(
    """
    import os, time
    import runpod

    time.sleep(3)  # a model loading: the cold start
    LOADED_BY = os.getpid()

    def handler(job):
        return {"pid": LOADED_BY}

    runpod.serverless.start({"handler": handler})
    """
)


def test_a_warm_worker_stays_warm_across_a_kernel_restart(folders: Folders, tmp_path: Path) -> None:
    (tmp_path / "slow_model.py").write_text(SLOW_LOADING)
    first = run(
        tmp_path,
        "%load_ext nbext",
        "import nbext\nnbext.deploy('slow_model.py', workers={'idleTimeout': 120})",
        "%%runpod_job slow_model -o out\n{}",
        "print(out['pid'])",
    )
    pid = first[3].strip()
    assert pid.isdigit(), first
    second = run(
        tmp_path,
        "%load_ext nbext",
        "import nbext.notebook\n"
        "result = nbext.notebook.client().endpoint('slow_model').run_sync({})\n"
        "print(result.output['pid'], result.delay_time)",
    )
    served_by, delay_ms = second[1].split()
    assert served_by == pid  # the same process, model loaded: no cold start
    assert int(delay_ms) < 1000, second[1]


def test_three_kernels_started_at_once_share_one_service(folders: Folders, tmp_path: Path) -> None:
    cells = (
        "%load_ext nbext",
        "from nbext.service import files\nprint(files.read(files.runtime_dir()).pid)",
    )
    with ThreadPoolExecutor(3) as pool:
        outputs = list(pool.map(lambda _: run(tmp_path, *cells), range(3)))
    pids = {out[1].strip() for out in outputs}
    assert pids == {str(folders.service_file().pid)}, outputs
    banners = sorted("started now" in out[0] for out in outputs)
    assert banners == [False, False, True], [out[0] for out in outputs]
    assert files.alive(folders.runtime)


def sources(notebook: nbformat.NotebookNode) -> list[str | None]:
    """Each cell's saved ``service`` (provenance), None for a cell without one."""
    said = [
        [o.metadata["nbext"]["service"] for o in cell.outputs if "nbext" in o.get("metadata", {})]
        for cell in notebook.cells
    ]
    return [s[0] if s else None for s in said]


def test_a_replay_is_said_by_the_service_to_every_kernel_until_a_redeploy(
    folders: Folders, tmp_path: Path
) -> None:
    job = '%%runpod_job echo\n{"as": "recorded"}'
    first = executed(
        tmp_path,
        "%load_ext nbext",
        "%runpod record class.jsonl",
        job,
        "%runpod record stop\n%runpod replay class.jsonl --instant",
        job,
        "import nbext\ndef echo(job):\n    return job['input']\nnbext.deploy(echo)",
        '%%runpod_job echo\n{"as": "redeployed"}',
        "%runpod replay class.jsonl --instant",
    )
    assert sources(first)[2:7] == ["local", None, "replay", None, "local"], sources(first)
    mapped = "xs = [{'as': 'recorded'}]\n%runpod map echo xs"
    second = executed(tmp_path, "%load_ext nbext", job, mapped)
    assert sources(second)[1:] == ["replay", "replay"], sources(second)

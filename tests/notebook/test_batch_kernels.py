"""A batch outlives its kernel: one real kernel starts it and is shut down, another
kernel (nbclient, as Jupyter runs a notebook) attaches to it and reads every result.

Both kernels reach one standalone emulator, as two notebooks reach the service, and run
in one folder, where the first kept the batch's inputs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.standalone import Standalone


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Standalone]:
    emulator = Standalone.module()
    try:
        for name, value in emulator.exports.items():
            monkeypatch.setenv(name, value)  # the kernels started below inherit them
        monkeypatch.setenv("HOME", str(tmp_path))
        yield emulator
    finally:
        emulator.stop()


def run(folder: Path, *cells: str) -> list[str]:
    """Run ``cells`` in a fresh kernel in ``folder``, then shut it down; each cell's text."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute()
    texts = []
    for cell in notebook.cells:
        parts = [o.get("text", "") for o in cell.outputs]
        parts += [o.get("data", {}).get("text/plain", "") for o in cell.outputs]
        texts.append("\n".join(parts))
    return texts


def test_a_batch_started_in_a_kernel_now_gone_is_attached_from_another(
    service: Standalone, tmp_path: Path
) -> None:
    started = run(
        tmp_path,
        "%load_ext nbext",
        "xs = [{'seconds': 0.3, 'n': n} for n in range(8)]",
        "%runpod batch sleep xs --background",
    )
    found = re.search(r"%runpod batch attach sleep (batch_\w+)", started[2])
    assert found, started[2]
    batch_id = found.group(1)
    attached = run(
        tmp_path,
        "%load_ext nbext",
        f"%runpod batch attach sleep {batch_id} -o res",
        "print(res['n'].tolist(), sorted(set(res['state'])), res['output'].iloc[0])",
    )
    assert f"sleep · {batch_id} |" in attached[1] and "8/8 · COMPLETED 8" in attached[1]
    assert f"read it again: %runpod batch attach sleep {batch_id}" in attached[1]
    assert "[0, 1, 2, 3, 4, 5, 6, 7] ['COMPLETED'] {'slept': 0.3}" in attached[2]

"""Notebooks that tests write for themselves (never committed into ``notebooks/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def write_notebook(path: Path, cells: list[str | dict[str, Any]]) -> Path:
    """Write a python3 notebook of code cells to ``path``.

    A cell is its source, or a dict with ``source``, ``outputs`` and ``execution_count``
    (a saved run, for nbval to compare against: it ignores the outputs of unrun cells),
    and ``tags`` (nbval reads ``nbval-check-output`` there too, which is how a cell
    starting with a cell magic is marked: the magic must stay on its first line).
    """
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    for cell in cells:
        if isinstance(cell, str):
            notebook.cells.append(nbformat.v4.new_code_cell(cell))
        else:
            outputs = [nbformat.from_dict(output) for output in cell.get("outputs", [])]
            notebook.cells.append(
                nbformat.v4.new_code_cell(
                    cell["source"],
                    outputs=outputs,
                    execution_count=cell.get("execution_count"),
                    metadata={"tags": list(cell["tags"])} if "tags" in cell else {},
                )
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


PANELS = [
    "%load_ext nbext",
    '%%runpod_job echo -o out\n{"text": "hello from the echo job"}',
    '%%runpod_job stream-text --stream\n{"text": "every streamed word stays"}',
    '%%runpod_job fail --no-raise\n{"message": "a failure on purpose"}',
    "inputs = [{'n': n} for n in range(5)]\n%runpod map echo inputs",
    "%runpod health echo",
    "import asyncio\n%runpod health echo --watch 0.1 -o watch",
    "await asyncio.sleep(0.5)\nwatch.stop()\nawait watch.task",
]
"""A notebook with every kind of panel, each ending in a known state: three jobs
(completed, streamed, failed), a map, a health snapshot and a stopped watch."""
STATIC_PANELS = 6
"""How many static renderings ``PANELS`` leaves once it has run."""


def newest_job_cell(endpoint: str) -> str:
    """A cell printing the state of ``endpoint``'s newest job as the service keeps it
    (``GET /v2/<endpoint>/requests``, newest first): the kernel's local service is shared
    by the test process's kernels, so the newest is the one the test's cell sent."""
    return (
        "import httpx\n"
        "_service = get_ipython().magics_manager.registry['RunpodMagics'].connection.service()\n"
        f"_jobs = httpx.get(_service.serverless_url + '/{endpoint}/requests',\n"
        "    headers={'Authorization': 'Bearer ' + _service.key.reveal()}).json()\n"
        f"print('newest {endpoint} job:', _jobs[0]['status'])"
    )

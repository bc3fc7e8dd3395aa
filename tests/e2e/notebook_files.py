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

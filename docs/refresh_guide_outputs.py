"""Re-run guides and save them as the repository keeps them: outputs on checked cells only.

    .venv/bin/python docs/refresh_guide_outputs.py notebooks/05-job-lifecycle.ipynb [...]

nbval compares a checked cell (tagged ``nbval-check-output``, or starting with
``# NBVAL_CHECK_OUTPUT``) with the output saved in the file, so after changing such a cell
its output must be saved again; every other cell is saved without outputs, so a guide
opens clean and no run leaves machine-specific values behind. The kernel runs as
``make test`` runs it: this venv's Python, no ``RUNPOD_*`` variable, a throwaway HOME
(``kernel_environment`` of the root ``conftest.py``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conftest import kernel_environment  # noqa: E402

CHECK_TAG = "nbval-check-output"
CHECK_COMMENT = "# NBVAL_CHECK_OUTPUT"


def checked(cell: nbformat.NotebookNode) -> bool:
    """Whether nbval compares this cell's output with the saved one."""
    tags = cell.get("metadata", {}).get("tags", [])
    return CHECK_TAG in tags or cell.source.lstrip().startswith(CHECK_COMMENT)


def coalesce(outputs: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    """Consecutive prints to one stream as one output, as a notebook front end saves them."""
    merged: list[nbformat.NotebookNode] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and output.output_type == last.output_type == "stream"
            and output.name == last.name
        ):
            last.text += output.text
        else:
            merged.append(output)
    return merged


def refresh(path: Path) -> int:
    """Execute ``path`` top to bottom and save it; returns the number of checked cells."""
    notebook = nbformat.read(path, as_version=4)
    # A run adds widget state and this machine's Python version: keep the guide's own.
    metadata = dict(notebook.metadata)
    with tempfile.TemporaryDirectory(prefix="nbext-guide-home-") as home:
        # "python3" is the running interpreter's own kernel (ipykernel's native spec).
        client = NotebookClient(
            notebook,
            timeout=300,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute(env=kernel_environment(Path(home)))
    notebook.metadata = nbformat.from_dict(metadata)
    kept = 0
    for cell in notebook.cells:
        cell.get("metadata", {}).pop("execution", None)
        if cell.cell_type != "code":
            continue
        if checked(cell):
            kept += 1
            cell.outputs = coalesce(cell.outputs)
            continue
        cell.outputs = []
        cell.execution_count = None
    nbformat.write(notebook, path)
    return kept


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    for name in paths:
        kept = refresh(Path(name))
        print(f"{name}: ran, kept the outputs of {kept} checked cells")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

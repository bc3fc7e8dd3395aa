"""How ``make test`` runs the guides in ``notebooks/`` with nbval: offline, on the emulator.

pyproject.toml's pytest options collect ``notebooks/`` with ``--nbval-lax`` (cells marked
``# NBVAL_CHECK_OUTPUT``, or tagged ``nbval-check-output``, are compared with their saved
outputs after the substitutions of ``notebooks/sanitize.cfg``) and ``--nbval-current-env``
(the kernel is this venv's Python). This file adds what those options cannot say: a
guide's kernel starts with no ``RUNPOD_*`` variable and a throwaway HOME, so neither a
developer's API key nor ``~/.runpod/config.toml`` can turn a test run into calls to the
real service; the guides reach the emulator on their own, as on a fresh machine. It also
makes the sanitize file's path independent of the directory pytest is started from.

It lives at the repository's root rather than among the guides, so JupyterLab's file
browser shows readers only the guides; pytest loads a root ``conftest.py`` for every
test, so the scrubbing below is limited to notebook items (``tests/`` keeps its
environment).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest

from tests.local_service import stop_service

HERE = Path(__file__).resolve().parent
_home: tempfile.TemporaryDirectory[str] | None = None


def kernel_environment(home: Path) -> dict[str, str]:
    """This process's environment as a guide's kernel must see it."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("RUNPOD_", "IPYTHON", "MPLCONFIG"))
    }
    env.update(
        HOME=str(home),
        IPYTHONDIR=str(home / ".ipython"),
        MPLCONFIGDIR=str(home / ".config" / "matplotlib"),
    )
    return env


def private_service_dirs() -> tempfile.TemporaryDirectory[str]:
    """A runtime and a data folder for a local service of the tests' own, set in this
    process's environment.

    Every kernel, guide and subprocess a test starts inherits them, so no test ever
    reaches the user's own local service or its data, and two test processes (xdist
    workers) never share one; ``stop_service`` ends what ran there."""
    folder = tempfile.TemporaryDirectory(prefix="nbext-test-service-")
    os.environ["NBEXT_RUNTIME_DIR"] = str(Path(folder.name) / "run")
    os.environ["NBEXT_DATA_DIR"] = str(Path(folder.name) / "data")
    return folder


_service_dirs: tempfile.TemporaryDirectory[str] | None = None
_guide: tuple[Path, tempfile.TemporaryDirectory[str]] | None = None
"""The guide whose cells run now, and its local service's folders: each guide starts on
a service of its own, as on a fresh machine, not on what earlier tests or guides left."""


def end_guide_service() -> None:
    global _guide
    if _guide is not None:
        stop_service(Path(_guide[1].name) / "run")
        _guide[1].cleanup()
        _guide = None


def pytest_configure(config: pytest.Config) -> None:
    global _service_dirs
    _service_dirs = private_service_dirs()
    option = config.option
    sanitize = getattr(option, "nbval_sanitize_with", None)
    if sanitize and not Path(sanitize).is_absolute():
        resolved = config.rootpath / sanitize
        option.nbval_sanitize_with = str(resolved if resolved.exists() else HERE / sanitize)


def is_guide_cell(item: pytest.Item) -> bool:
    """An nbval item: a cell of a notebook (the kernel starts in the first one's setup)."""
    return item.path.suffix == ".ipynb"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Start a notebook's kernel (nbval does it in the first cell's setup) scrubbed, on
    a local service of the guide's own."""
    global _home, _guide
    if not is_guide_cell(item):
        return (yield)
    if _home is None:
        _home = tempfile.TemporaryDirectory(prefix="nbext-nbval-home-")
    saved = dict(os.environ)
    if _guide is None or _guide[0] != item.path:
        end_guide_service()
        _guide = (item.path, private_service_dirs())  # a new guide: a new service
    os.environ["NBEXT_RUNTIME_DIR"] = str(Path(_guide[1].name) / "run")
    os.environ["NBEXT_DATA_DIR"] = str(Path(_guide[1].name) / "data")
    scrubbed = kernel_environment(Path(_home.name))
    os.environ.clear()
    os.environ.update(scrubbed)
    try:
        return (yield)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def pytest_unconfigure(config: pytest.Config) -> None:
    global _home, _service_dirs
    end_guide_service()
    if _service_dirs is not None:
        stop_service(Path(os.environ["NBEXT_RUNTIME_DIR"]))
        _service_dirs.cleanup()
        _service_dirs = None
    if _home is not None:
        _home.cleanup()
        _home = None

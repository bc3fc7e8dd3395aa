"""nbext: a GPU cloud's serverless endpoints in the notebook, with a local emulator."""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nbext``: register the magics (imports the notebook layer lazily)."""
    from importlib import import_module

    import_module("nbext.notebook").load_ipython_extension(ipython)

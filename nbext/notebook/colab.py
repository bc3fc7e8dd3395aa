"""Google Colab: its widget manager, and the key from its secrets
(docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

SECRET = "RUNPOD_API_KEY"
SOURCE = f"Colab secret {SECRET}"
_done: set[str] = set()
"""What was already done in this kernel ("widgets", "secret"): each happens once."""


def in_colab() -> bool:
    """Whether this kernel runs in Google Colab (its module is loaded there)."""
    return "google.colab" in sys.modules


def _module(name: str) -> Any:
    return importlib.import_module(f"google.colab.{name}")


def enable_widgets() -> None:
    """Let Colab draw nbext's widgets (once per kernel; nothing outside Colab)."""
    if not in_colab() or "widgets" in _done:
        return
    _done.add("widgets")
    _module("output").enable_custom_widget_manager()


def secret_key() -> tuple[str | None, str | None]:
    """The key from Colab's secrets, once per kernel, and what to tell the user (None:
    nothing; a refused access is news, a missing secret is not)."""
    if not in_colab() or "secret" in _done:
        return None, None
    _done.add("secret")
    userdata = _module("userdata")
    try:
        value = userdata.get(SECRET)
    except userdata.SecretNotFoundError:
        return None, None
    except userdata.NotebookAccessError:
        return None, (
            f"nbext: this notebook was not given access to the Colab secret {SECRET}; "
            "using the local emulator (grant access in the sidebar's key panel and run "
            "%runpod connect cloud, or use %runpod login)"
        )
    key = str(value or "").strip()
    if not key:
        return None, f"nbext: the Colab secret {SECRET} is empty; using the local emulator"
    return key, None

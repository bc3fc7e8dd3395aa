"""Google Colab: its widget manager, and the key from its secrets.

Colab ships ipywidgets 7.7.1, which nbext accepts, but draws widgets of another version
(an ipywidgets 8 that another package installed) only after
``google.colab.output.enable_custom_widget_manager()``; without it a panel's controls
are blank. ``%load_ext nbext`` calls it once, before any panel, so the controls show
whichever version the runtime has.

Colab users cannot set up ``~/.runpod/config.toml`` or the kernel's environment easily,
so they paste keys into cells, where they stay. Colab has a place for secrets instead:
the key icon in its sidebar, read with ``google.colab.userdata.get``, which asks the user
to grant the notebook access. nbext reads ``RUNPOD_API_KEY`` there once, and only when
neither the environment nor ``config.toml`` has a key; a refused access is said plainly,
a missing secret is not an error (the emulator is used).
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
    """The key from Colab's secrets, and what to tell the user (None: nothing).

    Asked once per kernel; a secret that does not exist is no news (most notebooks run
    on the emulator), an access the user refused is.
    """
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

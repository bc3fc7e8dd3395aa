"""nbext: a GPU cloud's serverless endpoints in the notebook, with a local emulator."""

from __future__ import annotations

from typing import Any

from . import media
from .client import (
    APIError,
    AsyncClient,
    BadRequest,
    Client,
    ConfigError,
    Conflict,
    ConnectionError,
    JobCancelled,
    JobError,
    JobFailed,
    JobTimedOut,
    NbextError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    Timeout,
    Unauthorized,
)

__version__ = "0.1.0"

__all__ = [
    "APIError",
    "AsyncClient",
    "BadRequest",
    "Client",
    "ConfigError",
    "Conflict",
    "ConnectionError",
    "JobCancelled",
    "JobError",
    "JobFailed",
    "JobTimedOut",
    "NbextError",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "ServerError",
    "Timeout",
    "Unauthorized",
    "__version__",
    "deploy",
    "load_ipython_extension",
    "media",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nbext``: register the magics (imports the notebook layer lazily)."""
    from importlib import import_module

    import_module("nbext.notebook").load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext nbext``: close the clients, stop the emulator the kernel started."""
    from importlib import import_module

    import_module("nbext.notebook").unload_ipython_extension(ipython)


def __getattr__(name: str) -> Any:
    """``nbext.deploy``: from the notebook layer, imported on first use (it needs IPython)."""
    if name == "deploy":
        from importlib import import_module

        return import_module("nbext.notebook").deploy
    raise AttributeError(f"module 'nbext' has no attribute {name!r}")

"""nbext: a GPU cloud's serverless endpoints in the notebook, with a local emulator."""

from __future__ import annotations

from typing import Any

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
    "load_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext nbext``: register the magics (imports the notebook layer lazily)."""
    from importlib import import_module

    import_module("nbext.notebook").load_ipython_extension(ipython)

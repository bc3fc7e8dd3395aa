"""nbext: a GPU cloud's serverless endpoints in the notebook, with a local emulator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import media
from .client import (
    NOT_GIVEN,
    APIError,
    AsyncClient,
    BadRequest,
    BudgetExceeded,
    ChunksMissing,
    Client,
    ConfigError,
    Conflict,
    ConnectionError,
    JobCancelled,
    JobError,
    JobFailed,
    JobOptions,
    JobTimedOut,
    MaybeQueued,
    NbextError,
    NotFound,
    NotGiven,
    PayloadTooLarge,
    RateLimited,
    ServerError,
    Timeout,
    Unauthorized,
)

if TYPE_CHECKING:  # imported on first use: the emulator is not needed to use the cloud
    from .local import local_async_client, local_client

from ._version import __version__

__all__ = [
    "NOT_GIVEN",
    "APIError",
    "AsyncClient",
    "BadRequest",
    "BudgetExceeded",
    "ChunksMissing",
    "Client",
    "ConfigError",
    "Conflict",
    "ConnectionError",
    "JobCancelled",
    "JobError",
    "JobFailed",
    "JobOptions",
    "JobTimedOut",
    "MaybeQueued",
    "NbextError",
    "NotFound",
    "NotGiven",
    "PayloadTooLarge",
    "RateLimited",
    "ServerError",
    "Timeout",
    "Unauthorized",
    "__version__",
    "deploy",
    "load_ipython_extension",
    "local_async_client",
    "local_client",
    "media",
    "unload_ipython_extension",
]


_LAZY = {
    "deploy": "nbext.notebook",
    "load_ipython_extension": "nbext.notebook",  # %load_ext nbext, and %unload_ext
    "unload_ipython_extension": "nbext.notebook",
    "local_client": "nbext.local",
    "local_async_client": "nbext.local",
}
"""Names imported on first use: the notebook layer needs IPython, ``nbext.local`` the
emulator's web stack; ``import nbext`` for the cloud client needs neither."""


def __getattr__(name: str) -> Any:
    """``nbext.deploy``, the extension's hooks, ``nbext.local_client``, ..."""
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nbext' has no attribute {name!r}")

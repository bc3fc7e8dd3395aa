"""Typed sync and async clients of the service's queue-based job interface.

``Client`` blocks, ``AsyncClient`` is awaited; both have the same methods::

    with nbext.Client() as client:          # RUNPOD_API_KEY, or ~/.runpod/config.toml
        echo = client.endpoint("echo")
        job = echo.run({"text": "hi"})
        for piece in job.stream():
            print(piece)
        print(job.wait(timeout=60).output)

Private modules are re-exported here; import from ``nbext.client`` (or ``nbext``).
"""

from ._client import AsyncClient, Client
from ._config import ClientConfig, Secret, load_config, mask
from ._errors import (
    APIError,
    BadRequest,
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
from ._jobs import AsyncEndpoint, AsyncJob, Endpoint, Job
from ._retry import RetryPolicy

__all__ = [
    "APIError",
    "AsyncClient",
    "AsyncEndpoint",
    "AsyncJob",
    "BadRequest",
    "Client",
    "ClientConfig",
    "ConfigError",
    "Conflict",
    "ConnectionError",
    "Endpoint",
    "Job",
    "JobCancelled",
    "JobError",
    "JobFailed",
    "JobTimedOut",
    "NbextError",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "RetryPolicy",
    "Secret",
    "ServerError",
    "Timeout",
    "Unauthorized",
    "load_config",
    "mask",
]

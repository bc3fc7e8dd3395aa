"""Typed sync and async clients of the service's job and management interfaces.

``Client`` blocks, ``AsyncClient`` is awaited; both have the same methods::

    with nbext.Client() as client:          # RUNPOD_API_KEY, or ~/.runpod/config.toml
        echo = client.endpoint("echo")
        job = echo.run({"text": "hi"})
        for piece in job.stream():
            print(piece)
        print(job.wait(timeout=60).output)
        for pod in client.pods.list():                # the management interface (REST v2)
            print(pod.id, pod.status, pod.cost)

Private modules are re-exported here; import from ``nbext.client`` (or ``nbext``).
"""

from . import _resources
from ._batches import AsyncBatch, Batch
from ._calls import JobOptions, JobOptionWords
from ._client import AsyncClient, Client
from ._config import DEFAULT_CONFIG_FILE, DEFAULT_PROFILE, ClientConfig, Secret, load_config, mask
from ._cost import Budget, JobCost, Price, usd_text
from ._diagnosis import Diagnosis, WorkerTail, why_queued
from ._errors import (
    APIError,
    BadRequest,
    BudgetExceeded,
    ChunksMissing,
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
from ._map import Abandoned, AsyncMapResults, MapResults, MaybeQueued
from ._phases import Phase, Timings
from ._recording import Recording
from ._resources import *  # noqa: F403  the resource classes, listed once there
from ._resources.wire import NOT_GIVEN, NotGiven
from ._retry import RetryPolicy

__all__ = [
    "DEFAULT_CONFIG_FILE",
    "DEFAULT_PROFILE",
    "NOT_GIVEN",
    "APIError",
    "Abandoned",
    "AsyncBatch",
    "AsyncClient",
    "AsyncEndpoint",
    "AsyncJob",
    "AsyncMapResults",
    "BadRequest",
    "Batch",
    "Budget",
    "BudgetExceeded",
    "ChunksMissing",
    "Client",
    "ClientConfig",
    "ConfigError",
    "Conflict",
    "ConnectionError",
    "Diagnosis",
    "Endpoint",
    "Job",
    "JobCancelled",
    "JobCost",
    "JobError",
    "JobFailed",
    "JobOptionWords",
    "JobOptions",
    "JobTimedOut",
    "MapResults",
    "MaybeQueued",
    "NbextError",
    "NotFound",
    "NotGiven",
    "PayloadTooLarge",
    "Phase",
    "Price",
    "RateLimited",
    "Recording",
    "RetryPolicy",
    "Secret",
    "ServerError",
    "Timeout",
    "Timings",
    "Unauthorized",
    "WorkerTail",
    "load_config",
    "mask",
    "usd_text",
    "why_queued",
    *_resources.__all__,
]

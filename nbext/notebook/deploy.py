"""``nbext.deploy``: a notebook function as an endpoint of the embedded emulator.

The function is bound to an image named after the endpoint, and the endpoint runs that
image. Deploying again under the same name (re-running the cell after editing the
function) rebinds the image: the endpoint keeps its queue, counters and running jobs,
and new jobs run the new code. Changing the scaling settings recreates the endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from .connection import Connection, current
from .errors import InvalidArgument, WrongType


def deploy(
    function: Callable[..., Any],
    name: str | None = None,
    *,
    workers_max: int = 3,
    workers_min: int = 0,
    idle_timeout: float = 5.0,
    execution_timeout: float | None = None,
    connection: Connection | None = None,
) -> str:
    """Make ``function`` an endpoint of the embedded emulator; returns the endpoint id.

    ``function(job)`` follows the service's worker convention: ``job["input"]`` is the
    input, the return value the output, a generator streams. ``name`` defaults to the
    function's name. ``execution_timeout`` is seconds (default 10 minutes). Only the
    local emulator runs notebook functions: connected to the cloud this raises.
    """
    if not callable(function):
        raise WrongType(f"deploy needs a function, got {type(function).__name__}")
    endpoint_id = name or getattr(function, "__name__", "")
    if not endpoint_id or endpoint_id == "<lambda>":
        raise InvalidArgument("this function has no usable name: pass name='my-endpoint'")
    service = (connection or current()).local()
    emulator = service.emulator
    assert emulator is not None
    image = f"notebook/{endpoint_id}"
    timeout_ms = (
        EXECUTION_TIMEOUT_DEFAULT_MS
        if execution_timeout is None
        else round(float(execution_timeout) * 1000)
    )
    settings: dict[str, Any] = {
        "workers_min": workers_min,
        "workers_max": workers_max,
        "idle_timeout": idle_timeout,
        "execution_timeout_ms": timeout_ms,
    }
    existing = emulator.jobs.endpoints.get(endpoint_id)
    same = (
        existing is not None
        and existing.image == image
        and all(getattr(existing, key) == value for key, value in settings.items())
    )
    emulator.register_image(image, function)
    if same:
        return endpoint_id
    if existing is not None:
        emulator.undeploy(endpoint_id)
    try:
        return emulator.deploy(image=image, endpoint_id=endpoint_id, **settings)
    except ValueError as exc:  # the emulator's word on a bad name or setting
        raise InvalidArgument(str(exc)) from None

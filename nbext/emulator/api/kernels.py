"""``/_emulator/kernel-endpoints``: a notebook kernel deploys a function it serves itself.

``PUT /{endpoint_id}`` creates the endpoint (or updates its scaling) and attaches the
kernel; the kernel then long-polls ``GET /{endpoint_id}/kernels/{kernel}`` for the
workers to start and stop (``workers/kernel_launcher.py``), and its workers pull jobs over
the worker protocol. ``DELETE`` there detaches it. A replaced kernel is answered 409, a
deleted endpoint 404: either way the kernel stops serving it.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from ..domain.errors import InvalidInput
from .http import Authenticated, json_response, no_content, parse_json, read_body
from .worker_routes import unless_gone

router = APIRouter(prefix="/_emulator/kernel-endpoints")

SETTINGS = {
    "workersMin": ("workers_min", int, 0),
    "workersMax": ("workers_max", int, 3),
    "idleTimeout": ("idle_timeout", float, 5.0),
    "executionTimeoutMs": ("execution_timeout_ms", int, EXECUTION_TIMEOUT_DEFAULT_MS),
}
"""A body's scaling settings: wire name -> (keyword, type, default)."""


def scaling_settings(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInput("body must be a JSON object of settings")
    out: dict[str, Any] = {}
    for wire, (name, kind, default) in SETTINGS.items():
        value = data.get(wire, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise InvalidInput(f"{wire} must be a number >= 0, got {value!r}")
        if kind is int and value != int(value):
            raise InvalidInput(f"{wire} must be a whole number, got {value!r}")
        out[name] = kind(value)
    return out


@router.put("/{endpoint_id}")
async def deploy(endpoint_id: str, request: Request, emulator: Authenticated) -> Response:
    """``{"workersMin"?, "workersMax"?, "idleTimeout"?, "executionTimeoutMs"?,
    "kernel"?}``: ``kernel``, the one that deployed it before, keeps its workers."""
    data = parse_json(await read_body(request, 4096))
    settings = scaling_settings(data)
    kernel = data.get("kernel")
    if kernel is not None and not isinstance(kernel, str):
        raise InvalidInput(f"kernel must be a kernel id (text), got {kernel!r}")
    try:
        kernel = emulator.deploy_kernel_function(endpoint_id, kernel=kernel, **settings)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    attach = f"/_emulator/kernel-endpoints/{endpoint_id}/kernels/{kernel}"
    return json_response({"endpoint": endpoint_id, "kernel": kernel, "attach": attach})


@router.get("/{endpoint_id}/kernels/{kernel_id}")
async def attach(
    endpoint_id: str, kernel_id: str, request: Request, emulator: Authenticated
) -> Response:
    """``{"start": [{"id", "key"}], "stop": [ids]}``, or 204 after the hold. A kernel
    that disconnects while its poll is held (killed, its connection closed) is gone."""
    gone, found = await unless_gone(request, emulator.kernels.poll(endpoint_id, kernel_id))
    if gone:
        emulator.kernels.detach(endpoint_id, kernel_id)
    return json_response(found) if found else no_content()


@router.delete("/{endpoint_id}/kernels/{kernel_id}")
async def detach(endpoint_id: str, kernel_id: str, emulator: Authenticated) -> Response:
    emulator.kernels.detach(endpoint_id, kernel_id)
    return no_content()

"""``/_emulator/kernel-endpoints``: a notebook kernel deploys a function it serves itself
(docs/architecture.md#a-notebook-function-as-an-endpoint)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS

from ..domain.errors import InvalidInput
from .http import Authenticated, json_response, no_content, parse_json, read_body
from .worker_routes import unless_gone

router = APIRouter(prefix="/_emulator/kernel-endpoints")


def deploy_settings(data: Any) -> dict[str, Any]:
    """A deploy body's ``workers`` and ``executionTimeoutMs``, as ``Emulator.deploy``
    takes them."""
    if not isinstance(data, dict):
        raise InvalidInput("body must be a JSON object of settings")
    if flat := sorted({"workersMin", "workersMax", "idleTimeout", "loadBalancer"} & data.keys()):
        raise InvalidInput(
            f'{flat[0]} is not a setting: give workers {{"min", "max", '
            '"idleTimeout"}} and type, as REST v2 does'
        )
    timeout = data.get("executionTimeoutMs", EXECUTION_TIMEOUT_DEFAULT_MS)
    if isinstance(timeout, bool) or not isinstance(timeout, int):
        raise InvalidInput(f"executionTimeoutMs must be a whole number of ms, got {timeout!r}")
    return {"workers": data.get("workers"), "execution_timeout_ms": timeout}


@router.put("/{endpoint_id}")
async def deploy(endpoint_id: str, request: Request, emulator: Authenticated) -> Response:
    """``{"workers"?, "executionTimeoutMs"?, "kernel"?}``: ``kernel``, the one that
    deployed it before, keeps its workers."""
    data = parse_json(await read_body(request, 4096))
    settings = deploy_settings(data)
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

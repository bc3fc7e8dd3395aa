"""``/v1``: the management interface, one router per area of the reference.

Routers only translate: parse (with the wire models), call ``Management``, serialise.
Errors under ``/v1`` are ``{"message": ...}``, including the framework's own 404 and 405.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from ..http import json_response
from . import billing, docs, endpoints, network_volumes, pods, registry_auths, templates

router = APIRouter()
for area in (docs, pods, endpoints, templates, network_volumes, registry_auths, billing):
    router.include_router(area.router)


def install(app: FastAPI) -> None:
    """Serve ``/v1`` on ``app``, with the interface's error body for unknown paths."""
    app.include_router(router)

    async def on_http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if not request.url.path.startswith("/v1"):
            return await http_exception_handler(request, exc)
        if exc.status_code == 404:
            message = (
                f"no operation at {request.url.path}; the interface is described at "
                "/v1/openapi.json"
            )
        elif exc.status_code == 405:
            message = (
                f"{request.method} is not an operation of {request.url.path}; the interface "
                "is described at /v1/openapi.json"
            )
        else:
            message = str(exc.detail)
        return json_response({"message": message}, exc.status_code, dict(exc.headers or {}))

    app.add_exception_handler(HTTPException, on_http_error)


__all__ = ["install", "router"]

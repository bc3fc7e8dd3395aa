"""``/v2`` management: REST v2 beside the job interface, over the same domain as ``/v1``.

Routers only parse (against the reference's schemas, ``contract.py``), call the domain
(``m.pods``, ``m.templates``, ``m.endpoints``, ``m.volumes``, ...: the rules) and
serialise. A
path under ``/v2`` is management's when its first segment is one of
``MANAGEMENT_SEGMENTS`` (pods, templates, serverless, ...); every other ``/v2`` path is
the job interface's (``api/jobs.py``, whose ``endpoint_id`` never matches those). Errors on
management's paths are problem documents (``common.problem``); elsewhere the handlers
installed before this one answer as they did.
"""

from __future__ import annotations

import inspect
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from nbext.models.v2 import is_management_path

from ...domain.errors import DomainError
from . import account, billing, catalog, clusters, docs, pods, serverless, storage, templates
from .common import problem, problem_of

router = APIRouter()
for area in (
    templates.router,
    pods.router,
    serverless.router,
    storage.volumes,
    storage.registries,
    catalog.router,
    billing.router,
    account.router,
    clusters.router,
    docs.router,
):
    router.include_router(area)


async def _call(handler: Any, request: Request, exc: Exception) -> Response:
    """Run an exception handler installed before (sync or async)."""
    result = handler(request, exc)
    if inspect.isawaitable(result):
        result = await result
    assert isinstance(result, Response)
    return result


def install(app: FastAPI) -> None:
    """Serve ``/v2`` management on ``app``; call after the app's own error handlers."""
    app.include_router(router)
    on_domain = app.exception_handlers[DomainError]
    on_http = app.exception_handlers[HTTPException]

    async def domain_error(request: Request, exc: Exception) -> Response:
        if isinstance(exc, DomainError) and is_management_path(request.url.path):
            return problem_of(exc)
        return await _call(on_domain, request, exc)

    async def http_error(request: Request, exc: Exception) -> Response:
        path = request.url.path
        if not (isinstance(exc, HTTPException) and is_management_path(path)):
            return await _call(on_http, request, exc)
        if exc.status_code == 404:
            detail = f"no operation at {path}; the interface is described at /v2/openapi.json"
        elif exc.status_code == 405:
            detail = f"{request.method} is not an operation of {path}"
        else:
            detail = str(exc.detail)
        return problem(exc.status_code, detail, headers=dict(exc.headers or {}))

    app.add_exception_handler(DomainError, domain_error)
    app.add_exception_handler(HTTPException, http_error)


__all__ = ["install", "router"]

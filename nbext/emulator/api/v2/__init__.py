"""``/v2`` management: REST v2 beside the job interface, over the same domain as ``/v1``
(docs/rest-v2.md, docs/architecture.md#adding-a-management-resource)."""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.responses import Response

from nbext.models.v2.resources import ENDPOINTS, PODS, RESOURCES

from ..http import reference_bytes
from . import account, billing, catalog, clusters, pods, records, serverless
from .common import checked_query

AREAS = (  # the most asked first (``create_app`` says why)
    serverless.router,
    catalog.router,
    pods.router,
    *(records.router(row) for row in RESOURCES if row not in (PODS, ENDPOINTS)),  # own routers
    billing.router,
    account.router,
    clusters.router,
)


def install(app: FastAPI) -> None:
    """Each area included straight into ``app`` (``v1.install`` says why)."""
    for area in AREAS:
        app.include_router(area, dependencies=[Depends(checked_query)])
    app.add_api_route("/v2/openapi.json", openapi, tags=["v2 docs"])  # public


async def openapi() -> Response:
    return Response(reference_bytes(__package__), media_type="application/json")


__all__ = ["install"]

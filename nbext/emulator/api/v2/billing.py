"""``/v2/billing``: parse the query, call the domain's ``Billing`` (``m.billing``),
serialise."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from .common import Checked, Managed, ok

router = APIRouter(prefix="/v2/billing", tags=["v2 billing"])


@router.get("")
async def billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.total(query))


@router.get("/pods")
async def pod_billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.pods(query))


@router.get("/serverless")
async def serverless_billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.serverless(query))


@router.get("/endpoints")
async def endpoint_billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.public_endpoints(query))


@router.get("/network-volumes")
async def volume_billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.volumes(query))


@router.get("/clusters")
async def cluster_billing(m: Managed, query: Checked) -> Response:
    return ok(m.billing.clusters(query))

"""``/v1/billing/...``: spending of pods, endpoints and network volumes, per time bucket."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v1 import EndpointBillingQuery, NetworkVolumeBillingQuery, PodBillingQuery

from .common import Managed, ok, query

router = APIRouter(prefix="/v1/billing", tags=["billing"])


@router.get("/pods")
async def pod_billing(request: Request, m: Managed) -> Response:
    return ok(m.v1_billing.pods(query(request, PodBillingQuery)))


@router.get("/endpoints")
async def endpoint_billing(request: Request, m: Managed) -> Response:
    return ok(m.v1_billing.endpoints(query(request, EndpointBillingQuery)))


@router.get("/networkvolumes")
async def network_volume_billing(request: Request, m: Managed) -> Response:
    return ok(m.v1_billing.network_volumes(query(request, NetworkVolumeBillingQuery)))

"""``/v2/billing``: the domain's ``Billing`` reports (``m.billing``), one per path."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from ...domain.management.billing import Billing
from ...domain.management.facade import Management
from .common import Checked, Managed, ok

router = APIRouter(prefix="/v2/billing", tags=["v2 billing"])
Report = Callable[[Billing, dict[str, Any]], dict[str, Any]]
REPORTS: dict[str, Report] = {
    "": Billing.total,
    "/pods": Billing.pods,
    "/serverless": Billing.serverless,
    "/endpoints": Billing.public_endpoints,
    "/network-volumes": Billing.volumes,
    "/clusters": Billing.clusters,
}


def _route(report: Report) -> Callable[[Management, dict[str, Any]], Awaitable[Response]]:
    async def route(m: Managed, query: Checked) -> Response:
        return ok(report(m.billing, query))

    return route


for _path, _report in REPORTS.items():
    router.add_api_route(_path, _route(_report), methods=["GET"])

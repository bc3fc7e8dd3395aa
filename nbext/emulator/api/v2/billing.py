"""``/v2/billing``: parse the query, call the domain's ``Billing`` (``m.billing``),
serialise."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from ...domain.management.facade import Management
from .common import Checked, Managed, ok

router = APIRouter(prefix="/v2/billing", tags=["v2 billing"])
REPORTS = {
    "": "total",
    "/pods": "pods",
    "/serverless": "serverless",
    "/endpoints": "public_endpoints",
    "/network-volumes": "volumes",
    "/clusters": "clusters",
}
"""Each path's report, by the name of the ``Billing`` method that makes it."""


def _report(name: str) -> Callable[[Management, dict[str, Any]], Awaitable[Response]]:
    async def report(m: Managed, query: Checked) -> Response:
        return ok(getattr(m.billing, name)(query))

    return report


for _path, _name in REPORTS.items():
    router.add_api_route(_path, _report(_name), methods=["GET"])

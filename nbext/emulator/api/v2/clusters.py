"""``/v2/clusters/{id}/pods``: the member pods a cluster runs (the cluster's own routes are
the generic ones, ``records.py``)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from .common import Managed, ok

router = APIRouter(prefix="/v2/clusters", tags=["v2 clusters"])


@router.get("/{cluster_id}/pods")
async def list_cluster_pods(cluster_id: str, m: Managed) -> Response:
    cluster = m.clusters.get(cluster_id)
    return ok({"pods": [m.pods.member_view(cluster, p) for p in m.clusters.members(cluster)]})

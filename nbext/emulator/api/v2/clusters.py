"""``/v2/clusters``: instant clusters, and the member pods each one runs."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from .common import Managed, body, no_content, ok

router = APIRouter(prefix="/v2/clusters", tags=["v2 clusters"])


@router.get("")
async def list_clusters(m: Managed) -> Response:
    return ok({"clusters": [m.clusters.summary(c) for c in m.clusters.book]})


@router.post("")
async def create_cluster(request: Request, m: Managed) -> Response:
    data = await body(request, "CreateClusterRequest")
    return ok(m.clusters.summary(m.clusters.create(data)), 201)


@router.get("/{cluster_id}")
async def get_cluster(cluster_id: str, m: Managed) -> Response:
    return ok(m.clusters.summary(m.clusters.get(cluster_id)))


@router.patch("/{cluster_id}")
async def update_cluster(cluster_id: str, request: Request, m: Managed) -> Response:
    m.clusters.get(cluster_id)
    data = await body(request, "UpdateClusterRequest")
    return ok(m.clusters.summary(m.clusters.rename(cluster_id, data["name"])))


@router.delete("/{cluster_id}")
async def delete_cluster(cluster_id: str, m: Managed) -> Response:
    m.clusters.delete(cluster_id)
    return no_content()


@router.get("/{cluster_id}/pods")
async def list_cluster_pods(cluster_id: str, m: Managed) -> Response:
    cluster = m.clusters.get(cluster_id)
    return ok({"pods": [m.pods.member_view(cluster, p) for p in m.clusters.members(cluster)]})

"""``/v1/pods``: simulated pods: create (201), list, get, update (two ways), delete, and
start, stop, restart, reset."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import PodCreateInput, PodIncludes, PodListQuery, PodUpdateInput

from .common import body, management, no_content, ok, query

router = APIRouter(prefix="/v1/pods", tags=["pods"])


@router.post("")
async def create_pod(request: Request) -> Response:
    m = management(request)
    return ok(m.pods.create(await body(request, PodCreateInput)), 201)


@router.get("")
async def list_pods(request: Request) -> Response:
    m = management(request)
    return ok(m.pods.listing(query(request, PodListQuery)))


@router.get("/{pod_id}")
async def get_pod(pod_id: str, request: Request) -> Response:
    m = management(request)
    return ok(m.pods.get(pod_id, query(request, PodIncludes)))


@router.patch("/{pod_id}")
@router.post("/{pod_id}/update")
async def update_pod(pod_id: str, request: Request) -> Response:
    m = management(request)
    m.pods.entry(pod_id)
    return ok(m.pods.update(pod_id, await body(request, PodUpdateInput)))


@router.delete("/{pod_id}")
async def delete_pod(pod_id: str, request: Request) -> Response:
    management(request).pods.delete(pod_id)
    return no_content()


@router.post("/{pod_id}/start")
async def start_pod(pod_id: str, request: Request) -> Response:
    return ok(management(request).pods.start(pod_id))


@router.post("/{pod_id}/stop")
async def stop_pod(pod_id: str, request: Request) -> Response:
    return ok(management(request).pods.stop(pod_id))


@router.post("/{pod_id}/restart")
async def restart_pod(pod_id: str, request: Request) -> Response:
    return ok(management(request).pods.restart(pod_id))


@router.post("/{pod_id}/reset")
async def reset_pod(pod_id: str, request: Request) -> Response:
    return ok(management(request).pods.reset(pod_id))

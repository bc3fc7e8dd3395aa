"""``/v2/pods``: parse, call the domain's ``V2Pods`` (``m.v2.pods``), serialise.

The rules of a v2 pod body, its observed status and its actions are the domain's
(``domain/management/v2_pods.py``); a pod is the same record ``/v1/pods`` serves.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v2 import PodAction

from .common import body, management, no_content, ok
from .streams import sse

router = APIRouter(prefix="/v2/pods", tags=["v2 pods"])


@router.get("")
async def list_pods(request: Request) -> Response:
    m, query = management(request, "listPods")
    return ok({"pods": m.v2.pods.listing(bool(query.get("includeClusterPods")))})


@router.post("")
async def create_pod(request: Request) -> Response:
    m, _ = management(request, "createPod")
    return ok(m.v2.pods.create(await body(request, "CreatePodRequest")), 201)


@router.get("/{pod_id}")
async def get_pod(pod_id: str, request: Request) -> Response:
    m, _ = management(request, "getPod")
    return ok(m.v2.pods.get(pod_id))


@router.patch("/{pod_id}")
async def update_pod(pod_id: str, request: Request) -> Response:
    m, _ = management(request, "updatePod")
    m.v2.pods.changeable(pod_id)  # 409 or 404 before the body is read
    return ok(m.v2.pods.update(pod_id, await body(request, "UpdatePodRequest")))


@router.delete("/{pod_id}")
async def delete_pod(pod_id: str, request: Request) -> Response:
    m, _ = management(request, "deletePod")
    m.v2.pods.delete(pod_id)
    return no_content()


@router.post("/{pod_id}/action")
async def pod_action(pod_id: str, request: Request) -> Response:
    m, _ = management(request, "podAction")
    m.v2.pods.changeable(pod_id)
    action = PodAction((await body(request, "PodActionRequest"))["action"])
    done = m.v2.pods.act(pod_id, action)
    return no_content() if done is None else ok(done)


@router.get("/{pod_id}/logs")
async def pod_logs(pod_id: str, request: Request) -> Response:
    m, query = management(request, "getPodLogs")
    return sse(request, query, m.v2.pods.log_lines(pod_id))

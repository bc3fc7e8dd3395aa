"""``/v2/pods``: the domain's ``Pods`` (``m.pods``), whose records ``/v1/pods`` shows too;
the rules of a pod body, its observed status and its actions are the domain's."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models.v2 import PodAction

from .common import Checked, Managed, body, no_content, ok
from .streams import sse

router = APIRouter(prefix="/v2/pods", tags=["v2 pods"])


@router.get("")
async def list_pods(m: Managed, query: Checked) -> Response:
    return ok({"pods": m.pods.listing(bool(query.get("includeClusterPods")))})


@router.post("")
async def create_pod(request: Request, m: Managed) -> Response:
    return ok(m.pods.view(m.pods.create(await body(request))), 201)


@router.get("/{pod_id}")
async def get_pod(pod_id: str, m: Managed) -> Response:
    return ok(m.pods.get(pod_id))


@router.patch("/{pod_id}")
async def update_pod(pod_id: str, request: Request, m: Managed) -> Response:
    m.pods.changeable(pod_id)  # 409 or 404 before the body is read
    return ok(m.pods.view(m.pods.update(pod_id, await body(request))))


@router.delete("/{pod_id}")
async def delete_pod(pod_id: str, m: Managed) -> Response:
    m.pods.changeable(pod_id)
    m.pods.delete(pod_id)
    return no_content()


@router.post("/{pod_id}/action")
async def pod_action(pod_id: str, request: Request, m: Managed) -> Response:
    m.pods.changeable(pod_id)
    action = PodAction((await body(request))["action"])
    done = m.pods.act(pod_id, action)
    return no_content() if done is None else ok(m.pods.view(done))


@router.get("/{pod_id}/logs")
async def pod_logs(pod_id: str, request: Request, m: Managed, query: Checked) -> Response:
    return sse(request, query, m.pods.log_lines(pod_id))

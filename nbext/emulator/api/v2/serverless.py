"""``/v2/serverless``: the domain's ``Endpoints`` (``m.endpoints``, the records
``/v1/endpoints`` serves too) and its views (``endpoint_views``). A worker script's logs
are what its processes print (docs/workers.md#logs)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...domain.errors import NotFound
from ...domain.management import endpoint_views
from ..http import emulator_of
from .common import Checked, Managed, body, no_content, ok
from .streams import sse

router = APIRouter(prefix="/v2/serverless", tags=["v2 serverless"])


@router.get("")
async def list_endpoints(request: Request, m: Managed) -> Response:
    base = str(request.base_url)
    return ok({"endpoints": [endpoint_views.view(m.endpoints, e, base) for e in m.endpoints.book]})


@router.post("")
async def create_endpoint(request: Request, m: Managed) -> Response:
    made = m.endpoints.create(await body(request))
    if made.type == "LOAD_BALANCER":
        emulator_of(request).serve_demo_server(made.id)
    return ok(endpoint_views.view(m.endpoints, made, str(request.base_url)), 201)


@router.get("/{endpoint_id}")
async def get_endpoint(endpoint_id: str, request: Request, m: Managed) -> Response:
    return ok(endpoint_views.view(m.endpoints, m.endpoints.get(endpoint_id), str(request.base_url)))


@router.patch("/{endpoint_id}")
async def update_endpoint(endpoint_id: str, request: Request, m: Managed) -> Response:
    m.endpoints.get(endpoint_id)  # 404 before the body is read
    changed = m.endpoints.update(endpoint_id, await body(request))
    return ok(endpoint_views.view(m.endpoints, changed, str(request.base_url)))


@router.delete("/{endpoint_id}")
async def delete_endpoint(endpoint_id: str, m: Managed) -> Response:
    m.endpoints.get(endpoint_id)
    m.endpoints.delete(endpoint_id)
    return no_content()


@router.get("/{endpoint_id}/workers")
async def list_workers(endpoint_id: str, request: Request, m: Managed) -> Response:
    e = m.endpoints.get(endpoint_id)
    remote = emulator_of(request).remote_workers
    processes = remote.states(endpoint_id) if endpoint_id in remote.pools else None
    logs = m.worker_logs
    health = emulator_of(request).balancer.health_seen
    return ok(endpoint_views.workers(m.endpoints, logs, e, processes, remote.started_at, health))


@router.get("/{endpoint_id}/releases")
async def list_releases(endpoint_id: str, m: Managed) -> Response:
    return ok(endpoint_views.release_listing(m.endpoints, m.endpoints.get(endpoint_id)))


@router.get("/{endpoint_id}/workers/{worker_id}/logs")
async def worker_logs(
    endpoint_id: str, worker_id: str, request: Request, m: Managed, query: Checked
) -> Response:
    m.endpoints.get(endpoint_id)
    lines = emulator_of(request).remote_workers.output.log(endpoint_id, worker_id)
    if lines is None:  # not a worker script's process: the jobs its worker ran
        live = m.jobs.endpoints.get(endpoint_id)
        worker = next((w for w in live.workers if w.id == worker_id), None) if live else None
        if worker is not None:
            m.worker_logs.observe(endpoint_id, worker_id, live.image if live else None)
        crashed = (worker.started_at, worker.last_line) if worker and worker.last_line else None
        lines = m.worker_logs.lines(endpoint_id, worker_id, crashed)
    if lines is None:
        raise NotFound(f"worker {worker_id!r} of endpoint {endpoint_id!r} not found")
    return sse(request, query, lines)

"""``/v2/serverless``: parse, call the domain's ``V2Endpoints`` (``m.v2.endpoints``),
serialise; an endpoint is the same record ``/v1/endpoints`` serves. Workers and their logs
are read here, from the job interface's live endpoints and, for an endpoint deployed from a
worker script, from its processes, in the states they are in, serving what they print as
their workers' logs (docs/workers.md#logs).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ...domain.errors import NotFound
from ...domain.management import catalog
from ...domain.management.records import iso
from ..http import emulator_of
from .common import body, management, no_content, ok
from .streams import sse

router = APIRouter(prefix="/v2/serverless", tags=["v2 serverless"])


@router.get("")
async def list_endpoints(request: Request) -> Response:
    m, _ = management(request, "listEndpoints")
    return ok({"endpoints": m.v2.endpoints.listing(str(request.base_url))})


@router.post("")
async def create_endpoint(request: Request) -> Response:
    m, _ = management(request, "createEndpoint")
    data = await body(request, "CreateEndpointRequest")
    return ok(m.v2.endpoints.create(data, str(request.base_url)), 201)


@router.get("/{endpoint_id}")
async def get_endpoint(endpoint_id: str, request: Request) -> Response:
    m, _ = management(request, "getEndpoint")
    return ok(m.v2.endpoints.get(endpoint_id, str(request.base_url)))


@router.patch("/{endpoint_id}")
async def update_endpoint(endpoint_id: str, request: Request) -> Response:
    m, _ = management(request, "updateEndpoint")
    m.endpoints.entry(endpoint_id)  # 404 before the body is read
    data = await body(request, "UpdateEndpointRequest")
    return ok(m.v2.endpoints.update(endpoint_id, data, str(request.base_url)))


@router.delete("/{endpoint_id}")
async def delete_endpoint(endpoint_id: str, request: Request) -> Response:
    m, _ = management(request, "deleteEndpoint")
    m.v2.endpoints.delete(endpoint_id)
    return no_content()


@router.get("/{endpoint_id}/workers")
async def list_workers(endpoint_id: str, request: Request) -> Response:
    m, _ = management(request, "listEndpointWorkers")
    e = m.endpoints.entry(endpoint_id)
    live = m.jobs.endpoints.get(endpoint_id)
    version = e.view.version or 0
    gpu = e.gpu_type_id()
    centre = str((e.view.data_center_ids or [catalog.DATA_CENTERS_DEFAULT])[0])
    now = m.clock.now()
    remote = emulator_of(request).remote_workers
    processes = remote.states(endpoint_id) if endpoint_id in remote.pools else None
    workers = []
    for w in live.workers if live else []:
        if processes is None:  # in process: booting as its scenario has it, or ready
            status = ("RUNNING" if w.running else "IDLE") if w.ready else w.state.upper()
            started = m.v2.worker_logs.observe(endpoint_id, w.id, live.image if live else None)
        elif w.id in processes:  # a worker script's process: where it really is
            status = processes[w.id].upper()
            started = remote.started_at(w.id) or now
        else:  # its process is stopping: no longer an active worker
            continue
        workers.append(
            {
                "id": w.id,
                "status": status,
                "isStale": False,
                "version": version,
                "gpuCount": (e.view.gpu_count or 1) if gpu else 0,
                "image": live.image if live else None,
                "uptimeSeconds": max(0, int(now - started)),
                "gpuTypeId": gpu,
                "dataCenterId": centre,
                "startedAt": iso(started),
            }
        )
    summary = {
        state: sum(1 for w in workers if w["status"] == state.upper())
        for state in ("running", "idle", "initializing", "throttled", "unhealthy")
    }
    summary["total"] = len(workers)
    return ok({"workers": workers, "summary": summary, "endpointVersion": version})


@router.get("/{endpoint_id}/releases")
async def list_releases(endpoint_id: str, request: Request) -> Response:
    m, _ = management(request, "listEndpointReleases")
    return ok(m.v2.endpoints.release_listing(endpoint_id))


@router.get("/{endpoint_id}/workers/{worker_id}/logs")
async def worker_logs(endpoint_id: str, worker_id: str, request: Request) -> Response:
    m, query = management(request, "getWorkerLogs")
    m.endpoints.entry(endpoint_id)
    lines = emulator_of(request).remote_workers.output.log(endpoint_id, worker_id)
    if lines is None:  # not a worker script's process: the jobs its worker ran
        live = m.jobs.endpoints.get(endpoint_id)
        worker = next((w for w in live.workers if w.id == worker_id), None) if live else None
        if worker is not None:
            m.v2.worker_logs.observe(endpoint_id, worker_id, live.image if live else None)
        crashed = (worker.started_at, worker.last_line) if worker and worker.last_line else None
        lines = m.v2.worker_logs.lines(endpoint_id, worker_id, crashed)
    if lines is None:
        raise NotFound(f"worker {worker_id!r} of endpoint {endpoint_id!r} not found")
    return sse(request, query, lines)

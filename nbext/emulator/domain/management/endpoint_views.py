"""An endpoint record as ``/v2`` shows it, with ``requestUrls``, releases and workers;
read beside its template and live endpoint (docs/architecture.md#management-areas)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from nbext.models.v2.convert import to_v2

from . import catalog, offers
from .container import split_args
from .endpoints import EndpointRecord, Endpoints
from .logs import WorkerLogs
from .records import iso

JOB_ID = "%7Bjob_id%7D"
"""``{job_id}``, percent-encoded: the reference's example writes the braces, but its schema
says ``format: uri``, which forbids them; ``urllib.parse.unquote`` gives the template back."""


def request_urls(base: str, endpoint_id: str) -> dict[str, str]:
    """The job interface's URLs for the endpoint, on the emulator the request came to."""
    root = f"{base.rstrip('/')}/v2/{endpoint_id}"
    return {
        "run": f"{root}/run",
        "runSync": f"{root}/runsync",
        "status": f"{root}/status/{JOB_ID}",
        "stream": f"{root}/stream/{JOB_ID}",
        "cancel": f"{root}/cancel/{JOB_ID}",
        "retry": f"{root}/retry/{JOB_ID}",
        "purgeQueue": f"{root}/purge-queue",
        "health": f"{root}/health",
    }


def _gpu(e: EndpointRecord) -> dict[str, Any]:
    types = [catalog.ALIASES.get(g, g) for g in e.gpu_types]  # v1 spellings: the type
    pools = sorted({offers.pool_of(g) for g in types if g in catalog.GPUS})
    all_types = offers.pools()
    excluded = [g for p in pools for g in all_types[p] if g not in types]
    gpu: dict[str, Any] = {
        "pools": pools or [offers.pool_of(str(catalog.DEFAULT_GPU_TYPE))],
        "count": e.gpu_count,
        "allowedCudaVersions": list(e.allowed_cuda_versions or []),
        "minCudaVersion": e.min_cuda_version or None,
    }
    if excluded:
        gpu["excludedTypes"] = excluded
    return gpu


def view(endpoints: Endpoints, e: EndpointRecord, base: str) -> dict[str, Any]:
    """The endpoint as ``/v2/serverless`` shows it; ``base`` is the root URL the request came to."""
    t = endpoints.template(e)
    out: dict[str, Any] = {"id": e.id, "name": e.name or e.id, "type": e.type}
    if e.id in endpoints.jobs.endpoints and e.type == "LOAD_BALANCER":
        # the path form, which every client reaches (ID.localhost needs a resolver for it)
        root = f"{base.rstrip('/')}/lb/{e.id}"
        out["requestUrls"] = {
            "base": root,
            "health": root + e.env.get("HEALTH_CHECK_PATH", "/ping"),
        }
    elif e.id in endpoints.jobs.endpoints:
        out["requestUrls"] = request_urls(base, e.id)
    out.update(
        to_v2(
            t.image if t else None,
            split_args(t.args) if t else None,
            t.disk if t else None,
            e.env,
            t.ports if t else None,
            t.registry if t else None,
        )
    )
    if e.gpu:
        out["gpu"] = _gpu(e)
    else:
        out["gpu"] = None
        vcpus = max(2, e.vcpu_count)
        out["cpu"] = [
            {"id": f, "vcpuCount": vcpus, "memory": vcpus * catalog.cpu(f).memory_per_vcpu_gb}
            for f in e.cpu_flavors
        ]
    scaling: dict[str, Any] = {"type": "QUEUE_DELAY", "queueDelay": float(e.scaling_value)}
    if e.scaling_type == "REQUEST_COUNT":
        scaling = {"type": "REQUEST_COUNT", "requestCount": max(1, int(e.scaling_value))}
    workers: dict[str, Any] = {"min": e.workers_min, "max": e.workers_max}
    idle = math.ceil(e.idle_timeout)  # as v1 shows it too
    if scaling["type"] == "QUEUE_DELAY" and 1 <= idle <= 3600:
        workers["idleTimeout"] = idle
    out.update(
        workers=workers,
        scaling=scaling,
        dataCenterIds=list(e.data_center_ids),
        networkVolumes=list(e.network_volumes),
        timeout=e.timeout_ms,
        flashboot=e.flashboot,
        createdAt=iso(e.created_at),
    )
    return out


def release_listing(endpoints: Endpoints, e: EndpointRecord) -> dict[str, Any]:
    """The endpoint's releases, newest first, and how far the latest has rolled out."""
    live = endpoints.jobs.endpoints.get(e.id)
    total = len(live.workers) if live else 0
    known = endpoints.note_release(e)
    out = []
    previous: str | None = None
    for i, release in enumerate(known):
        diff = []
        if i and release["image"] != previous:
            diff.append({"field": "image", "old": previous, "new": release["image"]})
        previous = release["image"]
        out.append(
            {
                "id": release["id"],
                "version": release["version"],
                "source": "MANUAL",
                "buildId": None,
                "createdByUserId": catalog.USER_ID,
                "workerCount": total if i == len(known) - 1 else 0,
                "createdAt": iso(float(release["ts"])),
                "diff": diff,
            }
        )
    out.reverse()  # newest first
    rollout = {
        "inProgress": False,
        "workersOnLatest": total,
        "workersTotal": total,
        "percentOnLatest": 100,
    }
    return {"endpointVersion": e.version, "rollout": rollout, "releases": out}


def workers(
    endpoints: Endpoints,
    logs: WorkerLogs,
    e: EndpointRecord,
    processes: Mapping[str, str] | None,
    started_at: Callable[[str], float | None],
    health: Mapping[str, str],
) -> dict[str, Any]:
    """The live endpoint's workers as they are: ``processes``, the states of a worker
    script's processes (else ``None``: in-process workers, ready since ``logs`` saw them);
    ``healthCheck``, the emulator's own field, is what a load balancer's probe last got."""
    live = endpoints.jobs.endpoints.get(e.id)
    gpu = e.gpu_type_id()
    now = endpoints.clock.now()
    found = []
    for w in live.workers if live else []:
        if processes is None:
            status = ("RUNNING" if w.running else "IDLE") if w.ready else w.state.upper()
            started = logs.observe(e.id, w.id, live.image if live else None)
        elif w.id in processes:  # a worker script's process: where it really is
            status = processes[w.id].upper()
            started = started_at(w.id) or now
        else:  # its process is stopping: no longer an active worker
            continue
        found.append(
            {
                "id": w.id,
                "status": status,
                "isStale": False,
                "version": e.version,
                "gpuCount": e.gpu_count if gpu else 0,
                "image": live.image if live else None,
                "uptimeSeconds": max(0, int(now - started)),
                "gpuTypeId": gpu,
                "dataCenterId": e.data_center(),
                "startedAt": iso(started),
                **({"healthCheck": health[w.id]} if w.id in health else {}),
            }
        )
    summary = {
        state: sum(1 for w in found if w["status"] == state.upper())
        for state in ("running", "idle", "initializing", "throttled", "unhealthy")
    }
    summary["total"] = len(found)
    return {"workers": found, "summary": summary, "endpointVersion": e.version}

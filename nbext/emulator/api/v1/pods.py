"""``/v1/pods``: create (201), list, get, update (two ways), delete, start, stop, restart,
reset, and what only v1 has (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import CloudType
from nbext.models.v1 import ComputeType, PodCreateInput, PodIncludes, PodListQuery, PodUpdateInput

from ...domain.errors import InvalidInput, NotFound
from ...domain.management import catalog
from ...domain.management.facade import Management
from ...domain.management.pod_input import PodChange, PodOrder
from ...domain.management.pods import PodRecord
from ...domain.management.records import atomic, new_id, to_datetime, wire
from .common import Managed, body, no_content, ok, query
from .notes import forget, keep, kept_for
from .views import pod_view, template_view, volume_view, worker_pods

router = APIRouter(prefix="/v1/pods", tags=["pods"])

RECORD_FIELDS = {
    "name": "name",
    "locked": "locked",
    "image_name": "image",
    "container_disk_in_gb": "disk",
    "container_registry_auth_id": "registry",
    "docker_start_cmd": "args",
    "env": "env",
    "global_networking": "global_networking",
    "ports": "ports",
    "volume_in_gb": "volume_size",
    "volume_mount_path": "volume_path",
}
"""A v1 update's fields, by the record's name for each (its entrypoint ``/v1`` keeps)."""


APART = ("name", "locked", "env", "global_networking")
ORDER_FIELDS = {k: v for k, v in RECORD_FIELDS.items() if k not in APART}
"""A v1 create's container fields, by the record's name for each: an update's, less those
a create takes apart (``APART``)."""

NAMED = {
    "template_id": "templateId",
    "registry": "containerRegistryAuthId",
    "network_volume_id": "networkVolumeId",
    "data_center_ids": "dataCenterIds",
    "country_codes": "countryCodes",
}


def order(m: Management, body: PodCreateInput) -> PodOrder:
    """What a v1 create asks, in the record's terms (its first GPU type or CPU flavor)."""
    given: dict[str, Any] = {}
    for name in body.model_fields_set & ORDER_FIELDS.keys():
        value = getattr(body, name)
        given[ORDER_FIELDS[name]] = shlex.join(value) if name == "docker_start_cmd" else value
    gpu = body.compute_type == ComputeType.GPU
    return PodOrder(
        name=body.name,
        template_id=body.template_id,
        gpu_type_id=(body.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE])[0] if gpu else None,
        gpu_count=body.gpu_count,
        cpu_flavor_id=None if gpu else (body.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR])[0],
        vcpu_count=body.vcpu_count,
        min_vcpu_per_gpu=body.min_vcpu_per_gpu,
        min_ram_per_gpu=body.min_ram_per_gpu,
        cloud=body.cloud_type,
        interruptible=body.interruptible,
        locked=body.locked,
        global_networking=body.global_networking,
        data_center_ids=[str(d) for d in body.data_center_ids],
        country_codes=body.country_codes,
        network_volume_id=body.network_volume_id,
        env=dict(body.env),
        given=given,
        named=NAMED,
    )


def entrypoint(m: Management, body: PodCreateInput) -> list[str]:
    """A v1 create's entrypoint: the body's, else its template's as ``/v1`` keeps it."""
    if "docker_entrypoint" in body.model_fields_set or not body.template_id:
        return list(body.docker_entrypoint)
    return list(kept_for(m, body.template_id).get("entrypoint", []))


def change(body: PodUpdateInput) -> PodChange:
    """What a v1 update asks, in the record's fields; a field v1 does not know is refused
    (400, naming the fields there are), as v1 always did."""
    fields = PodUpdateInput.model_fields
    unknown = sorted(body.model_extra or {})
    if unknown:
        known = sorted(f.alias or n for n, f in fields.items())
        raise InvalidInput(
            f"{', '.join(unknown)}: not a field of a pod update; nothing was changed. "
            f"The fields are: {', '.join(known)}"
        )
    values: dict[str, Any] = {}
    named: dict[str, str] = {}
    for name in body.model_fields_set:
        value = getattr(body, name)
        if name in RECORD_FIELDS and value is not None:
            values[RECORD_FIELDS[name]] = shlex.join(value) if name == "docker_start_cmd" else value
            named[RECORD_FIELDS[name]] = fields[name].alias or name
    unheld = ("dockerEntrypoint",) if body.docker_entrypoint is not None else ()
    return PodChange(values, named, unheld)


def answer(m: Management, e: PodRecord, includes: PodIncludes | None = None) -> dict[str, Any]:
    includes = includes or PodIncludes()
    out = wire(pod_view(m, e))
    if includes.include_machine:
        out["machine"] = _machine(e)
    if includes.include_network_volume and e.network_volume_id:
        volume = m.volumes.book.get(e.network_volume_id)
        if volume is not None:
            out["networkVolume"] = wire(volume_view(volume))
    if includes.include_savings_plans:
        out["savingsPlans"] = []  # the emulator sells no savings plans
    if includes.include_template and e.template_id and (t := m.templates.find(e.template_id)):
        out["template"] = wire(template_view(m, t))
    return out


def _machine(e: PodRecord) -> dict[str, Any]:
    centre = catalog.DATA_CENTERS[e.data_center_id]
    machine: dict[str, Any] = {
        "dataCenterId": centre.id,
        "location": centre.location,
        "secureCloud": e.cloud == CloudType.SECURE,
        "supportPublicIp": True,
        "cpuCount": int(e.vcpu_count or 0),
        "cpuTypeId": "AMD EPYC 9354 32-Core Processor",
        "cpuType": {
            "id": "AMD EPYC 9354 32-Core Processor",
            "displayName": "EPYC 9354",
            "cores": 32,
            "threadsPerCore": 2,
            "groupId": "AMD EPYC 9004",
        },
        "diskThroughputMBps": 3000,
        "maxDownloadSpeedMbps": 5000,
        "maxUploadSpeedMbps": 5000,
        "costPerHr": e.cost_per_hr,
        "note": "an emulated machine",
    }
    if e.gpu_type_id is not None:
        offer = catalog.gpu(e.gpu_type_id)
        machine.update(
            gpuTypeId=offer.id,
            gpuType=offer.wire(),
            gpuDisplayName=offer.display_name,
            gpuAvailable=8,
            minPodGpuCount=1,
            currentPricePerGpu=offer.hourly(e.cloud, e.interruptible),
        )
    return machine


def _matches(w: dict[str, Any], centre: str, volume: str | None, q: PodListQuery) -> bool:
    """Whether a pod or a serverless worker as v1 shows it passes the list's filters."""
    gpu = w.get("gpu") or {}
    return (
        (q.endpoint_id is None or w.get("endpointId") == q.endpoint_id)
        and (q.id is None or w.get("id") == q.id)
        and (q.image_name is None or w.get("image") == q.image_name)
        and (q.template_id is None or w.get("templateId") == q.template_id)
        and (q.desired_status is None or w.get("desiredStatus") == q.desired_status)
        and (not q.gpu_type_id or gpu.get("id") in q.gpu_type_id)
        and (q.compute_type is None or ("gpu" in w) == (q.compute_type == ComputeType.GPU))
        and (q.name is None or w.get("name") == q.name)
        and (not q.cpu_flavor_id or w.get("cpuFlavorId") in q.cpu_flavor_id)
        and (not q.data_center_id or centre in q.data_center_id)
        and (q.network_volume_id is None or volume == q.network_volume_id)
    )


@router.post("")
async def create_pod(request: Request, m: Managed) -> Response:
    given = await body(request, PodCreateInput)
    with atomic():  # the pod and v1's notes of it, or neither
        made = m.pods.rent(order(m, given))
        keep(m, made.id, entrypoint=entrypoint(m, given))
    return ok(answer(m, made), 201)


@router.get("")
async def list_pods(request: Request, m: Managed) -> Response:
    q = query(request, PodListQuery)
    found = [(answer(m, e, q), e.data_center_id, e.network_volume_id) for e in m.pods.book]
    if q.include_workers:
        found += [(w, centre, None) for w, centre in worker_pods(m)]
    return ok([w for w, centre, volume in found if _matches(w, centre, volume, q)])


@router.get("/{pod_id}")
async def get_pod(pod_id: str, request: Request, m: Managed) -> Response:
    includes = query(request, PodIncludes)
    found = m.pods.book.get(pod_id)
    if found is not None:
        return ok(answer(m, found, includes))
    hint = " (a serverless worker is found only with includeWorkers=true)"
    if includes.include_workers:
        hint = ""
        for worker, _ in worker_pods(m):
            if worker.get("id") == pod_id:
                return ok(worker)
    raise NotFound(f"pod {pod_id!r} not found{hint}")


@router.patch("/{pod_id}")
@router.post("/{pod_id}/update")
async def update_pod(pod_id: str, request: Request, m: Managed) -> Response:
    m.pods.entry(pod_id)
    given = await body(request, PodUpdateInput)
    with atomic():
        changed = m.pods.change(pod_id, change(given))
        if given.docker_entrypoint is not None:
            keep(m, pod_id, entrypoint=list(given.docker_entrypoint))
    return ok(answer(m, changed))


@router.delete("/{pod_id}")
async def delete_pod(pod_id: str, m: Managed) -> Response:
    m.pods.delete(pod_id)
    return no_content()


def _move(action: str) -> Callable[..., Awaitable[Response]]:

    async def route(pod_id: str, m: Managed) -> Response:
        return ok(answer(m, m.pods.move(pod_id, action)))

    return route


for _action in ("start", "stop", "restart", "reset"):
    router.add_api_route(f"/{{pod_id}}/{_action}", _move(_action), methods=["POST"])


CHANGES = {
    "create": "Rented",
    "start": "Resumed",
    "stop": "Exited",
    "restart": "Restarted",
    "reset": "Reset",
}
"""v1's word for each move of a pod (``Pods.moved``'s action)."""


def event(what: str, ts: float) -> str:
    """A pod's ``lastStatusChange``: ``Rented by User: Thu Jan 01 2026 00:00:00 GMT+0000``."""
    return f"{what} by User: {to_datetime(ts).strftime('%a %b %d %Y %H:%M:%S')} GMT+0000 (UTC)"


@dataclass(frozen=True)
class StatusNotes:
    """Told each move of a pod (``Pods.moved``), by either interface: notes its
    ``lastStatusChange`` and a new pod's ``machineId``; forgets a deleted pod's notes."""

    m: Management

    def __call__(self, pod_id: str, action: str, at: float) -> None:
        if action == "terminate":
            forget(self.m, pod_id)
            return
        machine = {"machine_id": new_id(12)} if action == "create" else {}
        keep(self.m, pod_id, status_change=event(CHANGES[action], at), **machine)

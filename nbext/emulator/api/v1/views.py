"""The records as ``/v1`` shows them: v1's wire models filled from v2-shaped records
(so the domain imports no v1 model)."""

from __future__ import annotations

import math
from typing import Any

from nbext.models.v1 import Endpoint, NetworkVolume, Pod, PodStatus, Template

from ...domain.management import catalog
from ...domain.management.container import split_args
from ...domain.management.endpoints import EndpointRecord
from ...domain.management.facade import Management
from ...domain.management.network_volumes import VolumeEntry
from ...domain.management.pods import PodRecord
from ...domain.management.records import to_datetime, wire
from ...domain.management.templates import TemplateRecord
from .notes import kept_for, v1_pair


def readme(t: TemplateRecord) -> str:
    """The readme of a template v1 did not make: the emulator's own say what they are for."""
    if t.official:
        return f"The emulator's demo image `{t.image}`."
    if t.deployed_for is None:
        return ""
    if t.name.startswith(f"{t.deployed_for} (") or f"({t.deployed_for})" in t.name:
        return "Made by Emulator.deploy for its endpoint; deleted with it."
    return "Made for a v2 serverless endpoint; deleted with it."


def template_view(m: Management, t: TemplateRecord) -> Template:
    kept = kept_for(m, t.id)
    return Template(
        id=t.id,
        name=t.name,
        image_name=t.image,
        category=t.category,
        container_disk_in_gb=t.disk,
        volume_in_gb=t.volume_size,
        volume_mount_path=t.volume_path,
        container_registry_auth_id=t.registry,
        docker_entrypoint=list(kept.get("entrypoint", [])),
        docker_start_cmd=split_args(t.args),
        env=dict(t.env),
        ports=list(t.ports),
        readme=kept.get("readme", readme(t)),
        is_public=t.public,
        is_serverless=t.serverless,
        is_runpod=t.official,
        earned=0.0,
        runtime_in_min=0,
    )


def volume_view(v: VolumeEntry) -> NetworkVolume:
    """v1 has no storage type."""
    return NetworkVolume(id=v.id, name=v.name, size=v.size, data_center_id=v.data_center)


def pod_view(m: Management, p: PodRecord) -> Pod:
    """A pod v2 made shows its template's entrypoint, as ``/v1`` keeps it."""
    kept = kept_for(m, p.id)
    template = kept_for(m, p.template_id) if p.template_id else {}
    entrypoint = kept.get("entrypoint", template.get("entrypoint", []))
    return Pod(
        id=p.id,
        name=p.name,
        image=p.image,
        template_id=p.template_id,
        desired_status=PodStatus.RUNNING if p.running else PodStatus.EXITED,
        last_started_at=to_datetime(p.started_at) if p.started_at is not None else None,
        last_status_change=kept.get("status_change"),
        cost_per_hr=p.cost_per_hr,
        adjusted_cost_per_hr=p.cost_per_hr,
        gpu=catalog.gpu(p.gpu_type_id).wire(p.gpu_count) if p.gpu_type_id else None,
        cpu_flavor_id=p.cpu_flavor_id,
        vcpu_count=p.vcpu_count,
        memory_in_gb=p.memory,
        container_disk_in_gb=p.disk,
        volume_in_gb=p.volume_size,
        volume_mount_path=p.volume_path,
        volume_encrypted=False,
        container_registry_auth_id=p.registry,
        docker_entrypoint=list(entrypoint),
        docker_start_cmd=split_args(p.args),
        env=dict(p.env),
        ports=list(p.ports),
        port_mappings=dict(p.port_mappings),
        public_ip=p.public_ip,
        interruptible=p.interruptible,
        locked=p.locked,
        machine_id=kept.get("machine_id"),
        consumer_user_id=catalog.USER_ID,
    )


def scaler_value(e: EndpointRecord) -> int:
    """v1's ``scalerValue``: whole seconds of queue delay, or the request count."""
    if e.scaling_type == "REQUEST_COUNT":
        return int(e.scaling_value)
    return max(1, math.ceil(e.scaling_value))


def instance_ids(e: EndpointRecord) -> list[str]:
    """v1's ``instanceIds`` of a CPU endpoint: each flavor at the endpoint's vCPUs."""
    n = e.vcpu_count
    return [f"{f}-{n}-{n * catalog.cpu(f).memory_per_vcpu_gb}" for f in e.cpu_flavors]


def endpoint_view(e: EndpointRecord, notes: dict[str, Any]) -> dict[str, Any]:
    """Without its template and workers (``notes``: what ``/v1`` kept of it)."""
    volume, volumes = v1_pair(e.network_volumes, notes.get("volumes"))
    data: dict[str, Any] = {
        "id": e.id,
        "name": e.name,
        "templateId": e.template_id,
        "computeType": e.compute_type,
        "gpuTypeIds": list(e.gpu_types) if e.gpu else None,
        "gpuCount": e.gpu_count if e.gpu else None,
        "instanceIds": None if e.gpu else instance_ids(e),
        "allowedCudaVersions": e.allowed_cuda_versions,
        "minCudaVersion": e.min_cuda_version,
        "dataCenterIds": list(e.data_center_ids),
        "workersMin": e.workers_min,
        "workersMax": e.workers_max,
        "idleTimeout": math.ceil(e.idle_timeout),
        "executionTimeoutMs": e.timeout_ms,
        "scalerType": e.scaling_type,
        "scalerValue": scaler_value(e),
        "networkVolumeId": volume,
        "networkVolumeIds": volumes,
        "env": dict(e.env),
        "version": e.version,
        "createdAt": to_datetime(e.created_at),
        "userId": catalog.USER_ID,
    }
    extra = dict(notes.get("extra", {}))
    if "flashboot" in extra or e.flashboot != "OFF":  # v1 showed it once it was set
        extra["flashboot"] = e.flashboot != "OFF"
    view = Endpoint.model_validate({**data, **extra})
    return view.model_dump(by_alias=True, exclude_none=True, mode="json")


def workers_as_pods(m: Management, e: EndpointRecord) -> list[tuple[dict[str, Any], str]]:
    """The live endpoint's workers in v1's Pod shape, with their data centre."""
    live = m.endpoints.jobs.endpoints.get(e.id)
    if live is None:
        return []
    t = m.endpoints.template(e)
    cost = round(e.rate() * 3600, 4)
    gpu = e.gpu_type_id()
    views = []
    for worker in live.workers:
        pod = Pod(
            id=worker.id,
            name=f"{e.name} worker",
            image=live.image,
            desired_status=PodStatus.RUNNING,
            last_status_change="running a job" if worker.running else "idle",
            cost_per_hr=cost,
            adjusted_cost_per_hr=cost,
            gpu=catalog.gpu(gpu).wire(e.gpu_count) if gpu else None,
            cpu_flavor_id=None if gpu else e.cpu_flavors[0],
            vcpu_count=e.vcpu_count if not gpu else 8 * e.gpu_count,
            container_disk_in_gb=t.disk if t else None,
            volume_in_gb=t.volume_size if t else None,
            volume_mount_path=t.volume_path if t else None,
            env=dict(t.env) if t else None,
            ports=list(t.ports) if t else None,
            interruptible=False,
            locked=False,
            template_id=e.template_id,
            endpoint_id=e.id,
            ai_api_id=e.id,
            sls_version=e.version,
            consumer_user_id=catalog.USER_ID,
        )
        views.append((wire(pod), e.data_center()))
    return views


def worker_pods(m: Management) -> list[tuple[dict[str, Any], str]]:
    """Every endpoint's workers, for ``GET /pods?includeWorkers=true``."""
    return [pair for e in m.endpoints.book for pair in workers_as_pods(m, e)]

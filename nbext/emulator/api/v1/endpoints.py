"""``/v1/endpoints``: create, list and get (with include flags), update (two ways),
delete; v1's own ways are in docs/architecture.md#management-in-the-emulator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from nbext.models import EXECUTION_TIMEOUT_DEFAULT_MS
from nbext.models.v1 import ComputeType, EndpointCreateInput, EndpointIncludes, EndpointUpdateInput

from ...domain.management import catalog
from ...domain.management.endpoints import EndpointRecord
from ...domain.management.facade import Management
from ...domain.management.records import atomic, wire
from .common import Managed, body, no_content, ok, query
from .notes import forget, keep, kept_for, v1_pair, volumes_of
from .views import endpoint_view, scaler_value, template_view, workers_as_pods

router = APIRouter(prefix="/v1/endpoints", tags=["endpoints"])

SAME_NAMES = {
    "name": "name",
    "cpu_flavor_ids": "cpu_flavors",
    "vcpu_count": "vcpu_count",
    "allowed_cuda_versions": "allowed_cuda_versions",
    "min_cuda_version": "min_cuda_version",
    "data_center_ids": "data_center_ids",
    "workers_min": "workers_min",
    "workers_max": "workers_max",
    "execution_timeout_ms": "timeout_ms",
}
"""v1's update fields that the record keeps as they are, by the record's name."""
GPU_ONLY = {"gpu_type_ids": ("gpu_types", "gpuTypeIds"), "gpu_count": ("gpu_count", "gpuCount")}
"""v1's GPU fields: the record's for a GPU endpoint; on a CPU endpoint v1 kept and showed
them, so they are v1-only there (by their wire name)."""


def _plain(value: Any) -> Any:
    """Enum members as their values, in lists too: the record keeps plain JSON."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return getattr(value, "value", value)


def answer(m: Management, e: EndpointRecord, includes: EndpointIncludes) -> dict[str, Any]:
    out = endpoint_view(e, kept_for(m, e.id))
    if includes.include_template and (template := m.endpoints.template(e)) is not None:
        out["template"] = wire(template_view(m, template))
    if includes.include_workers:
        out["workers"] = [w for w, _ in workers_as_pods(m, e)]
    return out


@router.post("")
async def create_endpoint(request: Request, m: Managed) -> Response:
    given = await body(request, EndpointCreateInput)
    pair: list[Any] = [given.network_volume_id or None, given.network_volume_ids]
    settings: dict[str, Any] = {
        "compute_type": _plain(given.compute_type),
        "cpu_flavors": _plain(given.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR]),
        "vcpu_count": given.vcpu_count,
        "allowed_cuda_versions": _plain(given.allowed_cuda_versions),
        "min_cuda_version": _plain(given.min_cuda_version),
        "data_center_ids": _plain(given.data_center_ids),
        "workers_min": given.workers_min,
        "workers_max": given.workers_max,
        "idle_timeout": float(given.idle_timeout),
        "timeout_ms": given.execution_timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS,
        "scaling_type": _plain(given.scaler_type),
        "scaling_value": float(given.scaler_value),
        "network_volumes": volumes_of(*pair),
    }
    if given.name:
        settings["name"] = given.name
    if given.compute_type == ComputeType.GPU:
        settings["gpu_types"] = _plain(given.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE])
        settings["gpu_count"] = given.gpu_count
    if given.flashboot is not None:
        settings["flashboot"] = "FLASHBOOT" if given.flashboot else "OFF"
    m.endpoints.check_volumes(*pair)
    extra = {} if given.flashboot is None else {"flashboot": True}
    with atomic():  # the record and v1's notes of it, or neither
        made = m.endpoints.add(given.template_id, settings)
        keep(m, made.id, volumes=pair, extra=extra)
    return ok(answer(m, made, EndpointIncludes()))


@router.get("")
async def list_endpoints(request: Request, m: Managed) -> Response:
    includes = query(request, EndpointIncludes)
    return ok([answer(m, e, includes) for e in m.endpoints.book])


@router.get("/{endpoint_id}")
async def get_endpoint(endpoint_id: str, request: Request, m: Managed) -> Response:
    return ok(answer(m, m.endpoints.get(endpoint_id), query(request, EndpointIncludes)))


@router.patch("/{endpoint_id}")
@router.post("/{endpoint_id}/update")
async def update_endpoint(endpoint_id: str, request: Request, m: Managed) -> Response:
    e = m.endpoints.get(endpoint_id)
    kept = kept_for(m, endpoint_id)
    given = await body(request, EndpointUpdateInput)
    named = {
        n: getattr(given, n)
        for n in EndpointUpdateInput.model_fields
        if n in given.model_fields_set and getattr(given, n) is not None
    }
    settings: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    pair: list[Any] | None = None
    for name, value in named.items():
        if name in SAME_NAMES:
            settings[SAME_NAMES[name]] = _plain(value)
        elif name in GPU_ONLY:
            field, wire_name = GPU_ONLY[name]
            if e.gpu:
                settings[field] = _plain(value)
            else:
                extra[wire_name] = _plain(value)
        elif name == "idle_timeout":
            settings["idle_timeout"] = float(value)
        elif name == "flashboot":
            mode = e.flashboot if e.flashboot != "OFF" else "FLASHBOOT"
            settings["flashboot"] = mode if value else "OFF"
    scaling = _plain(named.get("scaler_type", e.scaling_type))
    value = named.get("scaler_value", scaler_value(e))
    if (scaling, value) != (e.scaling_type, scaler_value(e)):
        settings.update(scaling_type=scaling, scaling_value=float(value))
    if "network_volume_id" in named or "network_volume_ids" in named:
        first, rest = v1_pair(e.network_volumes, kept.get("volumes"))
        pair = [named.get("network_volume_id", first), named.get("network_volume_ids", rest)]
        settings["network_volumes"] = volumes_of(*pair)
        m.endpoints.check_volumes(*pair)
    extra.update({k: v for k, v in (given.model_extra or {}).items() if v is not None})
    extra = {**kept.get("extra", {}), **extra}
    if "flashboot" in named:  # shown from now on, after what v1 showed before
        extra.setdefault("flashboot", True)
    with atomic():
        changed = m.endpoints.change(endpoint_id, settings, template_id=named.get("template_id"))
        keep(m, endpoint_id, extra=extra, volumes=pair or kept.get("volumes"))
    return ok(answer(m, changed, EndpointIncludes()))


@router.delete("/{endpoint_id}")
async def delete_endpoint(endpoint_id: str, m: Managed) -> Response:
    m.endpoints.delete(endpoint_id)
    forget(m, endpoint_id)
    return no_content()

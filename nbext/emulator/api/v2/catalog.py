"""``/v2/catalog``: GPU types, CPU flavours, data centres and public templates, with prices
and (on request) availability per data centre, as a user choosing hardware reads them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from ...domain.errors import InvalidInput, NotFound
from ...domain.management import catalog, offers
from .common import Checked, Managed, ok

router = APIRouter(prefix="/v2/catalog", tags=["v2 catalog"])
WITH_AVAILABILITY = ("product", "count", "cloud", "countryCodes", "cudaVersions", "minCudaVersion")
"""Parameters that scope availability, so valid only with include=AVAILABILITY."""


def _availability_query(query: dict[str, Any], only: tuple[str, ...]) -> bool:
    """Whether availability was asked for; refuses its parameters without it (400)."""
    wanted = "AVAILABILITY" in query.get("include", [])
    given = [name for name in only if name in query]
    if not wanted and given:
        raise InvalidInput(f"{given[0]}: is valid only with include=AVAILABILITY")
    if wanted and not query.get("product"):
        raise InvalidInput(
            "product: include=AVAILABILITY needs product (POD, SERVERLESS...): availability "
            "differs by product"
        )
    if "cudaVersions" in query and "minCudaVersion" in query:
        raise InvalidInput("minCudaVersion: give cudaVersions or minCudaVersion, not both")
    return wanted


def _centres(query: dict[str, Any]) -> list[str]:
    codes = set(query.get("countryCodes") or [])
    return [d for d, info in catalog.DATA_CENTERS.items() if not codes or info.country in codes]


def gpu_view(gpu_id: str, query: dict[str, Any], *, single: bool) -> dict[str, Any] | None:
    offer = catalog.gpu(gpu_id)
    largest = offers.max_count(gpu_id)
    out: dict[str, Any] = {
        "id": gpu_id,
        "name": offer.display_name,
        "pool": offers.pool_of(gpu_id),
        "manufacturer": offers.manufacturer(gpu_id),
        "memory": offer.memory_gb,
        "secure": True,
        "community": True,
        "price": {
            "secure": offer.secure_price,
            "community": offer.community_price,
            "serverless": offer.serverless_price,
        },
        "maxCount": {"secure": largest, "community": max(1, largest // 2)},
    }
    if not _availability_query(query, WITH_AVAILABILITY):
        return out
    centres = _centres(query)
    if not centres and not single:
        return None
    too_many = int(query.get("count", 1)) > largest
    per_centre = [
        {
            "id": d,
            "name": catalog.DATA_CENTERS[d].location,
            "availability": "NONE" if too_many else offers.availability(gpu_id, d),
        }
        for d in centres
    ]
    versions = list(offers.CUDA_VERSIONS)
    if query.get("cudaVersions"):
        versions = [v for v in versions if v in query["cudaVersions"]]
    if query.get("minCudaVersion"):
        floor = offers.cuda_order(query["minCudaVersion"])
        versions = [v for v in versions if offers.cuda_order(v)[: len(floor)] >= floor]
    out["availability"] = offers.overall([c["availability"] for c in per_centre])
    if per_centre:
        out["dataCenters"] = per_centre
    out["cudaVersions"] = [{"version": v, "available": not too_many} for v in versions]
    return out


@router.get("/gpus")
async def list_gpus(query: Checked) -> Response:
    views = [gpu_view(g, query, single=False) for g in catalog.GPUS]
    return ok({"gpus": [v for v in views if v is not None]})


@router.get("/gpus/{gpu_id}")
async def get_gpu(gpu_id: str, query: Checked) -> Response:
    if gpu_id not in catalog.GPUS:
        raise NotFound(f"GPU type {gpu_id!r} not found; GET /v2/catalog/gpus lists them")
    return ok(gpu_view(gpu_id, query, single=True))


def cpu_view(flavor_id: str, query: dict[str, Any]) -> dict[str, Any]:
    offer = catalog.cpu(flavor_id)
    out: dict[str, Any] = {
        "id": flavor_id,
        "name": offer.display_name.split(" (")[0],
        "group": f"Gen {flavor_id[3]}",
        "vcpu": {"min": 2, "max": 32},
        "ramGbPerVcpu": float(offer.memory_per_vcpu_gb),
        "price": {
            "securePerVcpu": offer.price_per_vcpu,
            "serverlessPerVcpu": offer.serverless_price_per_vcpu,
        },
    }
    if not _availability_query(query, ("product", "vcpuCount")):
        return out
    count = int(query.get("vcpuCount", 2))
    if count & (count - 1):
        raise InvalidInput(f"vcpuCount: must be a power of two, got {count}")
    per_centre = [
        {
            "id": d,
            "name": info.location,
            "availability": "NONE" if count > 32 else offers.availability(flavor_id, d),
        }
        for d, info in catalog.DATA_CENTERS.items()
    ]
    out["availability"] = offers.overall([c["availability"] for c in per_centre])
    out["dataCenters"] = per_centre
    return out


@router.get("/cpus")
async def list_cpus(query: Checked) -> Response:
    return ok({"cpus": [cpu_view(c, query) for c in catalog.CPUS]})


@router.get("/cpus/{cpu_id}")
async def get_cpu(cpu_id: str, query: Checked) -> Response:
    if cpu_id not in catalog.CPUS:
        raise NotFound(f"CPU flavour {cpu_id!r} not found; GET /v2/catalog/cpus lists them")
    return ok(cpu_view(cpu_id, query))


def centre_view(centre: str, query: dict[str, Any]) -> dict[str, Any]:
    info = catalog.DATA_CENTERS[centre]
    where = offers.place(centre)
    out: dict[str, Any] = {
        "id": centre,
        "name": info.location,
        "region": where.region,
        "globalNetwork": where.global_network,
        "networkVolumeTypes": ["STANDARD"]
        + (["HIGH_PERFORMANCE"] if where.high_performance else []),
        "compliance": list(where.compliance),
    }
    include = query.get("include", [])
    if "GPU_AVAILABILITY" in include:
        out["gpuAvailability"] = [
            {"id": g, "name": o.display_name, "availability": offers.availability(g, centre)}
            for g, o in catalog.GPUS.items()
        ]
    if "CPU_AVAILABILITY" in include:
        out["cpuAvailability"] = [
            {"id": c, "name": o.display_name, "availability": offers.availability(c, centre)}
            for c, o in catalog.CPUS.items()
        ]
    return out


@router.get("/datacenters")
async def list_centres(query: Checked) -> Response:
    views = [centre_view(d, query) for d in catalog.DATA_CENTERS]
    if query.get("regions"):
        views = [v for v in views if v["region"] in query["regions"]]
    for key in ("networkVolumeTypes", "compliance"):
        if query.get(key):
            views = [v for v in views if set(query[key]) <= set(v[key])]
    if "globalNetwork" in query:
        views = [v for v in views if v["globalNetwork"] is query["globalNetwork"]]
    return ok({"dataCenters": views})


@router.get("/datacenters/{centre_id}")
async def get_centre(centre_id: str, query: Checked) -> Response:
    if centre_id not in catalog.DATA_CENTERS:
        raise NotFound(f"data centre {centre_id!r} not found")
    return ok(centre_view(centre_id, query))


@router.get("/templates")
async def list_public_templates(m: Managed, query: Checked) -> Response:
    """The emulator's official templates; it has no other users to share community ones."""
    source = query.get("source", "official")
    found = list(m.templates.official.values()) if source == "official" else []
    return ok({"templates": [t.view() for t in found][:100]})

"""``client.catalog``: what can be rented (GPU and CPU types, data centres) and at what price.

``gpus`` asks the service for availability only when a filter needs it, and applies
memory and price, which the service has no parameter for, to its answer.
"""

from __future__ import annotations

from typing import Literal

from nbext.models.v2 import CpuType, DataCenter, GpuType, Template

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .rest import V2
from .wire import choice, ident, one, refused, whole, wrapped

Cloud = Literal["SECURE", "COMMUNITY"]
Product = Literal["POD", "CLUSTER", "SERVERLESS"]
UNAVAILABLE = frozenset({"NONE", ""})
"""Availability levels that mean "none to rent" (the service's are NONE, LOW, MEDIUM, HIGH)."""


def _number(operation: str, name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise refused(operation, f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def _price(gpu: GpuType, cloud: str | None) -> float | None:
    """The hourly price of one GPU in ``cloud``; with none, the lower of the pod clouds."""
    if cloud is not None:
        return gpu.price.get(cloud.lower())
    prices = [gpu.price[c] for c in ("secure", "community") if c in gpu.price]
    return min(prices) if prices else None


def gpus(
    ctx: Context,
    api: V2,
    *,
    available: bool = False,
    min_vram_gb: int | None = None,
    max_price: float | None = None,
    cloud: Cloud | str | None = None,
    product: Product | str = "POD",
    count: int | None = None,
) -> Flow[list[GpuType]]:
    """The GPU types, with prices; filtered by what is given.

    ``available=True`` keeps types that can be rented now for ``product`` (``POD`` by
    default, or ``SERVERLESS``, ``CLUSTER``) in ``count`` GPUs; ``cloud`` (``SECURE``,
    ``COMMUNITY``) keeps types offered there and prices them there. ``min_vram_gb`` and
    ``max_price`` (dollars per GPU per hour; without ``cloud``, the cheaper of the two
    clouds) are applied to the service's answer. Asking for availability (``available``,
    ``cloud`` or ``count``) fills each type's ``availability`` and ``data_centers``.
    """
    op = "catalog.gpus"
    vram = _number(op, "min_vram_gb", min_vram_gb)
    price_cap = _number(op, "max_price", max_price)
    chosen_cloud = choice(op, "cloud", cloud, ("SECURE", "COMMUNITY")) if cloud else None
    chosen_product = choice(op, "product", product, ("POD", "CLUSTER", "SERVERLESS"))
    if count is not None:
        whole(op, "count", count, 1)
    params: list[tuple[str, str]] = []
    if available or chosen_cloud or count is not None:
        params = [("include", "AVAILABILITY"), ("product", chosen_product)]
        if chosen_cloud:
            params.append(("cloud", chosen_cloud))
        if count is not None:
            params.append(("count", str(count)))
    call = api.call("GET", ["catalog", "gpus"], op, "the GPU catalog", query=params)
    found = yield from api.fetch(ctx, call, wrapped(GpuType, "gpus"))
    kept = []
    for offer in found:
        if available and (offer.availability or "NONE").upper() in UNAVAILABLE:
            continue
        if chosen_cloud and not (offer.secure if chosen_cloud == "SECURE" else offer.community):
            continue
        if vram is not None and offer.memory < vram:
            continue
        price = _price(offer, chosen_cloud)
        if price_cap is not None and (price is None or price > price_cap):
            continue
        kept.append(offer)
    return kept


def gpu(ctx: Context, api: V2, gpu_id: str) -> Flow[GpuType]:
    """One GPU type by id (``"NVIDIA GeForce RTX 4090"``); NotFound if there is none."""
    gid, subject = ident(gpu_id, "GPU type")
    call = api.call("GET", ["catalog", "gpus", gid], "catalog.gpu", subject)
    return (yield from api.fetch(ctx, call, one(GpuType)))


def cpus(ctx: Context, api: V2) -> Flow[list[CpuType]]:
    """The CPU types (flavours), with their vCPU counts and prices."""
    call = api.call("GET", ["catalog", "cpus"], "catalog.cpus", "the CPU catalog")
    return (yield from api.fetch(ctx, call, wrapped(CpuType, "cpus")))


def cpu(ctx: Context, api: V2, cpu_id: str) -> Flow[CpuType]:
    """One CPU type by id (``"cpu3c"``); NotFound if there is none."""
    cid, subject = ident(cpu_id, "CPU type")
    call = api.call("GET", ["catalog", "cpus", cid], "catalog.cpu", subject)
    return (yield from api.fetch(ctx, call, one(CpuType)))


def datacenters(ctx: Context, api: V2) -> Flow[list[DataCenter]]:
    """The data centres: region, network volume types, compliance, global networking."""
    call = api.call("GET", ["catalog", "datacenters"], "catalog.datacenters", "the data centres")
    return (yield from api.fetch(ctx, call, wrapped(DataCenter, "dataCenters")))


def datacenter(ctx: Context, api: V2, datacenter_id: str) -> Flow[DataCenter]:
    """One data centre by id (``"US-KS-2"``); NotFound if there is none."""
    did, subject = ident(datacenter_id, "data centre")
    call = api.call("GET", ["catalog", "datacenters", did], "catalog.datacenter", subject)
    return (yield from api.fetch(ctx, call, one(DataCenter)))


def templates(ctx: Context, api: V2) -> Flow[list[Template]]:
    """The public templates anyone can start from (the service's official ones)."""
    call = api.call("GET", ["catalog", "templates"], "catalog.templates", "public templates")
    return (yield from api.fetch(ctx, call, wrapped(Template, "templates")))


class Catalog(Resource):
    gpus = blocking(gpus)
    gpu = blocking(gpu)
    cpus = blocking(cpus)
    cpu = blocking(cpu)
    datacenters = blocking(datacenters)
    datacenter = blocking(datacenter)
    templates = blocking(templates)


class AsyncCatalog(Resource):
    gpus = awaiting(gpus)
    gpu = awaiting(gpu)
    cpus = awaiting(cpus)
    cpu = awaiting(cpu)
    datacenters = awaiting(datacenters)
    datacenter = awaiting(datacenter)
    templates = awaiting(templates)

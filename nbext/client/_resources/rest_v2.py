"""How the v2 version objects speak REST v2: v1's keywords in, v1-shaped records out.

Callers keep the names they know (``image_name``, ``gpu_type_ids``, ``scaler_value``...)
and the records they know (``nbext.models.Template``...), so code and DataFrames work the
same on either version. What a resource sends is first checked by v1's input model (the
same rules, the same messages), then spelt the v2 way (docs/rest-v2.md#in-the-client);
an answer is read as v2's record, then given v1's names. A keyword v2 has no place for
is refused before sending, by name, rather than dropped; ``extra_body`` holds v2 wire
names, sent as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

import nbext.models as v1m
from nbext.models import v2
from nbext.models.v2.convert import container_to_v2, to_v1

from .._errors import BadRequest
from .._flows import Context, Flow
from .._flows import send as send_call
from . import shapes
from .wire import (
    M,
    Reader,
    encoded,
    management_call,
    mapped,
    one,
    query,
    refused,
    wire_fields,
    wrapped,
)

T = TypeVar("T")
U = TypeVar("U")
R = TypeVar("R", bound=BaseModel)
RUNNING_STATES = frozenset({v2.PodStatus.PROVISIONING, v2.PodStatus.STARTING, v2.PodStatus.RUNNING})
"""v2's observed states that v1 calls ``RUNNING`` (v1 shows the desired status)."""


# ---- requests ---------------------------------------------------------------------------------


def checked(
    model: type[BaseModel], operation: str, fields: dict[str, Any], allowed: Iterable[str]
) -> dict[str, Any]:
    """``fields`` by v1's rules, as v1's wire fields; one v2 cannot carry is refused."""
    v1 = wire_fields(model, operation, fields)
    names = {info.alias or name: name for name, info in model.model_fields.items()}
    lost = [key for key in v1 if key not in set(allowed)]
    if lost:
        raise refused(
            operation,
            "REST v2 has no field for "
            + ", ".join(f"{names.get(k, k)} ({k})" for k in lost)
            + "; leave it out (only a REST v1 base URL, such as an emulator's /v1, takes it)",
        )
    return v1


def body(operation: str, v2_fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
    """The v2 body: the mapped fields, then ``extra_body`` (v2 wire names) over them."""
    return encoded(operation, {**v2_fields, **(extra or {})})


def unfiltered(operation: str, params: list[tuple[str, str]]) -> None:
    """Refuse v1's listing filters and ``include*`` flags, which REST v2 does not take."""
    if params:
        names = ", ".join(dict.fromkeys(name for name, _ in params))
        raise refused(operation, f"REST v2 takes no {names}; leave it out (filter the result)")


def container(operation: str, v1: Mapping[str, Any]) -> dict[str, Any]:
    try:
        return container_to_v2(dict(v1))
    except ValueError as exc:
        raise refused(operation, str(exc)) from None


def carried(source: Mapping[str, Any], names: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """``source``'s fields renamed (from -> to), those it has."""
    return {to: source[name] for name, to in names if name in source}


def readers(
    model: type[R], key: str, convert: Callable[[R], U]
) -> tuple[Reader[U], Reader[list[U]]]:
    """Readers of one v2 record and of a v2 list (wrapped in ``key``), each ``convert``ed."""
    return mapped(one(model), convert), mapped(
        wrapped(model, key), lambda records: [convert(r) for r in records]
    )


# ---- templates --------------------------------------------------------------------------------

TEMPLATE_FIELDS = (
    "name",
    "imageName",
    "category",
    "containerDiskInGb",
    "containerRegistryAuthId",
    "dockerStartCmd",
    "env",
    "isPublic",
    "isServerless",
    "ports",
    "volumeInGb",
    "volumeMountPath",
)


def template_body(operation: str, v1: Mapping[str, Any]) -> dict[str, Any]:
    names = (("name", "name"), ("category", "category"), ("isPublic", "public"))
    return {**container(operation, v1), **carried(v1, (*names, ("isServerless", "serverless")))}


def template_v1(t: v2.Template) -> v1m.Template:
    data = t.model_dump(by_alias=True, exclude_none=True)
    return v1m.Template.model_validate(
        {
            "id": t.id,
            "name": t.name,
            **to_v1(data, defaults=True),
            "category": t.category,
            "isPublic": t.public,
            "isServerless": t.serverless,
        }
    )


TEMPLATE, TEMPLATES = readers(v2.Template, "templates", template_v1)


# ---- pods -------------------------------------------------------------------------------------

POD_CREATE_FIELDS = (
    "name",
    "imageName",
    "templateId",
    "computeType",
    "cloudType",
    "gpuTypeIds",
    "gpuCount",
    "allowedCudaVersions",
    "cpuFlavorIds",
    "vcpuCount",
    "dataCenterIds",
    "globalNetworking",
    "networkVolumeId",
    "containerRegistryAuthId",
    "containerDiskInGb",
    "volumeInGb",
    "volumeMountPath",
    "dockerStartCmd",
    "env",
    "ports",
)
POD_UPDATE_FIELDS = (
    "name",
    "locked",
    "imageName",
    "containerDiskInGb",
    "containerRegistryAuthId",
    "dockerStartCmd",
    "env",
    "globalNetworking",
    "ports",
    "volumeInGb",
    "volumeMountPath",
)


def _one_of(operation: str, v1: Mapping[str, Any], key: str, keyword: str, what: str) -> str:
    values = list(v1.get(key) or [])
    if len(values) != 1:
        raise refused(
            operation,
            f"REST v2 rents a pod on exactly one {what}: give one in {keyword} ({key}), "
            f"got {len(values)}",
        )
    return str(values[0])


def pod_create_body(operation: str, v1: Mapping[str, Any]) -> dict[str, Any]:
    network = v1.get("networkVolumeId")
    if network and v1.get("volumeInGb"):
        raise refused(
            operation,
            "REST v2 mounts a pod's volume or a network volume, not both: leave out "
            "volume_in_gb (volumeInGb) or network_volume_id (networkVolumeId)",
        )
    local = {k: v for k, v in v1.items() if not (network and k == "volumeMountPath")}
    out = container(operation, local)
    out["name"] = v1.get("name", "my pod")
    if "templateId" in v1:
        out["templateId"] = v1["templateId"]
    if str(v1.get("computeType", "GPU")) == "CPU":
        cpu: dict[str, Any] = {
            "id": _one_of(operation, v1, "cpuFlavorIds", "cpu_flavor_ids", "CPU flavour")
        }
        cpu["vcpuCount"] = v1.get("vcpuCount", 2)
        out["cpu"] = cpu
    else:
        gpu: dict[str, Any] = {
            "id": _one_of(operation, v1, "gpuTypeIds", "gpu_type_ids", "GPU type")
        }
        if "gpuCount" in v1:
            gpu["count"] = v1["gpuCount"]
        if v1.get("allowedCudaVersions"):
            gpu["allowedCudaVersions"] = v1["allowedCudaVersions"]
        out["gpu"] = gpu
    out |= carried(
        v1,
        (
            ("cloudType", "cloud"),
            ("dataCenterIds", "dataCenterIds"),
            ("globalNetworking", "globalNetworking"),
        ),
    )
    if network:
        path = v1.get("volumeMountPath") or "/workspace"
        out["mounts"] = {"network": [{"volumeId": network, "path": path}]}
    return out


def pod_update_body(operation: str, v1: Mapping[str, Any]) -> dict[str, Any]:
    names = ("name", "locked", "globalNetworking")
    return {**container(operation, v1), **carried(v1, ((n, n) for n in names))}


def pod_v1(p: v2.Pod) -> v1m.Pod:
    data = p.model_dump(by_alias=True, exclude_none=True)
    fields: dict[str, Any] = {
        "id": p.id,
        "name": p.name,
        "image": p.image,
        "desiredStatus": "RUNNING" if p.status in RUNNING_STATES else "EXITED",
        "lastStartedAt": data.get("startedAt"),
        "costPerHr": p.cost,
        "locked": p.locked,
        "templateId": p.template,
        **to_v1({k: v for k, v in data.items() if k != "image"}, defaults=True),
    }
    fields.pop("imageName", None)
    network = (p.mounts.network if p.mounts else None) or []
    if network:
        fields["networkVolume"] = {"id": network[0].volume_id}
        fields["volumeMountPath"] = network[0].path
    if p.gpu is not None:
        fields["gpu"] = {"id": p.gpu.id, "count": p.gpu.count}
    if p.cpu is not None:
        fields.update(cpuFlavorId=p.cpu.id, vcpuCount=p.cpu.vcpu_count, memoryInGb=p.cpu.memory)
    if p.data_center_id:
        fields["machine"] = {"dataCenterId": p.data_center_id}
    if p.ssh is not None and p.ssh.direct is not None:
        fields["publicIp"] = p.ssh.direct.host
    return v1m.Pod.model_validate(fields)


POD, PODS = readers(v2.Pod, "pods", pod_v1)


def with_gpu_names(ctx: Context, operation: str, pods: list[v1m.Pod]) -> Flow[list[v1m.Pod]]:
    """``pods`` with each GPU's display name and prices, as v1 shows them (v2's pod names
    only the type's id; the catalog has the rest). Asked only when a pod has a GPU."""
    if not any(p.gpu is not None for p in pods):
        return pods
    known = {g.id: g for g in (yield from gpu_catalog(ctx, operation))}
    for pod in pods:
        found = known.get(pod.gpu.id or "") if pod.gpu is not None else None
        if pod.gpu is not None and found is not None:
            pod.gpu.display_name = found.name
            pod.gpu.secure_price = found.price.get("secure")
            pod.gpu.community_price = found.price.get("community")
    return pods


POD_FILTERS: dict[str, Callable[[v1m.Pod], object]] = {
    "id": lambda p: p.id,
    "name": lambda p: p.name,
    "image_name": lambda p: p.image,
    "template_id": lambda p: p.template_id,
    "desired_status": lambda p: p.desired_status,
    "compute_type": lambda p: "CPU" if p.gpu is None else "GPU",
    "gpu_type_id": lambda p: p.gpu.id if p.gpu else None,
    "cpu_flavor_id": lambda p: p.cpu_flavor_id,
    "data_center_id": lambda p: p.machine.data_center_id if p.machine else None,
    "network_volume_id": lambda p: p.network_volume.id if p.network_volume else None,
}
"""v1's pod listing filters, applied by the client: REST v2 lists every pod unfiltered."""


def pods_matching(operation: str, pods: list[v1m.Pod], fields: Mapping[str, Any]) -> list[v1m.Pod]:
    """The pods every filter in ``fields`` matches (a list of values: any of them)."""
    wanted = {k: v for k, v in fields.items() if v is not False}
    lost = sorted(k for k in wanted if k not in POD_FILTERS)
    if lost:
        raise refused(operation, f"REST v2 lists pods without {', '.join(lost)}; leave it out")

    def matches(pod: v1m.Pod) -> bool:
        for name, value in wanted.items():
            values = value if isinstance(value, list) else [value]
            if str(POD_FILTERS[name](pod)) not in {str(v) for v in values}:
                return False
        return True

    return [pod for pod in pods if matches(pod)]


def no_reset(pod_id: str) -> BadRequest:
    """v1's reset, which REST v2 has no action for: say what does the same."""
    return refused(
        "pods.reset",
        "REST v2 has no reset; an update of a container field re-creates the container, "
        f"e.g. client.pods.update({pod_id!r}, image_name=<its image>) (restart keeps it)",
    )


def pod_action(ctx: Context, pod_id: str, action: str) -> Flow[v1m.Pod | None]:
    """``POST /v2/pods/{id}/action``; ``terminate`` answers 204 (no record)."""
    payload = encoded(f"pods.{action}", {"action": action})
    call = management_call(
        "POST", ["pods", pod_id, "action"], f"pods.{action}", f"pod {pod_id!r}", body=payload
    )
    response = yield from send_call(ctx, call)
    if not response.content.strip():
        return None
    return POD(call, response)


# ---- network volumes and registries -----------------------------------------------------------


def volume_v1(v: v2.NetworkVolume) -> v1m.NetworkVolume:
    return v1m.NetworkVolume.model_validate(
        {"id": v.id, "name": v.name, "size": v.size, "dataCenterId": v.data_center}
    )


VOLUME, VOLUMES = readers(v2.NetworkVolume, "networkVolumes", volume_v1)


def registry_v1(r: v2.Registry) -> v1m.ContainerRegistryAuth:
    return v1m.ContainerRegistryAuth.model_validate({"id": r.id, "name": r.name})


REGISTRY, REGISTRIES = readers(v2.Registry, "registries", registry_v1)


# ---- endpoints --------------------------------------------------------------------------------

ENDPOINT_FIELDS = (
    "templateId",
    "name",
    "computeType",
    "gpuTypeIds",
    "gpuCount",
    "cpuFlavorIds",
    "vcpuCount",
    "allowedCudaVersions",
    "minCudaVersion",
    "dataCenterIds",
    "workersMin",
    "workersMax",
    "idleTimeout",
    "executionTimeoutMs",
    "scalerType",
    "scalerValue",
    "flashboot",
    "networkVolumeId",
    "networkVolumeIds",
)


def gpu_catalog(ctx: Context, operation: str) -> Flow[list[v2.GpuType]]:
    """The service's GPU types (``/v2/catalog/gpus``): their pools, names and prices."""
    read = wrapped(v2.GpuType, "gpus")
    call = management_call("GET", ["catalog", "gpus"], operation, "the GPU catalog")
    return (yield from shapes.fetch(ctx, call, read))


def gpu_pools(ctx: Context, operation: str) -> Flow[dict[str, list[str]]]:
    """Pool -> its GPU types, from the catalog: v2 endpoints name pools, v1 names types."""
    gpus = yield from gpu_catalog(ctx, operation)
    pools: dict[str, list[str]] = {}
    for gpu in gpus:
        if gpu.pool:
            pools.setdefault(gpu.pool, []).append(gpu.id)
    return pools


def endpoint_body(
    operation: str, v1: Mapping[str, Any], pools: Mapping[str, list[str]]
) -> dict[str, Any]:
    out = carried(
        v1,
        (
            ("name", "name"),
            ("templateId", "templateId"),
            ("dataCenterIds", "dataCenterIds"),
            ("executionTimeoutMs", "timeout"),
        ),
    )
    gpu: dict[str, Any] = {}
    if "gpuTypeIds" in v1:
        wanted = [str(g) for g in v1["gpuTypeIds"]]
        pool_of = {t: p for p, types in pools.items() for t in types}
        unknown = [t for t in wanted if t not in pool_of]
        if unknown:
            raise refused(
                operation, f"gpu_type_ids: {unknown[0]!r} is in no REST v2 serverless pool"
            )
        chosen = list(dict.fromkeys(pool_of[t] for t in wanted))
        gpu["pools"] = chosen
        excluded = [t for p in chosen for t in pools[p] if t not in wanted]
        if excluded:
            gpu["excludedTypes"] = excluded
    gpu |= carried(
        v1,
        (
            ("gpuCount", "count"),
            ("allowedCudaVersions", "allowedCudaVersions"),
            ("minCudaVersion", "minCudaVersion"),
        ),
    )
    if str(v1.get("computeType", "GPU")) == "CPU" or "cpuFlavorIds" in v1:
        flavours = v1.get("cpuFlavorIds") or []
        if not flavours and "computeType" in v1:  # said at creation
            raise refused(
                operation,
                "REST v2 needs the CPU flavours of a CPU endpoint: give cpu_flavor_ids "
                "(cpuFlavorIds)",
            )
        if flavours:
            out["cpu"] = [{"id": f, "vcpuCount": v1.get("vcpuCount", 2)} for f in flavours]
    elif gpu:
        out["gpu"] = gpu
    workers = carried(
        v1, (("workersMin", "min"), ("workersMax", "max"), ("idleTimeout", "idleTimeout"))
    )
    if workers:
        out["workers"] = workers
    if "scalerType" in v1 or "scalerValue" in v1:
        kind = str(v1.get("scalerType", "QUEUE_DELAY"))
        value = v1.get("scalerValue", 4)
        key = "requestCount" if kind == "REQUEST_COUNT" else "queueDelay"
        out["scaling"] = {"type": kind, key: value}
    if "flashboot" in v1:
        out["flashboot"] = "FLASHBOOT" if v1["flashboot"] else "OFF"
    if "networkVolumeId" in v1 or "networkVolumeIds" in v1:
        first = [v1["networkVolumeId"]] if v1.get("networkVolumeId") else []
        out["networkVolumes"] = first + list(v1.get("networkVolumeIds") or [])
    return out


def endpoint_v1(
    e: v2.Endpoint, pools: Mapping[str, list[str]], with_template: bool = False
) -> v1m.Endpoint:
    """``with_template``: v1's ``include_template``, the endpoint's own container settings
    as its ``template`` (v2 endpoints carry them; the template they came from is not
    named)."""
    scaling = e.scaling or {}
    kind = str(scaling.get("type", "QUEUE_DELAY"))
    value = scaling.get("requestCount" if kind == "REQUEST_COUNT" else "queueDelay")
    fields: dict[str, Any] = {
        "id": e.id,
        "name": e.name,
        "workersMin": e.workers.min,
        "workersMax": e.workers.max,
        "idleTimeout": e.workers.idle_timeout,
        "executionTimeoutMs": e.timeout,
        "scalerType": kind,
        "scalerValue": int(-(-float(value) // 1)) if value is not None else None,
        "dataCenterIds": e.data_center_ids,
        "env": e.env,
        "createdAt": e.created_at.isoformat() if e.created_at else None,
    }
    volumes = list(e.network_volumes)
    if volumes:
        fields["networkVolumeId"] = volumes[0]
        fields["networkVolumeIds"] = volumes[1:] or None
    if e.cpu:
        fields.update(
            computeType="CPU",
            cpuFlavorIds=[c.id for c in e.cpu],
            vcpuCount=max(c.vcpu_count for c in e.cpu),
        )
    elif e.gpu is not None:
        excluded = set(e.gpu.excluded_types or ())
        types = [t for p in e.gpu.pools for t in pools.get(p, [p]) if t not in excluded]
        fields.update(
            computeType="GPU",
            gpuTypeIds=types,
            gpuCount=e.gpu.count,
            allowedCudaVersions=e.gpu.allowed_cuda_versions or None,
            minCudaVersion=e.gpu.min_cuda_version,
        )
    if with_template:
        own = to_v1(e.model_dump(by_alias=True, exclude_none=True), defaults=False)
        fields["template"] = {"isServerless": True, **own}
    return v1m.Endpoint.model_validate({k: v for k, v in fields.items() if v is not None})


def endpoint_readers(
    pools: Mapping[str, list[str]], with_template: bool = False
) -> tuple[Reader[v1m.Endpoint], Reader[list[v1m.Endpoint]]]:
    return readers(v2.Endpoint, "endpoints", lambda e: endpoint_v1(e, pools, with_template))


# ---- billing ----------------------------------------------------------------------------------

PERIOD = ("start_time", "end_time", "bucket_size")


def billing_query(
    operation: str, fields: Mapping[str, Any], ids: Mapping[str, str], grouping: str | None
) -> list[tuple[str, str]]:
    """v2's billing query: the period by v1's rules, ``lastN``, and the id filters ``ids``
    (keyword -> v2 name); any other v1 filter, or a grouping but ``grouping``, is refused."""
    given_grouping = fields.get("grouping")
    if given_grouping is not None and str(given_grouping) != grouping:
        kept = f"only {grouping!r}" if grouping else "none"
        raise refused(
            operation, f"grouping: REST v2 groups this billing by {kept}, got {given_grouping!r}"
        )
    known = {*PERIOD, *ids, "grouping", "last_n"}
    lost = sorted(name for name in fields if name not in known)
    if lost:
        raise refused(operation, f"REST v2's billing takes no {', '.join(lost)}; leave it out")
    last_n = fields.get("last_n")
    if last_n is not None:
        if isinstance(last_n, bool) or not isinstance(last_n, int) or last_n < 1:
            raise refused(operation, f"last_n: must be a whole number from 1, got {last_n!r}")
        if fields.get("start_time") is not None or fields.get("end_time") is not None:
            raise refused(operation, "last_n: give last_n or start_time/end_time, not both")
    period = {k: v for k, v in fields.items() if k in PERIOD}
    params = query(v1m.BillingQuery, operation, period)
    if last_n is not None:
        params.append(("lastN", str(last_n)))
    params += [(ids[k], str(v)) for k, v in fields.items() if k in ids]
    return params


def billing_v1(model: type[M], renamed: Mapping[str, str]) -> Reader[list[M]]:
    """v2's billing records as v1's: ``time`` and ``amount`` of each bucket, ``renamed``
    fields (v2 name -> v1 name) carried over."""

    def convert(records: list[v2.BillingRecord]) -> list[M]:
        out = []
        for r in records:
            extra = r.model_extra or {}
            fields = {"time": r.start_time, "amount": r.total_amount}
            fields.update({v1: extra[v2_] for v2_, v1 in renamed.items() if v2_ in extra})
            out.append(model.model_validate(fields))
        return out

    return mapped(wrapped(v2.BillingRecord, "records"), convert)

"""REST v1, a frozen adapter for a service that still speaks it (an emulator's ``/v1``).

Asked for explicitly (``management_api="v1"``, ``RUNPOD_MANAGEMENT_API=v1``), never
guessed from a URL. Every resource makes its calls in REST v2's terms; ``V1`` spells
each for v1 (paths, bodies, queries: the table of docs/rest-v2.md#from-v1-to-v2, read
right to left) and gives each answer v2's shape, so a v1 client returns the same
records as a v2 one. What v1 has no place for is refused in one line before anything
is sent: an operation only v2 has (the catalog, logs, clusters...), a field only v2
has (``start_ssh``, a network volume's ``type``, an endpoint's GPU ``pools``: v1 names
GPU types, and only v2's catalog says which types a pool holds). v1's own fields
(a template's readme, a pod's machine...) are not kept: the records are v2's.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote

import httpx

from nbext.models.v2 import LIST_KEYS, POD_ACTIONS_BY_STATUS
from nbext.models.v2.convert import persistent, to_v1, to_v2

from .._calls import Answer, Call
from .._config import ENV_MANAGEMENT_API
from .._errors import APIError, UnsupportedOperation
from .._flows import Context, Flow, send
from .rest import V2
from .wire import Reader, encoded, management_call

T = TypeVar("T")
Json = dict[str, Any]
AREAS = {
    "templates": "templates",
    "pods": "pods",
    "serverless": "endpoints",
    "network-volumes": "networkvolumes",
    "registries": "containerregistryauth",
}
"""v2's path -> v1's, for every area v1 has."""
BILLING = {"pods": "pods", "serverless": "endpoints", "network-volumes": "networkvolumes"}
BILLING_QUERY = {"startTime", "endTime", "bucketSize", "podId", "serverlessId"}
BUCKETS = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}

CONTAINER = ("image", "args", "disk", "env", "ports", "registry", "mounts")
"""v2's container fields, which ``convert.to_v1`` spells the v1 way."""
TEMPLATE = {
    "name": "name",
    "category": "category",
    "public": "isPublic",
    "serverless": "isServerless",
}
POD = {
    "name": "name",
    "templateId": "templateId",
    "dataCenterIds": "dataCenterIds",
    "globalNetworking": "globalNetworking",
    "locked": "locked",
    "cloud": "cloudType",
}
ENDPOINT = {"name": "name", "dataCenterIds": "dataCenterIds", "timeout": "executionTimeoutMs"}
WORKERS = {"min": "workersMin", "max": "workersMax", "idleTimeout": "idleTimeout"}
GPU = {"count": "gpuCount", "allowedCudaVersions": "allowedCudaVersions"}
VOLUME = {"name": "name", "size": "size", "dataCenter": "dataCenterId"}
"""v2's field -> v1's, for the fields only renamed: both ways."""


def needs_v2(operation: str, what: str = "") -> UnsupportedOperation:
    """The one-line refusal of what REST v1 does not have."""
    return UnsupportedOperation(
        f"{operation}{what} needs the management interface REST v2, and this client speaks "
        f"the retired v1 (management_api='v1'); leave management_api and {ENV_MANAGEMENT_API} "
        "unset for v2, the default"
    )


def to(names: Mapping[str, str], fields: Mapping[str, Any]) -> Json:
    """``fields`` under the names ``names`` gives them (those it names)."""
    return {names[k]: v for k, v in fields.items() if k in names}


def back(names: Mapping[str, str], fields: Mapping[str, Any]) -> Json:
    """``to`` the other way: v1's ``fields`` under v2's names."""
    return to({v1: v2 for v2, v1 in names.items()}, fields)


def _check(operation: str, body: Mapping[str, Any], known: Sequence[str]) -> None:
    """Refuse the fields of ``body`` v1 has no place for, by their keywords."""
    lost = [re.sub(r"(?<=[a-z])(?=[A-Z])", "_", k).lower() for k in body if k not in known]
    if lost:
        raise needs_v2(operation, f" with {', '.join(lost)}")


# ---- v2's bodies, spelt for v1 ------------------------------------------------------------


def template_body(op: str, b: Mapping[str, Any]) -> Json:
    _check(op, b, (*CONTAINER, *TEMPLATE))
    return {**to_v1(b), **to(TEMPLATE, b)}


def pod_body(op: str, b: Mapping[str, Any]) -> Json:
    _check(op, b, (*CONTAINER, *POD, "gpu", "cpu"))
    out = {**to_v1(b), **to(POD, b)}
    if network := (b.get("mounts") or {}).get("network"):
        out.update(networkVolumeId=network[0]["volumeId"], volumeMountPath=network[0]["path"])
        out.pop("volumeInGb", None)
    if gpu := b.get("gpu"):
        out.update(computeType="GPU", gpuTypeIds=[gpu["id"]], **to(GPU, gpu))
    if cpu := b.get("cpu"):
        out.update(
            computeType="CPU", cpuFlavorIds=[cpu["id"]], **to({"vcpuCount": "vcpuCount"}, cpu)
        )
    return out


def endpoint_body(op: str, b: Mapping[str, Any]) -> Json:
    nested = ("type", "gpu", "cpu", "workers", "scaling", "flashboot", "networkVolumes")
    _check(op, b, (*ENDPOINT, "templateId", *nested))
    if b.get("type", "QUEUE") != "QUEUE":
        raise needs_v2(op, f" of type {b['type']}")
    out = {**to({**ENDPOINT, "templateId": "templateId"}, b), **to(WORKERS, b.get("workers") or {})}
    if gpu := b.get("gpu"):
        if gpu.get("pools") or gpu.get("excludedTypes"):
            raise needs_v2(op, " with gpu.pools (REST v1 names GPU types, not pools)")
        out |= to({**GPU, "minCudaVersion": "minCudaVersion"}, gpu)
    if cpu := b.get("cpu"):
        out.update(computeType="CPU", cpuFlavorIds=[c["id"] for c in cpu])
        out["vcpuCount"] = max(c.get("vcpuCount", 2) for c in cpu)
    if scaling := b.get("scaling"):
        value = scaling.get("requestCount", scaling.get("queueDelay"))
        out.update(scalerType=scaling["type"], scalerValue=math.ceil(value))
    if "flashboot" in b:
        out["flashboot"] = b["flashboot"] != "OFF"
    if "networkVolumes" in b:
        volumes = list(b["networkVolumes"])
        out.update(networkVolumeId=volumes[0] if volumes else None, networkVolumeIds=volumes[1:])
    return out


def volume_body(op: str, b: Mapping[str, Any]) -> Json:
    _check(op, b, tuple(VOLUME))
    return to(VOLUME, b)


def registry_body(op: str, b: Mapping[str, Any]) -> Json:
    return dict(b)  # the same three fields


BODIES = {
    "templates": template_body,
    "pods": pod_body,
    "serverless": endpoint_body,
    "network-volumes": volume_body,
    "registries": registry_body,
}


# ---- v1's answers, given v2's shape ----------------------------------------------------------


def _container(r: Json, image: str) -> Json:
    """v2's container fields and local volume of a v1 record (its image under ``image``)."""
    names = ("dockerStartCmd", "containerDiskInGb", "env", "ports", "containerRegistryAuthId")
    return {
        "id": r.get("id"),
        **to_v2(r.get(image), *(r.get(name) for name in names)),
        "mounts": persistent(r.get("volumeInGb"), r.get("volumeMountPath")),
    }


def template_v2(t: Json) -> Json:
    return {"public": False, "serverless": False, **_container(t, "imageName"), **back(TEMPLATE, t)}


def pod_v2(p: Json) -> Json:
    status = p.get("desiredStatus") or "RUNNING"
    out = {**_container(p, "image"), "name": p.get("name"), "status": status}
    out.update(cost=p.get("costPerHr") or 0.0, locked=bool(p.get("locked")))
    out["actions"] = next((list(a) for s, a in POD_ACTIONS_BY_STATUS.items() if s == status), [])
    if (volume := p.get("networkVolume") or {}).get("id"):
        out["mounts"] = {"network": [{"volumeId": volume["id"], "path": p.get("volumeMountPath")}]}
    if gpu := p.get("gpu"):
        out["gpu"] = {"id": gpu.get("id"), "count": gpu.get("count", 1)}
    if p.get("cpuFlavorId"):
        cpu = {"vcpuCount": p.get("vcpuCount"), "memory": p.get("memoryInGb")}
        out["cpu"] = {"id": p["cpuFlavorId"], **cpu}
    out.update(
        dataCenterId=(p.get("machine") or {}).get("dataCenterId"),
        template=p.get("templateId"),
        startedAt=p.get("lastStartedAt"),
    )
    return out


def endpoint_v2(e: Json, jobs_url: str) -> Json:
    kind = e.get("scalerType") or "QUEUE_DELAY"
    value = "requestCount" if kind == "REQUEST_COUNT" else "queueDelay"
    first = [e["networkVolumeId"]] if e.get("networkVolumeId") else []
    out: Json = {
        **back(ENDPOINT, e),
        "id": e.get("id"),
        "type": "QUEUE",
        "requestUrls": request_urls(jobs_url, str(e.get("id"))),
        "workers": back(WORKERS, e),
        "scaling": {"type": kind, value: e.get("scalerValue")},
        "networkVolumes": [*first, *(e.get("networkVolumeIds") or [])],
        "flashboot": "FLASHBOOT" if e.get("flashboot") else "OFF",
        "env": e.get("env") or {},
        "createdAt": e.get("createdAt"),
    }
    if e.get("computeType") == "CPU":
        count = e.get("vcpuCount", 2)
        out["cpu"] = [{"id": f, "vcpuCount": count} for f in e.get("cpuFlavorIds", [])]
    else:
        out["gpu"] = {"pools": [], **back({**GPU, "minCudaVersion": "minCudaVersion"}, e)}
    return out


def request_urls(jobs_url: str, endpoint_id: str) -> Json:
    """A queue endpoint's addresses on the client's job interface (v1 has no such field)."""
    base, job = f"{jobs_url}/{quote(endpoint_id, safe='')}", "%7Bjob_id%7D"
    urls = {"run": "run", "runSync": "runsync", "health": "health", "purgeQueue": "purge-queue"}
    jobs = {"status": "status", "stream": "stream", "cancel": "cancel", "retry": "retry"}
    urls |= {name: f"{path}/{job}" for name, path in jobs.items()}
    return {name: f"{base}/{path}" for name, path in urls.items()}


def billing_v2(r: Json, bucket: str) -> Json:
    """A v1 bill's record: the bucket's start, its end (v1 gives none), the amount."""
    start = datetime.fromisoformat(str(r.get("time")).replace("Z", "+00:00"))
    if bucket in BUCKETS:
        end = start + BUCKETS[bucket]
    elif bucket == "year":
        end = start.replace(year=start.year + 1)
    else:
        end = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    ids = {"podId": r.get("podId"), "serverlessId": r.get("endpointId")}
    times = {"startTime": start.isoformat(), "endTime": end.isoformat()}
    return {**times, "totalAmount": r.get("amount"), **{k: v for k, v in ids.items() if v}}


def volume_v2(v: Json) -> Json:
    return {"id": v.get("id"), **back(VOLUME, v)}


def registry_v2(r: Json) -> Json:
    return {"id": r.get("id"), "name": r.get("name")}


RECORDS: dict[str, Callable[[Json], Json]] = {
    "templates": template_v2,
    "pods": pod_v2,
    "network-volumes": volume_v2,
    "registries": registry_v2,
}
"""v2's area -> how a v1 record of it reads in v2's shape (endpoints: ``endpoint_v2``,
which needs the job interface's address)."""


# ---- the adapter ------------------------------------------------------------------------------


class V1(V2):
    """REST v1: v2's calls spelt the v1 way, v1's answers given v2's shape; the retired
    interface's 410 retold with how to switch."""

    def __init__(self, jobs_url: str) -> None:
        self.jobs_url = jobs_url
        """The job interface, where the endpoints' ``request_urls`` point."""

    def call(
        self,
        method: str,
        parts: Sequence[str],
        operation: str,
        subject: str,
        *,
        body: Mapping[str, Any] | None = None,
        query: Sequence[tuple[str, str]] = (),
    ) -> Call:
        area, rest = parts[0], list(parts[1:])
        if area == "billing" and rest and rest[0] in BILLING:
            lost = [name for name, _ in query if name not in BILLING_QUERY]
            if lost:
                raise needs_v2(operation, f" with {', '.join(lost)}")
            grouping = {"pods": "podId", "serverless": "endpointId"}.get(rest[0])
            params = [(name.replace("serverlessId", "endpointId"), v) for name, v in query]
            params += [("grouping", grouping)] if grouping else []
            return management_call(
                "GET", ["billing", BILLING[rest[0]]], operation, subject, query=params
            )
        if area == "pods" and rest[1:] == ["action"] and body is not None:
            if body["action"] == "terminate":
                return management_call("DELETE", parts[:2], operation, subject)
            return management_call("POST", [*parts[:2], body["action"]], operation, subject)
        if area not in AREAS or len(rest) > 1 or query or rest == ["delegations"]:
            raise needs_v2(operation)
        data = None if body is None else encoded(operation, BODIES[area](operation, body))
        every = area == "templates" and not rest and method == "GET"  # v2 lists endpoints' too
        params = [("includeEndpointBoundTemplates", "true")] if every else []
        return management_call(
            method, [AREAS[area], *rest], operation, subject, body=data, query=params
        )

    def fetch(self, ctx: Context, call: Call, read: Reader[T]) -> Flow[T]:
        try:
            response = yield from send(ctx, call)
        except APIError as error:
            if (told := retirement(call, error)) is None:
                raise
        else:
            return read(call, self._answer(call, response))
        raise told

    def delete(self, ctx: Context, call: Call) -> Flow[None]:
        try:
            return (yield from super().delete(ctx, call))
        except APIError as error:
            if (told := retirement(call, error)) is None:
                raise
        raise told

    def _answer(self, call: Call, response: Answer) -> Answer:
        """``response`` with v2's shape, or as it is when it carries no record."""
        path, _, params = call.path.partition("?")
        area = path.split("/")[0]
        try:
            data = response.json() if response.content.strip() else None
        except ValueError:
            return response  # the reader says it is not JSON
        if area == "billing" and isinstance(data, list):
            bucket = dict(parse_qsl(params)).get("bucketSize", "day")
            data = {"records": [billing_v2(r, bucket) for r in data]}
        elif area != "billing" and data is not None:
            v2 = next(v2 for v2, v1 in AREAS.items() if v1 == area)
            convert = RECORDS.get(v2) or functools.partial(endpoint_v2, jobs_url=self.jobs_url)
            if isinstance(data, list):
                data = {LIST_KEYS[v2]: [convert(x) for x in data if isinstance(x, dict)]}
            elif isinstance(data, dict):
                data = convert(data)
        return response if data is None else httpx.Response(response.status_code, json=data)


def retirement(call: Call, error: APIError) -> APIError | None:
    """``error`` retold, when it says the v1 interface itself is gone, not one record.

    410 Gone is what a retired interface answers. A 404 says the same only where no id
    is involved: a listing (``pods``, ``billing/pods``) exists as long as v1 does, so
    its 404 cannot mean a missing record. (An emulator serves v1 for good and never
    answers either.)
    """
    path = call.path.split("?", 1)[0]
    listing = path.count("/") == 0 or path.startswith("billing/")
    if not (error.status == 410 or (error.status == 404 and listing)):
        return None
    return type(error)(
        f"{error.status} on {call.describe()}: the service's REST v1 management interface "
        "is retired (2026-11-15) and this client speaks it (management_api='v1'); switch to "
        f"REST v2, the default: leave management_api and {ENV_MANAGEMENT_API} unset",
        status=error.status,
        method=error.method,
        path=error.path,
        body=error.body,
        request_id=error.request_id,
    )

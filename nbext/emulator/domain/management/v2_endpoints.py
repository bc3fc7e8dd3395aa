"""Serverless endpoints in REST v2's terms: a v2 body's rules, and the endpoint as v2
shows it, with its releases and ``requestUrls`` pointing at this emulator's job interface.

v2 endpoints carry their own container settings. An endpoint record is bound to a
template, so a v2 create (and a v2 update of image, args, env, ...) gives the endpoint a
template of its own, made from the body and the template it names; later edits of that
named template do not reach the endpoint, as the reference says. Each new template
version is a release.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from nbext.models import (
    ComputeType,
    EndpointCreateInput,
    EndpointUpdateInput,
)

from ..errors import InvalidInput, NotFound
from . import catalog, offers
from .container import V1_NAMES, check_compute, split_args, to_v2
from .endpoints import EndpointEntry
from .records import atomic, iso, new_id
from .refusals import refuse, validated
from .templates import TemplateRecord

if TYPE_CHECKING:
    from .facade import Management

CONTAINER = ("image", "args", "disk", "env", "ports", "registry")


# ---- views ---------------------------------------------------------------------------------


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


def _template(m: Management, e: EndpointEntry) -> TemplateRecord | None:
    return m.templates.find(e.view.template_id or "")


def _gpu(m: Management, e: EndpointEntry) -> dict[str, Any]:
    v = e.view
    types = [str(g) for g in v.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE]]
    pools = sorted({offers.pool_of(g) for g in types if g in catalog.GPUS})
    all_types = offers.pools()
    excluded = [g for p in pools for g in all_types[p] if g not in types]
    gpu: dict[str, Any] = {
        "pools": pools or [offers.pool_of(str(catalog.DEFAULT_GPU_TYPE))],
        "count": v.gpu_count or 1,
        "allowedCudaVersions": [str(c) for c in v.allowed_cuda_versions or []],
        "minCudaVersion": str(v.min_cuda_version) if v.min_cuda_version else None,
    }
    if excluded:
        gpu["excludedTypes"] = excluded
    return gpu


def _scaling(e: EndpointEntry) -> dict[str, Any]:
    value = e.view.scaler_value or 4
    if str(e.view.scaler_type or "QUEUE_DELAY") == "REQUEST_COUNT":
        return {"type": "REQUEST_COUNT", "requestCount": max(1, int(value))}
    exact = e.queue_delay
    if exact is None or max(1, math.ceil(exact)) != value:  # set through v1 since
        exact = value
    return {"type": "QUEUE_DELAY", "queueDelay": float(exact)}


def view(m: Management, e: EndpointEntry, base: str) -> dict[str, Any]:
    v = e.view
    t = _template(m, e)
    out: dict[str, Any] = {"id": e.id, "name": v.name or e.id, "type": "QUEUE"}
    if e.id in m.jobs.endpoints:
        out["requestUrls"] = request_urls(base, e.id)
    out.update(
        to_v2(
            t.image if t else None,
            split_args(t.args) if t else None,
            t.disk if t else None,
            v.env if v.env is not None else (t.env if t else None),
            t.ports if t else None,
            t.registry if t else None,
        )
    )
    if v.compute_type == ComputeType.CPU:
        out["gpu"] = None
        flavors = e.cpu_flavor_ids or [str(catalog.DEFAULT_CPU_FLAVOR)]
        out["cpu"] = [
            {
                "id": f,
                "vcpuCount": max(2, e.vcpu_count),
                "memory": max(2, e.vcpu_count) * catalog.cpu(f).memory_per_vcpu_gb,
            }
            for f in flavors
        ]
    else:
        out["gpu"] = _gpu(m, e)
    scaling = _scaling(e)
    workers: dict[str, Any] = {"min": v.workers_min or 0, "max": v.workers_max or 0}
    idle = v.idle_timeout
    if scaling["type"] == "QUEUE_DELAY" and idle is not None and 1 <= idle <= 3600:
        workers["idleTimeout"] = idle
    volumes = [v.network_volume_id] if v.network_volume_id else []
    volumes += [x for x in v.network_volume_ids or [] if x not in volumes]
    flashboot = e.flashboot_mode
    if flashboot is None:
        flashboot = "FLASHBOOT" if getattr(v, "flashboot", None) else "OFF"
    out.update(
        workers=workers,
        scaling=scaling,
        dataCenterIds=[str(d) for d in v.data_center_ids or []],
        networkVolumes=volumes,
        timeout=v.execution_timeout_ms or 600_000,
        flashboot=flashboot,
        createdAt=iso(v.created_at.timestamp() if v.created_at else 0.0),
    )
    return out


def releases(m: Management, e: EndpointEntry) -> list[dict[str, Any]]:
    """The endpoint's versions as releases, each noted when first seen (with its image)."""
    known: list[dict[str, Any]] = list(e.releases)
    version = e.view.version or 0
    if not known or known[-1]["version"] < version:
        t = _template(m, e)
        created = e.view.created_at.timestamp() if e.view.created_at else m.clock.now()
        known.append(
            {
                "id": "rel_" + new_id(10),
                "version": version,
                "ts": created if not known else m.clock.now(),
                "image": t.image if t else None,
            }
        )
        e.releases = known
        m.endpoints.book.save(e.id, e)
    return known


# ---- the rules of a body -------------------------------------------------------------------


def _check_compute(data: dict[str, Any], *, create: bool) -> None:
    check_compute(data, "an endpoint", required=create)
    if data.get("type") == "LOAD_BALANCER":
        raise refuse(
            "type",
            "the emulator serves queue-based endpoints (QUEUE) only; LOAD_BALANCER "
            "endpoints route to worker-defined paths it does not run",
        )
    scaling = data.get("scaling") or {}
    if scaling.get("type") == "REQUEST_COUNT" and "idleTimeout" in (data.get("workers") or {}):
        raise refuse("workers.idleTimeout", "does not apply to REQUEST_COUNT scaling")


def _gpu_types(gpu: dict[str, Any]) -> list[str]:
    by_pool = offers.pools()
    types: list[str] = []
    for i, pool in enumerate(gpu.get("pools") or []):
        if pool not in by_pool:
            raise refuse(
                f"gpu.pools.{i}", f"unknown pool {pool!r}; GET /v2/catalog/gpus lists pools"
            )
        types += by_pool[pool]
    excluded = [x.strip() for x in gpu.get("excludedTypes") or []]
    for i, name in enumerate(excluded):
        if name not in types:
            raise InvalidInput(f"gpu.excludedTypes.{i}: {name!r} is not a GPU type of gpu.pools")
    types = [t for t in types if t not in excluded]
    if not types and gpu.get("pools"):
        raise refuse("gpu.excludedTypes", "excludes every GPU type of gpu.pools")
    return types


def _scaler(data: dict[str, Any], v1: dict[str, Any]) -> dict[str, Any]:
    """v1's scaler fields for v2's ``scaling`` (the exact queue delay is kept on the record)."""
    scaling = data.get("scaling")
    if not scaling:
        return {}
    if scaling["type"] == "REQUEST_COUNT":
        v1.update(scalerType="REQUEST_COUNT", scalerValue=scaling["requestCount"])
        return {"queueDelay": None}
    delay = float(scaling["queueDelay"])
    v1.update(scalerType="QUEUE_DELAY", scalerValue=max(1, math.ceil(delay)))
    return {"queueDelay": delay}


def _common(data: dict[str, Any], v1: dict[str, Any]) -> dict[str, Any]:
    """v1's fields for everything but the container; v2's fields v1 has no place for."""
    gpu, cpu = data.get("gpu"), data.get("cpu")
    if gpu is not None:
        if gpu.get("pools"):
            v1["gpuTypeIds"] = _gpu_types(gpu)
        if "count" in gpu:
            v1["gpuCount"] = gpu["count"]
        if gpu.get("allowedCudaVersions"):
            v1["allowedCudaVersions"] = gpu["allowedCudaVersions"]
        if gpu.get("minCudaVersion"):
            v1["minCudaVersion"] = gpu["minCudaVersion"]
    if cpu is not None:
        v1["cpuFlavorIds"] = list(dict.fromkeys(c["id"] for c in cpu))
        v1["vcpuCount"] = max(c["vcpuCount"] for c in cpu)
    workers = data.get("workers") or {}
    for v2_name, v1_name in (("min", "workersMin"), ("max", "workersMax")):
        if v2_name in workers:
            v1[v1_name] = workers[v2_name]
    if "idleTimeout" in workers:
        v1["idleTimeout"] = workers["idleTimeout"]
    if "name" in data:
        v1["name"] = data["name"]
    if data.get("dataCenterIds"):
        v1["dataCenterIds"] = data["dataCenterIds"]
    if "networkVolumes" in data:
        vols = data["networkVolumes"]
        v1["networkVolumeId"] = vols[0] if vols else None
        v1["networkVolumeIds"] = vols[1:] if len(vols) > 1 else None
    if "timeout" in data:
        v1["executionTimeoutMs"] = data["timeout"]
    v2_only = _scaler(data, v1)
    if "flashboot" in data:
        v1["flashboot"] = data["flashboot"] != "OFF"
        v2_only["flashboot"] = data["flashboot"]
    return v2_only


def _owned_template(
    m: Management,
    name: str,
    data: dict[str, Any],
    base: TemplateRecord | None,
    *,
    merge_env: bool,
) -> TemplateRecord:
    """A serverless template for one endpoint: ``base`` overridden by the body's fields.

    ``env`` is merged per key with the base's (body winning) when the body names a
    template; a PATCH of the endpoint's own settings replaces it.
    """
    inherited = base.env if base is not None else {}
    env = {**inherited, **data.get("env", {})} if merge_env else data.get("env", inherited)
    image = data.get("image") or (base.image if base else None)
    fields: dict[str, Any] = {
        "name": m.templates.unique_name(f"{name} (endpoint)"),
        "image": image,
        "serverless": True,
        "args": data.get("args", base.args if base else ""),
        "env": env,
        "ports": data.get("ports", list(base.ports) if base else []),
    }
    if "disk" in data or (base and base.disk):
        fields["disk"] = data.get("disk", base.disk if base else 5)
    registry = data.get("registry", base.registry if base else None)
    if registry:
        fields["registry"] = registry
    readme = "Made for a v2 serverless endpoint; deleted with it."
    return m.templates.create(fields, readme=readme)


def _named_template(m: Management, template_id: str) -> TemplateRecord:
    found = m.templates.find(template_id)
    if found is None:
        raise NotFound(f"templateId: no template with id {template_id!r}")
    if not found.serverless:
        raise refuse("templateId", f"template {template_id!r} is a pod template, not serverless")
    return found


def _adopt(m: Management, template: TemplateRecord, endpoint_id: str) -> None:
    """The endpoint owns ``template``: it goes when the endpoint does."""
    template.deployed_for = endpoint_id
    m.templates.book.save(template.id, template)
    e = m.endpoints.entry(endpoint_id)
    e.deployed = True
    m.endpoints.book.save(endpoint_id, e)


# ---- the operations ------------------------------------------------------------------------


class V2Endpoints:
    """Endpoints created, read and changed with v2's bodies and answers.

    ``base`` is the root URL the request came to, for the endpoint's ``requestUrls``.
    """

    def __init__(self, m: Management) -> None:
        self.m = m

    def listing(self, base: str) -> list[dict[str, Any]]:
        return [view(self.m, e, base) for e in self.m.endpoints.book]

    def get(self, endpoint_id: str, base: str) -> dict[str, Any]:
        return view(self.m, self.m.endpoints.entry(endpoint_id), base)

    def create(self, data: dict[str, Any], base_url: str) -> dict[str, Any]:
        m = self.m
        _check_compute(data, create=True)
        base = _named_template(m, data["templateId"]) if "templateId" in data else None
        gpu = data.get("gpu")
        if base is not None and gpu is not None and "allowedCudaVersions" not in gpu:
            seeded = base.allowed_cuda_versions
            if seeded and not gpu.get("minCudaVersion"):
                data = {**data, "gpu": {**gpu, "allowedCudaVersions": seeded}}
        v1: dict[str, Any] = {
            "templateId": "pending",
            "computeType": "GPU" if data.get("gpu") is not None else "CPU",
        }
        v2_only = _common(data, v1)
        validated(EndpointCreateInput, v1, V1_NAMES)  # every rule before anything is made
        with atomic():  # the template, the endpoint and its v2 fields, or none of them
            template = _owned_template(m, data["name"], data, base, merge_env=True)
            v1["templateId"] = template.id
            made = m.endpoints.create(validated(EndpointCreateInput, v1, V1_NAMES))
            _adopt(m, template, made["id"])
            e = m.endpoints.entry(made["id"])
            e.keep_v2(v2_only)
            m.endpoints.book.save(e.id, e)
            releases(m, e)  # the first release: as made
        return self.get(made["id"], base_url)

    def update(self, endpoint_id: str, data: dict[str, Any], base_url: str) -> dict[str, Any]:
        m = self.m
        e = m.endpoints.entry(endpoint_id)
        _check_compute(data, create=False)
        gpu_endpoint = e.view.compute_type != ComputeType.CPU
        if data.get("cpu") is not None and gpu_endpoint:
            raise refuse("cpu", "this endpoint runs GPU workers; its compute type is fixed")
        if data.get("gpu") is not None and not gpu_endpoint:
            raise refuse("gpu", "this endpoint runs CPU workers; its compute type is fixed")
        v1: dict[str, Any] = {}
        v2_only = _common(data, v1)
        parsed = validated(EndpointUpdateInput, v1, V1_NAMES)
        with atomic():  # every record this update touches, or none of them
            new_template = None
            if "templateId" in data or any(k in data for k in CONTAINER):
                named = "templateId" in data
                base = _named_template(m, data["templateId"]) if named else _template(m, e)
                new_template = _owned_template(
                    m, e.view.name or endpoint_id, data, base, merge_env=named
                )
                parsed = validated(
                    EndpointUpdateInput, {**v1, "templateId": new_template.id}, V1_NAMES
                )
            old = _template(m, e)
            releases(m, e)  # the release this update follows, if not noted yet
            m.endpoints.update(endpoint_id, parsed)
            if new_template is not None:
                _adopt(m, new_template, endpoint_id)
                owned = m.templates.book.get(old.id or "") if old else None
                if owned is not None and owned.deployed_for == endpoint_id:
                    m.templates.book.drop(owned.id)
            if (data.get("gpu") or {}).get("minCudaVersion") == "":
                e.view.min_cuda_version = None
                m.endpoints.book.save(endpoint_id, e)
            given = {k: v for k, v in v2_only.items() if v is not None}
            if given:
                e.keep_v2(given)
                m.endpoints.book.save(endpoint_id, e)
        return self.get(endpoint_id, base_url)

    def delete(self, endpoint_id: str) -> None:
        self.m.endpoints.entry(endpoint_id)
        self.m.endpoints.delete(endpoint_id)

    def release_listing(self, endpoint_id: str) -> dict[str, Any]:
        """The endpoint's releases, newest first, and how far the latest has rolled out."""
        m = self.m
        e = m.endpoints.entry(endpoint_id)
        live = m.jobs.endpoints.get(endpoint_id)
        total = len(live.workers) if live else 0
        known = releases(m, e)
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
        return {"endpointVersion": e.view.version or 0, "rollout": rollout, "releases": out}

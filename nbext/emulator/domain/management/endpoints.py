"""Serverless endpoints in REST v2's shape: a v2 body's rules, the records, and the live
endpoints of the job interface they stand for (docs/architecture.md#management-areas)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbext.models import DEFAULT_PORTS, EXECUTION_TIMEOUT_DEFAULT_MS
from nbext.models.v1 import ALL_DATA_CENTERS, WORKERS_MAX_DEFAULT
from nbext.models.v2 import reserved_endpoint_id

from ..clock import Clock
from ..endpoints import Endpoint as LiveEndpoint
from ..errors import InvalidInput, NotFound
from ..store_port import Store
from . import catalog, offers
from .container import check_compute
from .endpoint_input import CreateEndpointRequest, UpdateEndpointRequest
from .network_volumes import NetworkVolumes
from .records import Book, after, atomic, new_id, on_undo
from .refusals import checked, refuse
from .templates import TemplateRecord, Templates
from .usage import UsageLedger

if TYPE_CHECKING:
    from ..job_service import JobService

CONTAINER = ("image", "args", "disk", "env", "ports", "registry")
"""A v2 body's container settings: an endpoint takes them into a template of its own."""
PLAIN = {"name": "name", "timeout": "timeout_ms", "type": "type", "flashboot": "flashboot"}
"""A v2 body's fields the record keeps as they are, by the record's name for each."""


@dataclass
class EndpointRecord:
    """One endpoint: v2's fields, then the emulator's own."""

    id: str
    name: str
    template_id: str
    compute_type: str = "GPU"
    type: str = "QUEUE"
    """v2's ``type``: QUEUE, or LOAD_BALANCER (requests go to the workers' own servers)."""
    gpu_types: list[str] = field(default_factory=lambda: [str(catalog.DEFAULT_GPU_TYPE)])
    """v2's pools less its excluded types, as types; in v1's order when v1 named them."""
    gpu_count: int = 1
    cpu_flavors: list[str] = field(default_factory=lambda: [str(catalog.DEFAULT_CPU_FLAVOR)])
    vcpu_count: int = 2
    allowed_cuda_versions: list[str] | None = None
    """``None``: never given (v1 shows no field; v2 shows ``[]``)."""
    min_cuda_version: str | None = None
    data_center_ids: list[str] = field(default_factory=lambda: list(map(str, ALL_DATA_CENTERS)))
    workers_min: int = 0
    workers_max: int = WORKERS_MAX_DEFAULT
    idle_timeout: float = 5.0
    """Exact (``Emulator.deploy`` takes fractions); both interfaces show it rounded up.
    Kept under REQUEST_COUNT scaling too, where v2 does not show it."""
    timeout_ms: int = EXECUTION_TIMEOUT_DEFAULT_MS
    scaling_type: str = "QUEUE_DELAY"
    """v2's ``scaling.type``: QUEUE_DELAY or REQUEST_COUNT."""
    scaling_value: float = 4.0
    """v2's exact ``scaling.queueDelay`` (v1 shows it rounded up), or its ``requestCount``."""
    network_volumes: list[str] = field(default_factory=list)
    flashboot: str = "OFF"
    """v2's mode: OFF, FLASHBOOT or PRIORITY_FLASHBOOT (v1's flag is "not OFF")."""
    env: dict[str, str] = field(default_factory=dict)
    """The template's env, copied when the endpoint is made and each time it changes."""
    version: int = 0
    created_at: float = 0.0
    aggregate_stream: bool = True
    deployed: bool = False
    """Owns its template (``Emulator.deploy``'s, or one a v2 body made): it goes with it."""
    releases: list[dict[str, Any]] = field(default_factory=list)
    """The versions v2 has shown as releases, each noted when first seen."""

    @property
    def gpu(self) -> bool:
        return self.compute_type != "CPU"

    def rate(self) -> float:
        """USD per second of one worker executing."""
        if not self.gpu:
            flavor = (self.cpu_flavors or [str(catalog.DEFAULT_CPU_FLAVOR)])[0]
            return catalog.cpu(flavor).serverless_per_vcpu_second * self.vcpu_count
        return catalog.gpu(self.gpu_types[0]).serverless_per_second * self.gpu_count

    def gpu_type_id(self) -> str | None:
        return self.gpu_types[0] if self.gpu else None

    def data_center(self) -> str:
        return (self.data_center_ids or [str(catalog.DATA_CENTERS_DEFAULT)])[0]


# ---- the rules of a v2 body ----------------------------------------------------------------


def _check_compute(data: dict[str, Any], *, create: bool) -> None:
    """The rules the reference states in words (its schema has refused the rest: a
    LOAD_BALANCER on QUEUE_DELAY, a ``type`` in an update)."""
    check_compute(data, "an endpoint", required=create)
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


def _settings(data: dict[str, Any]) -> dict[str, Any]:
    """The record's fields a checked v2 body sets (all but the container and the template)."""
    out: dict[str, Any] = {field: data[wire] for wire, field in PLAIN.items() if wire in data}
    gpu, cpu = data.get("gpu"), data.get("cpu")
    if gpu is not None:
        if gpu.get("pools"):
            out["gpu_types"] = _gpu_types(gpu)
        if "count" in gpu:
            out["gpu_count"] = gpu["count"]
        if gpu.get("allowedCudaVersions"):
            out["allowed_cuda_versions"] = list(gpu["allowedCudaVersions"])
        if gpu.get("minCudaVersion"):
            out["min_cuda_version"] = gpu["minCudaVersion"]
        elif "minCudaVersion" in gpu:  # "" clears it
            out["min_cuda_version"] = None
    if cpu is not None:
        out["cpu_flavors"] = list(dict.fromkeys(c["id"] for c in cpu))
        out["vcpu_count"] = max(c["vcpuCount"] for c in cpu)
    workers = data.get("workers") or {}
    out.update({f"workers_{k}": workers[k] for k in ("min", "max") if k in workers})
    if "idleTimeout" in workers:
        out["idle_timeout"] = float(workers["idleTimeout"])
    if data.get("dataCenterIds"):
        out["data_center_ids"] = list(data["dataCenterIds"])
    if "networkVolumes" in data:
        out["network_volumes"] = list(data["networkVolumes"])
    scaling = data.get("scaling")
    if scaling:
        value = scaling["requestCount" if scaling["type"] == "REQUEST_COUNT" else "queueDelay"]
        out["scaling_type"] = scaling["type"]
        out["scaling_value"] = float(value)
    return out


class Endpoints:
    """The account's endpoint records, each served by a live endpoint of the job interface."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        jobs: JobService,
        usage: UsageLedger,
        *,
        templates: Templates,
        volumes: NetworkVolumes,
    ) -> None:
        self.clock, self.jobs, self.usage = clock, jobs, usage
        self.templates, self.volumes = templates, volumes
        self.book: Book[EndpointRecord] = Book.of(store, "endpoint", EndpointRecord)
        templates.bound.append(
            lambda template_id: [e.id for e in self.book if e.template_id == template_id]
        )
        templates.on_change.append(self.template_changed)
        volumes.users.append(
            lambda volume_id: [
                f"endpoint {e.id}" for e in self.book if volume_id in e.network_volumes
            ]
        )
        jobs.on_execution.append(self.record_execution)

    # ---- lookups -------------------------------------------------------------------------

    def get(self, endpoint_id: str) -> EndpointRecord:
        return self.book.need(endpoint_id, "endpoint")

    def template(self, e: EndpointRecord) -> TemplateRecord | None:
        """The template ``e`` runs: None only when its stored row was damaged and deleted
        (the way out a damaged database is given), so the endpoint still loads."""
        return self.templates.find(e.template_id)

    def _owned(self, e: EndpointRecord) -> TemplateRecord | None:
        """The template ``e`` runs if it was made for ``e`` (it goes with it), else None."""
        t = self.templates.book.get(e.template_id)
        return t if t is not None and t.deployed_for == e.id else None

    def check_volumes(self, first: str | None, rest: list[str] | None) -> None:
        """Every volume named exists; a refusal names it as v1 does, the first volume
        ``networkVolumeId`` and the rest ``networkVolumeIds.N`` (v2 alike)."""
        self.volumes.require(first, "networkVolumeId")
        for i, other in enumerate(rest or []):
            self.volumes.require(other, f"networkVolumeIds.{i}")

    # ---- the live side -------------------------------------------------------------------

    def _live(self, e: EndpointRecord, image: str) -> LiveEndpoint:
        return LiveEndpoint(
            id=e.id,
            name=e.name or e.id,
            image=image,
            workers_min=e.workers_min,
            workers_max=e.workers_max,
            idle_timeout=e.idle_timeout,
            execution_timeout_ms=e.timeout_ms,
            aggregate_stream=e.aggregate_stream,
            created_at=e.created_at,
        )

    def restore(self) -> None:
        """Put every stored endpoint back into the job interface (before its jobs return)."""
        for e in self.book:
            if e.id not in self.jobs.endpoints:
                template = self.template(e)
                self.jobs.add_endpoint(self._live(e, template.image if template else ""))

    def record_execution(
        self, live: LiveEndpoint, worker_id: str, start: float, end: float
    ) -> None:
        """A job left IN_PROGRESS: bill the worker's time (JobService's usage hook)."""
        e = self.book.get(live.id)
        if e is None:
            return
        self.usage.record(
            "worker",
            f"{e.id}/{worker_id}",
            rate=e.rate(),
            labels={
                "endpointId": e.id,
                "podId": worker_id,
                "gpuTypeId": e.gpu_type_id(),
                "dataCenterId": e.data_center(),
                "templateId": e.template_id,
                "imageName": live.image,
            },
            start=start,
            end=end,
        )

    # ---- v2's operations -----------------------------------------------------------------

    def create(self, data: dict[str, Any]) -> EndpointRecord:
        """A v2 body: every rule checked, then the endpoint and a template of its own."""
        _check_compute(data, create=True)
        template_id = data.get("templateId")
        base = None if template_id is None else self.templates.named(template_id, serverless=True)
        gpu = data.get("gpu")
        if base is not None and gpu is not None and "allowedCudaVersions" not in gpu:
            seeded = base.allowed_cuda_versions
            if seeded and not gpu.get("minCudaVersion"):
                data = {**data, "gpu": {**gpu, "allowedCudaVersions": seeded}}
        compute = "GPU" if data.get("gpu") is not None else "CPU"
        data = checked(CreateEndpointRequest, data)  # every rule before anything is made
        settings = _settings(data)
        with atomic():  # the template, the endpoint and its first release, or none of them
            template = self._owned_template(data["name"], data, base, merge_env=True)
            e = self.add(template.id, {"compute_type": compute, **settings})
            self._adopt(template, e)
            self.note_release(e)
        return e

    def update(self, endpoint_id: str, data: dict[str, Any]) -> EndpointRecord:
        """A v2 body: what it names changes; new container settings, or a template named,
        give the endpoint a new template of its own (a new release)."""
        e = self.get(endpoint_id)
        _check_compute(data, create=False)
        if data.get("cpu") is not None and e.gpu:
            raise refuse("cpu", "this endpoint runs GPU workers; its compute type is fixed")
        if data.get("gpu") is not None and not e.gpu:
            raise refuse("gpu", "this endpoint runs CPU workers; its compute type is fixed")
        data = checked(UpdateEndpointRequest, data)
        settings = _settings(data)
        with atomic():  # every record this update touches, or none of them
            new_template = None
            if "templateId" in data or any(k in data for k in CONTAINER):
                named = "templateId" in data
                base = self.template(e)
                if named:
                    base = self.templates.named(data["templateId"], serverless=True)
                new_template = self._owned_template(e.name, data, base, merge_env=named)
            old = self._owned(e)
            self.note_release(e)  # the release this update follows, if not noted yet
            self.change(
                endpoint_id,
                settings,
                template_id=new_template.id if new_template else None,
                names=("workers.min", "workers.max"),
            )
            if new_template is not None:
                self._adopt(new_template, e)
                if old is not None:
                    self.templates.book.drop(old.id)
        return e

    def note_release(self, e: EndpointRecord) -> list[dict[str, Any]]:
        """The endpoint's versions as releases, each noted when first seen (with its image)."""
        known: list[dict[str, Any]] = list(e.releases)
        if not known or known[-1]["version"] < e.version:
            t = self.template(e)
            known.append(
                {
                    "id": "rel_" + new_id(10),
                    "version": e.version,
                    "ts": e.created_at if not known else self.clock.now(),
                    "image": t.image if t else None,
                }
            )
            e.releases = known
            self.book.save(e.id, e)
        return known

    def _owned_template(
        self,
        name: str,
        data: dict[str, Any],
        base: TemplateRecord | None,
        *,
        merge_env: bool,
    ) -> TemplateRecord:
        """A serverless template for one endpoint: ``base`` overridden by the body's fields;
        ``env`` merges per key when the body names a template, else replaces."""
        inherited = base.env if base is not None else {}
        env = {**inherited, **data.get("env", {})} if merge_env else data.get("env", inherited)
        image = data.get("image") or (base.image if base else None)
        given: dict[str, Any] = {
            "name": self.templates.unique_name(f"{name} (endpoint)"),
            "image": image,
            "serverless": True,
            "args": data.get("args", base.args if base else ""),
            "env": env,
            "ports": data.get("ports", list(base.ports) if base else []),
        }
        if "disk" in data or (base and base.disk):
            given["disk"] = data.get("disk", base.disk if base else 5)
        registry = data.get("registry", base.registry if base else None)
        if registry:
            given["registry"] = registry
        return self.templates.create(given)

    def _adopt(self, template: TemplateRecord, e: EndpointRecord) -> None:
        """The endpoint owns ``template``: it goes when the endpoint does."""
        template.deployed_for = e.id
        self.templates.book.save(template.id, template)
        e.deployed = True
        self.book.save(e.id, e)

    # ---- what both interfaces' changes come to -------------------------------------------

    def add(self, template_id: str, settings: dict[str, Any]) -> EndpointRecord:
        """An endpoint running ``template_id`` as it is, with ``settings`` (the record's
        fields; the rest take their defaults): checked, stored, and served at once."""
        template = self.templates.require(template_id, "templateId", serverless=True)
        volumes = settings.get("network_volumes") or []
        self.check_volumes(volumes[0] if volumes else None, volumes[1:])
        endpoint_id = new_id(14)
        while endpoint_id in self.jobs.endpoints or reserved_endpoint_id(endpoint_id):
            endpoint_id = new_id(14)
        given = dict(settings)
        name = given.pop("name", None) or template.name
        e = EndpointRecord(
            id=endpoint_id,
            name=name,
            template_id=template_id,
            env=dict(template.env),
            created_at=self.clock.now(),
            **given,
        )
        with atomic():  # the record stored and the endpoint served, or neither
            self.book.save(endpoint_id, e)
            self.jobs.add_endpoint(self._live(e, template.image))
            on_undo(functools.partial(self.jobs.remove_endpoint, endpoint_id))
        return e

    def change(
        self,
        endpoint_id: str,
        settings: dict[str, Any],
        *,
        template_id: str | None = None,
        names: tuple[str, str] = ("workersMin", "workersMax"),
    ) -> EndpointRecord:
        """Change the record's fields ``settings`` names, and ``template_id`` if given, on
        the record and the live endpoint alike. Every check comes first, so a refused
        change changes nothing; a refusal names the worker counts by the caller's
        ``names`` (v1's by default)."""
        e = self.get(endpoint_id)
        template = None
        if template_id:
            template = self.templates.require(template_id, "templateId", serverless=True)
        if "network_volumes" in settings:
            volumes = settings["network_volumes"]
            self.check_volumes(volumes[0] if volumes else None, volumes[1:])
        low = settings.get("workers_min", e.workers_min)
        high = settings.get("workers_max", e.workers_max)
        if low > high:
            both = {"workers_min", "workers_max"} <= settings.keys()
            current = "" if both else " (one is the current)"
            raise InvalidInput(f"{names[0]} ({low}) must not exceed {names[1]} ({high}){current}")
        with atomic():  # stored first; the live endpoint follows once it is
            for name, value in settings.items():
                setattr(e, name, value)
            if template is not None and template_id != e.template_id:
                e.template_id = template.id
                e.env = dict(template.env)
                e.version += 1
            self.book.save(endpoint_id, e)
            live_name, image = e.name, template.image if template else None
            idle = e.idle_timeout if "idle_timeout" in settings else None
            timeout = settings.get("timeout_ms")

            def go_live() -> None:
                self.jobs.update_endpoint(
                    endpoint_id,
                    name=live_name,
                    image=image,
                    workers_min=low,
                    workers_max=high,
                    idle_timeout=idle,
                    execution_timeout_ms=timeout,
                )

            after(go_live)
        return e

    # ---- the emulator's own --------------------------------------------------------------

    def deploy(self, live: LiveEndpoint, load_balancer: int | None = None) -> None:
        """``Emulator.deploy``: a serverless template for the image, and a record using it
        (``load_balancer``: a LOAD_BALANCER one, on that many requests per worker)."""
        if live.id in self.jobs.endpoints or live.id in self.book:
            raise InvalidInput(f"an endpoint with id {live.id!r} already exists")
        if reserved_endpoint_id(live.id):
            raise InvalidInput(
                f"endpoint id {live.id!r} is a management path under /v2 (/v2/{live.id}); "
                "choose another id"
            )
        image = live.image or ""
        with atomic():  # the template and the record, or neither
            template = self.templates.create(
                {  # v1's defaults: deploy made its templates through v1's rules
                    "name": self.templates.unique_name(f"{live.name} ({live.id})"),
                    "image": image,
                    "serverless": True,
                    "ports": list(DEFAULT_PORTS),
                    "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
                },
                deployed_for=live.id,
            )
            e = EndpointRecord(
                id=live.id,
                name=live.name,
                template_id=template.id,
                data_center_ids=[str(catalog.DATA_CENTERS_DEFAULT)],
                workers_min=live.workers_min,
                workers_max=live.workers_max,
                idle_timeout=live.idle_timeout,
                timeout_ms=live.execution_timeout_ms,
                created_at=self.clock.now(),
                aggregate_stream=live.aggregate_stream,
                deployed=True,
            )
            if load_balancer is not None:
                e.type, e.scaling_value = "LOAD_BALANCER", load_balancer
                e.scaling_type = "REQUEST_COUNT"
            self.book.save(live.id, e)
            self.jobs.add_endpoint(live)

    def set_image(self, endpoint_id: str, image: str) -> None:
        """Run ``image`` from now on (the command line naming another image after a restart);
        only an endpoint ``Emulator.deploy`` made, whose template no other endpoint shares."""
        e = self.get(endpoint_id)
        owned = self._owned(e)
        if not e.deployed or owned is None:
            raise InvalidInput(
                f"endpoint {endpoint_id!r} runs template {e.template_id!r}; change that "
                "template's imageName (PATCH /v1/templates/{id}) to run another image"
            )
        self.templates.update(owned.id, {"image": image})

    def template_changed(self, template_id: str) -> None:
        """A template's image or env changed: a new version of every endpoint using it."""
        template = self.templates.get(template_id)  # Templates.update calls it, once saved
        image = template.image
        with atomic():
            for e in self.book:
                if e.template_id == template_id:
                    e.version += 1
                    e.env = dict(template.env)
                    self.book.save(e.id, e)
                    after(functools.partial(self.jobs.update_endpoint, e.id, image=image))

    def delete(self, endpoint_id: str) -> None:
        """Remove the record, the live endpoint and its jobs (and a template it owns)."""
        e = self.book.get(endpoint_id)
        if e is None and endpoint_id not in self.jobs.endpoints:
            raise NotFound(f"endpoint {endpoint_id!r} not found")
        with atomic():  # the records go first; the live endpoint once they are gone
            if endpoint_id in self.jobs.endpoints:
                after(functools.partial(self.jobs.remove_endpoint, endpoint_id))
            if e is None:
                return
            self.book.drop(endpoint_id)
            owned = self._owned(e) if e.deployed else None
            if owned is not None:
                self.templates.book.drop(owned.id)

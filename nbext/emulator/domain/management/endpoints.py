"""Endpoint records, and the live endpoints of the job interface they stand for.

Creating a record adds an endpoint to ``JobService`` at once, so ``/v2/{id}/...`` serves
jobs the moment ``POST /endpoints`` answers; its workers run the image the template's
``imageName`` names. Updates reach the live endpoint (image, scaling, timeouts);
deleting the record removes the endpoint and its jobs. ``Emulator.deploy`` comes through
here too: it makes a serverless template for its image and an endpoint record from it.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbext.models import (
    DEFAULT_PORTS,
    EXECUTION_TIMEOUT_DEFAULT_MS,
    ComputeType,
    Endpoint,
    EndpointCreateInput,
    EndpointIncludes,
    EndpointUpdateInput,
    Pod,
    PodStatus,
)
from nbext.models.v2 import reserved_endpoint_id

from ..endpoints import Endpoint as LiveEndpoint
from ..errors import InvalidInput, NotFound
from . import catalog
from .records import Book, after, atomic, new_id, on_undo, to_datetime, wire
from .templates import TemplateRecord

if TYPE_CHECKING:
    from .facade import Management


V2_ONLY = {"queueDelay": "queue_delay", "flashboot": "flashboot_mode"}
"""v2's fields v1's record has no place for: v2's name -> the entry's attribute."""


@dataclass
class EndpointEntry:
    """An endpoint's public record and the settings the record does not show."""

    view: Endpoint
    cpu_flavor_ids: list[str] | None = None
    vcpu_count: int = 2
    idle_timeout_s: float = 5.0
    """The exact idle timeout (``Emulator.deploy`` takes fractions of a second)."""
    aggregate_stream: bool = True
    deployed: bool = False
    """Made by ``Emulator.deploy``: its template is deleted with it."""
    queue_delay: float | None = None
    """v2's exact ``scaling.queueDelay`` (v1's ``scalerValue`` is whole seconds)."""
    flashboot_mode: str | None = None
    """v2's ``flashboot`` mode (v1's is a boolean)."""
    releases: list[dict[str, Any]] = field(default_factory=list)
    """The versions v2 has shown as releases, each noted when first seen."""

    def keep_v2(self, fields: dict[str, Any]) -> None:
        """Set the v2-only fields ``fields`` names (by v2's names)."""
        for name, value in fields.items():
            setattr(self, V2_ONLY[name], value)

    @property
    def id(self) -> str:
        return self.view.id or ""

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "view": wire(self.view),
            "cpuFlavorIds": self.cpu_flavor_ids,
            "vcpuCount": self.vcpu_count,
            "idleTimeoutS": self.idle_timeout_s,
            "aggregateStream": self.aggregate_stream,
            "deployed": self.deployed,
            "queueDelay": self.queue_delay,
            "flashboot": self.flashboot_mode,
            "releases": self.releases,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> EndpointEntry:
        return cls(
            Endpoint.model_validate(record["view"]),
            record.get("cpuFlavorIds"),
            record.get("vcpuCount", 2),
            record.get("idleTimeoutS", 5.0),
            record.get("aggregateStream", True),
            record.get("deployed", False),
            record.get("queueDelay"),
            record.get("flashboot"),
            list(record.get("releases", [])),
        )

    def rate(self) -> float:
        """USD per second of one worker executing."""
        if self.view.compute_type == ComputeType.CPU:
            flavor = (self.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR])[0]
            return catalog.cpu(flavor).serverless_per_vcpu_second * self.vcpu_count
        gpu = (self.view.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE])[0]
        return catalog.gpu(gpu).serverless_per_second * (self.view.gpu_count or 1)

    def gpu_type_id(self) -> str | None:
        if self.view.compute_type == ComputeType.CPU:
            return None
        return str((self.view.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE])[0])


def _instance_ids(flavors: list[str], vcpus: int) -> list[str]:
    return [f"{f}-{vcpus}-{vcpus * catalog.cpu(f).memory_per_vcpu_gb}" for f in flavors]


class Endpoints:
    def __init__(self, m: Management) -> None:
        self.m = m
        self.book: Book[EndpointEntry] = Book(
            m.store, "endpoint", EndpointEntry.record, EndpointEntry.from_record
        )

    # ---- lookups -------------------------------------------------------------------------

    def entry(self, endpoint_id: str) -> EndpointEntry:
        found = self.book.get(endpoint_id)
        if found is None:
            raise NotFound(f"endpoint {endpoint_id!r} not found")
        return found

    def view(self, e: EndpointEntry, includes: EndpointIncludes) -> dict[str, Any]:
        out = wire(e.view)
        if includes.include_template and e.view.template_id:
            template = self._template(e.view.template_id)
            if template is not None:
                out["template"] = wire(template.v1())
        if includes.include_workers:
            out["workers"] = [w for w, _ in self._workers(e)]
        return out

    def get(self, endpoint_id: str, includes: EndpointIncludes) -> dict[str, Any]:
        return self.view(self.entry(endpoint_id), includes)

    def listing(self, includes: EndpointIncludes) -> list[dict[str, Any]]:
        return [self.view(e, includes) for e in self.book]

    def uses_volume(self, volume_id: str) -> list[str]:
        return [
            e.id
            for e in self.book
            if e.view.network_volume_id == volume_id
            or volume_id in (e.view.network_volume_ids or [])
        ]

    def _template(self, template_id: str) -> TemplateRecord | None:
        return self.m.templates.find(template_id)

    def _serverless_template(self, template_id: str) -> TemplateRecord:
        template = self.m.templates.require(template_id, "templateId")
        if not template.serverless:
            raise InvalidInput(
                f"templateId: template {template_id!r} is a pod template (isServerless false); "
                "an endpoint needs a serverless template"
            )
        return template

    def _volumes(self, volume_id: str | None, volume_ids: list[str] | None) -> None:
        self.m.volumes.require(volume_id, "networkVolumeId")
        for i, other in enumerate(volume_ids or []):
            self.m.volumes.require(other, f"networkVolumeIds.{i}")

    # ---- workers as pods -----------------------------------------------------------------

    def _workers(self, e: EndpointEntry) -> list[tuple[dict[str, Any], str]]:
        """The live endpoint's workers in the reference's Pod shape, with their data centre."""
        live = self.m.jobs.endpoints.get(e.id)
        if live is None:
            return []
        template = self._template(e.view.template_id or "")
        t = template.v1() if template else None
        centre = str((e.view.data_center_ids or [catalog.DATA_CENTERS_DEFAULT])[0])
        cost = round(e.rate() * 3600, 4)
        gpu = e.gpu_type_id()
        views = []
        for worker in live.workers:
            pod = Pod(
                id=worker.id,
                name=f"{e.view.name} worker",
                image=live.image,
                desired_status=PodStatus.RUNNING,
                last_status_change="running a job" if worker.running else "idle",
                cost_per_hr=cost,
                adjusted_cost_per_hr=cost,
                gpu=catalog.gpu(gpu).wire(e.view.gpu_count or 1) if gpu else None,
                cpu_flavor_id=None
                if gpu
                else (e.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR])[0],
                vcpu_count=e.vcpu_count if not gpu else 8 * (e.view.gpu_count or 1),
                container_disk_in_gb=t.container_disk_in_gb if t else None,
                volume_in_gb=t.volume_in_gb if t else None,
                volume_mount_path=t.volume_mount_path if t else None,
                env=dict(t.env or {}) if t else None,
                ports=list(t.ports or []) if t else None,
                interruptible=False,
                locked=False,
                template_id=e.view.template_id,
                endpoint_id=e.id,
                ai_api_id=e.id,
                sls_version=e.view.version,
                consumer_user_id=catalog.USER_ID,
            )
            views.append((wire(pod), centre))
        return views

    def worker_pods(self) -> list[tuple[dict[str, Any], str]]:
        """Every endpoint's workers, for ``GET /pods?includeWorkers=true``."""
        return [pair for e in self.book for pair in self._workers(e)]

    # ---- the live side -------------------------------------------------------------------

    def _live(self, e: EndpointEntry, image: str) -> LiveEndpoint:
        return LiveEndpoint(
            id=e.id,
            name=e.view.name or e.id,
            image=image,
            workers_min=e.view.workers_min or 0,
            workers_max=e.view.workers_max or 0,
            idle_timeout=e.idle_timeout_s,
            execution_timeout_ms=e.view.execution_timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS,
            aggregate_stream=e.aggregate_stream,
            created_at=e.view.created_at.timestamp() if e.view.created_at else 0.0,
        )

    def adopt_facets(self) -> None:
        """Take each endpoint's v2-only fields out of the facets an earlier version kept
        them in, so a database made before they were kept on the record loses nothing."""
        for e in self.book:
            facet = self.m.v2.facets.get("endpoint", e.id)
            if facet:
                with atomic():
                    e.keep_v2({k: facet[k] for k in V2_ONLY if k in facet})
                    e.releases = list(facet.get("releases", e.releases))
                    self.book.save(e.id, e)
                    self.m.v2.facets.drop("endpoint", e.id)

    def restore(self) -> None:
        """Put every stored endpoint back into the job interface (before its jobs return)."""
        for e in self.book:
            template = self._template(e.view.template_id or "")
            if e.id not in self.m.jobs.endpoints:
                image = template.image if template else None
                self.m.jobs.add_endpoint(self._live(e, image or ""))

    def record_execution(
        self, live: LiveEndpoint, worker_id: str, start: float, end: float
    ) -> None:
        """A job left IN_PROGRESS: bill the worker's time (JobService's usage hook)."""
        e = self.book.get(live.id)
        if e is None:
            return
        self.m.usage.record(
            "worker",
            f"{e.id}/{worker_id}",
            rate=e.rate(),
            labels={
                "endpointId": e.id,
                "podId": worker_id,
                "gpuTypeId": e.gpu_type_id(),
                "dataCenterId": str((e.view.data_center_ids or [catalog.DATA_CENTERS_DEFAULT])[0]),
                "templateId": e.view.template_id,
                "imageName": live.image,
            },
            start=start,
            end=end,
        )

    # ---- changes -------------------------------------------------------------------------

    def create(self, body: EndpointCreateInput) -> dict[str, Any]:
        """``POST /endpoints``: check every reference, then serve ``/v2/{id}`` at once."""
        template = self._serverless_template(body.template_id)
        self._volumes(body.network_volume_id, body.network_volume_ids)
        endpoint_id = new_id(14)
        while endpoint_id in self.m.jobs.endpoints or reserved_endpoint_id(endpoint_id):
            endpoint_id = new_id(14)
        gpu = body.compute_type == ComputeType.GPU
        flavors = [str(f) for f in body.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR]]
        view = Endpoint(
            id=endpoint_id,
            name=body.name or template.name,
            template_id=body.template_id,
            compute_type=body.compute_type,
            gpu_type_ids=list(body.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE]) if gpu else None,
            gpu_count=body.gpu_count if gpu else None,
            instance_ids=None if gpu else _instance_ids(flavors, body.vcpu_count),
            allowed_cuda_versions=body.allowed_cuda_versions,
            min_cuda_version=body.min_cuda_version,
            data_center_ids=list(body.data_center_ids),
            workers_min=body.workers_min,
            workers_max=body.workers_max,
            idle_timeout=body.idle_timeout,
            execution_timeout_ms=body.execution_timeout_ms or EXECUTION_TIMEOUT_DEFAULT_MS,
            scaler_type=body.scaler_type,
            scaler_value=body.scaler_value,
            network_volume_id=body.network_volume_id or None,
            network_volume_ids=body.network_volume_ids,
            env=dict(template.env),
            version=0,
            created_at=to_datetime(self.m.clock.now()),
            user_id=catalog.USER_ID,
        )
        if body.flashboot is not None:
            view.flashboot = body.flashboot  # type: ignore[attr-defined]  # an extra field
        entry = EndpointEntry(
            view,
            cpu_flavor_ids=None if gpu else flavors,
            vcpu_count=body.vcpu_count,
            idle_timeout_s=float(body.idle_timeout),
        )
        with atomic():  # the record stored and the endpoint served, or neither
            self.book.save(endpoint_id, entry)
            self.m.jobs.add_endpoint(self._live(entry, template.image))
            on_undo(functools.partial(self.m.jobs.remove_endpoint, endpoint_id))
        return self.view(entry, EndpointIncludes())

    def deploy(self, live: LiveEndpoint) -> None:
        """``Emulator.deploy``: a serverless template for the image, and a record using it."""
        if live.id in self.m.jobs.endpoints or live.id in self.book:
            raise InvalidInput(f"an endpoint with id {live.id!r} already exists")
        if reserved_endpoint_id(live.id):
            raise InvalidInput(
                f"endpoint id {live.id!r} is a management path under /v2 (/v2/{live.id}); "
                "choose another id"
            )
        image = live.image or ""
        template = self.m.templates.create(
            {  # v1's defaults: deploy made its templates through v1's rules
                "name": self.m.templates.unique_name(f"{live.name} ({live.id})"),
                "image": image,
                "serverless": True,
                "ports": list(DEFAULT_PORTS),
                "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
            },
            readme="Made by Emulator.deploy for its endpoint; deleted with it.",
            deployed_for=live.id,
        )
        view = Endpoint(
            id=live.id,
            name=live.name,
            template_id=template.id,
            compute_type=ComputeType.GPU,
            gpu_type_ids=[catalog.DEFAULT_GPU_TYPE],
            gpu_count=1,
            data_center_ids=[catalog.DATA_CENTERS_DEFAULT],
            workers_min=live.workers_min,
            workers_max=live.workers_max,
            idle_timeout=math.ceil(live.idle_timeout),
            execution_timeout_ms=live.execution_timeout_ms,
            scaler_type="QUEUE_DELAY",
            scaler_value=4,
            env={},
            version=0,
            created_at=to_datetime(self.m.clock.now()),
            user_id=catalog.USER_ID,
        )
        entry = EndpointEntry(
            view,
            idle_timeout_s=live.idle_timeout,
            aggregate_stream=live.aggregate_stream,
            deployed=True,
        )
        try:
            self.m.jobs.add_endpoint(live)
        except Exception:
            self.m.templates.book.drop(template.id)
            raise
        self.book.save(live.id, entry)

    def update(self, endpoint_id: str, body: EndpointUpdateInput) -> dict[str, Any]:
        """Change what ``body`` names, on the record and the live endpoint alike.

        Every check comes first, so a refused update changes nothing.
        """
        e = self.entry(endpoint_id)
        view = e.view
        given = {n for n in body.model_fields_set if getattr(body, n) is not None}
        template = self._serverless_template(body.template_id) if body.template_id else None
        self._volumes(body.network_volume_id, body.network_volume_ids)
        low = body.workers_min if body.workers_min is not None else view.workers_min or 0
        high = body.workers_max if body.workers_max is not None else view.workers_max or 0
        if low > high:
            current = "" if {"workers_min", "workers_max"} <= given else " (one is the current)"
            raise InvalidInput(f"workersMin ({low}) must not exceed workersMax ({high}){current}")
        changed_template = template is not None and body.template_id != view.template_id
        with atomic():  # stored first; the live endpoint follows once it is
            for name in given:
                value = getattr(body, name)
                if name == "cpu_flavor_ids":
                    e.cpu_flavor_ids = [str(f) for f in value]
                elif name == "vcpu_count":
                    e.vcpu_count = value
                else:  # a field of the record, or flashboot (kept as an extra field)
                    setattr(view, name, value)
            if e.view.compute_type == ComputeType.CPU and given & {"cpu_flavor_ids", "vcpu_count"}:
                view.instance_ids = _instance_ids(
                    e.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR], e.vcpu_count
                )
            if "idle_timeout" in given:
                e.idle_timeout_s = float(view.idle_timeout or 0)
            if changed_template:
                assert template is not None
                view.env = dict(template.env)
                view.version = (view.version or 0) + 1
            self.book.save(endpoint_id, e)
            live_name, image = view.name, template.image if template else None
            idle = e.idle_timeout_s if "idle_timeout" in given else None

            def go_live() -> None:
                self.m.jobs.update_endpoint(
                    endpoint_id,
                    name=live_name,
                    image=image,
                    workers_min=low,
                    workers_max=high,
                    idle_timeout=idle,
                    execution_timeout_ms=body.execution_timeout_ms,
                )

            after(go_live)
        return self.view(e, EndpointIncludes())

    def set_image(self, endpoint_id: str, image: str) -> None:
        """Run ``image`` from now on (the command line naming another image after a restart).

        Only for an endpoint ``Emulator.deploy`` made: its template is its own. Another
        endpoint shares its template's image with whatever else uses that template.
        """
        e = self.entry(endpoint_id)
        owned = self.m.templates.book.get(e.view.template_id or "")
        if not e.deployed or owned is None or owned.deployed_for != endpoint_id:
            raise InvalidInput(
                f"endpoint {endpoint_id!r} runs template {e.view.template_id!r}; change that "
                "template's imageName (PATCH /v1/templates/{id}) to run another image"
            )
        self.m.templates.update(owned.id, {"image": image})

    def template_changed(self, template_id: str) -> None:
        """A template's image or env changed: a new version of every endpoint using it."""
        template = self._template(template_id)
        if template is None:
            return
        image = template.image
        with atomic():
            for e in self.book:
                if e.view.template_id == template_id:
                    e.view.version = (e.view.version or 0) + 1
                    e.view.env = dict(template.env)
                    self.book.save(e.id, e)
                    after(functools.partial(self.m.jobs.update_endpoint, e.id, image=image))

    def delete(self, endpoint_id: str) -> None:
        """Remove the record, the live endpoint and its jobs (and a template deploy made)."""
        e = self.book.get(endpoint_id)
        if e is None and endpoint_id not in self.m.jobs.endpoints:
            raise NotFound(f"endpoint {endpoint_id!r} not found")
        with atomic():  # the records go first; the live endpoint once they are gone
            if endpoint_id in self.m.jobs.endpoints:
                after(functools.partial(self.m.jobs.remove_endpoint, endpoint_id))
            if e is None:
                return
            self.book.drop(endpoint_id)
            if e.deployed and e.view.template_id:
                owned = self.m.templates.book.get(e.view.template_id)
                if owned is not None and owned.deployed_for == endpoint_id:
                    self.m.templates.book.drop(e.view.template_id)

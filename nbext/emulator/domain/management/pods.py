"""Pods, simulated: no container runs, but state, prices and time behave as the service's.

The life cycle of docs/behaviour.md#pods: create puts a pod RUNNING; stop makes it
EXITED; start makes it RUNNING again; restart and reset make it RUNNING with a new
``lastStartedAt``; delete removes it. A locked pod refuses stop and reset (and an update
that would reset it). While RUNNING a pod accrues ``costPerHr``: each running stretch is
an interval of the usage ledger, which billing reads.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nbext.models import (
    CloudType,
    ComputeType,
    Pod,
    PodCreateInput,
    PodIncludes,
    PodListQuery,
    PodStatus,
    PodUpdateInput,
)

from ..errors import InvalidInput, NotFound
from . import catalog
from .records import Book, atomic, event, new_id, to_datetime, wire

if TYPE_CHECKING:
    from .facade import Management

IN_PLACE = frozenset({"name", "locked"})
"""Update fields that change a pod without resetting it."""
GPU_VCPUS = 8
GPU_RAM_GB = 31
"""What one GPU comes with at least, whatever the minimums asked."""


@dataclass
class PodEntry:
    """A pod's public record and what the service knows about it but does not show."""

    view: Pod
    compute_type: str
    data_center_id: str
    cloud_type: str
    gpu_type_id: str | None = None
    network_volume_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    cuda_version: str | None = None
    """The CUDA version a v2 pod's host reports (v1's record has no field for it)."""

    def record(self) -> dict[str, Any]:
        return {
            "id": self.view.id,
            "view": wire(self.view),
            "computeType": self.compute_type,
            "dataCenterId": self.data_center_id,
            "cloudType": self.cloud_type,
            "gpuTypeId": self.gpu_type_id,
            "networkVolumeId": self.network_volume_id,
            "extra": self.extra,
            "cudaVersion": self.cuda_version,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> PodEntry:
        return cls(
            Pod.model_validate(record["view"]),
            record["computeType"],
            record["dataCenterId"],
            record["cloudType"],
            record.get("gpuTypeId"),
            record.get("networkVolumeId"),
            record.get("extra", {}),
            record.get("cudaVersion"),
        )

    @property
    def running(self) -> bool:
        return self.view.desired_status == PodStatus.RUNNING


def _hash(*parts: str) -> int:
    return zlib.crc32(":".join(parts).encode())


class Pods:
    def __init__(self, m: Management) -> None:
        self.m = m
        self.book: Book[PodEntry] = Book(m.store, "pod", PodEntry.record, PodEntry.from_record)

    # ---- lookups -------------------------------------------------------------------------

    def adopt_facets(self) -> None:
        """Take each pod's CUDA version out of the facets an earlier version kept it in,
        so a database made before it was kept on the record loses nothing."""
        for e in self.book:
            facet = self.m.v2.facets.get("pod", e.view.id or "")
            if facet:
                with atomic():
                    e.cuda_version = facet.get("cudaVersion", e.cuda_version)
                    self.book.save(e.view.id or "", e)
                    self.m.v2.facets.drop("pod", e.view.id or "")

    def entry(self, pod_id: str) -> PodEntry:
        found = self.book.get(pod_id)
        if found is None:
            raise NotFound(f"pod {pod_id!r} not found")
        return found

    def get(self, pod_id: str, includes: PodIncludes) -> dict[str, Any]:
        found = self.book.get(pod_id)
        if found is not None:
            return self.view(found, includes)
        if includes.include_workers:
            for worker, _ in self.m.endpoints.worker_pods():
                if worker.get("id") == pod_id:
                    return worker
        raise NotFound(
            f"pod {pod_id!r} not found"
            + (
                ""
                if includes.include_workers
                else " (a serverless worker is found only with includeWorkers=true)"
            )
        )

    def listing(self, query: PodListQuery) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        if query.endpoint_id is None:
            found = [self.view(e, query) for e in self.book if self._matches(e, query)]
        if query.include_workers:
            found += [
                w
                for w, centre in self.m.endpoints.worker_pods()
                if _worker_matches(w, centre, query)
            ]
        return found

    def _matches(self, e: PodEntry, q: PodListQuery) -> bool:
        v = e.view
        return (
            (q.compute_type is None or e.compute_type == q.compute_type)
            and (not q.cpu_flavor_id or v.cpu_flavor_id in q.cpu_flavor_id)
            and (not q.data_center_id or e.data_center_id in q.data_center_id)
            and (q.desired_status is None or v.desired_status == q.desired_status)
            and (not q.gpu_type_id or e.gpu_type_id in q.gpu_type_id)
            and (q.id is None or v.id == q.id)
            and (q.image_name is None or v.image == q.image_name)
            and (q.name is None or v.name == q.name)
            and (q.network_volume_id is None or e.network_volume_id == q.network_volume_id)
            and (q.template_id is None or v.template_id == q.template_id)
        )

    def view(self, e: PodEntry, includes: PodIncludes) -> dict[str, Any]:
        """The pod as served, with what the include flags ask for."""
        out = wire(e.view)
        if includes.include_machine:
            out["machine"] = self._machine(e)
        if includes.include_network_volume and e.network_volume_id:
            volume = self.m.volumes.book.get(e.network_volume_id)
            if volume is not None:
                out["networkVolume"] = wire(volume.v1())
        if includes.include_savings_plans:
            out["savingsPlans"] = []  # the emulator sells no savings plans
        if includes.include_template and e.view.template_id:
            template = self.m.templates.find(e.view.template_id)
            if template is not None:
                out["template"] = wire(template.v1())
        return out

    def _machine(self, e: PodEntry) -> dict[str, Any]:
        centre = catalog.DATA_CENTERS[e.data_center_id]
        machine: dict[str, Any] = {
            "dataCenterId": centre.id,
            "location": centre.location,
            "secureCloud": e.cloud_type == CloudType.SECURE,
            "supportPublicIp": True,
            "cpuCount": int(e.view.vcpu_count or 0),
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
            "costPerHr": e.view.cost_per_hr,
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
                currentPricePerGpu=offer.hourly(e.cloud_type, bool(e.view.interruptible)),
            )
        return machine

    def uses_auth(self, auth_id: str) -> list[str]:
        return [e.view.id or "" for e in self.book if e.view.container_registry_auth_id == auth_id]

    def uses_volume(self, volume_id: str) -> list[str]:
        return [e.view.id or "" for e in self.book if e.network_volume_id == volume_id]

    # ---- create --------------------------------------------------------------------------

    def create(self, body: PodCreateInput) -> dict[str, Any]:
        """Check every reference the body makes, then rent the pod (RUNNING)."""
        given = body.model_fields_set
        template = (
            self.m.templates.require(body.template_id, "templateId").v1()
            if body.template_id
            else None
        )

        def pick(name: str, default: Any) -> Any:
            """The body's value if given, else the template's, else the body's default."""
            if name in given and getattr(body, name) is not None:
                return getattr(body, name)
            if template is not None and getattr(template, name, None) is not None:
                return getattr(template, name)
            value = getattr(body, name)
            return default if value is None else value

        image = pick("image_name", None)
        if not image:
            raise InvalidInput(f"templateId: template {body.template_id!r} names no image")
        auth_id = self.m.registry_auths.require(
            pick("container_registry_auth_id", None), "containerRegistryAuthId"
        )
        volume = self.m.volumes.require(body.network_volume_id, "networkVolumeId")
        centre = self._data_center(body, volume.data_center if volume else None)
        pod_id = new_id(14)
        gpu_type_id: str | None = None
        if body.compute_type == ComputeType.GPU:
            gpu_type_id = (body.gpu_type_ids or [catalog.DEFAULT_GPU_TYPE])[0]
            offer = catalog.gpu(gpu_type_id)
            cost = offer.hourly(body.cloud_type, body.interruptible) * body.gpu_count
            vcpus = max(body.min_vcpu_per_gpu, GPU_VCPUS) * body.gpu_count
            memory = max(body.min_ram_per_gpu, GPU_RAM_GB) * body.gpu_count
            cpu_flavor = None
        else:
            cpu_flavor = (body.cpu_flavor_ids or [catalog.DEFAULT_CPU_FLAVOR])[0]
            flavor = catalog.cpu(cpu_flavor)
            cost = flavor.price_per_vcpu * body.vcpu_count
            vcpus = body.vcpu_count
            memory = flavor.memory_per_vcpu_gb * body.vcpu_count
        now = self.m.clock.now()
        view = Pod(
            id=pod_id,
            name=body.name,
            image=image,
            template_id=body.template_id or None,
            desired_status=PodStatus.RUNNING,
            last_started_at=None,
            cost_per_hr=round(cost, 4),
            adjusted_cost_per_hr=round(cost, 4),
            gpu=catalog.gpu(gpu_type_id).wire(body.gpu_count) if gpu_type_id else None,
            cpu_flavor_id=cpu_flavor,
            vcpu_count=vcpus,
            memory_in_gb=memory,
            container_disk_in_gb=pick("container_disk_in_gb", 50),
            volume_in_gb=pick("volume_in_gb", 20),
            volume_mount_path=pick("volume_mount_path", "/workspace"),
            volume_encrypted=False,
            container_registry_auth_id=auth_id,
            docker_entrypoint=list(pick("docker_entrypoint", [])),
            docker_start_cmd=list(pick("docker_start_cmd", [])),
            env={**(template.env or {} if template else {}), **body.env},
            ports=list(pick("ports", [])),
            interruptible=body.interruptible,
            locked=body.locked,
            machine_id=new_id(12),
            consumer_user_id=catalog.USER_ID,
        )
        entry = PodEntry(
            view,
            compute_type=body.compute_type.value,
            data_center_id=centre,
            cloud_type=body.cloud_type.value,
            gpu_type_id=gpu_type_id,
            network_volume_id=volume.id if volume else None,
            extra={"globalNetworking": body.global_networking},
        )
        self._run(entry, "Rented", now)
        return self.view(entry, PodIncludes())

    def _data_center(self, body: PodCreateInput, volume_centre: str | None) -> str:
        """The first allowed data centre (the emulator has capacity everywhere)."""
        allowed = [str(d) for d in body.data_center_ids]
        if body.country_codes:
            codes = {c.upper() for c in body.country_codes}
            allowed = [d for d in allowed if catalog.DATA_CENTERS[d].country in codes]
            if not allowed:
                raise InvalidInput(
                    f"countryCodes: no data centre of dataCenterIds is in {sorted(codes)}"
                )
        if volume_centre is not None:
            if volume_centre not in allowed:
                raise InvalidInput(
                    f"networkVolumeId: the volume is in {volume_centre}, which dataCenterIds "
                    "(or countryCodes) excludes; a pod runs where its network volume is"
                )
            return volume_centre
        if not allowed:
            raise InvalidInput("dataCenterIds: must name at least one data centre")
        return allowed[0]

    # ---- the life cycle ------------------------------------------------------------------

    def _run(self, e: PodEntry, what: str, now: float) -> None:
        """RUNNING from ``now``: a new start time, an address, and the meter running."""
        pod_id = e.view.id or ""
        with atomic():  # the pod and its meter
            e.view.desired_status = PodStatus.RUNNING
            e.view.last_started_at = to_datetime(now)
            e.view.last_status_change = event(what, now)
            h = _hash(pod_id, str(now))
            e.view.public_ip = f"100.65.{h % 250 + 1}.{h // 250 % 250 + 1}"
            e.view.port_mappings = {
                port.split("/")[0]: 10000 + _hash(pod_id, port) % 50000
                for port in e.view.ports or []
                if port.endswith("/tcp")
            }
            self.book.save(pod_id, e)  # first: a pod whose save fails is read back
            self.m.usage.open(
                "pod",
                pod_id,
                rate=(e.view.cost_per_hr or 0.0) / 3600,
                labels={"podId": pod_id, "gpuTypeId": e.gpu_type_id},
                at=now,
            )

    def _exit(self, e: PodEntry, now: float) -> None:
        pod_id = e.view.id or ""
        with atomic():  # the pod and its meter
            e.view.desired_status = PodStatus.EXITED
            e.view.last_status_change = event("Exited", now)
            e.view.public_ip = None
            e.view.port_mappings = {}
            self.book.save(pod_id, e)  # first: a pod whose save fails is read back
            self.m.usage.close("pod", pod_id, now)

    def _unlocked(self, e: PodEntry, action: str) -> None:
        if e.view.locked:
            raise InvalidInput(
                f"pod {e.view.id} is locked, which disables {action}; unlock it first "
                '(PATCH the pod with {"locked": false})'
            )

    def start(self, pod_id: str) -> dict[str, Any]:
        e = self.entry(pod_id)
        if not e.running:
            self._run(e, "Resumed", self.m.clock.now())
        return self.view(e, PodIncludes())

    def stop(self, pod_id: str) -> dict[str, Any]:
        e = self.entry(pod_id)
        self._unlocked(e, "stopping")
        if e.running:
            self._exit(e, self.m.clock.now())
        return self.view(e, PodIncludes())

    def restart(self, pod_id: str) -> dict[str, Any]:
        e = self.entry(pod_id)
        self._run(e, "Restarted", self.m.clock.now())
        return self.view(e, PodIncludes())

    def reset(self, pod_id: str) -> dict[str, Any]:
        e = self.entry(pod_id)
        self._unlocked(e, "resetting")
        self._run(e, "Reset", self.m.clock.now())
        return self.view(e, PodIncludes())

    def update(self, pod_id: str, body: PodUpdateInput) -> dict[str, Any]:
        """Rename or (un)lock in place; any other change resets the pod with it."""
        e = self.entry(pod_id)
        fields = PodUpdateInput.model_fields
        unknown = sorted(body.model_extra or {})
        if unknown:
            known = sorted(f.alias or n for n, f in fields.items())
            raise InvalidInput(
                f"{', '.join(unknown)}: not a field of a pod update; nothing was changed. "
                f"The fields are: {', '.join(known)}"
            )
        given = {n for n in body.model_fields_set if n in fields and getattr(body, n) is not None}
        resets = given - IN_PLACE
        if resets and e.view.locked and body.locked is not False:
            wire_names = [fields[n].alias or n for n in resets]
            raise InvalidInput(
                f"pod {pod_id} is locked, and changing {', '.join(sorted(wire_names))} would reset "
                'it; unlock it first (or send "locked": false with the change)'
            )
        auth_id = e.view.container_registry_auth_id
        if "container_registry_auth_id" in given:
            auth_id = self.m.registry_auths.require(
                body.container_registry_auth_id, "containerRegistryAuthId"
            )
        with atomic():  # changed, stored and (when it resets) running again, or untouched
            for name in given:
                value = getattr(body, name)
                if name == "image_name":
                    e.view.image = value
                elif name == "global_networking":
                    e.extra["globalNetworking"] = value
                elif name in Pod.model_fields:
                    setattr(e.view, name, value)
            e.view.container_registry_auth_id = auth_id
            if resets and e.running:
                self._run(e, "Reset", self.m.clock.now())
            else:
                self.book.save(pod_id, e)
        return self.view(e, PodIncludes())

    def delete(self, pod_id: str) -> None:
        self.entry(pod_id)
        with atomic():
            self.m.usage.close("pod", pod_id)
            self.book.drop(pod_id)


def _worker_matches(w: dict[str, Any], centre: str, q: PodListQuery) -> bool:
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
        and q.network_volume_id is None
    )

"""Pods, simulated and kept in REST v2's shape (life cycle: docs/behaviour.md#pods;
design: docs/architecture.md#management-areas)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nbext.models.v2 import POD_ACTIONS_BY_STATUS, PodAction
from nbext.models.v2 import PodStatus as V2Status
from nbext.models.v2.convert import persistent

from ..clock import Clock
from ..errors import Conflict, InvalidInput
from ..store_port import Store
from . import catalog
from .account import SshKeys
from .clusters import Clusters
from .container import Container
from .logs import LogLine, pod_lines
from .network_volumes import NetworkVolumes
from .pod_input import CONTAINER_DEFAULTS, PodChange, PodOrder
from .pod_rules import create_request, update_request
from .pod_status import CUDA_DEFAULT, observed_status, runtime, ssh
from .records import Book, atomic, iso, new_id
from .registry_auths import RegistryAuths
from .templates import Templates
from .usage import Usage, UsageLedger

IN_PLACE = frozenset({"name", "locked"})
"""Record fields an update changes without resetting the pod."""


GPU_VCPUS = 8
GPU_RAM_GB = 31
"""What one GPU comes with at least, whatever the minimums asked."""


@dataclass
class PodRecord(Container):
    """One pod: v2's fields (its container, compute, placement and whether it is meant to
    run) and the emulator's (its start time, price and address)."""

    network_volume_id: str | None = None
    gpu_type_id: str | None = None
    """The GPU pod's type; None for a CPU pod."""
    gpu_count: int = 0
    cpu_flavor_id: str | None = None
    vcpu_count: float = 0
    memory: float = 0
    cloud: str = "SECURE"
    data_center_id: str = ""
    interruptible: bool = False
    locked: bool = False
    global_networking: bool = False
    cuda_version: str | None = None
    template_id: str | None = None
    running: bool = True
    """Whether the pod is meant to run (v1's ``desiredStatus``); v2's observed status is
    derived from it and the start times (``pod_status.py``)."""
    started_at: float | None = None
    cost_per_hr: float = 0.0
    public_ip: str | None = None
    port_mappings: dict[str, int] = field(default_factory=dict)


def _hash(*parts: str) -> int:
    return zlib.crc32(":".join(parts).encode())


def _member(cluster: dict[str, Any], member: dict[str, Any]) -> PodRecord:
    """A cluster's member as a pod record: it runs since its cluster was made."""
    compute, container = cluster["compute"], cluster.get("container", {})
    count = int(compute["gpuCountPerPod"])
    return PodRecord(
        id=member["id"],
        name=f"{cluster['name']}-{member['rank']}",
        image=container.get("image", ""),
        args=container.get("args", ""),
        disk=container.get("disk", 50),
        env=container.get("env", {}),
        ports=container.get("ports", []),
        gpu_type_id=compute["gpuTypeId"],
        gpu_count=count,
        data_center_id=cluster["dataCenterId"],
        started_at=float(member["createdTs"]),
        cost_per_hr=round(catalog.gpu(compute["gpuTypeId"]).secure_price * count, 4),
    )


class Pods:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        usage: UsageLedger,
        *,
        auths: RegistryAuths,
        templates: Templates,
        volumes: NetworkVolumes,
        clusters: Clusters,
        ssh_keys: SshKeys,
    ) -> None:
        self.clock, self.usage = clock, usage
        self.auths, self.templates, self.volumes = auths, templates, volumes
        self.clusters, self.ssh_keys = clusters, ssh_keys
        self.book: Book[PodRecord] = Book.of(store, "pod", PodRecord)
        self.moved: list[Callable[[str, str, float], None]] = []
        """Told each move of a pod, within it: the pod, the move (``create``, v2's action,
        or ``reset``: v1's, or an update's) and when."""
        auths.users.append(
            lambda auth_id: [f"pod {e.id}" for e in self.book if e.registry == auth_id]
        )
        volumes.users.append(
            lambda volume_id: [f"pod {e.id}" for e in self.book if e.network_volume_id == volume_id]
        )

    # ---- lookups -------------------------------------------------------------------------

    def entry(self, pod_id: str) -> PodRecord:
        return self.book.need(pod_id, "pod")

    # ---- create --------------------------------------------------------------------------

    def rent(self, order: PodOrder) -> PodRecord:
        """Check every reference an order makes, then rent the pod (RUNNING); v2's
        ``pod_rules`` and ``api/v1/pods.py`` both make the order."""
        named = order.named
        template = (
            self.templates.require(order.template_id, named["template_id"])
            if order.template_id
            else None
        )

        def pick(name: str) -> Any:  # the body's, else the template's, else the default
            for source in (order.given, vars(template) if template else {}):
                if source.get(name) is not None:
                    return source[name]
            return CONTAINER_DEFAULTS[name]

        image = pick("image")
        if not image:
            raise InvalidInput(
                f"{named['template_id']}: template {order.template_id!r} names no image"
            )
        auth_id = self.auths.require(pick("registry"), named["registry"])
        volume = self.volumes.require(order.network_volume_id, named["network_volume_id"])
        centre = self._data_center(order, volume.data_center if volume else None)
        pod_id = new_id(14)
        if order.gpu_type_id is not None:
            offer = catalog.gpu(order.gpu_type_id)
            cost = offer.hourly(order.cloud, order.interruptible) * order.gpu_count
            vcpus = max(order.min_vcpu_per_gpu, GPU_VCPUS) * order.gpu_count
            memory = max(order.min_ram_per_gpu, GPU_RAM_GB) * order.gpu_count
        else:
            flavor = catalog.cpu(order.cpu_flavor_id or catalog.DEFAULT_CPU_FLAVOR)
            cost = flavor.price_per_vcpu * order.vcpu_count
            vcpus = order.vcpu_count
            memory = flavor.memory_per_vcpu_gb * order.vcpu_count
        now = self.clock.now()
        entry = PodRecord(
            id=pod_id,
            name=order.name,
            image=image,
            template_id=order.template_id or None,
            cost_per_hr=round(cost, 4),
            gpu_type_id=order.gpu_type_id,
            gpu_count=order.gpu_count if order.gpu_type_id else 0,
            cpu_flavor_id=order.cpu_flavor_id,
            vcpu_count=vcpus,
            memory=memory,
            disk=pick("disk"),
            volume_size=pick("volume_size"),
            volume_path=pick("volume_path"),
            network_volume_id=volume.id if volume else None,
            registry=auth_id,
            args=pick("args"),
            env={**(template.env if template else {}), **order.env},
            ports=list(pick("ports")),
            interruptible=order.interruptible,
            locked=order.locked,
            global_networking=order.global_networking,
            cloud=order.cloud.value,
            data_center_id=centre,
            cuda_version=order.cuda_version,
        )
        self._run(entry, "create", now)
        return entry

    def _data_center(self, order: PodOrder, volume_centre: str | None) -> str:
        """The first allowed data centre (the emulator has capacity everywhere)."""
        allowed = list(order.data_center_ids)
        named = order.named
        if order.country_codes:
            codes = {c.upper() for c in order.country_codes}
            allowed = [d for d in allowed if catalog.DATA_CENTERS[d].country in codes]
            if not allowed:
                raise InvalidInput(
                    f"{named['country_codes']}: no data centre of {named['data_center_ids']} "
                    f"is in {sorted(codes)}"
                )
        if volume_centre is not None:
            if volume_centre not in allowed:
                raise InvalidInput(
                    f"{named['network_volume_id']}: the volume is in {volume_centre}, which "
                    f"{named['data_center_ids']} (or {named['country_codes']}) excludes; a pod "
                    "runs where its network volume is"
                )
            return volume_centre
        if not allowed:
            raise InvalidInput(f"{named['data_center_ids']}: must name at least one data centre")
        return allowed[0]

    # ---- the life cycle ------------------------------------------------------------------

    def _run(self, e: PodRecord, action: str, now: float) -> None:
        """RUNNING from ``now``: a new start time, an address, and the meter running."""
        with atomic():  # the pod, its meter and what is told of it
            e.running = True
            e.started_at = now
            h = _hash(e.id, str(now))
            e.public_ip = f"100.65.{h % 250 + 1}.{h // 250 % 250 + 1}"
            e.port_mappings = {
                port.split("/")[0]: 10000 + _hash(e.id, port) % 50000
                for port in e.ports
                if port.endswith("/tcp")
            }
            self.book.save(e.id, e)  # first: a pod whose save fails is read back
            self._tell(e.id, action, now)
            self.usage.open(
                "pod",
                e.id,
                rate=e.cost_per_hr / 3600,
                labels={"podId": e.id, "gpuTypeId": e.gpu_type_id},
                at=now,
            )

    def _exit(self, e: PodRecord, now: float) -> None:
        with atomic():  # the pod, its meter and what is told of it
            e.running = False
            e.public_ip = None
            e.port_mappings = {}
            self.book.save(e.id, e)  # first: a pod whose save fails is read back
            self.usage.close("pod", e.id, now)
            self._tell(e.id, "stop", now)

    def _tell(self, pod_id: str, action: str, now: float) -> None:
        for listener in self.moved:
            listener(pod_id, action, now)

    def move(self, pod_id: str, action: str) -> PodRecord:
        """``start``, ``stop``, ``restart`` or ``reset`` the pod; a locked pod refuses stop
        and reset. Starting a running pod, or stopping a stopped one, changes nothing."""
        e = self.entry(pod_id)
        disabled = {"stop": "stopping", "reset": "resetting"}.get(action)
        if e.locked and disabled:
            raise InvalidInput(
                f"pod {e.id} is locked, which disables {disabled}; unlock it first "
                '(PATCH the pod with {"locked": false})'
            )
        now = self.clock.now()
        if action == "stop" and e.running:
            self._exit(e, now)
        elif action != "stop" and not (action == "start" and e.running):
            self._run(e, action, now)
        return e

    def change(self, pod_id: str, change: PodChange) -> PodRecord:
        """Rename or (un)lock in place; any other change resets the pod with it."""
        e = self.entry(pod_id)
        values = change.values
        resets = {change.named[n] for n in set(values) - IN_PLACE} | set(change.unheld)
        if resets and e.locked and values.get("locked") is not False:
            raise InvalidInput(
                f"pod {pod_id} is locked, and changing {', '.join(sorted(resets))} would reset "
                'it; unlock it first (or send "locked": false with the change)'
            )
        auth_id = e.registry
        if "registry" in values:
            auth_id = self.auths.require(values["registry"], change.named["registry"])
        with atomic():  # changed, stored and (when it resets) running again, or untouched
            for name, value in values.items():
                setattr(e, name, value)
            e.registry = auth_id
            if resets and e.running:
                self._run(e, "reset", self.clock.now())
            else:
                self.book.save(pod_id, e)
        return e

    def delete(self, pod_id: str) -> None:
        self.entry(pod_id)
        with atomic():
            self.usage.close("pod", pod_id)
            self.book.drop(pod_id)
            self._tell(pod_id, "terminate", self.clock.now())

    # ---- REST v2: the pod as it shows it, its bodies, its actions --------------------------

    def listing(self, include_cluster_pods: bool) -> list[dict[str, Any]]:
        history = self._starts()
        pods = [self.view(e, history) for e in self.book]
        if include_cluster_pods:
            for cluster in self.clusters.book:
                pods += [self.member_view(cluster, p) for p in self.clusters.members(cluster)]
        return pods

    def get(self, pod_id: str) -> dict[str, Any]:
        found = self.clusters.member(pod_id)
        if found is not None:
            return self.member_view(*found)
        return self.view(self.entry(pod_id))

    def _starts(self, pod_id: str | None = None) -> dict[str, list[float]]:
        """Each pod's start times, oldest first, from the usage ledger (one pass for a
        listing): the first is its creation, as a pod is rented running."""
        found: dict[str, list[float]] = {}
        for usage in self.usage.of_kind("pod"):
            if pod_id is None or usage.subject == pod_id:
                found.setdefault(usage.subject, []).append(usage.start)
        for times in found.values():
            times.sort()
        return found

    def view(self, e: PodRecord, history: dict[str, list[float]] | None = None) -> dict[str, Any]:
        """The pod as v2 shows it; ``history`` is ``_starts()`` when viewing many pods."""
        now = self.clock.now()
        started = e.started_at
        times = (self._starts(e.id) if history is None else history).get(e.id) or [started or now]
        created = times[0]
        status = observed_status(e.running, started, len(times) == 1, now)
        out: dict[str, Any] = {
            "id": e.id,
            "name": e.name,
            "status": status.value,
            "actions": [  # a locked pod cannot be stopped
                a.value
                for a in POD_ACTIONS_BY_STATUS[status]
                if not (e.locked and a is PodAction.STOP)
            ],
            "image": e.image,
            "args": e.args,
            "env": dict(e.env),
            "ports": list(e.ports),
            "registry": e.registry,
            "disk": e.disk or 1,  # v1 allows 0 GB, which v2 cannot state
        }
        mounts = persistent(e.volume_size, e.volume_path)
        if e.network_volume_id:
            mounts.pop("persistent", None)
            mounts["network"] = [{"volumeId": e.network_volume_id, "path": e.volume_path}]
        out["mounts"] = mounts
        gpus = 0
        if e.gpu_type_id:
            gpus = e.gpu_count or 1
            out["gpu"] = {"id": e.gpu_type_id, "count": gpus}
        else:
            flavor = e.cpu_flavor_id or str(catalog.DEFAULT_CPU_FLAVOR)
            vcpus = max(2, int(e.vcpu_count or 2))
            memory = max(1, int(e.memory or 1))
            out["cpu"] = {"id": flavor, "vcpuCount": vcpus, "memory": memory}
        running = status is V2Status.RUNNING
        networking: dict[str, Any] = {"enabled": e.global_networking}
        if networking["enabled"]:
            networking["internalDns"] = f"{e.id}.runpod.internal"
        out.update(
            cloud=e.cloud,
            dataCenterId=e.data_center_id,
            cudaVersion=(e.cuda_version or CUDA_DEFAULT) if e.gpu_type_id else None,
            ssh=ssh(e.id, running, e.public_ip, e.port_mappings.get("22")),
            template=e.template_id,
            cost=e.cost_per_hr if e.running else 0.0,
            locked=e.locked,
            globalNetworking=networking,
            runtime=runtime(now, started or now, gpus, e.port_mappings, e.public_ip)
            if running
            else None,
            createdAt=iso(created),
            startedAt=iso(started) if started is not None and e.running else None,
        )
        return out

    def member_view(self, cluster: dict[str, Any], member: dict[str, Any]) -> dict[str, Any]:
        """A cluster's member pod, in the shape of any pod (managed through /v2/clusters:
        no actions of its own)."""
        e = _member(cluster, member)
        role = {k: member[k] for k in ("role",) if k in member}
        out = self.view(e, {e.id: [float(member["createdTs"])]})
        out.update(actions=[], mounts=cluster.get("mounts") or {})
        out["cluster"] = {"id": cluster["id"], "rank": member["rank"], "ip": member["ip"], **role}
        return out

    def log_lines(self, pod_id: str) -> list[LogLine]:
        """The pod's boot and shutdown lines up to now (a cluster member's since its cluster)."""
        found = self.clusters.member(pod_id)
        if found is not None:  # a cluster's member has run since the cluster was made
            e = _member(*found)
            intervals = [Usage("", "", pod_id, float(found[1]["createdTs"]), None, 0)]
        else:
            e = self.entry(pod_id)
            intervals = [u for u in self.usage.of_kind("pod") if u.subject == pod_id]
        hardware = (
            f"{e.gpu_count or 1} x {e.gpu_type_id}"
            if e.gpu_type_id
            else f"{int(e.vcpu_count or 0)} vCPU ({e.cpu_flavor_id})"
        )
        return pod_lines(e, hardware, e.data_center_id, intervals, self.clock.now())

    def create(self, data: dict[str, Any]) -> PodRecord:
        """Rent the pod a v2 body describes, every rule checked first."""
        keys = "\n".join(self.ssh_keys.listing()) or None  # PUBLIC_KEY, for startSsh
        return self.rent(create_request(self.templates, keys, data))

    def update(self, pod_id: str, data: dict[str, Any]) -> PodRecord:
        """Change the pod as a v2 body asks: 409 for a cluster's member, 404 if none."""
        e = self.changeable(pod_id)
        return self.change(pod_id, update_request(self.templates, e.network_volume_id, data))

    def act(self, pod_id: str, action: PodAction) -> PodRecord | None:
        """Do ``action`` if the pod's status allows it; None once terminated."""
        e = self.changeable(pod_id)
        current = self.view(e)
        if action.value not in current["actions"]:
            allowed = ", ".join(current["actions"]) or "none"
            locked = " (it is locked, which disables stop)" if e.locked else ""
            raise Conflict(
                f"action: cannot {action.value} pod {pod_id}, which is {current['status']}"
                f"{locked}; its actions now: {allowed}"
            )
        if action is PodAction.TERMINATE:
            self.delete(pod_id)
            return None
        return self.move(pod_id, action.value)

    def changeable(self, pod_id: str) -> PodRecord:
        """The pod, which v2 may change: 409 for a cluster's member, else 404 if none."""
        if self.clusters.member(pod_id) is not None:
            raise Conflict(
                f"pod {pod_id!r} is a member of an instant cluster; manage it through "
                "/v2/clusters/{id}"
            )
        return self.entry(pod_id)

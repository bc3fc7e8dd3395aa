"""Pods in REST v2's terms: the one place a v2 pod body is checked, and the pod as v2
shows it (observed status, allowed actions, SSH, runtime, cluster members).

The reference's schema has already said the body's shape (``api/v2/contract.py``);
what it states only in words is ruled here, before anything changes: one of ``gpu``
and ``cpu``, the CUDA choice, at most one volume and of which kind, a template that is
a pod template, what an update may not change, which action a status allows. A pod is
one record whichever interface made it: v2 reads and changes the pods ``/v1/pods`` does.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from nbext.models import PodCreateInput, PodUpdateInput
from nbext.models.v2 import PodAction, PodStatus

from ..errors import Conflict, NotFound
from . import catalog
from .container import V1_NAMES, check_compute, persistent, to_v1
from .logs import LogLine, PodFacts, pod_lines
from .pod_status import allowed_actions, observed_status
from .pods import PodRecord
from .records import atomic, iso
from .refusals import refuse, validated
from .templates import TemplateRecord
from .usage import Usage

if TYPE_CHECKING:
    from .facade import Management

CUDA_DEFAULT = "12.8"
"""What a GPU host of the emulator reports, unless the pod asked for another version."""


class V2Pods:
    """Create, read, change and act on pods with v2's bodies and answers."""

    def __init__(self, m: Management) -> None:
        self.m = m

    # ---- reading -------------------------------------------------------------------------

    def listing(self, include_cluster_pods: bool) -> list[dict[str, Any]]:
        history = self._starts()
        pods = [self.view(e, history) for e in self.m.pods.book]
        if include_cluster_pods:
            clusters = self.m.v2.clusters
            for cluster in clusters.listing():
                pods += [self.member_view(cluster, p) for p in clusters.members(cluster)]
        return pods

    def get(self, pod_id: str) -> dict[str, Any]:
        found = self.m.v2.clusters.member(pod_id)
        if found is not None:
            return self.member_view(*found)
        return self.view(self.m.pods.entry(pod_id))

    def _starts(self, pod_id: str | None = None) -> dict[str, list[float]]:
        """Each pod's start times, oldest first, from the usage ledger (one pass for a listing).

        A pod is rented running, so its first start is its creation; every start, stop and
        restart after it began an interval of its own.
        """
        found: dict[str, list[float]] = {}
        for usage in self.m.usage.of_kind("pod"):
            if pod_id is None or usage.subject == pod_id:
                found.setdefault(usage.subject, []).append(usage.start)
        for times in found.values():
            times.sort()
        return found

    def view(self, e: PodRecord, history: dict[str, list[float]] | None = None) -> dict[str, Any]:
        """The pod as v2 shows it; ``history`` is ``_starts()`` when viewing many pods."""
        now = self.m.clock.now()
        started = e.started_at
        times = (self._starts(e.id) if history is None else history).get(e.id) or [started or now]
        created = times[0]
        status = observed_status(e.running, started, len(times) == 1, now)
        out: dict[str, Any] = {
            "id": e.id,
            "name": e.name,
            "status": status.value,
            "actions": [a.value for a in allowed_actions(status, e.locked)],
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
        running = status is PodStatus.RUNNING
        mapped = e.port_mappings.get("22")
        networking: dict[str, Any] = {"enabled": e.global_networking}
        if networking["enabled"]:
            networking["internalDns"] = f"{e.id}.runpod.internal"
        out.update(
            cloud=e.cloud,
            dataCenterId=e.data_center_id,
            cudaVersion=(e.cuda_version or CUDA_DEFAULT) if e.gpu_type_id else None,
            ssh=_ssh(e.id, running, e.public_ip, mapped),
            template=e.template_id,
            cost=e.cost_per_hr if e.running else 0.0,
            locked=e.locked,
            globalNetworking=networking,
            runtime=_runtime(now, started or now, gpus, e.port_mappings, e.public_ip)
            if running
            else None,
            createdAt=iso(created),
            startedAt=iso(started) if started is not None and e.running else None,
        )
        return out

    def member_view(self, cluster: dict[str, Any], member: dict[str, Any]) -> dict[str, Any]:
        """A cluster's member pod, in the shape of any pod."""
        compute = cluster["compute"]
        container = cluster.get("container", {})
        status = PodStatus(str(member["status"]))
        now = self.m.clock.now()
        count = int(compute["gpuCountPerPod"])
        offer = catalog.gpu(compute["gpuTypeId"])
        role = {k: member[k] for k in ("role",) if k in member}
        running = status is PodStatus.RUNNING
        return {
            "id": member["id"],
            "name": f"{cluster['name']}-{member['rank']}",
            "status": status.value,
            "actions": [],  # managed through /v2/clusters
            "image": container.get("image", ""),
            "args": container.get("args", ""),
            "disk": container.get("disk", 50),
            "env": container.get("env", {}),
            "ports": container.get("ports", []),
            "registry": None,
            "mounts": cluster.get("mounts") or {},
            "gpu": {"id": compute["gpuTypeId"], "count": count},
            "cloud": "SECURE",
            "dataCenterId": cluster["dataCenterId"],
            "cudaVersion": CUDA_DEFAULT,
            "ssh": _ssh(member["id"], running, None, None),
            "cluster": {"id": cluster["id"], "rank": member["rank"], "ip": member["ip"], **role},
            "template": None,
            "cost": round(offer.secure_price * count, 4),
            "locked": False,
            "globalNetworking": {"enabled": False},
            "runtime": _runtime(now, float(member["createdTs"]), count, {}, None)
            if running
            else None,
            "createdAt": iso(float(member["createdTs"])),
            "startedAt": iso(float(member["createdTs"])),
        }

    def log_lines(self, pod_id: str) -> list[LogLine]:
        """The pod's boot and shutdown lines up to now (a cluster member's since its cluster)."""
        m = self.m
        now = m.clock.now()
        found = m.v2.clusters.member(pod_id)
        if found is not None:  # a cluster's member has run since the cluster was made
            cluster, member = found
            compute = cluster["compute"]
            hardware = f"{compute['gpuCountPerPod']} x {compute['gpuTypeId']}"
            image = str(cluster.get("container", {}).get("image", ""))
            ports = tuple(cluster.get("container", {}).get("ports", ()))
            facts = PodFacts(pod_id, image, hardware, cluster["dataCenterId"], ports)
            since = float(member["createdTs"])
            return pod_lines(facts, [Usage("", "", pod_id, since, None, 0)], now)
        e = m.pods.entry(pod_id)
        hardware = (
            f"{e.gpu_count or 1} x {e.gpu_type_id}"
            if e.gpu_type_id
            else f"{int(e.vcpu_count or 0)} vCPU ({e.cpu_flavor_id})"
        )
        facts = PodFacts(pod_id, e.image, hardware, e.data_center_id, tuple(e.ports))
        intervals = [u for u in m.usage.of_kind("pod") if u.subject == pod_id]
        return pod_lines(facts, intervals, now)

    # ---- changes -------------------------------------------------------------------------

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        """Rent the pod a v2 body describes, every rule checked first."""
        parsed, cuda = self._create_input(data)
        with atomic():  # the pod and its v2 fields, or neither
            made = self.m.pods.create(parsed)
            if cuda:
                e = self.m.pods.entry(made["id"])
                e.cuda_version = cuda
                self.m.pods.book.save(made["id"], e)
        return self.view(self.m.pods.entry(made["id"]))

    def update(self, pod_id: str, data: dict[str, Any]) -> dict[str, Any]:
        e = self.changeable(pod_id)
        self.m.pods.update(pod_id, self._update_input(e, data))
        return self.view(self.m.pods.entry(pod_id))

    def delete(self, pod_id: str) -> None:
        self.changeable(pod_id)
        self.m.pods.delete(pod_id)

    def act(self, pod_id: str, action: PodAction) -> dict[str, Any] | None:
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
        pods = self.m.pods
        {PodAction.START: pods.start, PodAction.STOP: pods.stop, PodAction.RESTART: pods.restart}[
            action
        ](pod_id)
        return self.view(pods.entry(pod_id))

    def changeable(self, pod_id: str) -> PodRecord:
        """The pod, which this interface may change: 409 for a cluster's member, else 404."""
        if self.m.v2.clusters.member(pod_id) is not None:
            raise Conflict(
                f"pod {pod_id!r} is a member of an instant cluster; manage it through "
                "/v2/clusters/{id}"
            )
        return self.m.pods.entry(pod_id)

    # ---- the rules of a body -------------------------------------------------------------

    def _template(self, template_id: str) -> TemplateRecord:
        found = self.m.templates.find(template_id)
        if found is None:
            raise NotFound(f"templateId: no template with id {template_id!r}")
        if found.serverless:
            raise refuse("templateId", f"template {template_id!r} is a serverless template")
        return found

    def _startup_env(self, data: dict[str, Any], env: dict[str, str]) -> dict[str, str]:
        """``startSsh`` and ``startJupyter``: what the provisioner adds to the environment."""
        env = dict(env)
        key = self.m.v2.ssh_keys.public_key_env()
        if data.get("startSsh") and key and "PUBLIC_KEY" not in env:
            env["PUBLIC_KEY"] = key
        if data.get("startJupyter") and "JUPYTER_PASSWORD" not in env:
            env["JUPYTER_PASSWORD"] = secrets.token_urlsafe(12)
        return env

    def _create_input(self, data: dict[str, Any]) -> tuple[PodCreateInput, str | None]:
        """The pod record's input for a v2 body, and the CUDA version its host reports."""
        check_compute(data, "a pod", required=True)
        gpu, cpu = data.get("gpu"), data.get("cpu")
        template = self._template(data["templateId"]) if "templateId" in data else None
        if template is None and "image" not in data:
            raise refuse("image", "is required unless templateId is given")
        mounts = data.get("mounts") or {}
        network = mounts.get("network") or []
        if cpu is not None and mounts.get("persistent"):
            raise refuse(
                "mounts.persistent", "a CPU pod has no persistent volume; use a network one"
            )
        if len(network) > 1:
            raise refuse("mounts.network", "a pod mounts at most one network volume")
        if network and mounts.get("persistent"):
            raise refuse("mounts", "give a persistent or a network volume, not both")
        v1: dict[str, Any] = {"name": data["name"], **to_v1(data, defaults=template is None)}
        if network:
            v1["networkVolumeId"] = network[0]["volumeId"]
            v1["volumeMountPath"] = network[0]["path"]
        if template is not None:
            v1["templateId"] = data["templateId"]
            if "mounts" not in data:
                v1.pop("volumeInGb", None)
        cuda: str | None = None
        if gpu is not None:
            allowed = gpu.get("allowedCudaVersions") or []
            v1.update(computeType="GPU", gpuTypeIds=[gpu["id"]], gpuCount=gpu.get("count", 1))
            if allowed:
                v1["allowedCudaVersions"] = allowed
            minimum = gpu.get("minCudaVersion", "")
            cuda = allowed[0] if allowed else max(CUDA_DEFAULT, minimum, key=_version)
        else:
            assert cpu is not None
            v1.update(computeType="CPU", cpuFlavorIds=[cpu["id"]], vcpuCount=cpu["vcpuCount"])
        v1["cloudType"] = data.get("cloud", "SECURE")
        if data.get("dataCenterIds"):
            v1["dataCenterIds"] = data["dataCenterIds"]
        v1["globalNetworking"] = data.get("globalNetworking", False)
        base_env = {**(template.env if template else {}), **data.get("env", {})}
        env = self._startup_env(data, base_env)
        if env or "env" in data:
            v1["env"] = env
        return validated(PodCreateInput, v1, V1_NAMES), cuda

    def _update_input(self, e: PodRecord, data: dict[str, Any]) -> PodUpdateInput:
        if "templateId" in data:
            template = self._template(data["templateId"])
            spread = {
                "image": template.image,
                "args": template.args,
                "disk": template.disk,
                "ports": template.ports,
                "registry": template.registry,
            }
            env = {**template.env, **data.get("env", {})}
            data = {**{k: v for k, v in spread.items() if v is not None}, **data, "env": env}
        mounts = data.get("mounts")
        if mounts is not None:
            wanted = [n["volumeId"] for n in mounts.get("network") or []]
            current = [e.network_volume_id] if e.network_volume_id else []
            if wanted != current:
                raise refuse("mounts.network", "a pod's network volume is fixed when it is created")
        v1 = to_v1({k: v for k, v in data.items() if k != "mounts"}, defaults=False)
        if mounts is not None and not e.network_volume_id:
            p = mounts.get("persistent")
            v1["volumeInGb"] = p["size"] if p else 0
            if p:
                v1["volumeMountPath"] = p["path"]
        for name in ("name", "locked", "globalNetworking"):
            if name in data:
                v1[name] = data[name]
        return validated(PodUpdateInput, v1, V1_NAMES)


def _version(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit()) if version else ()


def _ssh(pod_id: str, running: bool, ip: str | None, mapped: int | None) -> dict[str, Any]:
    if not running:
        return {"proxy": None, "direct": None}
    user = f"{pod_id}-{pod_id[:8]}"
    proxy = {
        "host": "ssh.runpod.io",
        "port": 22,
        "username": user,
        "command": f"ssh {user}@ssh.runpod.io -i ~/.ssh/id_ed25519",
    }
    direct = None
    if ip and mapped:
        direct = {
            "host": ip,
            "port": mapped,
            "username": "root",
            "command": f"ssh root@{ip} -p {mapped} -i ~/.ssh/id_ed25519",
        }
    return {"proxy": proxy, "direct": direct}


def _runtime(now: float, started: float, gpus: int, ports: dict[str, int], ip: str | None) -> Any:
    return {
        "uptime": max(0, int(now - started)),
        "gpus": [{"util": 0, "memoryUtil": 0} for _ in range(gpus)],
        "cpu": {"util": 1},
        "memory": {"util": 3},
        "ports": [
            {"private": int(private), "public": public, "type": "tcp", "ip": ip}
            for private, public in ports.items()
            if private.isdigit()
        ],
    }

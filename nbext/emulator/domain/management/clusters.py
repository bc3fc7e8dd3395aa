"""Instant clusters: identical GPU pods in one data centre, derived from one record
(docs/architecture.md#management-areas)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from nbext.models.v2.resources import CLUSTERS

from ..clock import Clock
from ..errors import InvalidInput
from ..store_port import Store
from . import catalog
from .pod_status import observed_status
from .records import Book, Served, iso, new_id
from .usage import UsageLedger

ROLES = {
    "SLURM": ("SLURM_CONTROLLER", "SLURM_COMPUTE"),
    "RAY": ("RAY_HEAD", "RAY_WORKER"),
}
"""The role of the primary (rank 0) and of the others, by cluster type; other types have none."""


class Clusters(Served[dict[str, Any]]):
    ROW = CLUSTERS

    def __init__(self, store: Store, clock: Clock, usage: UsageLedger) -> None:
        self.clock = clock
        self.usage = usage
        self.book: Book[dict[str, Any]] = Book(store, "cluster", dict, dict)

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` is a validated create request (wire names); refused whole or kept whole."""
        compute = dict(body["compute"])
        gpu_type_id = compute["gpuTypeId"]
        if gpu_type_id not in catalog.GPUS:
            raise InvalidInput(
                f"compute.gpuTypeId: unknown GPU type {gpu_type_id!r}; GET /v2/catalog/gpus "
                "lists them"
            )
        centres = [str(d) for d in body.get("dataCenterIds") or [catalog.DATA_CENTERS_DEFAULT]]
        for i, centre in enumerate(centres):
            if centre not in catalog.DATA_CENTERS:
                raise InvalidInput(f"dataCenterIds.{i}: unknown data centre {centre!r}")
        now = self.clock.now()
        cluster_id = new_id(12)
        offer = catalog.gpu(gpu_type_id)
        rate = offer.secure_price * compute["gpuCountPerPod"] * compute["podCount"] / 3600
        record: dict[str, Any] = {
            "id": cluster_id,
            "name": body["name"],
            "type": body["type"],
            "compute": compute,
            "dataCenterId": centres[0],
            "createdTs": now,
            "vxlanId": 4096 + int(cluster_id, 36) % 10000,
            "container": {
                k: body[k] for k in ("image", "args", "disk", "env", "ports") if k in body
            },
            "mounts": body.get("mounts") or {},
            "costPerHr": round(rate * 3600, 4),
        }
        self.book.save(cluster_id, record)
        self.usage.open(
            "cluster",
            cluster_id,
            rate=rate,
            labels={"clusterId": cluster_id, "gpuTypeId": gpu_type_id},
            at=now,
        )
        return record

    def update(self, cluster_id: str, body: dict[str, Any]) -> dict[str, Any]:
        """Rename: a cluster's name is all that can change."""
        record = {**self.get(cluster_id), "name": body["name"]}
        self.book.save(cluster_id, record)
        return record

    def delete(self, cluster_id: str) -> None:
        self.get(cluster_id)
        self.usage.close("cluster", cluster_id)
        self.book.drop(cluster_id)

    # ---- what is derived -----------------------------------------------------------------

    def members(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """Each member pod: id, rank, role, private address, status, created time."""
        now = self.clock.now()
        created = float(record["createdTs"])
        status = observed_status(True, created, True, now)
        roles = ROLES.get(record["type"])
        members = []
        for rank in range(int(record["compute"]["podCount"])):
            member: dict[str, Any] = {
                "id": f"{record['id']}-{rank}",
                "rank": rank,
                "ip": f"10.65.0.{rank + 2}",
                "status": status,
                "createdTs": created,
            }
            if roles is not None:
                member["role"] = roles[0] if rank == 0 else roles[1]
            members.append(member)
        return members

    def member(self, pod_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """(cluster, member) for a member pod's id, or None."""
        cluster_id, _, rank = pod_id.rpartition("-")
        record = self.book.get(cluster_id)
        if record is None or not rank.isdigit():
            return None
        for member in self.members(record):
            if member["id"] == pod_id:
                return record, member
        return None

    def served(self, record: dict[str, Any]) -> dict[str, Any]:
        """The wire's ``Cluster``, without its member pods."""
        members = self.members(record)
        by_status = dict(Counter(str(member["status"]) for member in members))
        primary = members[0]
        view: dict[str, Any] = {
            "id": record["id"],
            "name": record["name"],
            "type": record["type"],
            "compute": record["compute"],
            "dataCenterId": record["dataCenterId"],
            "pods": {"total": len(members), "byStatus": by_status},
            "network": {"cidr": "10.65.0.0/24", "vxlanId": record["vxlanId"], "vxlanPort": 4789},
            "primary": {"podId": primary["id"], "status": str(primary["status"])},
            "createdAt": iso(float(record["createdTs"])),
        }
        if str(primary["status"]) == "RUNNING":
            view["primary"]["sshEndpoint"] = f"root@{primary['ip']}:22"
        return view

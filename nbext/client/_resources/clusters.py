"""``client.clusters``: instant clusters (REST v2), several identical pods on one network.

A cluster is made whole and billed for all its GPUs until deleted; its member pods change
only through it, and only its name can change after creation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from nbext.models.v2 import Cluster, Pod
from nbext.models.v2.resources import CLUSTERS as ROW

from .._flows import Context, Flow
from .._twins import Resource, awaiting, blocking
from .crud import below, deleting, getting, listing, saved
from .rest import V2
from .wire import choice, given, ident, refused, whole

ClusterType = Literal["APPLICATION", "TRAINING", "SLURM", "RAY"]
TYPES = ("APPLICATION", "TRAINING", "SLURM", "RAY")
MAX_PODS = 250


def _text(operation: str, name: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise refused(operation, f"{name} must be a non-empty string, got {value!r}")
    return value


def create(
    ctx: Context,
    api: V2,
    *,
    name: str,
    type: ClusterType | str,
    gpu_type_id: str,
    gpu_count_per_pod: int,
    pod_count: int,
    image: str | None = None,
    args: str | None = None,
    disk: int | None = None,
    env: Mapping[str, str] | None = None,
    ports: Sequence[str] | None = None,
    data_center_ids: Sequence[str] | None = None,
    mounts: Mapping[str, Any] | None = None,
    start_jupyter: bool | None = None,
    start_ssh: bool | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Cluster]:
    """Create a cluster of ``pod_count`` (2-250) pods with ``gpu_count_per_pod`` GPUs of
    ``gpu_type_id`` each (``catalog.gpus()`` lists the types).

    ``type``: ``TRAINING``, ``SLURM`` (a controller and compute nodes), ``RAY`` (a head
    and workers) or ``APPLICATION``. The container settings apply to every pod;
    ``start_ssh`` gives them the account's ``ssh_keys``. Not re-sent once it may have
    reached the service (it could make two clusters).
    """
    fields = given(locals(), skip=["gpu_type_id", "gpu_count_per_pod", "pod_count"])
    op = "clusters.create"
    kind = choice(op, "type", type, TYPES)
    compute = {
        "gpuTypeId": _text(op, "gpu_type_id", gpu_type_id),
        "gpuCountPerPod": whole(op, "gpu_count_per_pod", gpu_count_per_pod, 1),
        "podCount": whole(op, "pod_count", pod_count, 2, MAX_PODS),
    }
    if disk is not None:
        whole(op, "disk", disk, 1)
    fields |= {"name": _text(op, "name", name), "type": kind, "compute": compute}
    return (yield from saved(ctx, api, ROW, fields, extra_body))


def update(ctx: Context, api: V2, cluster_id: str, *, name: str) -> Flow[Cluster]:
    """Rename a cluster: its name is all that can change after creation."""
    ident(cluster_id, "cluster")  # a wrong id is refused before a wrong name, as ever
    fields = {"name": _text("clusters.update", "name", name)}
    return (yield from saved(ctx, api, ROW, fields, record_id=cluster_id))


def pods(ctx: Context, api: V2, cluster_id: str) -> Flow[list[Pod]]:
    """The cluster's member pods, by rank (``pod.cluster`` holds rank, role and address)."""
    return (yield from below(ctx, api, ROW, cluster_id, "pods", Pod))


delete = deleting(ROW, "Its pods go with it, and its billing stops.")


class Clusters(Resource):
    create = blocking(create)
    list = blocking(listing(ROW))
    get = blocking(getting(ROW))
    update = blocking(update)
    delete = blocking(delete)
    pods = blocking(pods)


class AsyncClusters(Resource):
    create = awaiting(create)
    list = awaiting(listing(ROW))
    get = awaiting(getting(ROW))
    update = awaiting(update)
    delete = awaiting(delete)
    pods = awaiting(pods)

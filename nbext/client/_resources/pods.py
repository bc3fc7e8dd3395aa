"""``client.pods``: rented containers with a GPU (or CPU), and their lifecycle.

Create, list (with its filters), get, update, delete, and the four actions: ``start``
(or resume), ``stop``, ``restart`` and ``reset``. Arguments left ``None`` are left out, so
the service applies the reference's defaults (one GPU, Secure Cloud, 50 GB container
disk, 20 GB volume at ``/workspace``, ports ``8888/http`` and ``22/tcp``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbext.models import (
    CloudType,
    ComputeType,
    CpuFlavorId,
    CudaVersion,
    DataCenterId,
    GpuTypeId,
    Pod,
    PodCreateInput,
    PodIncludes,
    PodListQuery,
    PodStatus,
    PodUpdateInput,
    Priority,
)

from .._flows import Context, Flow
from .._retry import Kind
from .._twins import Resource, aiterating, awaiting, blocking, iterating
from . import rest_v2
from .logs import as_line, follow_pod_logs, pod_logs
from .rest import V1, V2
from .wire import (
    Reader,
    UpdateMethod,
    as_list,
    given,
    ident,
    json_body,
    management_call,
    many,
    maybe,
    one,
    query,
)


class PodsV2(V2):
    """Pods over REST v2: v1's keywords spelt the v2 way, v1's filters applied here."""

    def __init__(self) -> None:
        self.one: Reader[Pod] = rest_v2.POD

    def create_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        op = "pods.create"
        v1 = rest_v2.checked(PodCreateInput, op, fields, rest_v2.POD_CREATE_FIELDS)
        return rest_v2.body(op, rest_v2.pod_create_body(op, v1), extra)

    def update_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        op = "pods.update"
        v1 = rest_v2.checked(PodUpdateInput, op, fields, rest_v2.POD_UPDATE_FIELDS)
        return rest_v2.body(op, rest_v2.pod_update_body(op, v1), extra)

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Pod]]:
        rest_v2.pods_matching("pods.list", [], fields)  # refuses before sending
        call = self.v2_call("GET", ["pods"], "pods.list", "pods")
        pods = yield from self.fetch(ctx, call, rest_v2.PODS)
        pods = rest_v2.pods_matching("pods.list", pods, fields)
        return (yield from rest_v2.with_gpu_names(ctx, "pods.list", pods))

    def get(
        self,
        ctx: Context,
        pid: str,
        subject: str,
        fields: dict[str, Any],
        params: list[tuple[str, str]],
    ) -> Flow[Pod]:
        rest_v2.pods_matching("pods.get", [], fields)
        pod = yield from self.fetch(
            ctx, self.v2_call("GET", ["pods", pid], "pods.get", subject), rest_v2.POD
        )
        [pod] = yield from rest_v2.with_gpu_names(ctx, "pods.get", [pod])
        return pod

    def action(self, ctx: Context, pod_id: str, action: str, kind: Kind) -> Flow[Pod | None]:
        """``POST /v2/pods/{id}/action``; ``terminate`` answers 204 (no record)."""
        pid = ident(pod_id, "pod id")
        if action == "reset":
            raise rest_v2.no_reset(pod_id)
        return (yield from rest_v2.pod_action(ctx, pid, action))


class PodsV1(V1, PodsV2):
    """Pods over REST v1: its own bodies, filters and action paths."""

    def __init__(self) -> None:
        self.one = one(Pod)

    def create_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        return json_body(PodCreateInput, "pods.create", fields, extra)

    def update_body(self, fields: dict[str, Any], extra: Mapping[str, Any] | None) -> bytes:
        return json_body(PodUpdateInput, "pods.update", fields, extra)

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Pod]]:
        call = management_call("GET", ["pods"], "pods.list", "pods", query=params)
        return (yield from self.fetch(ctx, call, many(Pod)))

    def get(
        self,
        ctx: Context,
        pid: str,
        subject: str,
        fields: dict[str, Any],
        params: list[tuple[str, str]],
    ) -> Flow[Pod]:
        call = management_call("GET", ["pods", pid], "pods.get", subject, query=params)
        return (yield from self.fetch(ctx, call, one(Pod)))

    def action(self, ctx: Context, pod_id: str, action: str, kind: Kind) -> Flow[Pod | None]:
        pid = ident(pod_id, "pod id")
        call = management_call(
            "POST", ["pods", pid, action], f"pods.{action}", f"pod {pod_id!r}", kind=kind
        )
        return (yield from self.fetch(ctx, call, maybe(Pod)))


def create(
    ctx: Context,
    api: PodsV2,
    *,
    image_name: str | None = None,
    name: str | None = None,
    template_id: str | None = None,
    compute_type: ComputeType | str | None = None,
    cloud_type: CloudType | str | None = None,
    gpu_type_ids: Sequence[GpuTypeId | str] | None = None,
    gpu_type_priority: Priority | str | None = None,
    gpu_count: int | None = None,
    allowed_cuda_versions: Sequence[CudaVersion | str] | None = None,
    cpu_flavor_ids: Sequence[CpuFlavorId | str] | None = None,
    cpu_flavor_priority: Priority | str | None = None,
    vcpu_count: int | None = None,
    data_center_ids: Sequence[DataCenterId | str] | None = None,
    data_center_priority: Priority | str | None = None,
    country_codes: Sequence[str] | None = None,
    min_ram_per_gpu: int | None = None,
    min_vcpu_per_gpu: int | None = None,
    min_disk_bandwidth_mbps: float | None = None,
    min_download_mbps: float | None = None,
    min_upload_mbps: float | None = None,
    support_public_ip: bool | None = None,
    interruptible: bool | None = None,
    locked: bool | None = None,
    global_networking: bool | None = None,
    network_volume_id: str | None = None,
    container_registry_auth_id: str | None = None,
    container_disk_in_gb: int | None = None,
    volume_in_gb: int | None = None,
    volume_mount_path: str | None = None,
    docker_entrypoint: Sequence[str] | None = None,
    docker_start_cmd: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    ports: Sequence[str] | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Pod]:
    """Rent a pod; it starts RUNNING and costs ``cost_per_hr`` while it runs.

    Give ``image_name``, or ``template_id`` for a template that names the image (fields
    left out then come from the template). GPU settings apply to GPU pods, CPU settings
    (``cpu_flavor_ids``, ``vcpu_count``) to ``compute_type="CPU"`` pods. A locked pod
    refuses stop and reset. Bad values raise BadRequest before anything is sent; a create
    that may have reached the service is never sent again (it could rent two pods).
    """
    body = api.create_body(given(locals()), extra_body)
    call = management_call("POST", ["pods"], "pods.create", "a new pod", body=body)
    return (yield from api.fetch(ctx, call, api.one))


def list_pods(
    ctx: Context,
    api: PodsV2,
    *,
    compute_type: ComputeType | str | None = None,
    cpu_flavor_id: str | Sequence[str] | None = None,
    data_center_id: str | Sequence[str] | None = None,
    desired_status: PodStatus | str | None = None,
    endpoint_id: str | None = None,
    gpu_type_id: str | Sequence[str] | None = None,
    id: str | None = None,
    image_name: str | None = None,
    name: str | None = None,
    network_volume_id: str | None = None,
    template_id: str | None = None,
    include_machine: bool = False,
    include_network_volume: bool = False,
    include_savings_plans: bool = False,
    include_template: bool = False,
    include_workers: bool = False,
) -> Flow[list[Pod]]:
    """The account's pods, filtered; every filter given must match.

    ``cpu_flavor_id``, ``data_center_id`` and ``gpu_type_id`` take one value or several
    (any of them matches). ``include_workers`` also lists pods that are serverless
    workers; the other ``include_*`` flags add nested records to each pod. REST v2
    lists every pod: the client applies the filters (``endpoint_id`` and the
    ``include_*`` flags it cannot, and refuses).
    """
    fields = given(locals())
    for key in ("cpu_flavor_id", "data_center_id", "gpu_type_id"):
        if key in fields:
            fields[key] = as_list(fields[key])
    return (yield from api.listing(ctx, fields, query(PodListQuery, "pods.list", fields)))


def get(
    ctx: Context,
    api: PodsV2,
    pod_id: str,
    *,
    include_machine: bool = False,
    include_network_volume: bool = False,
    include_savings_plans: bool = False,
    include_template: bool = False,
    include_workers: bool = False,
) -> Flow[Pod]:
    """One pod by id (NotFound if there is none; a serverless worker needs ``include_workers``)."""
    pid = ident(pod_id, "pod id")
    fields = given(locals(), skip=["pod_id", "pid"])
    params = query(PodIncludes, "pods.get", fields)
    return (yield from api.get(ctx, pid, f"pod {pod_id!r}", fields, params))


def update(
    ctx: Context,
    api: PodsV2,
    pod_id: str,
    *,
    name: str | None = None,
    locked: bool | None = None,
    image_name: str | None = None,
    container_disk_in_gb: int | None = None,
    container_registry_auth_id: str | None = None,
    docker_entrypoint: Sequence[str] | None = None,
    docker_start_cmd: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    global_networking: bool | None = None,
    ports: Sequence[str] | None = None,
    volume_in_gb: int | None = None,
    volume_mount_path: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
    method: UpdateMethod = "PATCH",
) -> Flow[Pod]:
    """Change the fields given. ``name`` and ``locked`` change in place; any other field
    resets the pod with the new settings (which a locked pod refuses).

    ``method="POST"`` sends the synonym ``POST /pods/{id}/update``. Not re-sent after it
    may have reached the service: a second send could reset the pod again.
    """
    pid = ident(pod_id, "pod id")
    fields = given(locals(), skip=["pod_id", "pid"])
    body = api.update_body(fields, extra_body)
    call = api.update_call(method, ["pods", pid], "pods.update", f"pod {pod_id!r}", body)
    return (yield from api.fetch(ctx, call, api.one))


def delete(ctx: Context, api: PodsV2, pod_id: str) -> Flow[None]:
    """Terminate a pod for good; it is gone (NotFound) afterwards."""
    pid = ident(pod_id, "pod id")
    call = management_call("DELETE", ["pods", pid], "pods.delete", f"pod {pod_id!r}")
    yield from api.delete(ctx, call)


def start(ctx: Context, api: PodsV2, pod_id: str) -> Flow[Pod | None]:
    """Start (or resume) a stopped pod: it becomes RUNNING.

    Returns the pod when the service sends it (the reference declares no body), else
    None. Retried like a GET: starting a pod twice leaves it as starting it once.
    """
    return (yield from api.action(ctx, pod_id, "start", Kind.IDEMPOTENT))


def stop(ctx: Context, api: PodsV2, pod_id: str) -> Flow[Pod | None]:
    """Stop a pod: it becomes EXITED and stops costing GPU time (BadRequest if locked).

    Returns the pod when the service sends it, else None. Retried like a GET: stopping
    twice leaves the pod as stopping once.
    """
    return (yield from api.action(ctx, pod_id, "stop", Kind.IDEMPOTENT))


def restart(ctx: Context, api: PodsV2, pod_id: str) -> Flow[Pod | None]:
    """Restart a pod's container; it is RUNNING again with a new ``last_started_at``.

    Returns the pod when the service sends it, else None. Never re-sent once it may
    have reached the service: a second restart would kill what the first one started.
    """
    return (yield from api.action(ctx, pod_id, "restart", Kind.SUBMIT))


def reset(ctx: Context, api: PodsV2, pod_id: str) -> Flow[Pod | None]:
    """Reset a pod: its container disk is wiped and it starts afresh (BadRequest if locked).

    Returns the pod when the service sends it, else None. Never re-sent once it may
    have reached the service: a second reset would wipe the disk again. REST v2 has no
    reset: over v2 it is refused before sending, saying what does the same
    (``update`` of a container field, e.g. the pod's own ``image_name``).
    """
    return (yield from api.action(ctx, pod_id, "reset", Kind.SUBMIT))


class Pods(Resource):
    """``client.pods``: create, list, get, update, delete, start, stop, restart, reset."""

    create = blocking(create)
    list = blocking(list_pods)
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)
    start = blocking(start)
    stop = blocking(stop)
    restart = blocking(restart)
    reset = blocking(reset)
    logs = blocking(pod_logs)
    follow_logs = iterating(follow_pod_logs, each=as_line)


class AsyncPods(Resource):
    """``client.pods`` of an ``AsyncClient``: ``Pods``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_pods)
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
    start = awaiting(start)
    stop = awaiting(stop)
    restart = awaiting(restart)
    reset = awaiting(reset)
    logs = awaiting(pod_logs)
    follow_logs = aiterating(follow_pod_logs, each=as_line)

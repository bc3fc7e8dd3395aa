"""``client.endpoints``: serverless endpoint records (create, list, get, update, delete).

These manage an endpoint; its jobs are ``client.endpoint(id)``'s business. An endpoint
created here serves jobs at ``{serverless_url}/{id}`` at once, its workers running the
image of its (serverless) template. Scaling changes apply to the live endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbext.models import (
    ComputeType,
    CpuFlavorId,
    CudaVersion,
    DataCenterId,
    Endpoint,
    EndpointCreateInput,
    EndpointIncludes,
    EndpointUpdateInput,
    GpuTypeId,
    ScalerType,
)
from nbext.models.v2 import Endpoint as V2Endpoint

from .._flows import Context, Flow
from .._twins import Resource, aiterating, awaiting, blocking, iterating
from . import rest_v2, shapes
from .logs import as_line, follow_worker_logs, worker_logs
from .serverless_workers import releases, workers
from .wire import (
    UpdateMethod,
    given,
    ident,
    json_body,
    management_call,
    many,
    one,
    query,
    update_call,
)


def create(
    ctx: Context,
    *,
    template_id: str,
    name: str | None = None,
    compute_type: ComputeType | str | None = None,
    gpu_type_ids: Sequence[GpuTypeId | str] | None = None,
    gpu_count: int | None = None,
    cpu_flavor_ids: Sequence[CpuFlavorId | str] | None = None,
    vcpu_count: int | None = None,
    allowed_cuda_versions: Sequence[CudaVersion | str] | None = None,
    min_cuda_version: CudaVersion | str | None = None,
    data_center_ids: Sequence[DataCenterId | str] | None = None,
    workers_min: int | None = None,
    workers_max: int | None = None,
    idle_timeout: int | None = None,
    execution_timeout_ms: int | None = None,
    scaler_type: ScalerType | str | None = None,
    scaler_value: int | None = None,
    flashboot: bool | None = None,
    network_volume_id: str | None = None,
    network_volume_ids: Sequence[str] | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Endpoint]:
    """Create an endpoint running the serverless template ``template_id``.

    ``gpu_type_ids`` in order of preference; ``workers_min``..``workers_max`` workers
    (default 0..3), each stopping after ``idle_timeout`` idle seconds (1-3600, default 5);
    ``execution_timeout_ms`` bounds one job (5 s to 7 days). Bad values raise BadRequest
    before anything is sent; a create that may have reached the service is not re-sent.
    """
    if ctx.management_api == "v2":
        fields = given(locals())
        op = "endpoints.create"
        v1 = rest_v2.checked(EndpointCreateInput, op, fields, rest_v2.ENDPOINT_FIELDS)
        pools = yield from rest_v2.gpu_pools(ctx, op)
        if str(v1.get("computeType", "GPU")) == "GPU" and "gpuTypeIds" not in v1:
            v1["gpuTypeIds"] = [t for types in pools.values() for t in types]  # any, as v1
        fields = {"type": "QUEUE", **rest_v2.endpoint_body(op, v1, pools)}
        fields.setdefault("name", template_id)
        fields.setdefault("scaling", {"type": "QUEUE_DELAY", "queueDelay": 4})
        payload = rest_v2.body(op, fields, extra_body)
        read, _ = rest_v2.endpoint_readers(pools)
        return (
            yield from rest_v2.send(
                ctx, "POST", ["serverless"], op, "a new endpoint", read, payload=payload
            )
        )
    body = json_body(EndpointCreateInput, "endpoints.create", given(locals()), extra_body)
    call = management_call("POST", ["endpoints"], "endpoints.create", "a new endpoint", body=body)
    return (yield from shapes.fetch(ctx, call, one(Endpoint)))


def list_endpoints(
    ctx: Context, *, include_template: bool = False, include_workers: bool = False
) -> Flow[list[Endpoint]]:
    """The account's endpoints; the flags add each one's template and its workers."""
    params = query(EndpointIncludes, "endpoints.list", given(locals()))
    if ctx.management_api == "v2":
        if include_workers:
            rest_v2.unfiltered("endpoints.list", [("includeWorkers", "true")])
        pools = yield from rest_v2.gpu_pools(ctx, "endpoints.list")
        _, read = rest_v2.endpoint_readers(pools, include_template)
        return (
            yield from rest_v2.send(ctx, "GET", ["serverless"], "endpoints.list", "endpoints", read)
        )
    call = management_call("GET", ["endpoints"], "endpoints.list", "endpoints", query=params)
    return (yield from shapes.fetch(ctx, call, many(Endpoint)))


def get(
    ctx: Context,
    endpoint_id: str,
    *,
    include_template: bool = False,
    include_workers: bool = False,
) -> Flow[Endpoint]:
    """One endpoint by id (NotFound if there is none)."""
    eid = ident(endpoint_id, "endpoint id")
    params = query(EndpointIncludes, "endpoints.get", given(locals(), skip=["endpoint_id", "eid"]))
    if ctx.management_api == "v2":
        if include_workers:
            rest_v2.unfiltered("endpoints.get", [("includeWorkers", "true")])
        pools = yield from rest_v2.gpu_pools(ctx, "endpoints.get")
        read, _ = rest_v2.endpoint_readers(pools, include_template)
        subject = f"endpoint {endpoint_id!r}"
        return (
            yield from rest_v2.send(ctx, "GET", ["serverless", eid], "endpoints.get", subject, read)
        )
    call = management_call(
        "GET",
        ["endpoints", eid],
        "endpoints.get",
        f"endpoint {endpoint_id!r}",
        query=params,
        endpoint_id=endpoint_id,
    )
    return (yield from shapes.fetch(ctx, call, one(Endpoint)))


def update(
    ctx: Context,
    endpoint_id: str,
    *,
    template_id: str | None = None,
    name: str | None = None,
    gpu_type_ids: Sequence[GpuTypeId | str] | None = None,
    gpu_count: int | None = None,
    cpu_flavor_ids: Sequence[CpuFlavorId | str] | None = None,
    vcpu_count: int | None = None,
    allowed_cuda_versions: Sequence[CudaVersion | str] | None = None,
    min_cuda_version: CudaVersion | str | None = None,
    data_center_ids: Sequence[DataCenterId | str] | None = None,
    workers_min: int | None = None,
    workers_max: int | None = None,
    idle_timeout: int | None = None,
    execution_timeout_ms: int | None = None,
    scaler_type: ScalerType | str | None = None,
    scaler_value: int | None = None,
    flashboot: bool | None = None,
    network_volume_id: str | None = None,
    network_volume_ids: Sequence[str] | None = None,
    extra_body: Mapping[str, Any] | None = None,
    method: UpdateMethod = "PATCH",
) -> Flow[Endpoint]:
    """Change the fields given; scaling settings apply to the running endpoint at once.

    A new ``template_id`` rolls the workers over to that template's image.
    ``method="POST"`` sends the synonym ``POST /endpoints/{id}/update``. Not re-sent
    after it may have reached the service (a second rollover is not harmless).
    """
    eid = ident(endpoint_id, "endpoint id")
    fields = given(locals(), skip=["endpoint_id", "eid"])
    if ctx.management_api == "v2":
        op = "endpoints.update"
        v1 = rest_v2.checked(EndpointUpdateInput, op, fields, rest_v2.ENDPOINT_FIELDS)
        subject = f"endpoint {endpoint_id!r}"
        if "scalerValue" in v1 and "scalerType" not in v1:  # v2 names the kind with its value
            now = yield from rest_v2.send(
                ctx, "GET", ["serverless", eid], op, subject, one(V2Endpoint)
            )
            v1["scalerType"] = now.scaling.get("type", "QUEUE_DELAY")
        pools = yield from rest_v2.gpu_pools(ctx, op)
        payload = rest_v2.body(op, rest_v2.endpoint_body(op, v1, pools), extra_body)
        read, _ = rest_v2.endpoint_readers(pools)
        return (
            yield from rest_v2.send(
                ctx, "PATCH", ["serverless", eid], op, subject, read, payload=payload
            )
        )
    body = json_body(EndpointUpdateInput, "endpoints.update", fields, extra_body)
    call = update_call(
        method, ["endpoints", eid], "endpoints.update", f"endpoint {endpoint_id!r}", body
    )
    return (yield from shapes.fetch(ctx, call, one(Endpoint)))


def delete(ctx: Context, endpoint_id: str) -> Flow[None]:
    """Delete an endpoint; its job address stops serving."""
    eid = ident(endpoint_id, "endpoint id")
    if ctx.management_api == "v2":
        subject = f"endpoint {endpoint_id!r}"
        return (yield from rest_v2.delete(ctx, ["serverless", eid], "endpoints.delete", subject))
    call = management_call(
        "DELETE",
        ["endpoints", eid],
        "endpoints.delete",
        f"endpoint {endpoint_id!r}",
        endpoint_id=endpoint_id,
    )
    yield from shapes.delete(ctx, call)


class Endpoints(Resource):
    """``client.endpoints``: create, list, get, update, delete endpoint records."""

    create = blocking(create)
    list = blocking(list_endpoints)
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)
    workers = blocking(workers)
    releases = blocking(releases)
    worker_logs = blocking(worker_logs)
    follow_worker_logs = iterating(follow_worker_logs, each=as_line)


class AsyncEndpoints(Resource):
    """``client.endpoints`` of an ``AsyncClient``: ``Endpoints``' methods, awaited."""

    create = awaiting(create)
    list = awaiting(list_endpoints)
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
    workers = awaiting(workers)
    releases = awaiting(releases)
    worker_logs = awaiting(worker_logs)
    follow_worker_logs = aiterating(follow_worker_logs, each=as_line)

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
from . import rest_v2
from .logs import as_line, follow_worker_logs, worker_logs
from .rest import V1, V2
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


class EndpointsV2(V2):
    """Endpoints over REST v2 (``serverless``): GPU types as the catalog's pools."""

    def create(
        self, ctx: Context, fields: dict[str, Any], extra: Mapping[str, Any] | None
    ) -> Flow[Endpoint]:
        op = "endpoints.create"
        v1 = rest_v2.checked(EndpointCreateInput, op, fields, rest_v2.ENDPOINT_FIELDS)
        pools = yield from rest_v2.gpu_pools(ctx, op)
        if str(v1.get("computeType", "GPU")) == "GPU" and "gpuTypeIds" not in v1:
            v1["gpuTypeIds"] = [t for types in pools.values() for t in types]  # any, as v1
        body = {"type": "QUEUE", **rest_v2.endpoint_body(op, v1, pools)}
        body.setdefault("name", fields["template_id"])
        body.setdefault("scaling", {"type": "QUEUE_DELAY", "queueDelay": 4})
        payload = rest_v2.body(op, body, extra)
        read, _ = rest_v2.endpoint_readers(pools)
        call = self.v2_call("POST", ["serverless"], op, "a new endpoint", body=payload)
        return (yield from self.fetch(ctx, call, read))

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Endpoint]]:
        if fields.get("include_workers"):
            rest_v2.unfiltered("endpoints.list", [("includeWorkers", "true")])
        pools = yield from rest_v2.gpu_pools(ctx, "endpoints.list")
        _, read = rest_v2.endpoint_readers(pools, bool(fields.get("include_template")))
        call = self.v2_call("GET", ["serverless"], "endpoints.list", "endpoints")
        return (yield from self.fetch(ctx, call, read))

    def get(
        self,
        ctx: Context,
        endpoint_id: str,
        fields: dict[str, Any],
        params: list[tuple[str, str]],
    ) -> Flow[Endpoint]:
        if fields.get("include_workers"):
            rest_v2.unfiltered("endpoints.get", [("includeWorkers", "true")])
        pools = yield from rest_v2.gpu_pools(ctx, "endpoints.get")
        read, _ = rest_v2.endpoint_readers(pools, bool(fields.get("include_template")))
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        call = self.v2_call("GET", ["serverless", eid], "endpoints.get", subject)
        return (yield from self.fetch(ctx, call, read))

    def update(
        self,
        ctx: Context,
        endpoint_id: str,
        fields: dict[str, Any],
        extra: Mapping[str, Any] | None,
        method: UpdateMethod,
    ) -> Flow[Endpoint]:
        op = "endpoints.update"
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        v1 = rest_v2.checked(EndpointUpdateInput, op, fields, rest_v2.ENDPOINT_FIELDS)
        if "scalerValue" in v1 and "scalerType" not in v1:  # v2 names the kind with its value
            call = self.v2_call("GET", ["serverless", eid], op, subject)
            now = yield from self.fetch(ctx, call, one(V2Endpoint))
            v1["scalerType"] = now.scaling.get("type", "QUEUE_DELAY")
        pools = yield from rest_v2.gpu_pools(ctx, op)
        payload = rest_v2.body(op, rest_v2.endpoint_body(op, v1, pools), extra)
        read, _ = rest_v2.endpoint_readers(pools)
        call = self.v2_call("PATCH", ["serverless", eid], op, subject, body=payload)
        return (yield from self.fetch(ctx, call, read))

    def remove(self, ctx: Context, endpoint_id: str) -> Flow[None]:
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        yield from self.delete(
            ctx, self.v2_call("DELETE", ["serverless", eid], "endpoints.delete", subject)
        )


class EndpointsV1(V1, EndpointsV2):
    """Endpoints over REST v1 (``endpoints``): v1's own bodies and include flags."""

    def create(
        self, ctx: Context, fields: dict[str, Any], extra: Mapping[str, Any] | None
    ) -> Flow[Endpoint]:
        body = json_body(EndpointCreateInput, "endpoints.create", fields, extra)
        op = "endpoints.create"
        call = management_call("POST", ["endpoints"], op, "a new endpoint", body=body)
        return (yield from self.fetch(ctx, call, one(Endpoint)))

    def listing(
        self, ctx: Context, fields: dict[str, Any], params: list[tuple[str, str]]
    ) -> Flow[list[Endpoint]]:
        call = management_call("GET", ["endpoints"], "endpoints.list", "endpoints", query=params)
        return (yield from self.fetch(ctx, call, many(Endpoint)))

    def get(
        self,
        ctx: Context,
        endpoint_id: str,
        fields: dict[str, Any],
        params: list[tuple[str, str]],
    ) -> Flow[Endpoint]:
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        call = management_call(
            "GET",
            ["endpoints", eid],
            "endpoints.get",
            subject,
            query=params,
            endpoint_id=endpoint_id,
        )
        return (yield from self.fetch(ctx, call, one(Endpoint)))

    def update(
        self,
        ctx: Context,
        endpoint_id: str,
        fields: dict[str, Any],
        extra: Mapping[str, Any] | None,
        method: UpdateMethod,
    ) -> Flow[Endpoint]:
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        body = json_body(EndpointUpdateInput, "endpoints.update", fields, extra)
        call = update_call(method, ["endpoints", eid], "endpoints.update", subject, body)
        return (yield from self.fetch(ctx, call, one(Endpoint)))

    def remove(self, ctx: Context, endpoint_id: str) -> Flow[None]:
        eid, subject = ident(endpoint_id, "endpoint id"), f"endpoint {endpoint_id!r}"
        call = management_call(
            "DELETE", ["endpoints", eid], "endpoints.delete", subject, endpoint_id=endpoint_id
        )
        yield from self.delete(ctx, call)


def create(
    ctx: Context,
    api: EndpointsV2,
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
    return (yield from api.create(ctx, given(locals()), extra_body))


def list_endpoints(
    ctx: Context, api: EndpointsV2, *, include_template: bool = False, include_workers: bool = False
) -> Flow[list[Endpoint]]:
    """The account's endpoints; the flags add each one's template and its workers."""
    fields = given(locals())
    return (yield from api.listing(ctx, fields, query(EndpointIncludes, "endpoints.list", fields)))


def get(
    ctx: Context,
    api: EndpointsV2,
    endpoint_id: str,
    *,
    include_template: bool = False,
    include_workers: bool = False,
) -> Flow[Endpoint]:
    """One endpoint by id (NotFound if there is none)."""
    ident(endpoint_id, "endpoint id")
    fields = given(locals(), skip=["endpoint_id"])
    params = query(EndpointIncludes, "endpoints.get", fields)
    return (yield from api.get(ctx, endpoint_id, fields, params))


def update(
    ctx: Context,
    api: EndpointsV2,
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
    ident(endpoint_id, "endpoint id")
    fields = given(locals(), skip=["endpoint_id"])
    return (yield from api.update(ctx, endpoint_id, fields, extra_body, method))


def delete(ctx: Context, api: EndpointsV2, endpoint_id: str) -> Flow[None]:
    """Delete an endpoint; its job address stops serving."""
    return (yield from api.remove(ctx, endpoint_id))


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

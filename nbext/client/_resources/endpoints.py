"""``client.endpoints``: serverless endpoint records; their jobs are ``client.endpoint(id)``'s.

Workers run the endpoint's own container settings (its template's, if any, with the
body's fields over them); scaling changes apply to the live endpoint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel

from nbext.models.v2 import (
    CpuConfig,
    Endpoint,
    EndpointGpu,
    EndpointWorkers,
    Release,
    Scaling,
    Worker,
)
from nbext.models.v2.resources import ENDPOINTS as ROW

from .._flows import Context, Flow
from .._twins import Resource, aiterating, awaiting, blocking, iterating
from .crud import below, deleting, listing, saved
from .logs import as_line, follow_worker_logs, worker_logs
from .rest import V2
from .wire import NOT_GIVEN, NotGiven, given, ident, one

EndpointType = Literal["QUEUE", "LOAD_BALANCER"]
FlashBoot = Literal["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"]
NESTED: dict[str, type[BaseModel]] = {
    "gpu": EndpointGpu,
    "cpu": CpuConfig,
    "workers": EndpointWorkers,
    "scaling": Scaling,
}
QUEUE_SCALING = {"type": "QUEUE_DELAY", "queueDelay": 4}
"""A queue endpoint's scaling when none is given: a worker more once a job waits 4 s."""


def create(
    ctx: Context,
    api: V2,
    *,
    name: str | None = None,
    template_id: str | None = None,
    type: EndpointType | str = "QUEUE",
    image: str | None = None,
    gpu: EndpointGpu | Mapping[str, Any] | None = None,
    cpu: Sequence[CpuConfig | Mapping[str, Any]] | None = None,
    workers: EndpointWorkers | Mapping[str, Any] | None = None,
    scaling: Scaling | Mapping[str, Any] | None = None,
    execution_timeout_ms: int | None = None,
    flashboot: FlashBoot | str | None = None,
    data_center_ids: Sequence[str] | None = None,
    network_volumes: Sequence[str] | None = None,
    args: str | None = None,
    disk: int | None = None,
    env: Mapping[str, str] | None = None,
    ports: Sequence[str] | None = None,
    registry: str | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Endpoint]:
    """Create an endpoint from the serverless template ``template_id`` (or an ``image``).

    ``name`` defaults to the template's id. ``gpu={"pools": [...], "count": n}`` chooses
    its GPUs by the catalog's pools (``client.catalog.gpus()`` names each type's),
    or ``cpu=[{"id": ..., "vcpu_count": ...}]`` makes it a CPU endpoint;
    ``workers={"min": 0, "max": 3, "idle_timeout": 5}``; ``scaling`` by default
    ``{"type": "QUEUE_DELAY", "queue_delay": 4}`` for a queue endpoint;
    ``execution_timeout_ms`` bounds one job (v2's ``timeout``). A create that may have
    reached the service is not re-sent.
    """
    fields = given(locals())
    if name is None and template_id is not None:
        fields["name"] = template_id
    if type == "QUEUE" and scaling is None:
        extra_body = {"scaling": QUEUE_SCALING, **(extra_body or {})}
    return (yield from saved(ctx, api, ROW, fields, extra_body, NESTED))


def get(ctx: Context, api: V2, endpoint_id: str) -> Flow[Endpoint]:
    """One endpoint by id (NotFound if there is none, naming the endpoint: its
    ``endpoint_id`` lets a caller say which ones there are)."""
    eid, subject = ident(endpoint_id, "endpoint")
    call = replace(api.call("GET", ["serverless", eid], "endpoints.get", subject), endpoint_id=eid)
    return (yield from api.fetch(ctx, call, one(Endpoint)))


def update(
    ctx: Context,
    api: V2,
    endpoint_id: str,
    *,
    name: str | NotGiven = NOT_GIVEN,
    template_id: str | NotGiven = NOT_GIVEN,
    image: str | NotGiven = NOT_GIVEN,
    gpu: EndpointGpu | Mapping[str, Any] | NotGiven = NOT_GIVEN,
    cpu: Sequence[CpuConfig | Mapping[str, Any]] | NotGiven = NOT_GIVEN,
    workers: EndpointWorkers | Mapping[str, Any] | NotGiven = NOT_GIVEN,
    scaling: Scaling | Mapping[str, Any] | NotGiven = NOT_GIVEN,
    execution_timeout_ms: int | NotGiven = NOT_GIVEN,
    flashboot: FlashBoot | str | NotGiven = NOT_GIVEN,
    data_center_ids: Sequence[str] | NotGiven = NOT_GIVEN,
    network_volumes: Sequence[str] | NotGiven = NOT_GIVEN,
    args: str | NotGiven = NOT_GIVEN,
    disk: int | NotGiven = NOT_GIVEN,
    env: Mapping[str, str] | NotGiven = NOT_GIVEN,
    ports: Sequence[str] | NotGiven = NOT_GIVEN,
    registry: str | NotGiven | None = NOT_GIVEN,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Endpoint]:
    """Change the fields given; scaling applies at once, a ``template_id`` or ``image``
    rolls the workers over. Not re-sent after it may have reached the service."""
    fields = given(locals(), skip=["endpoint_id"], update=True)
    return (yield from saved(ctx, api, ROW, fields, extra_body, NESTED, record_id=endpoint_id))


def workers(ctx: Context, api: V2, endpoint_id: str) -> Flow[list[Worker]]:
    """The endpoint's workers now (an endpoint scaled to zero has none)."""
    return (yield from below(ctx, api, ROW, endpoint_id, "workers", Worker))


def releases(ctx: Context, api: V2, endpoint_id: str) -> Flow[list[Release]]:
    """The endpoint's releases, newest first; ``diff`` says what each one changed."""
    return (yield from below(ctx, api, ROW, endpoint_id, "releases", Release))


delete = deleting(ROW, "Its job address stops serving.")


class Endpoints(Resource):
    create = blocking(create)
    list = blocking(listing(ROW))
    get = blocking(get)
    update = blocking(update)
    delete = blocking(delete)
    workers = blocking(workers)
    releases = blocking(releases)
    worker_logs = blocking(worker_logs)
    follow_worker_logs = iterating(follow_worker_logs, each=as_line)


class AsyncEndpoints(Resource):
    create = awaiting(create)
    list = awaiting(listing(ROW))
    get = awaiting(get)
    update = awaiting(update)
    delete = awaiting(delete)
    workers = awaiting(workers)
    releases = awaiting(releases)
    worker_logs = awaiting(worker_logs)
    follow_worker_logs = aiterating(follow_worker_logs, each=as_line)

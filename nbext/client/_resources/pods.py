"""``client.pods``: rented containers with a GPU (or CPU), and their lifecycle.

A pod's ``status`` is what the service observes (``PROVISIONING``, ``RUNNING``,
``EXITED``...) and its ``actions`` what that status allows. There is no reset: an update
of a container field (``image``, ``args``, ``env``...) re-creates the container.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from nbext.models.v2 import CpuConfig, GpuConfig, Mounts, Pod
from nbext.models.v2.resources import PODS as ROW

from .._flows import Context, Flow
from .._twins import Resource, aiterating, awaiting, blocking, iterating
from .crud import deleting, getting, saved
from .logs import as_line, follow_pod_logs, pod_logs
from .rest import V2
from .wire import NOT_GIVEN, NotGiven, given, ident, maybe, wrapped

Cloud = Literal["SECURE", "COMMUNITY"]
NESTED: dict[str, type[BaseModel]] = {"gpu": GpuConfig, "cpu": CpuConfig, "mounts": Mounts}


def create(
    ctx: Context,
    api: V2,
    *,
    name: str = "my pod",
    image: str | None = None,
    template_id: str | None = None,
    gpu: GpuConfig | Mapping[str, Any] | None = None,
    cpu: CpuConfig | Mapping[str, Any] | None = None,
    cloud: Cloud | str | None = None,
    data_center_ids: Sequence[str] | None = None,
    global_networking: bool | None = None,
    mounts: Mounts | Mapping[str, Any] | None = None,
    args: str | None = None,
    disk: int | None = None,
    env: Mapping[str, str] | None = None,
    ports: Sequence[str] | None = None,
    registry: str | None = None,
    start_ssh: bool | None = None,
    start_jupyter: bool | None = None,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Pod]:
    """Rent a pod; it costs ``cost`` per hour while it runs.

    Give ``image``, or ``template_id`` for a template that names it (fields left out
    then come from the template), and one of ``gpu={"id": ..., "count": ...}`` or
    ``cpu={"id": ..., "vcpu_count": ...}``. ``mounts`` is a persistent volume
    (``{"persistent": {"size": GB, "path": ...}}``) or a network volume
    (``{"network": [{"volume_id": ..., "path": ...}]}``). A create that may have reached
    the service is never sent again (it could rent two pods).
    """
    return (yield from saved(ctx, api, ROW, given(locals()), extra_body, NESTED))


def list_pods(ctx: Context, api: V2, *, include_cluster_pods: bool = False) -> Flow[list[Pod]]:
    """The account's pods; ``include_cluster_pods`` adds the member pods of its clusters."""
    query = [("includeClusterPods", "true")] if include_cluster_pods else []
    call = api.call("GET", ["pods"], "pods.list", "pods", query=query)
    return (yield from api.fetch(ctx, call, wrapped(Pod, "pods")))


def update(
    ctx: Context,
    api: V2,
    pod_id: str,
    *,
    name: str | NotGiven = NOT_GIVEN,
    locked: bool | NotGiven = NOT_GIVEN,
    image: str | NotGiven = NOT_GIVEN,
    args: str | NotGiven = NOT_GIVEN,
    disk: int | NotGiven = NOT_GIVEN,
    env: Mapping[str, str] | NotGiven = NOT_GIVEN,
    ports: Sequence[str] | NotGiven = NOT_GIVEN,
    registry: str | NotGiven | None = NOT_GIVEN,
    mounts: Mounts | Mapping[str, Any] | NotGiven = NOT_GIVEN,
    global_networking: bool | NotGiven = NOT_GIVEN,
    template_id: str | NotGiven = NOT_GIVEN,
    extra_body: Mapping[str, Any] | None = None,
) -> Flow[Pod]:
    """Change the fields given. ``name`` and ``locked`` change in place; a container field
    re-creates the container (which a locked pod refuses), so it is not re-sent after it
    may have reached the service."""
    fields = given(locals(), skip=["pod_id"], update=True)
    return (yield from saved(ctx, api, ROW, fields, extra_body, NESTED, record_id=pod_id))


def _action(ctx: Context, api: V2, pod_id: str, action: str) -> Flow[Pod | None]:
    """``POST /pods/{id}/action``: the pod now, when the service sends it. Never re-sent
    once it may have reached the service: the second send would be refused (Conflict) for
    what the first did, or a second restart kill what the first started."""
    pid, subject = ident(pod_id, "pod")
    call = api.call(
        "POST", ["pods", pid, "action"], f"pods.{action}", subject, body={"action": action}
    )
    return (yield from api.fetch(ctx, call, maybe(Pod)))


def start(ctx: Context, api: V2, pod_id: str) -> Flow[Pod | None]:
    """Start (or resume) a stopped pod."""
    return (yield from _action(ctx, api, pod_id, "start"))


def stop(ctx: Context, api: V2, pod_id: str) -> Flow[Pod | None]:
    """Stop a pod: it becomes EXITED and stops costing GPU time (Conflict if locked)."""
    return (yield from _action(ctx, api, pod_id, "stop"))


def restart(ctx: Context, api: V2, pod_id: str) -> Flow[Pod | None]:
    """Restart a pod's container in place."""
    return (yield from _action(ctx, api, pod_id, "restart"))


delete = deleting(ROW, "It is terminated for good.")


class Pods(Resource):
    create = blocking(create)
    list = blocking(list_pods)
    get = blocking(getting(ROW))
    update = blocking(update)
    delete = blocking(delete)
    start = blocking(start)
    stop = blocking(stop)
    restart = blocking(restart)
    logs = blocking(pod_logs)
    follow_logs = iterating(follow_pod_logs, each=as_line)


class AsyncPods(Resource):
    create = awaiting(create)
    list = awaiting(list_pods)
    get = awaiting(getting(ROW))
    update = awaiting(update)
    delete = awaiting(delete)
    start = awaiting(start)
    stop = awaiting(stop)
    restart = awaiting(restart)
    logs = awaiting(pod_logs)
    follow_logs = aiterating(follow_pod_logs, each=as_line)

"""An endpoint's workers and releases (REST v2): what serves it now, and what it ran before."""

from __future__ import annotations

from nbext.models.v2 import Release, Worker

from .._flows import Context, Flow
from .rest import V2
from .wire import ident, wrapped


def workers(ctx: Context, api: V2, endpoint_id: str) -> Flow[list[Worker]]:
    """The endpoint's workers now (an endpoint scaled to zero has none)."""
    eid, subject = ident(endpoint_id, "endpoint")
    call = api.call("GET", ["serverless", eid, "workers"], "endpoints.workers", subject)
    return (yield from api.fetch(ctx, call, wrapped(Worker, "workers")))


def releases(ctx: Context, api: V2, endpoint_id: str) -> Flow[list[Release]]:
    """The endpoint's releases, newest first; ``diff`` says what each one changed."""
    eid, subject = ident(endpoint_id, "endpoint")
    call = api.call("GET", ["serverless", eid, "releases"], "endpoints.releases", subject)
    return (yield from api.fetch(ctx, call, wrapped(Release, "releases")))

"""An endpoint's workers and releases (REST v2): what serves it now, and what it ran before.

``client.endpoints.workers(id)`` lists the workers (status, image version, GPU, uptime);
``client.endpoints.releases(id)`` the endpoint's versions, newest first, each with what
changed. A worker's log is ``client.endpoints.worker_logs`` (``logs``).
"""

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

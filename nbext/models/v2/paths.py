"""How ``/v2`` is shared between management and the job interface.

The job interface is ``/v2/{endpoint_id}/{operation}[/{job_id}]``; management is
``/v2/{resource}[/...]``. A path belongs to management exactly when its first segment
is one of ``MANAGEMENT_SEGMENTS``, so an endpoint may never take one of those words as
its id: ``/v2/pods/run`` would otherwise be both a pod and a job submission.
"""

from __future__ import annotations

from .resources import RESOURCES

MANAGEMENT_SEGMENTS = frozenset(
    {row.segment.split("/")[0] for row in RESOURCES}
    | {"account", "billing", "catalog", "openapi.json"}
)

PREFIX = "/v2/"


def is_management_path(path: str) -> bool:
    """True for ``/v2/pods``, ``/v2/pods/x/logs``, ...; False for job routes and others."""
    if not path.startswith(PREFIX):
        return False
    first = path[len(PREFIX) :].split("/", 1)[0]
    return first in MANAGEMENT_SEGMENTS


def reserved_endpoint_id(endpoint_id: str) -> bool:
    """An id an endpoint may not have: its job routes would be management paths."""
    return endpoint_id in MANAGEMENT_SEGMENTS

"""Wire facts of the management interface's second version (REST v2).

v2 serves management beside the job interface under the same ``/v2`` prefix. These
are the names both sides (the client and the emulator) must agree on; this package
imports nothing else of nbext.
"""

from .paths import MANAGEMENT_SEGMENTS, is_management_path, reserved_endpoint_id
from .queries import BillingQuery
from .resources import (
    LIST_KEYS,
    RESOURCES,
    BillingRecord,
    Cluster,
    CpuConfig,
    CpuType,
    DataCenter,
    EcrDelegation,
    Endpoint,
    EndpointGpu,
    EndpointWorkers,
    GpuConfig,
    GpuType,
    LogEvent,
    Mounts,
    NetworkVolume,
    Pod,
    Problem,
    Registry,
    Release,
    RequestUrls,
    Rest,
    Scaling,
    Template,
    Worker,
)
from .states import POD_ACTIONS_BY_STATUS, PodAction, PodStatus

__all__ = [
    "LIST_KEYS",
    "MANAGEMENT_SEGMENTS",
    "POD_ACTIONS_BY_STATUS",
    "RESOURCES",
    "BillingQuery",
    "BillingRecord",
    "Cluster",
    "CpuConfig",
    "CpuType",
    "DataCenter",
    "EcrDelegation",
    "Endpoint",
    "EndpointGpu",
    "EndpointWorkers",
    "GpuConfig",
    "GpuType",
    "LogEvent",
    "Mounts",
    "NetworkVolume",
    "Pod",
    "PodAction",
    "PodStatus",
    "Problem",
    "Registry",
    "Release",
    "RequestUrls",
    "Rest",
    "Scaling",
    "Template",
    "Worker",
    "is_management_path",
    "reserved_endpoint_id",
]

"""REST v1's own enumerations (the shared ones are ``nbext.models.enums``'), as ``StrEnum``
so members compare equal to their strings; values copied from v1's OpenAPI description."""

from __future__ import annotations

import enum

from ..enums import CpuFlavorId

SERVERLESS_CPU_FLAVORS = frozenset(
    {CpuFlavorId.CPU3C, CpuFlavorId.CPU3G, CpuFlavorId.CPU5C, CpuFlavorId.CPU5G}
)
"""The CPU flavours the reference allows in an endpoint's ``cpuFlavorIds``."""


class ComputeType(enum.StrEnum):
    """Whether a pod or an endpoint's workers have a GPU."""

    GPU = "GPU"
    CPU = "CPU"


class Priority(enum.StrEnum):
    """How the service picks among listed GPU types, CPU flavours or data centres:
    whichever has capacity now, or strictly in list order (``custom``)."""

    AVAILABILITY = "availability"
    CUSTOM = "custom"


class PodStatus(enum.StrEnum):
    """A pod's ``desiredStatus``."""

    RUNNING = "RUNNING"
    EXITED = "EXITED"
    TERMINATED = "TERMINATED"


class ScalerType(enum.StrEnum):
    """How an endpoint adds workers: by queue delay (seconds) or by request count."""

    QUEUE_DELAY = "QUEUE_DELAY"
    REQUEST_COUNT = "REQUEST_COUNT"


class PodBillingGrouping(enum.StrEnum):
    """What pod billing records are grouped by (default ``gpuTypeId``)."""

    POD_ID = "podId"
    GPU_TYPE_ID = "gpuTypeId"


class EndpointBillingGrouping(enum.StrEnum):
    """What endpoint billing records are grouped by (default ``endpointId``)."""

    ENDPOINT_ID = "endpointId"
    POD_ID = "podId"
    GPU_TYPE_ID = "gpuTypeId"

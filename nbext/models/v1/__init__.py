"""REST v1's wire models, for the emulator's ``/v1`` alone.

The service retired v1 on 2026-11-15 and the client speaks v2 only; the emulator still
serves ``/v1`` for programs recorded against it, refusing what v1 always did, in its words.
"""

from .billing import (
    BillingQuery,
    BillingRecord,
    EndpointBillingQuery,
    NetworkVolumeBillingQuery,
    NetworkVolumeBillingRecord,
    PodBillingQuery,
)
from .endpoints import WORKERS_MAX_DEFAULT, Endpoint, EndpointCreateInput, EndpointUpdateInput
from .enums import SERVERLESS_CPU_FLAVORS, ComputeType, PodStatus
from .errors import ErrorMessage
from .network_volumes import NetworkVolume, NetworkVolumeCreateInput, NetworkVolumeUpdateInput
from .pods import (
    ALL_DATA_CENTERS,
    CpuType,
    DataCenter,
    GpuType,
    Machine,
    Pod,
    PodCreateInput,
    PodUpdateInput,
    SavingsPlan,
)
from .queries import EndpointIncludes, PodIncludes, PodListQuery, TemplateIncludes
from .registry_auths import ContainerRegistryAuth, ContainerRegistryAuthCreateInput
from .templates import Template, TemplateCreateInput, TemplateUpdateInput

__all__ = [
    "ALL_DATA_CENTERS",
    "SERVERLESS_CPU_FLAVORS",
    "WORKERS_MAX_DEFAULT",
    "BillingQuery",
    "BillingRecord",
    "ComputeType",
    "ContainerRegistryAuth",
    "ContainerRegistryAuthCreateInput",
    "CpuType",
    "DataCenter",
    "Endpoint",
    "EndpointBillingQuery",
    "EndpointCreateInput",
    "EndpointIncludes",
    "EndpointUpdateInput",
    "ErrorMessage",
    "GpuType",
    "Machine",
    "NetworkVolume",
    "NetworkVolumeBillingQuery",
    "NetworkVolumeBillingRecord",
    "NetworkVolumeCreateInput",
    "NetworkVolumeUpdateInput",
    "Pod",
    "PodBillingQuery",
    "PodCreateInput",
    "PodIncludes",
    "PodListQuery",
    "PodStatus",
    "PodUpdateInput",
    "SavingsPlan",
    "Template",
    "TemplateCreateInput",
    "TemplateIncludes",
    "TemplateUpdateInput",
]

"""A v2 pod body's fields and the rules of their values, in v2's own names; both
interfaces reach ``Pods`` as a ``PodChange`` (docs/architecture.md#management-areas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from nbext.models import DEFAULT_PORTS, CloudType, CpuFlavorId, CudaVersion, DataCenterId, GpuTypeId
from nbext.models._fields import AbsolutePath, Env, InputModel, Name191, NonBlank, Ports
from nbext.models.v1.endpoints import PositiveInt
from nbext.models.v2.convert import MIN_PERSISTENT_GB


class PersistentMount(InputModel):
    """The pod's local volume: kept with the pod, from v2's smallest size."""

    size: StrictInt = Field(ge=MIN_PERSISTENT_GB)
    path: AbsolutePath


class NetworkMount(InputModel):
    """A network volume and where the pod mounts it."""

    volume_id: StrictStr = Field(alias="volumeId")
    path: AbsolutePath


class PodMounts(InputModel):
    persistent: PersistentMount | None = None
    network: list[NetworkMount] | None = None


class PodGpu(InputModel):
    """A GPU pod's type and count, and what CUDA its host must offer."""

    id: GpuTypeId
    count: PositiveInt = 1
    allowed_cuda_versions: list[CudaVersion] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    min_cuda_version: CudaVersion | None = Field(default=None, alias="minCudaVersion")


class PodCpu(InputModel):
    """A CPU pod's flavor and vCPU count (its memory follows from the flavor)."""

    id: CpuFlavorId
    vcpu_count: StrictInt = Field(ge=2, alias="vcpuCount")


class PodBody(InputModel):
    """What a create and an update both may give: the container, its mounts, networking."""

    image: NonBlank | None = None
    args: StrictStr | None = None
    disk: StrictInt | None = Field(default=None, ge=1)
    env: Env | None = None
    ports: Ports | None = None
    registry: StrictStr | None = None
    global_networking: StrictBool | None = Field(default=None, alias="globalNetworking")
    mounts: PodMounts | None = None


class UpdatePodRequest(PodBody):
    """A v2 PATCH body: only what is given changes; compute and placement are fixed."""

    name: Name191 | None = None
    locked: StrictBool | None = None
    template_id: StrictStr | None = Field(default=None, alias="templateId")


class CreatePodRequest(PodBody):
    """A v2 create body: a name, and the compute (``pod_rules`` requires one of the two)."""

    name: Name191
    template_id: NonBlank | None = Field(default=None, alias="templateId")
    cloud: Literal["SECURE", "COMMUNITY"] = "SECURE"
    gpu: PodGpu | None = None
    cpu: PodCpu | None = None
    data_center_ids: list[DataCenterId] | None = Field(default=None, alias="dataCenterIds")
    start_ssh: StrictBool | None = Field(default=None, alias="startSsh")
    start_jupyter: StrictBool | None = Field(default=None, alias="startJupyter")


@dataclass(frozen=True)
class PodChange:
    """What an update asks of a pod, by the record's field names, with ``named``: each field
    as the caller (``/v1`` or ``/v2``) named it, for a refusal in the caller's words."""

    values: dict[str, Any]
    named: dict[str, str]
    unheld: tuple[str, ...] = ()
    """What else changes, which the record does not hold (v1's entrypoint, which ``/v1``
    keeps), by the caller's names: it resets the pod as a change of the record does."""


CONTAINER_DEFAULTS: dict[str, Any] = {
    "image": None,
    "args": "",
    "disk": 50,
    "volume_size": 20,
    "volume_path": "/workspace",
    "registry": None,
    "ports": list(DEFAULT_PORTS),
}
"""A new pod's container fields when neither its body nor its template gives them."""


@dataclass(frozen=True)
class PodOrder:
    """What a create asks for, in the record's terms; ``given``: the container fields the
    body gave (else the template's, else ``CONTAINER_DEFAULTS``); ``named``: as ``PodChange``."""

    name: str
    template_id: str | None
    gpu_type_id: str | None
    """The GPU pod's type; None for a CPU pod."""
    gpu_count: int
    cpu_flavor_id: str | None
    vcpu_count: int
    cloud: CloudType
    global_networking: bool
    data_center_ids: list[str]
    network_volume_id: str | None
    env: dict[str, str]
    given: dict[str, Any]
    named: dict[str, str]
    min_vcpu_per_gpu: int = 2
    min_ram_per_gpu: int = 8
    """What each GPU's host has at least (v1's defaults; v2 cannot ask for more)."""
    interruptible: bool = False
    locked: bool = False
    country_codes: list[str] | None = None
    cuda_version: str | None = None

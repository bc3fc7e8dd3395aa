"""Pods: rented containers with a GPU (or CPU) attached, and what they run on.

``Pod`` nests the GPU it has (``GpuType``), optionally the machine (``Machine``), the
network volume and savings plans, as the list and get operations' include flags ask.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from ._base import WireModel
from ._fields import (
    DEFAULT_PORTS,
    AbsolutePath,
    DiskGb,
    Env,
    InputModel,
    Lenient,
    Name191,
    NonBlank,
    Number,
    Ports,
    WireDatetime,
)
from .enums import (
    CloudType,
    ComputeType,
    CpuFlavorId,
    CudaVersion,
    DataCenterId,
    GpuTypeId,
    PodStatus,
    Priority,
)
from .network_volumes import NetworkVolume

ALL_DATA_CENTERS: tuple[DataCenterId, ...] = tuple(DataCenterId)
"""The reference's default ``dataCenterIds``: every data centre, in its order."""


class GpuType(WireModel):
    """A GPU type and its prices per GPU-hour (``Pod.gpu``, ``Machine.gpuType``)."""

    id: str | None = None
    count: int | None = None
    display_name: str | None = Field(default=None, alias="displayName")
    secure_price: float | None = Field(default=None, alias="securePrice")
    community_price: float | None = Field(default=None, alias="communityPrice")
    one_month_price: float | None = Field(default=None, alias="oneMonthPrice")
    three_month_price: float | None = Field(default=None, alias="threeMonthPrice")
    six_month_price: float | None = Field(default=None, alias="sixMonthPrice")
    one_week_price: float | None = Field(default=None, alias="oneWeekPrice")
    community_spot_price: float | None = Field(default=None, alias="communitySpotPrice")
    secure_spot_price: float | None = Field(default=None, alias="secureSpotPrice")


class CpuType(WireModel):
    """The CPU model of a machine."""

    id: str | None = None
    display_name: str | None = Field(default=None, alias="displayName")
    cores: float | None = None
    threads_per_core: float | None = Field(default=None, alias="threadsPerCore")
    group_id: str | None = Field(default=None, alias="groupId")


class Machine(WireModel):
    """The host a pod runs on (``includeMachine``)."""

    min_pod_gpu_count: int | None = Field(default=None, alias="minPodGpuCount")
    gpu_type_id: str | None = Field(default=None, alias="gpuTypeId")
    gpu_type: GpuType | None = Field(default=None, alias="gpuType")
    cpu_count: int | None = Field(default=None, alias="cpuCount")
    cpu_type_id: str | None = Field(default=None, alias="cpuTypeId")
    cpu_type: CpuType | None = Field(default=None, alias="cpuType")
    location: str | None = None
    data_center_id: str | None = Field(default=None, alias="dataCenterId")
    disk_throughput_mbps: int | None = Field(default=None, alias="diskThroughputMBps")
    max_download_speed_mbps: int | None = Field(default=None, alias="maxDownloadSpeedMbps")
    max_upload_speed_mbps: int | None = Field(default=None, alias="maxUploadSpeedMbps")
    support_public_ip: bool | None = Field(default=None, alias="supportPublicIp")
    secure_cloud: bool | None = Field(default=None, alias="secureCloud")
    maintenance_start: str | None = Field(default=None, alias="maintenanceStart")
    maintenance_end: str | None = Field(default=None, alias="maintenanceEnd")
    maintenance_note: str | None = Field(default=None, alias="maintenanceNote")
    note: str | None = None
    cost_per_hr: float | None = Field(default=None, alias="costPerHr")
    current_price_per_gpu: float | None = Field(default=None, alias="currentPricePerGpu")
    gpu_available: int | None = Field(default=None, alias="gpuAvailable")
    gpu_display_name: str | None = Field(default=None, alias="gpuDisplayName")


class SavingsPlan(WireModel):
    """A prepaid discount applied to a pod (``includeSavingsPlans``)."""

    id: str | None = None
    cost_per_hr: float | None = Field(default=None, alias="costPerHr")
    start_time: WireDatetime | None = Field(default=None, alias="startTime")
    end_time: WireDatetime | None = Field(default=None, alias="endTime")
    gpu_type_id: str | None = Field(default=None, alias="gpuTypeId")
    pod_id: str | None = Field(default=None, alias="podId")


class DataCenter(WireModel):
    """A data centre, by id."""

    id: str | None = None


class Pod(WireModel):
    """A pod as the service returns it (also the shape of a serverless worker)."""

    id: str | None = None
    name: str | None = None
    image: str | None = None
    desired_status: Lenient[PodStatus] | None = Field(default=None, alias="desiredStatus")
    last_started_at: WireDatetime | None = Field(default=None, alias="lastStartedAt")
    last_status_change: str | None = Field(default=None, alias="lastStatusChange")
    cost_per_hr: float | None = Field(default=None, alias="costPerHr")
    adjusted_cost_per_hr: float | None = Field(default=None, alias="adjustedCostPerHr")
    gpu: GpuType | None = None
    cpu_flavor_id: str | None = Field(default=None, alias="cpuFlavorId")
    vcpu_count: float | None = Field(default=None, alias="vcpuCount")
    memory_in_gb: float | None = Field(default=None, alias="memoryInGb")
    container_disk_in_gb: int | None = Field(default=None, alias="containerDiskInGb")
    volume_in_gb: int | None = Field(default=None, alias="volumeInGb")
    volume_mount_path: str | None = Field(default=None, alias="volumeMountPath")
    volume_encrypted: bool | None = Field(default=None, alias="volumeEncrypted")
    container_registry_auth_id: str | None = Field(default=None, alias="containerRegistryAuthId")
    docker_entrypoint: list[str] | None = Field(default=None, alias="dockerEntrypoint")
    docker_start_cmd: list[str] | None = Field(default=None, alias="dockerStartCmd")
    env: dict[str, str] | None = None
    ports: list[str] | None = None
    port_mappings: dict[str, int] | None = Field(default=None, alias="portMappings")
    public_ip: str | None = Field(default=None, alias="publicIp")
    interruptible: bool | None = None
    locked: bool | None = None
    machine_id: str | None = Field(default=None, alias="machineId")
    machine: Machine | None = None
    network_volume: NetworkVolume | None = Field(default=None, alias="networkVolume")
    savings_plans: list[SavingsPlan] | None = Field(default=None, alias="savingsPlans")
    template_id: str | None = Field(default=None, alias="templateId")
    endpoint_id: str | None = Field(default=None, alias="endpointId")
    ai_api_id: str | None = Field(default=None, alias="aiApiId")
    """Legacy synonym of ``endpoint_id``."""
    sls_version: int | None = Field(default=None, alias="slsVersion")
    consumer_user_id: str | None = Field(default=None, alias="consumerUserId")


class PodCreateInput(InputModel):
    """Body of ``POST /pods``, with the reference's defaults.

    The image comes from ``imageName`` or from the template ``templateId`` names (fields
    left out are then taken from the template). GPU fields apply to GPU pods and CPU
    fields to CPU pods; the others are ignored, as the reference says.
    """

    nullable_fields = frozenset({"container_disk_in_gb", "volume_in_gb"})

    name: Name191 = "my pod"
    image_name: NonBlank | None = Field(default=None, alias="imageName")
    template_id: StrictStr | None = Field(default=None, alias="templateId")
    compute_type: ComputeType = Field(default=ComputeType.GPU, alias="computeType")
    cloud_type: CloudType = Field(default=CloudType.SECURE, alias="cloudType")
    gpu_type_ids: list[GpuTypeId] | None = Field(default=None, alias="gpuTypeIds")
    gpu_type_priority: Priority = Field(default=Priority.AVAILABILITY, alias="gpuTypePriority")
    gpu_count: Annotated[StrictInt, Field(ge=1)] = Field(default=1, alias="gpuCount")
    allowed_cuda_versions: list[CudaVersion] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    cpu_flavor_ids: list[CpuFlavorId] | None = Field(default=None, alias="cpuFlavorIds")
    cpu_flavor_priority: Priority = Field(default=Priority.AVAILABILITY, alias="cpuFlavorPriority")
    vcpu_count: Annotated[StrictInt, Field(ge=1)] = Field(default=2, alias="vcpuCount")
    data_center_ids: list[DataCenterId] = Field(
        default_factory=lambda: list(ALL_DATA_CENTERS), alias="dataCenterIds"
    )
    data_center_priority: Priority = Field(
        default=Priority.AVAILABILITY, alias="dataCenterPriority"
    )
    country_codes: list[StrictStr] | None = Field(default=None, alias="countryCodes")
    min_ram_per_gpu: Annotated[StrictInt, Field(ge=0)] = Field(default=8, alias="minRAMPerGPU")
    min_vcpu_per_gpu: Annotated[StrictInt, Field(ge=0)] = Field(default=2, alias="minVCPUPerGPU")
    min_disk_bandwidth_mbps: Number | None = Field(default=None, alias="minDiskBandwidthMBps")
    min_download_mbps: Number | None = Field(default=None, alias="minDownloadMbps")
    min_upload_mbps: Number | None = Field(default=None, alias="minUploadMbps")
    support_public_ip: StrictBool | None = Field(default=None, alias="supportPublicIp")
    interruptible: StrictBool = False
    locked: StrictBool = False
    global_networking: StrictBool = Field(default=False, alias="globalNetworking")
    network_volume_id: StrictStr | None = Field(default=None, alias="networkVolumeId")
    container_registry_auth_id: StrictStr | None = Field(
        default=None, alias="containerRegistryAuthId"
    )
    container_disk_in_gb: DiskGb | None = Field(default=50, alias="containerDiskInGb")
    volume_in_gb: DiskGb | None = Field(default=20, alias="volumeInGb")
    volume_mount_path: AbsolutePath = Field(default="/workspace", alias="volumeMountPath")
    docker_entrypoint: list[StrictStr] = Field(default_factory=list, alias="dockerEntrypoint")
    docker_start_cmd: list[StrictStr] = Field(default_factory=list, alias="dockerStartCmd")
    env: Env = Field(default_factory=dict)
    ports: Ports = Field(default_factory=lambda: list(DEFAULT_PORTS))

    @model_validator(mode="after")
    def _has_an_image(self) -> PodCreateInput:
        if self.image_name is None and not self.template_id:
            raise ValueError(
                "imageName is required unless templateId names a template that gives the image"
            )
        return self


class PodUpdateInput(InputModel):
    """Body of ``PATCH /pods/{id}`` (and ``POST .../update``); changing the container resets it.

    ``name`` and ``locked`` change in place; any other field restarts the pod with the
    new settings, which a locked pod refuses.
    """

    nullable_fields = frozenset({"container_disk_in_gb", "volume_in_gb"})

    name: Name191 | None = None
    locked: StrictBool | None = None
    image_name: NonBlank | None = Field(default=None, alias="imageName")
    container_disk_in_gb: DiskGb | None = Field(default=None, alias="containerDiskInGb")
    container_registry_auth_id: StrictStr | None = Field(
        default=None, alias="containerRegistryAuthId"
    )
    docker_entrypoint: list[StrictStr] | None = Field(default=None, alias="dockerEntrypoint")
    docker_start_cmd: list[StrictStr] | None = Field(default=None, alias="dockerStartCmd")
    env: Env | None = None
    global_networking: StrictBool | None = Field(default=None, alias="globalNetworking")
    ports: Ports | None = None
    volume_in_gb: DiskGb | None = Field(default=None, alias="volumeInGb")
    volume_mount_path: AbsolutePath | None = Field(default=None, alias="volumeMountPath")


class PodUpdateInPlaceInput(InputModel):
    """The reference's update that needs no reset: rename, lock or unlock."""

    locked: StrictBool | None = None
    name: Name191 | None = None

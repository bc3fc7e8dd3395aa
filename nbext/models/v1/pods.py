"""Pods: rented containers with a GPU (or CPU) attached, and what they run on."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from .._base import Named, WireModel
from .._fields import (
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
from ..enums import CloudType, CpuFlavorId, CudaVersion, DataCenterId, GpuTypeId
from .enums import ComputeType, PodStatus, Priority
from .network_volumes import NetworkVolume

ALL_DATA_CENTERS: tuple[DataCenterId, ...] = tuple(DataCenterId)
"""The reference's default ``dataCenterIds``: every data centre, in its order."""


class GpuType(WireModel):
    """A GPU type and its prices per GPU-hour (``Pod.gpu``, ``Machine.gpuType``)."""

    id: str | None = None
    count: int | None = None
    display_name: str | None = None
    secure_price: float | None = None
    community_price: float | None = None
    one_month_price: float | None = None
    three_month_price: float | None = None
    six_month_price: float | None = None
    one_week_price: float | None = None
    community_spot_price: float | None = None
    secure_spot_price: float | None = None


class CpuType(WireModel):
    """The CPU model of a machine."""

    id: str | None = None
    display_name: str | None = None
    cores: float | None = None
    threads_per_core: float | None = None
    group_id: str | None = None


class Machine(WireModel):
    """The host a pod runs on (``includeMachine``)."""

    min_pod_gpu_count: int | None = None
    gpu_type_id: str | None = None
    gpu_type: GpuType | None = None
    cpu_count: int | None = None
    cpu_type_id: str | None = None
    cpu_type: CpuType | None = None
    location: str | None = None
    data_center_id: str | None = None
    disk_throughput_mbps: int | None = Field(default=None, alias="diskThroughputMBps")
    max_download_speed_mbps: int | None = None
    max_upload_speed_mbps: int | None = None
    support_public_ip: bool | None = None
    secure_cloud: bool | None = None
    maintenance_start: str | None = None
    maintenance_end: str | None = None
    maintenance_note: str | None = None
    note: str | None = None
    cost_per_hr: float | None = None
    current_price_per_gpu: float | None = None
    gpu_available: int | None = None
    gpu_display_name: str | None = None


class SavingsPlan(WireModel):
    """A prepaid discount applied to a pod (``includeSavingsPlans``)."""

    id: str | None = None
    cost_per_hr: float | None = None
    start_time: WireDatetime | None = None
    end_time: WireDatetime | None = None
    gpu_type_id: str | None = None
    pod_id: str | None = None


class DataCenter(WireModel):
    """A data centre, by id."""

    id: str | None = None


class Pod(Named):
    """A pod as the service returns it (also the shape of a serverless worker)."""

    image: str | None = None
    desired_status: Lenient[PodStatus] | None = None
    last_started_at: WireDatetime | None = None
    last_status_change: str | None = None
    cost_per_hr: float | None = None
    adjusted_cost_per_hr: float | None = None
    gpu: GpuType | None = None
    cpu_flavor_id: str | None = None
    vcpu_count: float | None = None
    memory_in_gb: float | None = None
    container_disk_in_gb: int | None = None
    volume_in_gb: int | None = None
    volume_mount_path: str | None = None
    volume_encrypted: bool | None = None
    container_registry_auth_id: str | None = None
    docker_entrypoint: list[str] | None = None
    docker_start_cmd: list[str] | None = None
    env: dict[str, str] | None = None
    ports: list[str] | None = None
    port_mappings: dict[str, int] | None = None
    public_ip: str | None = None
    interruptible: bool | None = None
    locked: bool | None = None
    machine_id: str | None = None
    machine: Machine | None = None
    network_volume: NetworkVolume | None = None
    savings_plans: list[SavingsPlan] | None = None
    template_id: str | None = None
    endpoint_id: str | None = None
    ai_api_id: str | None = None
    """Legacy synonym of ``endpoint_id``."""
    sls_version: int | None = None
    consumer_user_id: str | None = None


class PodCreateInput(InputModel):
    """Body of ``POST /pods``, with the reference's defaults; fields left out come from
    the ``templateId``'s template, if any. GPU fields apply to GPU pods, CPU ones to CPU."""

    nullable_fields = frozenset({"container_disk_in_gb", "volume_in_gb"})

    name: Name191 = "my pod"
    image_name: NonBlank | None = None
    template_id: StrictStr | None = None
    compute_type: ComputeType = ComputeType.GPU
    cloud_type: CloudType = CloudType.SECURE
    gpu_type_ids: list[GpuTypeId] | None = None
    gpu_type_priority: Priority = Priority.AVAILABILITY
    gpu_count: Annotated[StrictInt, Field(ge=1)] = 1
    allowed_cuda_versions: list[CudaVersion] | None = None
    cpu_flavor_ids: list[CpuFlavorId] | None = None
    cpu_flavor_priority: Priority = Priority.AVAILABILITY
    vcpu_count: Annotated[StrictInt, Field(ge=1)] = 2
    data_center_ids: list[DataCenterId] = Field(default_factory=lambda: list(ALL_DATA_CENTERS))
    data_center_priority: Priority = Priority.AVAILABILITY
    country_codes: list[StrictStr] | None = None
    min_ram_per_gpu: Annotated[StrictInt, Field(ge=0)] = Field(default=8, alias="minRAMPerGPU")
    min_vcpu_per_gpu: Annotated[StrictInt, Field(ge=0)] = Field(default=2, alias="minVCPUPerGPU")
    min_disk_bandwidth_mbps: Number | None = Field(default=None, alias="minDiskBandwidthMBps")
    min_download_mbps: Number | None = None
    min_upload_mbps: Number | None = None
    support_public_ip: StrictBool | None = None
    interruptible: StrictBool = False
    locked: StrictBool = False
    global_networking: StrictBool = False
    network_volume_id: StrictStr | None = None
    container_registry_auth_id: StrictStr | None = None
    container_disk_in_gb: DiskGb | None = 50
    volume_in_gb: DiskGb | None = 20
    volume_mount_path: AbsolutePath = "/workspace"
    docker_entrypoint: list[StrictStr] = Field(default_factory=list)
    docker_start_cmd: list[StrictStr] = Field(default_factory=list)
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
    """Body of ``PATCH /pods/{id}`` (and ``POST .../update``): ``name`` and ``locked``
    change in place; any other field restarts the pod, which a locked pod refuses."""

    nullable_fields = frozenset({"container_disk_in_gb", "volume_in_gb"})

    name: Name191 | None = None
    locked: StrictBool | None = None
    image_name: NonBlank | None = None
    container_disk_in_gb: DiskGb | None = None
    container_registry_auth_id: StrictStr | None = None
    docker_entrypoint: list[StrictStr] | None = None
    docker_start_cmd: list[StrictStr] | None = None
    env: Env | None = None
    global_networking: StrictBool | None = None
    ports: Ports | None = None
    volume_in_gb: DiskGb | None = None
    volume_mount_path: AbsolutePath | None = None

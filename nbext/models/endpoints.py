"""Serverless endpoint records: which template the workers run, on what, how many.

An endpoint's jobs are the job interface's business (``jobs.py``); these are the
management records that create, scale and delete it. Scaling changes (``workersMin``,
``workersMax``, ``idleTimeout``, ``executionTimeoutMs``) take effect on the live endpoint.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, model_validator

from ._base import WireModel
from ._fields import InputModel, Lenient, Name191, NonBlank, WireDatetime, check_min_max
from .enums import (
    SERVERLESS_CPU_FLAVORS,
    ComputeType,
    CpuFlavorId,
    CudaVersion,
    DataCenterId,
    GpuTypeId,
    ScalerType,
)
from .jobs import EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS
from .pods import ALL_DATA_CENTERS, Pod
from .templates import Template

IDLE_TIMEOUT_MIN_S = 1
IDLE_TIMEOUT_MAX_S = 3600
WORKERS_MIN_DEFAULT = 0
WORKERS_MAX_DEFAULT = 3
"""The reference gives no default worker counts; these are the service console's."""


def _serverless_flavor(value: CpuFlavorId) -> CpuFlavorId:
    if value not in SERVERLESS_CPU_FLAVORS:
        offered = ", ".join(sorted(SERVERLESS_CPU_FLAVORS))
        raise ValueError(f"{value.value} is not offered for serverless endpoints; use {offered}")
    return value


ServerlessCpuFlavor = Annotated[CpuFlavorId, AfterValidator(_serverless_flavor)]
IdleTimeout = Annotated[StrictInt, Field(ge=IDLE_TIMEOUT_MIN_S, le=IDLE_TIMEOUT_MAX_S)]
WorkerCount = Annotated[StrictInt, Field(ge=0)]
ExecutionTimeout = Annotated[
    StrictInt, Field(ge=EXECUTION_TIMEOUT_MIN_MS, le=EXECUTION_TIMEOUT_MAX_MS)
]
"""The reference sets no bound; the job interface's per-job range applies (5 s to 7 days)."""
PositiveInt = Annotated[StrictInt, Field(ge=1)]


class Endpoint(WireModel):
    """An endpoint as the service returns it; ``template`` and ``workers`` on request."""

    id: str | None = None
    name: str | None = None
    template_id: str | None = Field(default=None, alias="templateId")
    template: Template | None = None
    compute_type: Lenient[ComputeType] | None = Field(default=None, alias="computeType")
    gpu_type_ids: list[Lenient[GpuTypeId]] | None = Field(default=None, alias="gpuTypeIds")
    gpu_count: int | None = Field(default=None, alias="gpuCount")
    instance_ids: list[str] | None = Field(default=None, alias="instanceIds")
    allowed_cuda_versions: list[Lenient[CudaVersion]] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    min_cuda_version: Lenient[CudaVersion] | None = Field(default=None, alias="minCudaVersion")
    data_center_ids: list[Lenient[DataCenterId]] | None = Field(default=None, alias="dataCenterIds")
    workers_min: int | None = Field(default=None, alias="workersMin")
    workers_max: int | None = Field(default=None, alias="workersMax")
    idle_timeout: int | None = Field(default=None, alias="idleTimeout")
    execution_timeout_ms: int | None = Field(default=None, alias="executionTimeoutMs")
    scaler_type: Lenient[ScalerType] | None = Field(default=None, alias="scalerType")
    scaler_value: int | None = Field(default=None, alias="scalerValue")
    network_volume_id: str | None = Field(default=None, alias="networkVolumeId")
    network_volume_ids: list[str] | None = Field(default=None, alias="networkVolumeIds")
    env: dict[str, str] | None = None
    version: int | None = None
    created_at: WireDatetime | None = Field(default=None, alias="createdAt")
    user_id: str | None = Field(default=None, alias="userId")
    workers: list[Pod] | None = None


class EndpointCreateInput(InputModel):
    """Body of ``POST /endpoints``: ``templateId`` (a serverless template) is required."""

    template_id: NonBlank = Field(alias="templateId")
    name: Name191 | None = None
    compute_type: ComputeType = Field(default=ComputeType.GPU, alias="computeType")
    gpu_type_ids: list[GpuTypeId] | None = Field(default=None, alias="gpuTypeIds")
    gpu_count: PositiveInt = Field(default=1, alias="gpuCount")
    cpu_flavor_ids: list[ServerlessCpuFlavor] | None = Field(default=None, alias="cpuFlavorIds")
    vcpu_count: PositiveInt = Field(default=2, alias="vcpuCount")
    allowed_cuda_versions: list[CudaVersion] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    min_cuda_version: CudaVersion | None = Field(default=None, alias="minCudaVersion")
    data_center_ids: list[DataCenterId] = Field(
        default_factory=lambda: list(ALL_DATA_CENTERS), alias="dataCenterIds"
    )
    workers_min: WorkerCount = Field(default=WORKERS_MIN_DEFAULT, alias="workersMin")
    workers_max: WorkerCount = Field(default=WORKERS_MAX_DEFAULT, alias="workersMax")
    idle_timeout: IdleTimeout = Field(default=5, alias="idleTimeout")
    execution_timeout_ms: ExecutionTimeout | None = Field(default=None, alias="executionTimeoutMs")
    scaler_type: ScalerType = Field(default=ScalerType.QUEUE_DELAY, alias="scalerType")
    scaler_value: PositiveInt = Field(default=4, alias="scalerValue")
    flashboot: StrictBool | None = None
    network_volume_id: StrictStr | None = Field(default=None, alias="networkVolumeId")
    network_volume_ids: list[StrictStr] | None = Field(default=None, alias="networkVolumeIds")

    @model_validator(mode="after")
    def _workers_in_order(self) -> EndpointCreateInput:
        check_min_max(self.workers_min, self.workers_max, "workersMin", "workersMax")
        return self


class EndpointUpdateInput(InputModel):
    """Body of ``PATCH /endpoints/{id}`` (and ``POST .../update``): only what is given changes.

    A new ``templateId`` rolls the workers over to that template's image; scaling
    settings apply to the running endpoint at once.
    """

    template_id: NonBlank | None = Field(default=None, alias="templateId")
    name: Name191 | None = None
    gpu_type_ids: list[GpuTypeId] | None = Field(default=None, alias="gpuTypeIds")
    gpu_count: PositiveInt | None = Field(default=None, alias="gpuCount")
    cpu_flavor_ids: list[ServerlessCpuFlavor] | None = Field(default=None, alias="cpuFlavorIds")
    vcpu_count: PositiveInt | None = Field(default=None, alias="vcpuCount")
    allowed_cuda_versions: list[CudaVersion] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    min_cuda_version: CudaVersion | None = Field(default=None, alias="minCudaVersion")
    data_center_ids: list[DataCenterId] | None = Field(default=None, alias="dataCenterIds")
    workers_min: WorkerCount | None = Field(default=None, alias="workersMin")
    workers_max: WorkerCount | None = Field(default=None, alias="workersMax")
    idle_timeout: IdleTimeout | None = Field(default=None, alias="idleTimeout")
    execution_timeout_ms: ExecutionTimeout | None = Field(default=None, alias="executionTimeoutMs")
    scaler_type: ScalerType | None = Field(default=None, alias="scalerType")
    scaler_value: PositiveInt | None = Field(default=None, alias="scalerValue")
    flashboot: StrictBool | None = None
    network_volume_id: StrictStr | None = Field(default=None, alias="networkVolumeId")
    network_volume_ids: list[StrictStr] | None = Field(default=None, alias="networkVolumeIds")

    @model_validator(mode="after")
    def _workers_in_order(self) -> EndpointUpdateInput:
        check_min_max(self.workers_min, self.workers_max, "workersMin", "workersMax")
        return self


class EndpointUpdateInPlaceInput(InputModel):
    """The reference's update that needs no rollout: name and scaling settings."""

    name: Name191 | None = None
    workers_min: WorkerCount | None = Field(default=None, alias="workersMin")
    workers_max: WorkerCount | None = Field(default=None, alias="workersMax")
    idle_timeout: IdleTimeout | None = Field(default=None, alias="idleTimeout")
    execution_timeout_ms: ExecutionTimeout | None = Field(default=None, alias="executionTimeoutMs")
    scaler_type: ScalerType | None = Field(default=None, alias="scalerType")
    scaler_value: PositiveInt | None = Field(default=None, alias="scalerValue")
    flashboot: StrictBool | None = None

    @model_validator(mode="after")
    def _workers_in_order(self) -> EndpointUpdateInPlaceInput:
        check_min_max(self.workers_min, self.workers_max, "workersMin", "workersMax")
        return self

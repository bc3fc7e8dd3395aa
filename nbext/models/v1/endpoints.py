"""Serverless endpoint records: which template the workers run, on what, how many."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, StrictBool, StrictInt, StrictStr, model_validator

from .._base import Named
from .._fields import InputModel, Lenient, Name191, NonBlank, WireDatetime, check_min_max
from ..enums import CpuFlavorId, CudaVersion, DataCenterId, GpuTypeId
from ..jobs import EXECUTION_TIMEOUT_MAX_MS, EXECUTION_TIMEOUT_MIN_MS
from .enums import SERVERLESS_CPU_FLAVORS, ComputeType, ScalerType
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


class Endpoint(Named):
    """An endpoint as the service returns it; ``template`` and ``workers`` on request."""

    template_id: str | None = None
    template: Template | None = None
    compute_type: Lenient[ComputeType] | None = None
    gpu_type_ids: list[Lenient[GpuTypeId]] | None = None
    gpu_count: int | None = None
    instance_ids: list[str] | None = None
    allowed_cuda_versions: list[Lenient[CudaVersion]] | None = None
    min_cuda_version: Lenient[CudaVersion] | None = None
    data_center_ids: list[Lenient[DataCenterId]] | None = None
    workers_min: int | None = None
    workers_max: int | None = None
    idle_timeout: int | None = None
    execution_timeout_ms: int | None = None
    scaler_type: Lenient[ScalerType] | None = None
    scaler_value: int | None = None
    network_volume_id: str | None = None
    network_volume_ids: list[str] | None = None
    env: dict[str, str] | None = None
    version: int | None = None
    created_at: WireDatetime | None = None
    user_id: str | None = None
    workers: list[Pod] | None = None


class EndpointCreateInput(InputModel):
    """Body of ``POST /endpoints``: ``templateId`` (a serverless template) is required."""

    template_id: NonBlank
    name: Name191 | None = None
    compute_type: ComputeType = ComputeType.GPU
    gpu_type_ids: list[GpuTypeId] | None = None
    gpu_count: PositiveInt = 1
    cpu_flavor_ids: list[ServerlessCpuFlavor] | None = None
    vcpu_count: PositiveInt = 2
    allowed_cuda_versions: list[CudaVersion] | None = None
    min_cuda_version: CudaVersion | None = None
    data_center_ids: list[DataCenterId] = Field(default_factory=lambda: list(ALL_DATA_CENTERS))
    workers_min: WorkerCount = WORKERS_MIN_DEFAULT
    workers_max: WorkerCount = WORKERS_MAX_DEFAULT
    idle_timeout: IdleTimeout = 5
    execution_timeout_ms: ExecutionTimeout | None = None
    scaler_type: ScalerType = ScalerType.QUEUE_DELAY
    scaler_value: PositiveInt = 4
    flashboot: StrictBool | None = None
    network_volume_id: StrictStr | None = None
    network_volume_ids: list[StrictStr] | None = None

    @model_validator(mode="after")
    def _workers_in_order(self) -> EndpointCreateInput:
        check_min_max(self.workers_min, self.workers_max, "workersMin", "workersMax")
        return self


class EndpointUpdateInput(InputModel):
    """Body of ``PATCH /endpoints/{id}`` (and ``POST .../update``): only what is given
    changes; a new ``templateId`` rolls the workers over to that template's image."""

    template_id: NonBlank | None = None
    name: Name191 | None = None
    gpu_type_ids: list[GpuTypeId] | None = None
    gpu_count: PositiveInt | None = None
    cpu_flavor_ids: list[ServerlessCpuFlavor] | None = None
    vcpu_count: PositiveInt | None = None
    allowed_cuda_versions: list[CudaVersion] | None = None
    min_cuda_version: CudaVersion | None = None
    data_center_ids: list[DataCenterId] | None = None
    workers_min: WorkerCount | None = None
    workers_max: WorkerCount | None = None
    idle_timeout: IdleTimeout | None = None
    execution_timeout_ms: ExecutionTimeout | None = None
    scaler_type: ScalerType | None = None
    scaler_value: PositiveInt | None = None
    flashboot: StrictBool | None = None
    network_volume_id: StrictStr | None = None
    network_volume_ids: list[StrictStr] | None = None

    @model_validator(mode="after")
    def _workers_in_order(self) -> EndpointUpdateInput:
        check_min_max(self.workers_min, self.workers_max, "workersMin", "workersMax")
        return self

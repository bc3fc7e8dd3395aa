"""A v2 endpoint body's fields and the rules of their values, in v2's own names, so a
refusal names the field as the caller wrote it (docs/architecture.md#management-areas)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, StrictInt, StrictStr, model_validator

from nbext.models import CudaVersion, DataCenterId
from nbext.models._fields import InputModel, Name191, NonBlank, check_min_max
from nbext.models.v1.endpoints import (
    ExecutionTimeout,
    IdleTimeout,
    PositiveInt,
    ServerlessCpuFlavor,
    WorkerCount,
)


def _cleared(value: object) -> object:
    return None if value == "" else value


CudaFloor = Annotated[CudaVersion | None, BeforeValidator(_cleared)]
"""A PATCH's ``gpu.minCudaVersion``: a known version, or ``""`` to clear the floor."""


class UpdateEndpointGpu(InputModel):
    """``gpu`` of a PATCH: what is left out is not changed; ``""`` clears the CUDA floor."""

    pools: list[StrictStr] | None = None
    excluded_types: list[StrictStr] | None = Field(default=None, alias="excludedTypes")
    count: PositiveInt | None = None
    allowed_cuda_versions: list[CudaVersion] | None = Field(
        default=None, alias="allowedCudaVersions"
    )
    min_cuda_version: CudaFloor = Field(default=None, alias="minCudaVersion")


class CreateEndpointGpu(UpdateEndpointGpu):
    """``gpu`` of a create: the pools are the selection, so they must be given."""

    pools: list[StrictStr]


class EndpointCpu(InputModel):
    """One eligible CPU configuration: a flavor serverless offers, at a vCPU count."""

    id: ServerlessCpuFlavor
    vcpu_count: StrictInt = Field(ge=2, alias="vcpuCount")


class EndpointWorkers(InputModel):
    min: WorkerCount | None = None
    max: WorkerCount | None = None
    idle_timeout: IdleTimeout | None = Field(default=None, alias="idleTimeout")


class EndpointScaling(InputModel):
    type: Literal["QUEUE_DELAY", "REQUEST_COUNT"]
    queue_delay: float | None = Field(default=None, ge=0.5, alias="queueDelay")
    request_count: PositiveInt | None = Field(default=None, alias="requestCount")


class UpdateEndpointRequest(InputModel):
    """A v2 PATCH body: only what is given changes."""

    name: Name191 | None = None
    template_id: NonBlank | None = Field(default=None, alias="templateId")
    gpu: UpdateEndpointGpu | None = None
    cpu: list[EndpointCpu] | None = None
    workers: EndpointWorkers | None = None
    scaling: EndpointScaling | None = None
    timeout: ExecutionTimeout | None = None
    data_center_ids: list[DataCenterId] | None = Field(default=None, alias="dataCenterIds")
    network_volumes: list[StrictStr] | None = Field(default=None, alias="networkVolumes")
    flashboot: Literal["OFF", "FLASHBOOT", "PRIORITY_FLASHBOOT"] | None = None

    @model_validator(mode="after")
    def _workers_in_order(self) -> UpdateEndpointRequest:
        if self.workers is not None:
            check_min_max(self.workers.min, self.workers.max, "workers.min", "workers.max")
        return self


class CreateEndpointRequest(UpdateEndpointRequest):
    """A v2 create body: a name, the routing type and the scaling are required."""

    name: Name191
    type: Literal["QUEUE", "LOAD_BALANCER"]
    gpu: CreateEndpointGpu | None = None
    scaling: EndpointScaling

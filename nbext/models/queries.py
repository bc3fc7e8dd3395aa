"""Query parameters of the listing and get operations: filters and include flags.

Include flags add nested records to what is returned (the pod's machine, the endpoint's
template, ...) or widen a listing (serverless workers among pods, official templates).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ._fields import QueryModel
from .enums import ComputeType, PodStatus

Str191 = Annotated[str, Field(max_length=191)]


class PodIncludes(QueryModel):
    """Include flags of ``GET /pods`` and ``GET /pods/{id}``."""

    include_machine: bool = Field(default=False, alias="includeMachine")
    include_network_volume: bool = Field(default=False, alias="includeNetworkVolume")
    include_savings_plans: bool = Field(default=False, alias="includeSavingsPlans")
    include_template: bool = Field(default=False, alias="includeTemplate")
    include_workers: bool = Field(default=False, alias="includeWorkers")
    """Also list (or find) pods that are serverless workers of an endpoint."""


class PodListQuery(PodIncludes):
    """Filters of ``GET /pods``; list filters match any of their values."""

    compute_type: ComputeType | None = Field(default=None, alias="computeType")
    cpu_flavor_id: list[str] | None = Field(default=None, alias="cpuFlavorId")
    data_center_id: list[str] | None = Field(default=None, alias="dataCenterId")
    desired_status: PodStatus | None = Field(default=None, alias="desiredStatus")
    endpoint_id: Str191 | None = Field(default=None, alias="endpointId")
    gpu_type_id: list[str] | None = Field(default=None, alias="gpuTypeId")
    id: str | None = None
    image_name: str | None = Field(default=None, alias="imageName")
    name: Str191 | None = None
    network_volume_id: str | None = Field(default=None, alias="networkVolumeId")
    template_id: str | None = Field(default=None, alias="templateId")


class EndpointIncludes(QueryModel):
    """Include flags of ``GET /endpoints`` and ``GET /endpoints/{id}``."""

    include_template: bool = Field(default=False, alias="includeTemplate")
    include_workers: bool = Field(default=False, alias="includeWorkers")


class TemplateIncludes(QueryModel):
    """Include flags of ``GET /templates`` (and ``GET /templates/{id}``).

    By default a listing has the account's own templates not bound to an endpoint.
    """

    include_endpoint_bound_templates: bool = Field(
        default=False, alias="includeEndpointBoundTemplates"
    )
    include_public_templates: bool = Field(default=False, alias="includePublicTemplates")
    include_runpod_templates: bool = Field(default=False, alias="includeRunpodTemplates")
    """Include the operator's official templates."""

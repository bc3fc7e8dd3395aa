"""Query parameters of the listing and get operations: filters, and include flags that add
nested records (the pod's machine, ...) or widen a listing (official templates, ...)."""

from __future__ import annotations

from .._fields import Name191, QueryModel
from .enums import ComputeType, PodStatus


class PodIncludes(QueryModel):
    """Include flags of ``GET /pods`` and ``GET /pods/{id}``."""

    include_machine: bool = False
    include_network_volume: bool = False
    include_savings_plans: bool = False
    include_template: bool = False
    include_workers: bool = False
    """Also list (or find) pods that are serverless workers of an endpoint."""


class PodListQuery(PodIncludes):
    """Filters of ``GET /pods``; list filters match any of their values."""

    compute_type: ComputeType | None = None
    cpu_flavor_id: list[str] | None = None
    data_center_id: list[str] | None = None
    desired_status: PodStatus | None = None
    endpoint_id: Name191 | None = None
    gpu_type_id: list[str] | None = None
    id: str | None = None
    image_name: str | None = None
    name: Name191 | None = None
    network_volume_id: str | None = None
    template_id: str | None = None


class EndpointIncludes(QueryModel):
    """Include flags of ``GET /endpoints`` and ``GET /endpoints/{id}``."""

    include_template: bool = False
    include_workers: bool = False


class TemplateIncludes(QueryModel):
    """Include flags of ``GET /templates``: by default the account's own templates not
    bound to an endpoint."""

    include_endpoint_bound_templates: bool = False
    include_public_templates: bool = False
    include_runpod_templates: bool = False
    """Include the operator's official templates."""

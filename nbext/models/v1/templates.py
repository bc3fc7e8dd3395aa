"""Templates: the container a pod or a serverless worker runs, and how to start it.

``TemplateCreateInput`` carries the service's defaults (docs/behaviour.md#templates).
"""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictStr

from .._base import Named
from .._fields import DEFAULT_PORTS, AbsolutePath, DiskGb, Env, InputModel, Lenient, NonBlank, Ports
from ..enums import TemplateCategory


class Template(Named):
    """A template as the service returns it; the reference marks no field required."""

    image_name: str | None = None
    category: Lenient[TemplateCategory] | None = None
    container_disk_in_gb: int | None = None
    volume_in_gb: int | None = None
    volume_mount_path: str | None = None
    container_registry_auth_id: str | None = None
    docker_entrypoint: list[str] | None = None
    docker_start_cmd: list[str] | None = None
    env: dict[str, str] | None = None
    ports: list[str] | None = None
    readme: str | None = None
    is_public: bool | None = None
    is_serverless: bool | None = None
    is_runpod: bool | None = None
    """True for the operator's official templates (the field is named after the operator)."""
    earned: float | None = None
    runtime_in_min: int | None = None


class TemplateCreateInput(InputModel):
    """Body of ``POST /templates``: a unique ``name`` and ``imageName`` required."""

    name: NonBlank
    image_name: NonBlank
    category: TemplateCategory = TemplateCategory.NVIDIA
    container_disk_in_gb: DiskGb = 50
    container_registry_auth_id: StrictStr | None = None
    docker_entrypoint: list[StrictStr] = Field(default_factory=list)
    docker_start_cmd: list[StrictStr] = Field(default_factory=list)
    env: Env = Field(default_factory=dict)
    is_public: StrictBool = False
    is_serverless: StrictBool = False
    ports: Ports = Field(default_factory=lambda: list(DEFAULT_PORTS))
    readme: StrictStr = ""
    volume_in_gb: DiskGb = 20
    volume_mount_path: AbsolutePath = "/workspace"


class TemplateUpdateInput(InputModel):
    """Body of ``PATCH /templates/{id}`` (and ``POST .../update``): the change rolls out
    to bound endpoints' workers; ``category`` and ``isServerless`` are fixed at creation."""

    name: NonBlank | None = None
    image_name: NonBlank | None = None
    container_disk_in_gb: DiskGb | None = None
    container_registry_auth_id: StrictStr | None = None
    docker_entrypoint: list[StrictStr] | None = None
    docker_start_cmd: list[StrictStr] | None = None
    env: Env | None = None
    is_public: StrictBool | None = None
    ports: Ports | None = None
    readme: StrictStr | None = None
    volume_in_gb: DiskGb | None = None
    volume_mount_path: AbsolutePath | None = None

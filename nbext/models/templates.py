"""Templates: the container a pod or a serverless worker runs, and how to start it.

``TemplateCreateInput`` carries the service's defaults exactly (NVIDIA, 50 GB container
disk, 20 GB volume at ``/workspace``, ports 8888/http and 22/tcp, empty entrypoint,
command, env and readme, private, pod: docs/behaviour.md#templates). Updates change only
the fields they name.
"""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictStr

from ._base import WireModel
from ._fields import (
    DEFAULT_PORTS,
    AbsolutePath,
    DiskGb,
    Env,
    InputModel,
    Lenient,
    NonBlank,
    Ports,
)
from .enums import TemplateCategory


class Template(WireModel):
    """A template as the service returns it; the reference marks no field required."""

    id: str | None = None
    name: str | None = None
    image_name: str | None = Field(default=None, alias="imageName")
    category: Lenient[TemplateCategory] | None = None
    container_disk_in_gb: int | None = Field(default=None, alias="containerDiskInGb")
    volume_in_gb: int | None = Field(default=None, alias="volumeInGb")
    volume_mount_path: str | None = Field(default=None, alias="volumeMountPath")
    container_registry_auth_id: str | None = Field(default=None, alias="containerRegistryAuthId")
    docker_entrypoint: list[str] | None = Field(default=None, alias="dockerEntrypoint")
    docker_start_cmd: list[str] | None = Field(default=None, alias="dockerStartCmd")
    env: dict[str, str] | None = None
    ports: list[str] | None = None
    readme: str | None = None
    is_public: bool | None = Field(default=None, alias="isPublic")
    is_serverless: bool | None = Field(default=None, alias="isServerless")
    is_runpod: bool | None = Field(default=None, alias="isRunpod")
    """True for the operator's official templates (the field is named after the operator)."""
    earned: float | None = None
    runtime_in_min: int | None = Field(default=None, alias="runtimeInMin")


class TemplateCreateInput(InputModel):
    """Body of ``POST /templates``: ``name`` and ``imageName`` required, the rest defaulted.

    The name must be unique among the account's templates (the service checks that) and
    ``containerRegistryAuthId`` must name an existing registry auth.
    """

    name: NonBlank
    image_name: NonBlank = Field(alias="imageName")
    category: TemplateCategory = TemplateCategory.NVIDIA
    container_disk_in_gb: DiskGb = Field(default=50, alias="containerDiskInGb")
    container_registry_auth_id: StrictStr | None = Field(
        default=None, alias="containerRegistryAuthId"
    )
    docker_entrypoint: list[StrictStr] = Field(default_factory=list, alias="dockerEntrypoint")
    docker_start_cmd: list[StrictStr] = Field(default_factory=list, alias="dockerStartCmd")
    env: Env = Field(default_factory=dict)
    is_public: StrictBool = Field(default=False, alias="isPublic")
    is_serverless: StrictBool = Field(default=False, alias="isServerless")
    ports: Ports = Field(default_factory=lambda: list(DEFAULT_PORTS))
    readme: StrictStr = ""
    volume_in_gb: DiskGb = Field(default=20, alias="volumeInGb")
    volume_mount_path: AbsolutePath = Field(default="/workspace", alias="volumeMountPath")


class TemplateUpdateInput(InputModel):
    """Body of ``PATCH /templates/{id}`` (and its ``POST .../update`` synonym).

    Only the fields given change; for a template bound to endpoints, the change rolls out
    to their workers. ``category`` and ``isServerless`` are fixed at creation.
    """

    name: NonBlank | None = None
    image_name: NonBlank | None = Field(default=None, alias="imageName")
    container_disk_in_gb: DiskGb | None = Field(default=None, alias="containerDiskInGb")
    container_registry_auth_id: StrictStr | None = Field(
        default=None, alias="containerRegistryAuthId"
    )
    docker_entrypoint: list[StrictStr] | None = Field(default=None, alias="dockerEntrypoint")
    docker_start_cmd: list[StrictStr] | None = Field(default=None, alias="dockerStartCmd")
    env: Env | None = None
    is_public: StrictBool | None = Field(default=None, alias="isPublic")
    ports: Ports | None = None
    readme: StrictStr | None = None
    volume_in_gb: DiskGb | None = Field(default=None, alias="volumeInGb")
    volume_mount_path: AbsolutePath | None = Field(default=None, alias="volumeMountPath")


class TemplateUpdateInPlaceInput(InputModel):
    """The reference's update that needs no rollout: name, visibility, readme, volume."""

    is_public: StrictBool | None = Field(default=None, alias="isPublic")
    name: NonBlank | None = None
    readme: StrictStr | None = None
    volume_in_gb: DiskGb | None = Field(default=None, alias="volumeInGb")
    volume_mount_path: AbsolutePath | None = Field(default=None, alias="volumeMountPath")

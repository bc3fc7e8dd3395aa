"""Network volumes: disks in one data centre that pods and endpoints attach.

A size only grows (a file system cannot shrink in place): the model checks the range,
the service the direction.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from .._base import Named
from .._fields import InputModel, NonBlank
from ..enums import DataCenterId

VOLUME_SIZE_MAX_GB = 4000

VolumeSize = Annotated[StrictInt, Field(ge=0, le=VOLUME_SIZE_MAX_GB)]


class NetworkVolume(Named):
    """A network volume as the service returns it."""

    size: int | None = None
    data_center_id: str | None = None


class NetworkVolumeCreateInput(InputModel):
    """Body of ``POST /networkvolumes``: a name, a size in GB (0-4000), a data centre."""

    name: NonBlank
    size: VolumeSize
    data_center_id: DataCenterId


class NetworkVolumeUpdateInput(InputModel):
    """Body of ``PATCH /networkvolumes/{id}`` (and ``POST .../update``): rename or grow."""

    name: NonBlank | None = None
    size: VolumeSize | None = None

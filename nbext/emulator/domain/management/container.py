"""REST v2's container settings and compute choice: the rules templates, pods and
endpoints share, refused in the domain's terms (a 422 under ``/v2``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nbext.models.v2 import convert

from .refusals import Unprocessable, refuse


@dataclass
class Container:
    """What a template and a pod both hold in v2's shape: an image, how to start it, and
    its disks. One definition, so the two records store these fields alike."""

    id: str
    name: str
    image: str
    args: str = ""
    """As v2 shows it: the start command, split and joined the way a shell would."""
    env: dict[str, str] = field(default_factory=dict)
    ports: list[str] = field(default_factory=list)
    registry: str | None = None
    disk: int = 50
    volume_size: int = 0
    """The local volume; v2 shows it (``mounts.persistent``) only from 10 GB (and, for a
    pod, only without a network volume)."""
    volume_path: str = "/workspace"


def split_args(args: str) -> list[str]:
    try:
        return convert.split_args(args)
    except ValueError as exc:
        raise Unprocessable(str(exc), [str(exc)]) from None


def check_compute(data: dict[str, Any], what: str, *, required: bool) -> None:
    """The reference's rules in words: one of ``gpu`` and ``cpu`` (at most one unless
    ``required``), and ``gpu.minCudaVersion`` only without ``allowedCudaVersions``."""
    gpu, cpu = data.get("gpu"), data.get("cpu")
    if gpu is not None and cpu is not None:
        raise refuse("gpu", f"{what} takes gpu (GPUs) or cpu (CPUs only), not both")
    if required and gpu is None and cpu is None:
        raise refuse("gpu", f"{what} needs gpu (GPUs) or cpu (CPUs only)")
    if gpu is not None and gpu.get("minCudaVersion") and gpu.get("allowedCudaVersions"):
        raise refuse(
            "gpu.minCudaVersion", "give minCudaVersion or a non-empty allowedCudaVersions, not both"
        )

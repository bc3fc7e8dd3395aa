"""v2's container settings (``image``, ``args``, ``disk``, ``env``, ``ports``, ``registry``,
``mounts``) and v1's flat fields for the same things, in both directions.

v1 keeps a start command as a list and a volume as two fields; v2 writes ``args`` as one
string (split and joined the way a shell would) and a volume as ``mounts.persistent``.
``V1_NAMES`` turns a refusal by v1's rules back into v2's field names.
"""

from __future__ import annotations

import shlex
from typing import Any

from .contract import Unprocessable, refuse

V1_NAMES = {
    "imageName": "image",
    "dockerStartCmd": "args",
    "containerDiskInGb": "disk",
    "containerRegistryAuthId": "registry",
    "volumeInGb": "mounts.persistent.size",
    "volumeMountPath": "mounts.persistent.path",
    "isPublic": "public",
    "isServerless": "serverless",
    "templateId": "templateId",
    "networkVolumeId": "mounts.network",
    "gpuTypeIds": "gpu.id",
    "gpuCount": "gpu.count",
    "cpuFlavorIds": "cpu.id",
    "vcpuCount": "cpu.vcpuCount",
    "allowedCudaVersions": "gpu.allowedCudaVersions",
    "minCudaVersion": "gpu.minCudaVersion",
    "dataCenterIds": "dataCenterIds",
    "cloudType": "cloud",
    "dataCenterId": "dataCenter",
    "workersMin": "workers.min",
    "workersMax": "workers.max",
    "idleTimeout": "workers.idleTimeout",
    "executionTimeoutMs": "timeout",
    "scalerValue": "scaling",
}
"""v1 wire name -> v2 field path, for naming a refused field the way the request did."""


def split_args(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise Unprocessable(f"args: {exc}", [f"args: {exc}"]) from None


def to_v1(body: dict[str, Any], *, defaults: bool) -> dict[str, Any]:
    """v1's fields for the container settings ``body`` gives (all of them if ``defaults``)."""
    out: dict[str, Any] = {}
    if "image" in body:
        out["imageName"] = body["image"]
    if "args" in body:
        out["dockerStartCmd"] = split_args(body["args"])
    if "disk" in body:
        out["containerDiskInGb"] = body["disk"]
    if "env" in body:
        out["env"] = body["env"]
    if "ports" in body:
        out["ports"] = body["ports"]
    elif defaults:
        out["ports"] = []
    if "registry" in body:
        out["containerRegistryAuthId"] = body["registry"]
    mounts = body.get("mounts")
    if mounts is not None or defaults:
        persistent = (mounts or {}).get("persistent")
        out["volumeInGb"] = persistent["size"] if persistent else 0
        if persistent:
            out["volumeMountPath"] = persistent["path"]
    return out


def to_v2(
    image: str | None,
    start_cmd: list[str] | None,
    disk: int | None,
    env: dict[str, str] | None,
    ports: list[str] | None,
    registry: str | None,
) -> dict[str, Any]:
    view: dict[str, Any] = {
        "image": image or "",
        "args": shlex.join(start_cmd or []),
        "env": dict(env or {}),
        "ports": list(ports or []),
        "registry": registry,
    }
    if disk:
        view["disk"] = disk
    return view


def persistent(size: int | None, path: str | None) -> dict[str, Any]:
    """``mounts`` with the local volume, or {} when there is none (or v2 cannot show it)."""
    if size and size >= 10:
        return {"persistent": {"size": size, "path": path or "/workspace"}}
    return {}


def check_compute(data: dict[str, Any], what: str, *, required: bool) -> None:
    """The reference's rules in words: exactly one of ``gpu`` and ``cpu`` (at most one if not
    ``required``), and ``gpu.minCudaVersion`` only beside an empty ``allowedCudaVersions``.

    ``what`` names the workload: "a pod", "an endpoint".
    """
    gpu, cpu = data.get("gpu"), data.get("cpu")
    if gpu is not None and cpu is not None:
        raise refuse("gpu", f"{what} takes gpu (GPUs) or cpu (CPUs only), not both")
    if required and gpu is None and cpu is None:
        raise refuse("gpu", f"{what} needs gpu (GPUs) or cpu (CPUs only)")
    if gpu is not None and gpu.get("minCudaVersion") and gpu.get("allowedCudaVersions"):
        raise refuse(
            "gpu.minCudaVersion", "give minCudaVersion or a non-empty allowedCudaVersions, not both"
        )

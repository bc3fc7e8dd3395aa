"""A container's settings in v1's flat fields and in v2's, both directions: pure functions
the emulator (serving v2 from v1's records) and the client (speaking v2 for callers who
use v1's names) share, so the two cannot disagree on a field.

v1 keeps a start command as a list and a volume as two fields; v2 writes ``args`` as one
string (split and joined the way a shell would) and a volume as ``mounts.persistent``.
"""

from __future__ import annotations

import shlex
from typing import Any

V1_NAMES = {
    "dataCenterId": "dataCenter",
}
"""v1 wire name -> v2 field path, for naming a field the way the other version does: a v2
network volume is still checked by v1's model, whose ``dataCenterId`` v2 calls
``dataCenter``. Templates, pods and endpoints have v2 models of their own."""

MIN_PERSISTENT_GB = 10
"""v2's smallest persistent volume; a smaller v1 volume has no v2 spelling."""


def split_args(args: str) -> list[str]:
    """v2's ``args`` as v1's list; ``ValueError("args: ...")`` for unbalanced quotes."""
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise ValueError(f"args: {exc}") from None


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
    """v2's container settings for a v1 record's (every field, as v2 shows a record)."""
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
    if size and size >= MIN_PERSISTENT_GB:
        return {"persistent": {"size": size, "path": path or "/workspace"}}
    return {}


def container_to_v2(v1: dict[str, Any]) -> dict[str, Any]:
    """v2's container fields for the v1 fields ``v1`` gives, and only those (a request
    body: what is left out stays the service's default, or unchanged by an update)."""
    out: dict[str, Any] = {}
    if "imageName" in v1:
        out["image"] = v1["imageName"]
    if "dockerStartCmd" in v1:
        out["args"] = shlex.join(v1["dockerStartCmd"] or [])
    if "containerDiskInGb" in v1:
        out["disk"] = v1["containerDiskInGb"]
    for name in ("env", "ports"):
        if name in v1:
            out[name] = v1[name]
    if "containerRegistryAuthId" in v1:
        out["registry"] = v1["containerRegistryAuthId"]
    if "volumeInGb" in v1 or "volumeMountPath" in v1:
        size = v1.get("volumeInGb")
        path = v1.get("volumeMountPath") or "/workspace"
        if size is None:
            raise ValueError(
                "volumeMountPath: REST v2 sets a volume's path with its size; give volumeInGb too"
            )
        if 0 < size < MIN_PERSISTENT_GB:
            raise ValueError(
                f"volumeInGb: REST v2's smallest volume is {MIN_PERSISTENT_GB} GB, got {size}"
            )
        out["mounts"] = {"persistent": {"size": size, "path": path}} if size else {}
    return out

"""A container's settings in v1's flat fields and in v2's, for the emulator's ``/v1``
adapter: v1 keeps a start command as a list (v2's ``args`` is one shell-quoted string)
and a volume as two fields (v2's ``mounts.persistent``)."""

from __future__ import annotations

import shlex
from typing import Any

V1_NAMES = {"dataCenterId": "dataCenter"}
"""v1 wire name -> v2 field path: a v2 network volume is still checked by v1's model,
whose ``dataCenterId`` v2 calls ``dataCenter``."""

MIN_PERSISTENT_GB = 10
"""v2's smallest persistent volume; a smaller v1 volume has no v2 spelling."""


def split_args(args: str) -> list[str]:
    """v2's ``args`` as v1's list; ``ValueError("args: ...")`` for unbalanced quotes."""
    try:
        return shlex.split(args)
    except ValueError as exc:
        raise ValueError(f"args: {exc}") from None


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

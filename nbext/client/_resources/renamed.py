"""REST v1's keywords, taken for one more release: each warns and is spelt the v2 way.

Until this release the management methods took REST v1's keywords (``image_name=``,
``is_serverless=``, ``workers_max=``, ``gpu_type_ids=``...). They still work: ``renamed``
wraps an operation so that each old keyword given raises a ``DeprecationWarning``
naming the keyword that replaces it, and its value is put where REST v2 has it
(``workers_max=2`` becomes ``workers={"max": 2}``). Giving both spellings of one field
is refused in one line. A keyword REST v2 has no place for is not taken (Python's
``TypeError`` names it). Everything about the old names is in this module, so the next
release deletes it and the decorators.
"""

from __future__ import annotations

import functools
import shlex
import sys
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from nbext.models.v2 import Endpoint, GpuType

from .._flows import Context, Flow
from .rest import V2
from .wire import one, refused, wrapped

F = TypeVar("F", bound=Callable[..., Any])
Put = Callable[[dict[str, Any], Any], None]
"""Puts an old keyword's value into the new keywords' values."""
Fix = Callable[[Context, V2, tuple[Any, ...], dict[str, Any]], Flow[dict[str, Any]]]
"""Finishes what the old keywords made (a flow: it may ask the service)."""


@dataclass(frozen=True)
class Old:
    """An old keyword: the new one the warning names (as the caller would write it),
    how its value is put there, and (for a keyword whose name is kept) which values are
    the old spelling."""

    use: str
    put: Put
    old: Callable[[Any], bool] = lambda value: value is not None


def to(name: str, convert: Callable[[Any], Any] | None = None) -> Put:
    def put(fields: dict[str, Any], value: Any) -> None:
        fields[name] = value if convert is None else convert(value)

    return put


def into(name: str, *path: str, convert: Callable[[Any], Any] | None = None) -> Put:
    """Into a nested mapping: ``into("workers", "max")`` sets ``workers["max"]``."""

    def put(fields: dict[str, Any], value: Any) -> None:
        place = fields.setdefault(name, {})
        for key in path[:-1]:
            place = place.setdefault(key, {})
        place[path[-1]] = value if convert is None else convert(value)

    return put


def single(what: str) -> Callable[[Any], Any]:
    """A list of one value as the value (REST v2 rents a pod on one GPU type)."""

    def convert(values: Any) -> Any:
        if isinstance(values, str) or len(values) != 1:
            raise ValueError(f"REST v2 rents a pod on exactly one {what}, got {values!r}")
        return values[0]

    return convert


def _caller() -> int:
    """The ``stacklevel`` of the first frame outside the client: the user's line."""
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals["__name__"].startswith("nbext.client"):
        frame, level = frame.f_back, level + 1
    return level


def warn(message: str) -> None:
    warnings.warn(message, DeprecationWarning, stacklevel=_caller())


def _spelt(operation: str, table: Mapping[str, Old], old: dict[str, Any]) -> dict[str, Any]:
    made: dict[str, Any] = {}
    for name, value in old.items():
        entry = table[name]
        warn(f"{operation}: {name}= is REST v1's keyword, deprecated; use {entry.use}")
        try:
            entry.put(made, value)
        except (ValueError, TypeError) as exc:
            raise refused(operation, f"{name}: {exc}") from None
    return made


def renamed(operation: str, table: Mapping[str, Old], fix: Fix | None = None) -> Callable[[F], F]:
    """An operation (``ctx, api, *args, **keywords``) that also takes ``table``'s old
    keywords; ``fix`` finishes what they made before the operation runs."""

    def decorate(flow: F) -> F:
        @functools.wraps(flow)
        def wrapper(ctx: Context, api: V2, *args: Any, **kw: Any) -> Flow[Any]:
            old = {n: kw.pop(n) for n in list(kw) if n in table and table[n].old(kw[n])}
            if old:
                made = _spelt(operation, table, old)
                if fix is not None:
                    made = yield from fix(ctx, api, args, made)
                both = sorted(name for name in made if kw.get(name) is not None)
                if both:
                    raise refused(
                        operation, f"give {both[0]}= or REST v1's keywords for it, not both"
                    )
                kw.update(made)
            return (yield from flow(ctx, api, *args, **kw))

        return wrapper  # type: ignore[return-value]

    return decorate


def alias(flow: F, old: str, new: str) -> F:
    """``flow`` under its REST v1 name ``old``, warning to use ``new``."""

    @functools.wraps(flow)
    def wrapper(*args: Any, **kw: Any) -> Any:
        warn(f"{old} is REST v1's name, deprecated; use {new}")
        return flow(*args, **kw)

    return wrapper  # type: ignore[return-value]


# ---- what the old keywords were ------------------------------------------------------------


def container_fields(
    ctx: Context, api: V2, args: tuple[Any, ...], made: dict[str, Any]
) -> Flow[Any]:
    """v1's ``volume_in_gb``/``volume_mount_path`` as ``mounts.persistent`` (at
    ``/workspace`` unless a path is given; 0 GB: none), or the path of
    ``network_volume_id``'s mount when that is given."""
    yield from ()
    mounts = made.get("mounts")
    if mounts is None or "persistent" not in mounts:
        return made
    volume = mounts.pop("persistent")
    if mounts.get("network"):
        mounts["network"][0]["path"] = volume.get("path", "/workspace")
    elif volume.get("size"):
        mounts["persistent"] = {"path": "/workspace", **volume}
    return made


VOLUME = "mounts={'persistent': {'size': ..., 'path': ...}}"
CONTAINER = {
    "image_name": Old("image=", to("image")),
    "container_disk_in_gb": Old("disk=", to("disk")),
    "container_registry_auth_id": Old("registry=", to("registry")),
    "docker_start_cmd": Old("args= (one string)", to("args", shlex.join)),
    "volume_in_gb": Old(VOLUME, into("mounts", "persistent", "size")),
    "volume_mount_path": Old(VOLUME, into("mounts", "persistent", "path")),
}
TEMPLATE = {
    **CONTAINER,
    "is_public": Old("public=", to("public")),
    "is_serverless": Old("serverless=", to("serverless")),
}
POD_UPDATE = CONTAINER
POD_CREATE = {
    **CONTAINER,
    "gpu_type_ids": Old("gpu={'id': ...}", into("gpu", "id", convert=single("GPU type"))),
    "gpu_count": Old("gpu={'count': ...}", into("gpu", "count")),
    "allowed_cuda_versions": Old(
        "gpu={'allowed_cuda_versions': [...]}", into("gpu", "allowed_cuda_versions")
    ),
    "cpu_flavor_ids": Old("cpu={'id': ...}", into("cpu", "id", convert=single("CPU flavour"))),
    "vcpu_count": Old("cpu={'vcpu_count': ...}", into("cpu", "vcpu_count")),
    "compute_type": Old("gpu= or cpu= (which one says)", lambda fields, value: None),
    "cloud_type": Old("cloud=", to("cloud")),
    "network_volume_id": Old(
        "mounts={'network': [{'volume_id': ..., 'path': ...}]}",
        into("mounts", "network", convert=lambda v: [{"volume_id": v}]),
    ),
}
ENDPOINT = {
    "compute_type": Old("gpu= or cpu= (which one says)", lambda fields, value: None),
    "gpu_type_ids": Old("gpu={'pools': [...], 'excluded_types': [...]}", into("gpu", "types")),
    "gpu_count": Old("gpu={'count': ...}", into("gpu", "count")),
    "allowed_cuda_versions": Old(
        "gpu={'allowed_cuda_versions': [...]}", into("gpu", "allowed_cuda_versions")
    ),
    "min_cuda_version": Old("gpu={'min_cuda_version': ...}", into("gpu", "min_cuda_version")),
    "cpu_flavor_ids": Old("cpu=[{'id': ..., 'vcpu_count': ...}]", into("cpu", "ids")),
    "vcpu_count": Old("cpu=[{'id': ..., 'vcpu_count': ...}]", into("cpu", "vcpu_count")),
    "workers_min": Old("workers={'min': ...}", into("workers", "min")),
    "workers_max": Old("workers={'max': ...}", into("workers", "max")),
    "idle_timeout": Old("workers={'idle_timeout': ...}", into("workers", "idle_timeout")),
    "execution_timeout_ms": Old("timeout=", to("timeout")),
    "scaler_type": Old("scaling={'type': ..., ...}", into("scaling", "type")),
    "scaler_value": Old(
        "scaling={'type': ..., 'queue_delay' or 'request_count': ...}", into("scaling", "value")
    ),
    "flashboot": Old(
        "flashboot='FLASHBOOT' or 'OFF' (not True or False)",
        to("flashboot", lambda v: "FLASHBOOT" if v else "OFF"),
        lambda value: isinstance(value, bool),
    ),
    "network_volume_id": Old("network_volumes=[...]", into("network_volumes", "first")),
    "network_volume_ids": Old("network_volumes=[...]", into("network_volumes", "more")),
}


def endpoint_fields(
    ctx: Context, api: V2, args: tuple[Any, ...], made: dict[str, Any]
) -> Flow[Any]:
    """v1's GPU types as v2's pools and exclusions (from the catalog), CPU flavours as
    v2's list, a scaler's value under its kind's name (an update that names only the
    value keeps the endpoint's kind, read from the service), volumes as one list."""
    gpu = made.get("gpu", {})
    if "types" in gpu:
        wanted = [str(t) for t in gpu.pop("types")]
        call = api.call("GET", ["catalog", "gpus"], "catalog.gpus", "the GPU catalog")
        found = yield from api.fetch(ctx, call, wrapped(GpuType, "gpus"))
        pool_of = {g.id: g.pool for g in found if g.pool}
        unknown = [t for t in wanted if t not in pool_of]
        if unknown:
            raise refused("endpoints", f"gpu_type_ids: {unknown[0]!r} is in no serverless pool")
        gpu["pools"] = list(dict.fromkeys(pool_of[t] for t in wanted))
        excluded = [g for g, p in pool_of.items() if p in gpu["pools"] and g not in wanted]
        if excluded:
            gpu["excluded_types"] = excluded
    cpu = made.get("cpu")
    if cpu is not None:
        count = {"vcpu_count": cpu["vcpu_count"]} if "vcpu_count" in cpu else {}
        made["cpu"] = [{"id": flavour, **count} for flavour in cpu.get("ids", [])]
    scaling = made.get("scaling", {})
    if "value" in scaling:
        kind = scaling.get("type")
        if kind is None and args:
            subject = f"endpoint {args[0]!r}"
            call = api.call("GET", ["serverless", args[0]], "endpoints.get", subject)
            kind = (yield from api.fetch(ctx, call, one(Endpoint))).scaling.type
        kind = kind or "QUEUE_DELAY"
        key = "request_count" if kind == "REQUEST_COUNT" else "queue_delay"
        made["scaling"] = {"type": kind, key: scaling["value"]}
    volumes = made.pop("network_volumes", None)
    if volumes is not None:
        first = [volumes["first"]] if "first" in volumes else []
        made["network_volumes"] = [*first, *volumes.get("more", [])]
    return made

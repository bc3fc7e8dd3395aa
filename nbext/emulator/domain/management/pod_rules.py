"""The rules of a v2 pod body that join fields, checked before anything changes; a
passing body becomes a ``PodOrder`` or ``PodChange`` (docs/architecture.md#management-areas)."""

from __future__ import annotations

import secrets
import shlex
from typing import Any

from nbext.models import CloudType
from nbext.models.v1 import ALL_DATA_CENTERS

from . import offers
from .container import check_compute, split_args
from .pod_input import CreatePodRequest, PodChange, PodOrder, UpdatePodRequest
from .pod_status import CUDA_DEFAULT
from .refusals import checked, refuse
from .templates import Templates

SAME = ("name", "locked", "image", "args", "disk", "env", "ports", "registry")
UPDATE_FIELDS = {**{same: same for same in SAME}, "globalNetworking": "global_networking"}
"""A v2 update's fields (but ``mounts``), by the record's name for each."""

NAMED = {
    "template_id": "templateId",
    "registry": "registry",
    "network_volume_id": "mounts.network.0.volumeId",
    "data_center_ids": "dataCenterIds",
    "country_codes": "countryCodes",
}
"""How a v2 body names the fields a refusal of the order may name."""


def _startup_env(key: str | None, data: dict[str, Any], env: dict[str, str]) -> dict[str, str]:
    """``startSsh`` and ``startJupyter``: what the provisioner adds to the environment
    (``key``: the account's SSH public keys, if any)."""
    env = dict(env)
    if data.get("startSsh") and key and "PUBLIC_KEY" not in env:
        env["PUBLIC_KEY"] = key
    if data.get("startJupyter") and "JUPYTER_PASSWORD" not in env:
        env["JUPYTER_PASSWORD"] = secrets.token_urlsafe(12)
    return env


def create_request(templates: Templates, key: str | None, data: dict[str, Any]) -> PodOrder:
    """The order a v2 create body makes, with the CUDA version its host reports (``key``:
    the account's SSH public keys, for a pod that starts SSH)."""
    data = checked(CreatePodRequest, data)
    check_compute(data, "a pod", required=True)
    gpu, cpu = data.get("gpu"), data.get("cpu")
    template = (
        templates.named(data["templateId"], serverless=False) if "templateId" in data else None
    )
    mounts = data.get("mounts") or {}
    network = mounts.get("network") or []
    if cpu is not None and mounts.get("persistent"):
        raise refuse("mounts.persistent", "a CPU pod has no persistent volume; use a network one")
    if network and mounts.get("persistent"):
        raise refuse("mounts", "give a persistent or a network volume, not both")
    given: dict[str, Any] = {k: data[k] for k in ("image", "disk", "registry") if k in data}
    if "args" in data:
        given["args"] = shlex.join(split_args(data["args"]))
    if "ports" in data or template is None:
        given["ports"] = data.get("ports", [])
    if "mounts" in data or template is None:
        persistent = mounts.get("persistent")
        given["volume_size"] = persistent["size"] if persistent else 0
        if persistent:
            given["volume_path"] = persistent["path"]
    if network:
        given["volume_path"] = network[0]["path"]
    cuda: str | None = None
    if gpu is not None:
        allowed = gpu.get("allowedCudaVersions") or []
        minimum = gpu.get("minCudaVersion", "")
        cuda = allowed[0] if allowed else max(CUDA_DEFAULT, minimum, key=offers.cuda_order)
    base_env = {**(template.env if template else {}), **data.get("env", {})}
    return PodOrder(
        name=data["name"],
        template_id=data.get("templateId"),
        gpu_type_id=gpu["id"] if gpu is not None else None,
        gpu_count=gpu.get("count", 1) if gpu is not None else 1,
        cpu_flavor_id=cpu["id"] if cpu is not None else None,
        vcpu_count=cpu["vcpuCount"] if cpu is not None else 2,
        cloud=CloudType(data.get("cloud", "SECURE")),
        global_networking=data.get("globalNetworking", False),
        data_center_ids=data.get("dataCenterIds") or [str(d) for d in ALL_DATA_CENTERS],
        network_volume_id=network[0]["volumeId"] if network else None,
        env=_startup_env(key, data, base_env),
        given=given,
        named=NAMED,
        cuda_version=cuda,
    )


def update_request(templates: Templates, volume: str | None, data: dict[str, Any]) -> PodChange:
    """The checked change a v2 update body asks of a pod (``volume``: its network volume)."""
    data = checked(UpdatePodRequest, data)
    if "templateId" in data:
        template = templates.named(data["templateId"], serverless=False)
        spread = {k: getattr(template, k) for k in ("image", "args", "disk", "ports", "registry")}
        env = {**template.env, **data.get("env", {})}
        data = {**{k: v for k, v in spread.items() if v is not None}, **data, "env": env}
    mounts = data.get("mounts")
    if mounts is not None:
        wanted = [n["volumeId"] for n in mounts.get("network") or []]
        current = [volume] if volume else []
        if wanted != current:
            raise refuse("mounts.network", "a pod's network volume is fixed when it is created")
    values: dict[str, Any] = {}
    named: dict[str, str] = {}
    for wire, record in UPDATE_FIELDS.items():
        if wire in data:
            value = data[wire]
            values[record] = shlex.join(split_args(value)) if wire == "args" else value
            named[record] = wire
    if mounts is not None and not volume:
        p = mounts.get("persistent")
        values["volume_size"] = p["size"] if p else 0
        if p:
            values["volume_path"] = p["path"]
        named.update(volume_size="mounts", volume_path="mounts")
    return PodChange(values, named)

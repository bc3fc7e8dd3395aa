"""Network volumes and registries in REST v2's terms.

A volume's record is already v2's (``network_volumes.py``); v2 shows it with its size
within what v2 can state. A registry is v1's container registry auth under v2's name,
shown without its username.
"""

from __future__ import annotations

from typing import Any

from nbext.models import (
    ContainerRegistryAuth,
    ContainerRegistryAuthCreateInput,
    NetworkVolumeCreateInput,
    NetworkVolumeUpdateInput,
)

from .container import V1_NAMES
from .network_volumes import STANDARD, NetworkVolumes, VolumeEntry
from .refusals import validated
from .registry_auths import RegistryAuths


class V2Volumes:
    def __init__(self, volumes: NetworkVolumes) -> None:
        self.volumes = volumes

    @staticmethod
    def view(v: VolumeEntry) -> dict[str, Any]:
        size = max(10, min(4096, v.size))  # v1 allows sizes v2 cannot state
        return {
            "id": v.id,
            "name": v.name,
            "size": size,
            "dataCenter": v.data_center,
            "type": v.type,
        }

    def listing(self) -> list[dict[str, Any]]:
        return [self.view(v) for v in self.volumes.listing()]

    def get(self, volume_id: str) -> dict[str, Any]:
        return self.view(self.volumes.get(volume_id))

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        v1 = {"name": data["name"], "size": data["size"], "dataCenterId": data["dataCenter"]}
        rules = validated(NetworkVolumeCreateInput, v1, V1_NAMES)  # size and data centre
        kind = data.get("type", STANDARD)
        made = self.volumes.create(rules.name, rules.size, data["dataCenter"], kind)
        return self.view(made)

    def update(self, volume_id: str, data: dict[str, Any]) -> dict[str, Any]:
        parsed = validated(NetworkVolumeUpdateInput, data, V1_NAMES)
        return self.view(self.volumes.update(volume_id, parsed.name, parsed.size))

    def delete(self, volume_id: str) -> None:
        self.volumes.delete(volume_id)


class V2Registries:
    def __init__(self, auths: RegistryAuths) -> None:
        self.auths = auths

    @staticmethod
    def view(auth: ContainerRegistryAuth) -> dict[str, Any]:
        return {"id": auth.id, "name": auth.name}

    def listing(self) -> list[dict[str, Any]]:
        return [self.view(a) for a in self.auths.listing()]

    def get(self, registry_id: str) -> dict[str, Any]:
        return self.view(self.auths.get(registry_id))

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = validated(ContainerRegistryAuthCreateInput, data, V1_NAMES)
        return self.view(self.auths.create(parsed))

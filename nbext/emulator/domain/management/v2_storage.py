"""Network volumes and registries in REST v2's terms.

v1 calls a volume's data centre ``dataCenterId`` and v2 ``dataCenter``; v2 adds a storage
``type`` (kept as a facet: the emulator's volumes are alike, but bill by tier). A
registry is v1's container registry auth under v2's name, shown without its username.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbext.models import (
    ContainerRegistryAuth,
    ContainerRegistryAuthCreateInput,
    NetworkVolume,
    NetworkVolumeCreateInput,
    NetworkVolumeUpdateInput,
)

from . import offers
from .container import V1_NAMES
from .records import atomic
from .refusals import refuse, validated

if TYPE_CHECKING:
    from .facade import Management


class V2Volumes:
    def __init__(self, m: Management) -> None:
        self.m = m

    def view(self, v: NetworkVolume) -> dict[str, Any]:
        kind = self.m.v2.facets.get("volume", v.id or "").get("type", "STANDARD")
        size = max(10, min(4096, v.size or 10))  # v1 allows sizes v2 cannot state
        return {
            "id": v.id,
            "name": v.name or "",
            "size": size,
            "dataCenter": str(v.data_center_id),
            "type": kind,
        }

    def listing(self) -> list[dict[str, Any]]:
        return [self.view(v) for v in self.m.volumes.listing()]

    def get(self, volume_id: str) -> dict[str, Any]:
        return self.view(self.m.volumes.get(volume_id))

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        kind = data.get("type", "STANDARD")
        v1 = {"name": data["name"], "size": data["size"], "dataCenterId": data["dataCenter"]}
        parsed = validated(NetworkVolumeCreateInput, v1, V1_NAMES)
        if kind == "HIGH_PERFORMANCE" and not offers.place(data["dataCenter"]).high_performance:
            raise refuse(
                "type",
                f"data centre {data['dataCenter']} has no HIGH_PERFORMANCE storage; GET "
                "/v2/catalog/datacenters?networkVolumeTypes=HIGH_PERFORMANCE lists those that do",
            )
        with atomic():  # the volume and its type, or neither
            made = self.m.volumes.create(parsed)
            self.m.v2.facets.set("volume", made.id or "", type=kind)
        return self.view(made)

    def update(self, volume_id: str, data: dict[str, Any]) -> dict[str, Any]:
        parsed = validated(NetworkVolumeUpdateInput, data, V1_NAMES)
        return self.view(self.m.volumes.update(volume_id, parsed))

    def delete(self, volume_id: str) -> None:
        with atomic():
            self.m.volumes.delete(volume_id)
            self.m.v2.facets.drop("volume", volume_id)


class V2Registries:
    def __init__(self, m: Management) -> None:
        self.m = m

    @staticmethod
    def view(auth: ContainerRegistryAuth) -> dict[str, Any]:
        return {"id": auth.id, "name": auth.name}

    def listing(self) -> list[dict[str, Any]]:
        return [self.view(a) for a in self.m.registry_auths.listing()]

    def get(self, registry_id: str) -> dict[str, Any]:
        return self.view(self.m.registry_auths.get(registry_id))

    def create(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = validated(ContainerRegistryAuthCreateInput, data, V1_NAMES)
        return self.view(self.m.registry_auths.create(parsed))

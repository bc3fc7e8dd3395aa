"""Network volumes in REST v2's shape: in one data centre, only ever grown, billed by
size, time and storage type (docs/architecture.md#management-areas)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nbext.models.v1 import NetworkVolumeCreateInput, NetworkVolumeUpdateInput
from nbext.models.v2.convert import V1_NAMES
from nbext.models.v2.resources import NETWORK_VOLUMES

from ..errors import InvalidInput
from ..store_port import Store
from . import offers
from .catalog import SECONDS_PER_MONTH, VOLUME_PRICE_PER_GB_MONTH
from .records import OLD_LAYOUT, Book, Served, atomic, new_id
from .refusals import refuse, validated
from .usage import UsageLedger

STANDARD = "STANDARD"
HIGH_PERFORMANCE = "HIGH_PERFORMANCE"


@dataclass
class VolumeEntry:
    id: str
    name: str
    size: int
    data_center: str
    type: str = STANDARD

    def record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "size": self.size,
            "dataCenter": self.data_center,
            "type": self.type,
        }

    def view(self) -> dict[str, Any]:
        """The volume as v2 shows it: v1 allows sizes v2 cannot state."""
        return {**self.record(), "size": max(10, min(4096, self.size))}

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> VolumeEntry:
        if "dataCenterId" in record:
            raise ValueError(OLD_LAYOUT)
        kind = record.get("type", STANDARD)
        return cls(record["id"], record["name"], record["size"], record["dataCenter"], kind)


class NetworkVolumes(Served[VolumeEntry]):
    ROW = NETWORK_VOLUMES

    def __init__(self, store: Store, usage: UsageLedger) -> None:
        self.usage = usage
        self.book: Book[VolumeEntry] = Book(
            store, "volume", VolumeEntry.record, VolumeEntry.from_record
        )
        self.users: list[Callable[[str], list[str]]] = []
        """Asked before a delete: each area whose records attach volumes registers one,
        naming those attached to it ("endpoint abc"); a volume in use is not deleted."""

    def served(self, record: VolumeEntry) -> dict[str, Any]:
        return record.view()

    def require(self, volume_id: str | None, field: str) -> VolumeEntry | None:
        """The volume a request names in ``field`` (empty means none), or 400."""
        if not volume_id:
            return None
        entry = self.book.get(volume_id)
        if entry is None:
            raise InvalidInput(f"{field}: no network volume with id {volume_id!r}")
        return entry

    def type_of(self, volume_id: str) -> str:
        """The volume's storage type (STANDARD once it is gone: its bill stays)."""
        entry = self.book.get(volume_id)
        return entry.type if entry is not None else STANDARD

    def _bill(self, entry: VolumeEntry) -> None:
        self.usage.open(
            "volume",
            entry.id,
            rate=entry.size * VOLUME_PRICE_PER_GB_MONTH / SECONDS_PER_MONTH,
            labels={"volumeId": entry.id, "size": entry.size, "dataCenterId": entry.data_center},
        )

    def create(self, body: NetworkVolumeCreateInput | dict[str, Any]) -> VolumeEntry:
        """A volume from v1's checked body, or from v2's, which v1's rules of size and data
        centre check here (a refusal names v2's fields); the storage ``type`` is v2's."""
        kind = STANDARD
        if isinstance(body, dict):
            kind = body.get("type", STANDARD)
            v1 = {"name": body["name"], "size": body["size"], "dataCenterId": body["dataCenter"]}
            body = validated(NetworkVolumeCreateInput, v1, V1_NAMES)
        data_center = str(body.data_center_id)
        if kind == HIGH_PERFORMANCE and not offers.place(data_center).high_performance:
            raise refuse(
                "type",
                f"data centre {data_center} has no HIGH_PERFORMANCE storage; GET "
                "/v2/catalog/datacenters?networkVolumeTypes=HIGH_PERFORMANCE lists those that do",
            )
        entry = VolumeEntry(new_id(10), body.name, body.size, data_center, kind)
        with atomic():  # the volume and its meter
            self.book.save(entry.id, entry)
            self._bill(entry)
        return entry

    def update(
        self, volume_id: str, body: NetworkVolumeUpdateInput | dict[str, Any]
    ) -> VolumeEntry:
        """Rename or grow the volume as v1's checked body, or v2's, asks."""
        entry = self.get(volume_id)
        if isinstance(body, dict):
            body = validated(NetworkVolumeUpdateInput, body, V1_NAMES)
        name, size = body.name, body.size
        if size is not None and size < entry.size:
            raise InvalidInput(
                f"size: a network volume can only grow; {volume_id} has {entry.size} GB, "
                f"{size} GB would shrink it"
            )
        grown = size is not None and size != entry.size
        with atomic():  # the volume and its meter
            if name is not None:
                entry.name = name
            if size is not None:
                entry.size = size
            self.book.save(volume_id, entry)
            if grown:
                self._bill(entry)
        return entry

    def delete(self, volume_id: str) -> None:
        self.get(volume_id)
        users = [user for named in self.users for user in named(volume_id)]
        if users:
            raise InvalidInput(
                f"network volume {volume_id!r} is attached to {', '.join(users)}; "
                "delete or detach those first"
            )
        with atomic():
            self.usage.close("volume", volume_id)
            self.book.drop(volume_id)

"""Network volumes: created in one data centre, only ever grown, billed by size and time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nbext.models import NetworkVolume, NetworkVolumeCreateInput, NetworkVolumeUpdateInput

from ..errors import InvalidInput, NotFound
from .catalog import SECONDS_PER_MONTH, VOLUME_PRICE_PER_GB_MONTH
from .records import Book, atomic, new_id, wire

if TYPE_CHECKING:
    from .facade import Management


@dataclass
class VolumeEntry:
    view: NetworkVolume

    def record(self) -> dict[str, Any]:
        return wire(self.view)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> VolumeEntry:
        return cls(NetworkVolume.model_validate(record))


class NetworkVolumes:
    def __init__(self, m: Management) -> None:
        self.m = m
        self.book: Book[VolumeEntry] = Book(
            m.store, "volume", VolumeEntry.record, VolumeEntry.from_record
        )

    def get(self, volume_id: str) -> NetworkVolume:
        entry = self.book.get(volume_id)
        if entry is None:
            raise NotFound(f"network volume {volume_id!r} not found")
        return entry.view

    def listing(self) -> list[NetworkVolume]:
        return [e.view for e in self.book]

    def require(self, volume_id: str | None, field: str) -> NetworkVolume | None:
        """The volume a request names in ``field`` (empty means none), or 400."""
        if not volume_id:
            return None
        entry = self.book.get(volume_id)
        if entry is None:
            raise InvalidInput(f"{field}: no network volume with id {volume_id!r}")
        return entry.view

    def _bill(self, view: NetworkVolume) -> None:
        size = view.size or 0
        self.m.usage.open(
            "volume",
            view.id or "",
            rate=size * VOLUME_PRICE_PER_GB_MONTH / SECONDS_PER_MONTH,
            labels={"volumeId": view.id, "size": size, "dataCenterId": view.data_center_id},
        )

    def create(self, body: NetworkVolumeCreateInput) -> NetworkVolume:
        view = NetworkVolume(
            id=new_id(10), name=body.name, size=body.size, data_center_id=body.data_center_id
        )
        assert view.id is not None
        with atomic():  # the volume and its meter
            self.book.save(view.id, VolumeEntry(view))
            self._bill(view)
        return view

    def update(self, volume_id: str, body: NetworkVolumeUpdateInput) -> NetworkVolume:
        view = self.get(volume_id)
        current = view.size or 0
        if body.size is not None and body.size < current:
            raise InvalidInput(
                f"size: a network volume can only grow; {volume_id} has {current} GB, "
                f"{body.size} GB would shrink it"
            )
        grown = body.size is not None and body.size != current
        entry = self.book.items[volume_id]
        with atomic():  # the volume and its meter
            if body.name is not None:
                view.name = body.name
            if body.size is not None:
                view.size = body.size
            self.book.save(volume_id, entry)
            if grown:
                self._bill(view)
        return entry.view

    def delete(self, volume_id: str) -> None:
        self.get(volume_id)
        users = [f"pod {p}" for p in self.m.pods.uses_volume(volume_id)]
        users += [f"endpoint {e}" for e in self.m.endpoints.uses_volume(volume_id)]
        if users:
            raise InvalidInput(
                f"network volume {volume_id!r} is attached to {', '.join(users)}; "
                "delete or detach those first"
            )
        with atomic():
            self.m.usage.close("volume", volume_id)
            self.book.drop(volume_id)

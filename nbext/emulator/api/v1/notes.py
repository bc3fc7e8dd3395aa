"""What only ``/v1`` shows of a record: notes of kind ``v1`` in the same store, by id, so
they last as the records do (docs/architecture.md#management-in-the-emulator)."""

from __future__ import annotations

from typing import Any

from ...domain.errors import StoreFailed
from ...domain.management.facade import Management
from ...domain.management.records import on_undo

KIND = "v1"


def kept_for(m: Management, record_id: str) -> dict[str, Any]:
    return m.store.get(KIND, record_id) or {}


def keep(m: Management, record_id: str, **notes: Any) -> None:
    """Keep ``notes`` beside the record's, in the change being made (``records.atomic``)."""
    before = m.store.get(KIND, record_id)
    m.store.put(KIND, record_id, {**(before or {}), "id": record_id, **notes})
    on_undo(lambda: _restore(m, record_id, before))


def forget(m: Management, record_id: str) -> None:
    m.store.delete(KIND, record_id)


def _restore(m: Management, record_id: str, before: dict[str, Any] | None) -> None:
    try:
        if before is None:
            m.store.delete(KIND, record_id)
        else:
            m.store.put(KIND, record_id, before)
    except StoreFailed:  # as a record's undo: memory is right, the file keeps the newer
        pass


def volumes_of(first: str | None, rest: list[str] | None) -> list[str]:
    """v2's ``networkVolumes`` for v1's pair."""
    volumes = [first] if first else []
    return volumes + [v for v in rest or [] if v not in volumes]


def v1_pair(volumes: list[str], given: list[Any] | None) -> tuple[str | None, list[str] | None]:
    """v1's pair for ``volumes``: as v1 last ``given`` it while it still names them, else
    the first volume and the rest."""
    if given is not None and volumes_of(*given) == volumes:
        first, rest = given
        return first, rest
    return (volumes[0] if volumes else None), (volumes[1:] if len(volumes) > 1 else None)

"""The usage ledger: what ran, for how long, at what price per second (fixed when the
interval began, so a price change does not rewrite history); billing reads it.

Kinds: ``pod`` (RUNNING), ``worker`` (executing; back-to-back jobs extend one interval),
``volume`` (at one size), ``cluster``. Open intervals count up to the clock's now."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock
from ..store_port import Record, Store
from .records import Book, new_id, on_undo

MERGE_GAP_S = 0.001
"""Executions on one worker closer than this are one interval (the next job starts in the
same instant the last one ended, up to the real clock's ticking between the two)."""


@dataclass
class Usage:
    """One priced interval of one subject (a pod, a worker, a volume)."""

    id: str
    kind: str
    subject: str
    start: float
    end: float | None
    rate: float
    """USD per second."""
    labels: dict[str, Any] = field(default_factory=dict)
    """What billing filters and groups on: podId, gpuTypeId, endpointId, templateId, ..."""

    def until(self, now: float) -> float:
        return self.end if self.end is not None else now


def _to_record(usage: Usage) -> Record:
    """Not ``dataclasses.asdict``, which deep-copies: this runs once per job."""
    return {**vars(usage), "labels": dict(usage.labels)}


class UsageLedger:
    """Every usage interval of the emulator, persisted through the store (kind ``usage``)."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.clock = clock
        self.book: Book[Usage] = Book(store, "usage", _to_record, lambda r: Usage(**r))
        self._open: dict[tuple[str, str], str] = {}
        self._last: dict[tuple[str, str], str] = {}

    def load(self) -> None:
        self.book.load()
        for usage in self.book:
            if usage.end is None:
                self._open[(usage.kind, usage.subject)] = usage.id
            self._last[(usage.kind, usage.subject)] = usage.id

    def open(
        self, kind: str, subject: str, rate: float, labels: dict[str, Any], at: float | None = None
    ) -> None:
        """Start an interval for ``subject`` (closing the one it had open, if any)."""
        at = self.clock.now() if at is None else at
        self.close(kind, subject, at)
        usage = Usage(new_id(20), kind, subject, at, None, rate, dict(labels))
        self.book.save(usage.id, usage)
        self._mark(kind, subject, usage.id, usage.id)

    def close(self, kind: str, subject: str, at: float | None = None) -> None:
        usage_id = self._open.get((kind, subject))
        usage = self.book.get(usage_id) if usage_id else None
        if usage is not None:
            usage.end = max(usage.start, self.clock.now() if at is None else at)
            self.book.save(usage.id, usage)
        self._mark(kind, subject, None, self._last.get((kind, subject)))

    def _mark(self, kind: str, subject: str, open_id: str | None, last_id: str | None) -> None:
        """Note which interval is open and last, back as it was if the change fails."""
        key = (kind, subject)
        was_open, was_last = self._open.get(key), self._last.get(key)
        _set(self._open, key, open_id)
        _set(self._last, key, last_id)

        def undo() -> None:
            _set(self._open, key, was_open)
            _set(self._last, key, was_last)

        on_undo(undo)

    def record(
        self,
        kind: str,
        subject: str,
        rate: float,
        labels: dict[str, Any],
        start: float,
        end: float,
    ) -> None:
        """A finished interval; joined to the subject's last one when they touch."""
        last_id = self._last.get((kind, subject))
        last = self.book.get(last_id) if last_id else None
        if (
            last is not None
            and last.end is not None
            and 0 <= start - last.end <= MERGE_GAP_S
            and last.rate == rate
            and last.labels == labels
        ):
            last.end = max(last.end, end)
            self.book.save(last.id, last)
            return
        usage = Usage(new_id(20), kind, subject, start, max(start, end), rate, dict(labels))
        self.book.save(usage.id, usage)
        self._last[(kind, subject)] = usage.id

    def of_kind(self, kind: str) -> Iterator[Usage]:
        return (u for u in self.book if u.kind == kind)


def _set(index: dict[tuple[str, str], str], key: tuple[str, str], value: str | None) -> None:
    if value is None:
        index.pop(key, None)
    else:
        index[key] = value

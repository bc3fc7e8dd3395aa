"""Putting split stream chunks back together. Pure: chunks in, outputs out.

The interface caps one chunk's ``output`` at 1 MB, so a larger yielded value arrives
as consecutive parts whose ``metrics`` carry ``SPLIT_KEY`` =
``{"part": k, "parts": n, "encoding": "text" | "json"}``. The caller of ``stream()``
wants the value the handler yielded, not the transport's pieces of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nbext.models import SPLIT_KEY, StreamChunk


class StreamProtocolError(ValueError):
    """The parts of a split chunk do not fit together (missing, repeated or mixed)."""


@dataclass
class Reassembler:
    """Feed wire chunks in order; get back whole outputs, each with its metrics."""

    _parts: list[str] = field(default_factory=list)
    _expected: int = 0
    _encoding: str = "text"
    _first_metrics: dict[str, Any] = field(default_factory=dict)

    @property
    def pending(self) -> bool:
        """True while a split value has started but not all its parts have arrived."""
        return bool(self._parts)

    def feed(self, chunk: StreamChunk) -> StreamChunk | None:
        """The whole chunk once complete; None while a split value is still incomplete."""
        split = chunk.metrics.get(SPLIT_KEY)
        if split is None:
            if self._parts:
                raise StreamProtocolError(
                    f"a plain chunk arrived after part {len(self._parts)} of "
                    f"{self._expected} of a split output"
                )
            return chunk
        part, parts, encoding = _split_fields(split)
        if not isinstance(chunk.output, str):
            raise StreamProtocolError(f"part {part} of a split output is not a string")
        if part != len(self._parts):
            raise StreamProtocolError(
                f"split output part {part} arrived, part {len(self._parts)} was expected"
            )
        if self._parts and (parts != self._expected or encoding != self._encoding):
            raise StreamProtocolError("the parts of one split output disagree on parts/encoding")
        if part == 0:
            self._expected, self._encoding = parts, encoding
            self._first_metrics = chunk.metrics
        self._parts.append(chunk.output)
        if len(self._parts) < self._expected:
            return None
        text = "".join(self._parts)
        self._parts = []
        output: Any = text
        if self._encoding == "json":
            try:
                output = json.loads(text)
            except json.JSONDecodeError as exc:
                raise StreamProtocolError(f"a split JSON output does not parse: {exc}") from None
        metrics = {k: v for k, v in chunk.metrics.items() if k != SPLIT_KEY}
        if "stream_index" in self._first_metrics:
            metrics["stream_index"] = self._first_metrics["stream_index"]
        return StreamChunk(output=output, metrics=metrics)


def _split_fields(split: Any) -> tuple[int, int, str]:
    if not isinstance(split, dict):
        raise StreamProtocolError(f"metrics.{SPLIT_KEY} must be an object")
    part, parts, encoding = split.get("part"), split.get("parts"), split.get("encoding")
    if not isinstance(part, int) or not isinstance(parts, int) or not 0 <= part < parts:
        raise StreamProtocolError(f"metrics.{SPLIT_KEY} has bad part/parts: {split!r}"[:200])
    if encoding not in ("text", "json"):
        raise StreamProtocolError(f"metrics.{SPLIT_KEY}.encoding must be text or json")
    return part, parts, encoding

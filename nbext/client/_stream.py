"""A job's stream made whole: split chunks put back together, lost ones noticed. Pure.

A value over the 1 MB chunk cap arrives as parts whose ``metrics`` carry ``SPLIT_KEY`` =
``{"part": k, "parts": n, "encoding": "text" | "json"}`` (docs/behaviour.md#streaming)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nbext.models import SPLIT_KEY, JobResult, JobStatus, StreamChunk

from ._errors import ChunksMissing


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


@dataclass
class StreamLedger:
    """What arrived of one job's stream, to notice a chunk that never did: a skipped
    ``stream_index``, or a /stream call failed after it may have been answered (``doubt``).
    Once a gap is certain (``broken``, at the first doubt if chunks are not numbered), the
    rest comes from the job's final output (docs/behaviour.md#streams-under-faults)."""

    next_index: int = 0
    values: int = 0
    """Whole outputs handed to the reader so far (the index into the job's output)."""
    doubt: bool = False
    broken: bool = False
    _indexed: bool | None = None

    @property
    def needs_output(self) -> bool:
        """Whether the stream's end must be checked against the job's final output."""
        return self.doubt or self.broken

    def maybe_lost(self) -> None:
        """A /stream call failed after the service may have answered it."""
        self.doubt = True
        if self._indexed is False:
            self.broken = True

    def admit(self, chunks: list[StreamChunk]) -> list[StreamChunk]:
        """The chunks of one answer that continue the stream without a gap, in order."""
        admitted: list[StreamChunk] = []
        for chunk in chunks:
            if self.broken:
                break
            index = chunk.metrics.get("stream_index")
            if not isinstance(index, int) or isinstance(index, bool):
                self._indexed = False
                self.broken = self.doubt
                if not self.broken:
                    admitted.append(chunk)
                continue
            self._indexed = True
            if index < self.next_index:
                continue  # handed out before: never twice
            if index > self.next_index:
                self.broken = True
                break
            self.next_index += 1
            self.doubt = False  # the chunk after the doubtful answer is the expected one
            admitted.append(chunk)
        return admitted

    def recover(self, result: JobResult, endpoint_id: str) -> list[StreamChunk]:
        """The outputs the reader lacks, from the job's final ``result``; raises
        ``ChunksMissing`` when its output cannot tell (not COMPLETED, or not the list of
        everything the handler yielded: an endpoint that does not aggregate its stream).
        """
        output = result.output
        complete = result.status is JobStatus.COMPLETED and isinstance(output, list)
        if complete and len(output) >= self.values:
            rest = output[self.values :]
            self.values += len(rest)
            self.doubt = self.broken = False
            return [StreamChunk(output=value) for value in rest]
        why = (
            f"it ended {result.status.value} with no output to recover them from"
            if result.status is not JobStatus.COMPLETED
            else "its output does not hold the streamed values (the endpoint does not "
            "aggregate its stream)"
        )
        raise ChunksMissing(
            f"job {result.id} on endpoint {endpoint_id!r}: an answer of /stream was lost "
            f"on the way, so stream chunks from output #{self.values} on may be missing, "
            f"and {why}",
            endpoint_id=endpoint_id,
            job_id=result.id,
            first_missing=self.values,
        )

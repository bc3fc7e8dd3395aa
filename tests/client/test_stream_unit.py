"""Reassembly of split chunks, against the emulator's own splitter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbext.client._stream import Reassembler, StreamProtocolError
from nbext.emulator.domain.streaming import to_chunks
from nbext.models import SPLIT_KEY, StreamChunk

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=40,
)


def wire(values: list[Any], limit: int) -> list[StreamChunk]:
    chunks: list[dict[str, Any]] = []
    for value in values:
        chunks += to_chunks(value, {"m": 1}, len(chunks), limit=limit)
    return [StreamChunk.model_validate(c) for c in chunks]


def reassemble(chunks: list[StreamChunk]) -> list[StreamChunk]:
    r = Reassembler()
    out = [whole for c in chunks if (whole := r.feed(c)) is not None]
    assert not r.pending
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(min_size=0, max_size=120) | json_values, max_size=5), st.integers(8, 40))
def test_any_values_split_by_the_emulator_come_back_whole(values: list[Any], limit: int) -> None:
    chunks = wire(values, limit)
    whole = reassemble(chunks)
    assert [c.output for c in whole] == values
    for c in whole:
        assert SPLIT_KEY not in c.metrics and c.metrics["m"] == 1


def test_split_values_keep_the_stream_index_of_their_first_part() -> None:
    chunks = wire(["ab", "x" * 50, {"k": "v" * 30}, "z"], limit=12)
    assert len(chunks) > 4
    whole = reassemble(chunks)
    assert whole[0].metrics["stream_index"] == 0 and whole[3].metrics["stream_index"] > 3
    assert whole[1].output == "x" * 50 and whole[2].output == {"k": "v" * 30}


def split(part: int, parts: int, text: str, encoding: str = "text") -> StreamChunk:
    return StreamChunk(
        output=text, metrics={SPLIT_KEY: {"part": part, "parts": parts, "encoding": encoding}}
    )


@pytest.mark.parametrize(
    "sequence",
    [
        [split(1, 2, "b")],  # starts in the middle
        [split(0, 2, "a"), split(0, 2, "a")],  # repeated part
        [split(0, 2, "a"), StreamChunk(output="plain")],  # interrupted
        [split(0, 2, "a"), split(1, 3, "b")],  # disagreeing totals
        [split(0, 1, "{not json", "json")],
        [split(0, 1, "x", "base64")],
        [StreamChunk(output=5, metrics={SPLIT_KEY: {"part": 0, "parts": 1, "encoding": "text"}})],
        [StreamChunk(output="x", metrics={SPLIT_KEY: "nope"})],
    ],
)
def test_parts_that_do_not_fit_together_are_an_error(sequence: list[StreamChunk]) -> None:
    r = Reassembler()
    with pytest.raises(StreamProtocolError):
        for chunk in sequence:
            r.feed(chunk)

"""The management corpus is answered exactly as it was recorded (``corpus.py``).

Recorded on the code before management records moved to REST v2's shape: ``/v1`` must
answer byte for byte as it did, and ``/v2`` too, on both stores. And the database a
recorded run wrote (its rows are in the fixture) still loads and serves the same
answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ..conftest import MakeEmulator
from . import corpus, corpus_endpoints, corpus_pods

pytestmark = pytest.mark.anyio


def recorded(fixture: Path = corpus.FIXTURE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(fixture.read_text())
    return data


def first_difference(got: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str:
    for i, (g, e) in enumerate(zip(got, expected, strict=False)):
        if g != e:
            return f"exchange {i} ({e.get('request')}):\n got      {g}\n expected {e}"
    return f"{len(got)} exchanges, {len(expected)} recorded"


async def test_every_answer_is_the_recorded_one(make_emulator: MakeEmulator) -> None:
    emu = make_emulator(demos=False)
    with corpus.seeded():
        async with corpus.client_for(emu) as client:
            got = await corpus.run(emu, client)
    expected = recorded()["exchanges"]
    assert got == expected, first_difference(got, expected)


async def test_a_database_written_before_loads_and_answers_the_same(tmp_path: Path) -> None:
    stored = recorded()["stored"]
    got = await corpus.restored(stored["rows"], tmp_path / "old.db", stored["now"])
    assert got == stored["answers"], first_difference(got, stored["answers"])


@pytest.fixture(params=[corpus_endpoints, corpus_pods], ids=["endpoints", "pods"])
def side(request: pytest.FixtureRequest) -> ModuleType:
    """A corpus of one resource's details beside the main one, in its own fixture."""
    module: ModuleType = request.param
    return module


async def test_every_answer_of_a_side_corpus_is_the_recorded_one(
    make_emulator: MakeEmulator, side: ModuleType
) -> None:
    emu = make_emulator(demos=False)
    with corpus.seeded():
        async with corpus.client_for(emu) as client:
            got = await corpus.run(emu, client, side.steps())
    expected = recorded(side.FIXTURE)["exchanges"]
    assert got == expected, first_difference(got, expected)


async def test_a_side_corpus_written_before_loads_and_answers_the_same(
    tmp_path: Path, side: ModuleType
) -> None:
    stored = recorded(side.FIXTURE)["stored"]
    got = await corpus.restored(stored["rows"], tmp_path / "old.db", stored["now"], side.RESTORED)
    assert got == stored["answers"], first_difference(got, stored["answers"])

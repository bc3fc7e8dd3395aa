"""Ids are shaped like the service's, and every character of the alphabet is drawn."""

from __future__ import annotations

from collections import Counter

import pytest

from nbext.emulator.domain.ids import ALPHABET, new_id
from nbext.emulator.domain.job_service import new_endpoint_id


@pytest.mark.parametrize("length", [1, 10, 14, 20, 23])
def test_an_id_has_the_length_asked_and_only_lowercase_letters_and_digits(length: int) -> None:
    for _ in range(200):
        drawn = new_id(length)
        assert len(drawn) == length
        assert set(drawn) <= set(ALPHABET)


def test_an_endpoint_id_is_fourteen_characters_of_the_alphabet() -> None:
    drawn = new_endpoint_id()
    assert len(drawn) == 14 and set(drawn) <= set(ALPHABET)


def test_every_character_is_drawn_in_every_position_and_ids_do_not_repeat() -> None:
    ids = [new_id(20) for _ in range(5000)]
    assert len(set(ids)) == len(ids)
    for position in (0, 10, 19):  # the low digits and the high ones alike
        counts = Counter(drawn[position] for drawn in ids)
        assert set(counts) == set(ALPHABET)
        # 5000 draws over 36 characters: about 139 each; a character drawn under 60
        # or over 240 times in one position would mean a skewed draw.
        assert min(counts.values()) > 60 and max(counts.values()) < 240

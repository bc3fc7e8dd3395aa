"""Properties over arbitrary outputs: detection never raises, previews hold no blob."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbext.media import find, gallery_html, preview

from .conftest import b64, jpeg, png, wav

BLOBS = [b64(png(16, 12)), b64(jpeg(20, 10)), b64(wav(0.05))]

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=80)
    | st.sampled_from(BLOBS)
    | st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(json_values)
def test_any_json_output_is_searched_and_drawn_without_raising_or_changing(output: Any) -> None:
    before = copy.deepcopy(output)
    found = find(output)
    shown = preview(output)
    gallery_html(found)
    assert output == before
    text = json.dumps(shown)
    for blob in BLOBS:
        assert blob not in text
    assert len(find(shown)) == sum(item.source == "url" for item in found)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=18, max_size=200))
def test_random_bytes_as_base64_are_media_only_when_their_signature_says_so(data: bytes) -> None:
    found = find(base64.b64encode(data).decode())
    assert len(found) <= 1
    if found:
        assert found[0].data == data


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=12, max_size=200), st.text(min_size=12, max_size=200))
def test_text_with_a_space_is_never_a_blob(head: str, tail: str) -> None:
    """Base64 has no spaces: a base64 PNG's start followed by prose stays text."""
    assert len(find(BLOBS[0][:40] + head + " " + tail)) == 0
    assert len(find(head + " " + tail)) == 0 or head.startswith(("data:", "http"))

"""The JSON preview: each blob becomes a short tag; nothing else changes."""

from __future__ import annotations

import copy
import json

from nbext.media import preview
from nbext.media.found import human_size

from .conftest import b64, jpeg, mp4, noise_png, png, wav


def test_each_blob_is_replaced_by_a_tag_and_no_base64_is_left() -> None:
    image = noise_png(300, 200)
    output = {
        "images": [b64(image), f"data:image/jpeg;base64,{b64(jpeg(80, 60))}"],
        "speech": {"audio": b64(wav(2.0)), "sample_rate": 16000},
        "video": b64(mp4()),
        "seed": 42,
        "prompt": "a lighthouse at dusk",
    }
    shown = preview(output)
    assert shown == {
        "images": [f"<PNG 300×200, {human_size(len(image))}>", shown["images"][1]],
        "speech": {"audio": shown["speech"]["audio"], "sample_rate": 16000},
        "video": shown["video"],
        "seed": 42,
        "prompt": "a lighthouse at dusk",
    }
    assert shown["images"][1].startswith("<JPEG 80×60, ")
    assert shown["speech"]["audio"].startswith("<WAV 2.0 s, ")
    assert shown["video"].startswith("<MP4, ")
    text = json.dumps(shown, ensure_ascii=False)
    assert "base64" not in text and b64(image)[:40] not in text
    assert len(text) < 400


def test_the_tag_reads_like_the_issue_asks() -> None:
    assert preview(b64(png(512, 512)))[:13] == "<PNG 512×512,"
    assert [human_size(n) for n in (812, 348_160, 4_299_161)] == ["812 B", "340 KB", "4.1 MB"]


def test_urls_and_ordinary_values_are_kept_and_the_output_is_not_changed() -> None:
    output = {"url": "https://cdn.example.com/0.png", "n": [1, 2.5, None, True], "ok": "yes"}
    before = copy.deepcopy(output)
    assert preview(output) == before
    assert output == before


def test_long_text_is_cut_and_non_media_bytes_are_counted() -> None:
    shown = preview({"log": "x" * 5000, "raw": b"\x00\x01" * 10}, max_text=100)
    assert shown == {"log": "x" * 100 + "… (5,000 characters)", "raw": "<20 bytes>"}
    assert preview("y" * 5000, max_text=None) == "y" * 5000


def test_raw_media_bytes_get_a_tag() -> None:
    assert preview({"png": png(10, 10)})["png"].startswith("<PNG 10×10, ")

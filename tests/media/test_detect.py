"""Finding media in outputs: by content, at any depth, under any key; text stays text."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from nbext.media import Media, find
from nbext.media.detect import MAX_DEPTH

from .conftest import (
    b64,
    flac,
    jpeg,
    mp3,
    mp4,
    noise_png,
    ogg_opus,
    picture,
    png,
    save,
    wav,
    webm,
)


def only(output: Any) -> Media:
    found = find(output)
    assert len(found) == 1, found
    return found[0]


def test_a_base64_png_is_found_with_its_size_and_dimensions() -> None:
    data = png(64, 48)
    item = only(b64(data))
    assert (item.path, item.mime, item.kind, item.source) == ("", "image/png", "image", "base64")
    assert (item.width, item.height, item.size) == (64, 48, len(data))
    assert item.data == data


def test_media_is_found_at_any_depth_under_any_key_in_order() -> None:
    output = {
        "images": [b64(png(32, 32)), b64(jpeg(80, 60))],
        "meta": {"voice": {"clip": b64(wav(0.25))}, "n": 2, "note": "two pictures"},
        "my key": [{"x": b64(mp4())}],
        7: b64(png(8, 8)),
    }
    found = find(output)
    assert found.paths == ["images[0]", "images[1]", "meta.voice.clip", "['my key'][0].x", "[7]"]
    assert [m.mime for m in found] == [
        "image/png",
        "image/jpeg",
        "audio/wav",
        "video/mp4",
        "image/png",
    ]
    assert (found[1].width, found[1].height) == (80, 60)


def test_a_list_at_the_root_and_tuples_are_searched() -> None:
    assert find([b64(png()), (b64(wav()),)]).paths == ["[0]", "[1][0]"]


@pytest.mark.parametrize(
    ("data", "mime", "name"),
    [
        (png(), "image/png", "PNG"),
        (jpeg(), "image/jpeg", "JPEG"),
        (save(picture(40, 30), "WEBP"), "image/webp", "WebP"),
        (save(picture(40, 30, "RGBA"), "WEBP"), "image/webp", "WebP"),
        (save(picture(40, 30), "GIF"), "image/gif", "GIF"),
        (wav(), "audio/wav", "WAV"),
        (mp3(), "audio/mpeg", "MP3"),
        (b"\xff\xfb\x90\x64" + bytes(60), "audio/mpeg", "MP3"),
        (ogg_opus(), "audio/ogg", "Opus"),
        (flac(), "audio/flac", "FLAC"),
        (mp4(), "video/mp4", "MP4"),
        (mp4(b"M4A "), "audio/mp4", "M4A"),
        (webm(), "video/webm", "WebM"),
    ],
)
def test_every_format_is_recognised_by_its_magic_bytes(data: bytes, mime: str, name: str) -> None:
    item = only({"blob": b64(data)})
    assert (item.mime, item.format.name, item.size) == (mime, name, len(data))


@pytest.mark.parametrize("fmt", ["WEBP", "GIF", "PNG"])
def test_image_dimensions_come_from_the_header(fmt: str) -> None:
    item = only(b64(save(picture(123, 45), fmt)))
    assert (item.width, item.height) == (123, 45)


def test_a_lossless_webp_and_a_progressive_jpeg_report_their_dimensions() -> None:
    lossless = only(b64(save_lossless_webp()))
    assert (lossless.width, lossless.height) == (77, 33)
    item = only(b64(jpeg(200, 150, progressive=True)))
    assert (item.width, item.height) == (200, 150)


def save_lossless_webp() -> bytes:
    import io

    out = io.BytesIO()
    picture(77, 33).save(out, "WEBP", lossless=True)
    return out.getvalue()


def test_audio_durations_come_from_the_header() -> None:
    assert only(b64(wav(0.75))).duration == pytest.approx(0.75)
    assert only(b64(flac(rate=44100, samples=88200))).duration == pytest.approx(2.0)
    assert only(b64(mp3())).duration is None


def test_bytes_values_are_media_too() -> None:
    item = only({"raw": png(10, 20)})
    assert (item.source, item.width, item.height) == ("bytes", 10, 20)
    assert find({"raw": b"not media at all, just some bytes"}) == find({})


def test_data_uris_are_decoded_whatever_their_key() -> None:
    data = jpeg(30, 20)
    item = only({"x": f"data:image/jpeg;base64,{b64(data)}"})
    assert (item.source, item.mime, item.data, item.width) == ("data-uri", "image/jpeg", data, 30)


def test_a_data_uri_trusts_the_bytes_over_its_declared_type() -> None:
    item = only(f"data:application/octet-stream;base64,{b64(wav())}")
    assert item.mime == "audio/wav"


def test_a_percent_encoded_svg_data_uri_is_an_image() -> None:
    svg = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='4' height='4'/%3E"
    item = only({"logo": svg})
    assert (item.mime, item.data) == (
        "image/svg+xml",
        svg.split(",", 1)[1].replace("%3C", "<").replace("%3E", ">").encode(),
    )


def test_a_data_uri_of_text_stays_text() -> None:
    assert len(find({"t": "data:text/plain;base64,SGVsbG8gd29ybGQsIHRoaXMgaXMgdGV4dA=="})) == 0


@pytest.mark.parametrize(
    ("url", "mime"),
    [
        ("https://cdn.example.com/out/0.png", "image/png"),
        ("https://cdn.example.com/out/0.JPG?X-Amz-Signature=abc&X-Amz-Expires=3600", "image/jpeg"),
        ("http://example.com/speech.wav", "audio/wav"),
        ("https://example.com/clip.mp4#t=3", "video/mp4"),
        ("https://bucket.s3.amazonaws.com/k?response-content-type=audio%2Fmpeg", "audio/mpeg"),
        ("https://images.example.com/photo?fm=webp&w=512", "image/webp"),
    ],
)
def test_media_urls_are_found_by_reference_and_not_fetched(url: str, mime: str) -> None:
    item = only({"result": {"url": url}})
    assert (item.source, item.mime, item.url, item.data, item.size) == (
        "url",
        mime,
        url,
        None,
        None,
    )


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/docs/getting-started",
        "https://example.com/model.safetensors",
        "see https://example.com/a.png for the picture",
        "SGVsbG8gd29ybGQsIHRoaXMgaXMgbm90IGFuIGltYWdl",  # "Hello world, this is not an image"
        "0123456789abcdef0123456789abcdef01234567",  # a hex digest
        "A" * 200,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abcdefghijklmnopqrstuvwxyz",  # a JWT
        "The quick brown fox jumps over the lazy dog, twice over.",
        "iVBORw0KGgo",  # the start of a PNG, too short to be one
        b64(png())[:40] + "!!!!" + b64(png())[44:],  # a PNG's start, then not base64
    ],
)
def test_strings_that_merely_look_like_base64_or_urls_stay_text(text: str) -> None:
    assert len(find({"text": text})) == 0


def test_base64_with_line_breaks_url_safe_alphabet_or_no_padding_is_still_found() -> None:
    data = noise_png(20, 20, seed=3)
    encoded = b64(data)
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    urlsafe = encoded.replace("+", "-").replace("/", "_").rstrip("=")
    assert "-" in urlsafe or "_" in urlsafe
    for text in (wrapped, urlsafe):
        assert only(text).data == data


def test_a_corrupt_image_is_still_found_and_never_raises() -> None:
    truncated = png(64, 64)[:30]
    garbage_jpeg = b"\xff\xd8\xff\xe0" + bytes(40)
    found = find(
        {"a": b64(truncated), "b": b64(garbage_jpeg), "c": b64(b"\x89PNG\r\n\x1a\n" + bytes(12))}
    )
    assert [(m.format.name, m.width, m.height) for m in found] == [
        ("PNG", 64, 64),  # the header survived the cut
        ("JPEG", None, None),
        ("PNG", None, None),
    ]


def test_find_never_changes_the_output() -> None:
    output = {"images": [b64(png())], "raw": png(), "url": "https://x.org/a.mp3"}
    before = copy.deepcopy(output)
    find(output)
    assert output == before


def test_very_deep_nesting_is_searched_to_a_bound_without_recursion_errors() -> None:
    shallow: Any = b64(png())
    for _ in range(MAX_DEPTH - 1):
        shallow = [shallow]
    assert len(find(shallow)) == 1
    deep: Any = b64(png())
    for _ in range(5000):
        deep = {"x": deep}
    assert len(find(deep)) == 0


def test_a_media_list_is_indexed_by_position_and_by_path_and_filtered_by_kind() -> None:
    found = find({"images": [b64(png()), b64(jpeg())], "speech": b64(wav()), "v": b64(mp4())})
    assert found["speech"] is found[2]
    assert found[:2].paths == ["images[0]", "images[1]"]
    assert found.images.paths == ["images[0]", "images[1]"]
    assert found.audio.paths == ["speech"] and found.videos.paths == ["v"]
    with pytest.raises(KeyError, match=r"no media at 'images\[9\]'; paths found: images\[0\]"):
        found["images[9]"]


def test_a_found_item_describes_itself_with_a_short_tag() -> None:
    item = only({"images": [b64(noise_png(200, 100))]})
    assert item.tag == f"<PNG 200×100, {round(item.size / 1024)} KB>"  # type: ignore[operator]
    assert repr(item) == f"Media(images[0]: {item.tag})"
    assert only(b64(wav(1.5))).tag.startswith("<WAV 1.5 s, ")
    assert repr(find({"u": "https://x.org/a.gif"})) == "MediaList([Media(u: https://x.org/a.gif)])"

"""Rendering: a captioned gallery, native players, and the size guards of the saved output."""

from __future__ import annotations

import re
import struct
import sys

import pytest

from nbext.media import (
    Limits,
    Media,
    find,
    full_size_html,
    gallery_html,
    inline_html,
    thumbnail,
)

from .conftest import b64, jpeg, mp4, noise_png, png, wav


def colours(html: str) -> list[str]:
    """Every colour-bearing style value in ``html``."""
    side = r"(?:-(?:top|right|bottom|left))?"
    props = rf"(?:color|background(?:-color)?|border{side}(?:-color)?|fill|stroke|outline)"
    return re.findall(rf"(?<![-\w]){props}\s*:\s*([^;\"]+)", html)


def test_a_gallery_shows_every_image_captioned_with_its_path() -> None:
    found = find({"images": [b64(png(64, 48)), b64(jpeg(80, 60)), b64(png(20, 20))]})
    rendered = gallery_html(found)
    assert rendered.placements == ("full", "full", "full")
    assert rendered.html.count("<figure") == 3 and rendered.html.count("<img ") == 3
    for item in found:
        assert f"<code>{item.path}</code>" in rendered.html
        assert item.data_uri() in rendered.html
    assert rendered.stored_bytes == sum(len(item.data_uri()) for item in found)


def test_sound_and_video_get_native_players() -> None:
    rendered = gallery_html(find({"speech": b64(wav(1.0)), "clip": b64(mp4())}))
    assert re.search(
        r'<audio controls preload="metadata" src="data:audio/wav;base64,', rendered.html
    )
    assert re.search(
        r'<video controls preload="metadata" src="data:video/mp4;base64,', rendered.html
    )


def test_colours_come_only_from_jupyterlab_variables_and_nothing_is_fetched() -> None:
    found = find(
        {
            "a": b64(png()),
            "big": b64(noise_png(700, 700)),
            "s": b64(wav()),
            "u": "https://x.org/a.png",
        }
    )
    html = gallery_html(found, Limits(inline_bytes=100_000)).html
    values = colours(html)
    assert values and all(
        re.fullmatch(r"(?:\d+px solid )?var\(--jp-[a-z0-9-]+\)", v) for v in values
    )
    assert "<script" not in html and "<link" not in html and "@import" not in html
    assert re.findall(r'src="(https?://[^"]+)"', html) == ["https://x.org/a.png"]  # by reference


def test_an_image_above_the_threshold_is_stored_as_a_thumbnail_with_a_full_size_control() -> None:
    big = noise_png(1200, 1200)  # about 4 MB: random pixels do not compress
    assert len(big) > 4_000_000
    found = find({"images": [b64(big)]})
    rendered = gallery_html(found)
    assert rendered.placements == ("thumbnail",)
    assert b64(big)[1000:1100] not in rendered.html
    assert rendered.stored_bytes < 300_000
    assert len(rendered.html) < rendered.stored_bytes + 3000
    assert "show full size" in rendered.html
    assert "nbext.media.find(output)[&#x27;images[0]&#x27;]" in rendered.html
    thumb = re.search(r'src="data:image/jpeg;base64,([^"]+)"', rendered.html)
    assert thumb is not None
    assert find(thumb.group(1))[0].width == 512


def test_one_output_stores_at_most_its_budget_however_many_images_it_has() -> None:
    images = [b64(noise_png(300, 300, seed=i)) for i in range(6)]  # 360 KB each as base64
    rendered = gallery_html(find(images), Limits(job_bytes=1024 * 1024, thumbnail_px=128))
    assert rendered.stored_bytes <= 1024 * 1024
    assert rendered.placements == (
        "full",
        "full",
        "thumbnail",
        "thumbnail",
        "thumbnail",
        "thumbnail",
    )
    tight = gallery_html(find(images), Limits(job_bytes=50_000, thumbnail_px=128))
    assert tight.stored_bytes <= 50_000 and "placeholder" in tight.placements
    assert len(tight.html) < 60_000


def test_without_pillow_a_large_image_gets_a_placeholder_and_the_control(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = find([b64(noise_png(400, 300))])
    monkeypatch.setitem(sys.modules, "PIL", None)
    monkeypatch.setitem(sys.modules, "PIL.Image", None)
    rendered = gallery_html(found, Limits(inline_bytes=1000))
    assert rendered.placements == ("placeholder",) and rendered.stored_bytes == 0
    assert "not stored in the notebook" in rendered.html and "show full size" in rendered.html
    assert "PNG 400×300" in rendered.html
    assert thumbnail(found[0], 64) is None
    with pytest.raises(ImportError, match="to_pil\\(\\) needs Pillow: pip install pillow"):
        found[0].to_pil()


def test_a_corrupt_image_renders_without_raising() -> None:
    corrupt = b"\x89PNG\r\n\x1a\n" + bytes(2_000_000)
    found = find({"bad": b64(corrupt), "cut": b64(png(64, 64)[:40])})
    rendered = gallery_html(found, Limits(inline_bytes=1000))
    assert rendered.placements == ("placeholder", "full")
    assert thumbnail(found[0], 64) is None


def test_a_50_mb_output_renders_small_and_fast_to_load() -> None:
    blob = b"\xff\xd8\xff\xe0" + bytes(50 * 1024 * 1024)
    output = {"video": b64(b"\x00\x00\x00\x18ftypisom" + bytes(50 * 1024 * 1024)), "img": b64(blob)}
    found = find(output)
    assert [m.tag for m in found] == ["<MP4, 50.0 MB>", "<JPEG, 50.0 MB>"]
    rendered = gallery_html(found)
    assert rendered.placements == ("placeholder", "placeholder")
    assert len(rendered.html) < 5000 and rendered.stored_bytes == 0


def test_media_urls_are_drawn_by_reference_with_an_open_link() -> None:
    html = gallery_html(find({"u": "https://x.org/y.mp3", "v": "https://x.org/v.webm"})).html
    assert '<audio controls preload="none" src="https://x.org/y.mp3"' in html
    assert '<video controls preload="none" src="https://x.org/v.webm"' in html
    assert html.count(">open</a>") == 2


def test_paths_and_urls_are_escaped() -> None:
    found = find({"<b>": b64(png()), "q": "https://x.org/a.png?a=1&b=2"})
    html = gallery_html(found).html
    assert "<b>" not in html and "<code>[&#x27;&lt;b&gt;&#x27;]</code>" in html
    assert 'src="https://x.org/a.png?a=1&amp;b=2"' in html
    # Quotes and angle brackets end a URL: such a string is never drawn as a link.
    assert len(find('https://x.org/a.png?x="><script>')) == 0


def test_a_caller_can_draw_its_own_full_size_control() -> None:
    found = find([b64(noise_png(300, 300))])

    def button(item: Media, limits: Limits) -> str:
        return f'<button data-path="{item.path}">full</button>'

    rendered = gallery_html(found, Limits(inline_bytes=10), control=button)
    assert '<button data-path="[0]">full</button>' in rendered.html
    assert "show full size" not in rendered.html


def test_full_size_shows_the_whole_item_whatever_its_size() -> None:
    item = find(b64(noise_png(400, 400)))[0]
    assert item.data_uri() in full_size_html(item)
    assert item._repr_mimebundle_()["text/html"] == full_size_html(item)


@pytest.mark.parametrize("field", ["inline_bytes", "job_bytes", "thumbnail_px"])
def test_limits_refuse_what_is_not_a_size(field: str) -> None:
    with pytest.raises(ValueError, match=f"Limits.{field} must be an integer >= 0, got -1"):
        Limits(**{field: -1})


def test_a_transparent_image_keeps_its_transparency_in_the_thumbnail() -> None:
    item = find(b64(png(600, 400, mode="RGBA")))[0]
    small = thumbnail(item, 100)
    assert small is not None and small[0] == "image/png"
    thumb = find(small[1])[0]
    assert (thumb.width, thumb.height) == (100, 67)


def test_an_image_whose_header_claims_a_huge_size_gets_no_thumbnail() -> None:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I4sII", 13, b"IHDR", 100_000, 100_000)
    item = find(b64(header + bytes(600_000)))[0]
    assert (item.width, item.height) == (100_000, 100_000)
    assert thumbnail(item, 64) is None
    assert gallery_html([item]).placements == ("placeholder",)


def test_inline_previews_are_a_few_kilobytes_whatever_the_pictures_weigh() -> None:
    found = find({"big": b64(noise_png(900, 900)), "small": b64(png(40, 30)), "s": b64(wav())})
    html = inline_html(found)
    big, small = re.findall(r'<img src="(data:[^"]+)"', html)
    assert big.startswith("data:image/jpeg;base64,") and len(big) < 20_000
    assert small == f"data:image/png;base64,{b64(png(40, 30))}"  # its own thumbnail
    assert "&lt;WAV 0.5 s" in html and 'alt="big: PNG 900×900' in html
    many = inline_html(find([b64(png(8, 8))] * 7), most=4)
    assert many.count("<img") == 4 and "+3 more" in many


def test_a_corrupt_picture_previews_as_its_tag() -> None:
    html = inline_html(find({"bad": b64(b"\x89PNG\r\n\x1a\n" + bytes(20_000))}))
    assert "<img" not in html and "<code>&lt;PNG" in html

"""The full bytes of a medium kept small, written beside the notebook for a link."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from nbext.media import Media, find, gallery_html, link_control, write_beside

from .conftest import b64, jpeg, mp4, noise_png, wav


def file_name(item: Media) -> str:
    """The name ``write_beside`` gives ``item``'s file (written in the working directory)."""
    return write_beside(item, ".")


def test_the_name_is_the_path_then_the_content_hash_with_the_usual_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    found = find({"images": [b64(noise_png(40, 40)), b64(jpeg())], "voice": b64(wav())})
    names = [file_name(item) for item in found]
    assert re.fullmatch(r"images-0-[0-9a-f]{16}\.png", names[0]), names
    assert re.fullmatch(r"images-1-[0-9a-f]{16}\.jpg", names[1]), names
    assert re.fullmatch(r"voice-[0-9a-f]{16}\.wav", names[2]), names
    assert file_name(find(b64(mp4()))[0]).startswith("output-")  # the output itself
    again = find({"elsewhere": {"x": b64(noise_png(40, 40))}})[0]
    assert file_name(again)[-20:] == names[0][-20:]  # same bytes, same hash


def test_a_url_that_was_not_fetched_has_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (item,) = find({"picture": "https://example.org/a.png"})
    with pytest.raises(ValueError, match="picture is a URL that was not fetched"):
        file_name(item)
    assert not list(tmp_path.iterdir())


def test_writing_twice_leaves_one_file_with_the_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = noise_png(64, 64)
    item = find({"my image": [b64(data)]})[0]
    href = write_beside(item, "media/out")
    assert href.startswith("media/out/my-image-0-") and href.endswith(".png")
    assert (tmp_path / href).read_bytes() == data
    assert write_beside(item, "media/out") == href
    assert [p.name for p in (tmp_path / "media/out").iterdir()] == [href.rsplit("/", 1)[1]]


def test_an_absolute_folder_is_linked_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    item = find(b64(wav()))[0]
    href = write_beside(item, tmp_path / "team media")
    assert href.startswith("../team%20media/output-") and href.endswith(".wav")
    assert (tmp_path / "notebooks" / unquote(href)).read_bytes() == item.data


def test_a_folder_that_cannot_be_made_raises_oserror_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file")
    item = find(b64(noise_png(40, 40)))[0]
    with pytest.raises(OSError):
        write_beside(item, tmp_path / "taken" / "media")
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


def test_the_link_control_is_a_plain_link_that_opens_in_a_new_tab() -> None:
    found = find({"images": [b64(noise_png(300, 300))], "speech": b64(wav(20.0))})
    rendered = gallery_html(found, control=lambda item, _: link_control(item, f"m/{item.kind}%201"))
    assert rendered.placements == ("full", "placeholder")  # 270 KB kept; 625 KB past the limit
    (link,) = re.findall(r"<a [^>]+>[^<]+</a>", rendered.html)
    assert link.startswith('<a class="nbext-full-size" href="m/audio%201" target="_blank"')
    assert link.endswith(">play in full</a>") and "in m/audio 1 beside the notebook" in link
    item = found["images[0]"]
    assert link_control(item, "m/x.png").endswith(">show full size</a></div>")
    assert "<script" not in rendered.html

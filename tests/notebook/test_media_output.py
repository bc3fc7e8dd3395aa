"""Media in a job's output are drawn in the panel and in its saved form, never spelled out."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from traitlets import TraitError

from tests.media.conftest import b64, jpeg, noise_png, wav

from .conftest import Notebook

LINK = re.compile(
    r'<a class="nbext-full-size" href="([^"]+)" target="_blank" rel="noopener" '
    r'title="[^"]*">(show full size|play in full)</a>'
)


@pytest.fixture(autouse=True)
def notebook_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kernel's working directory, as JupyterLab makes it the notebook's folder:
    where the full size of media kept small is written."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def full_size_dir(nb: Notebook) -> Iterator[Callable[[str], None]]:
    """Sets ``RunpodMagics.media_full_size_dir`` with ``%config``, as a user does; the
    session's shell keeps its config, so the default comes back after the test."""

    def configure(folder: str) -> None:
        nb.run(f"%config RunpodMagics.media_full_size_dir = {folder!r}")

    yield configure
    configure("nbext-media")


def links(drawn: str) -> list[tuple[str, str]]:
    """The "show full size" links of a drawn output: (relative href, its words)."""
    return LINK.findall(drawn)


PICTURE = '{"prompt": "a lake at dawn", "seed": 1, "width": 256, "height": 256, "step_ms": 0}'


def test_a_picture_is_drawn_and_its_base64_is_a_tag(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(f"%%runpod_job art -o out\n{PICTURE}")
    encoded = nb.shell.user_ns["out"]["images"][0]
    assert base64.b64decode(encoded).startswith(b"\x89PNG")  # -o keeps the raw output

    live = nb.panel().rendering().html
    final = nb.displays[-1]["data"]
    for drawn in (live, final["text/html"]):
        assert 'class="nbext-media"' in drawn and "<img" in drawn
        assert "&lt;PNG 256×256" in drawn
        assert encoded[:64] not in drawn.replace(f"base64,{encoded}", "")
    assert "<PNG 256×256" in final["text/plain"]
    assert encoded[:64] not in final["text/plain"]


def test_an_output_without_media_reads_as_before(nb: Notebook) -> None:
    nb.run('%%runpod_job echo -o out\n{"text": "aGVsbG8gd29ybGQ="}')
    final = nb.displays[-1]["data"]
    assert "nbext-media" not in final["text/html"]
    assert "aGVsbG8gd29ybGQ=" in final["text/plain"]  # base64 that is no media stays text


def test_streamed_previews_update_one_picture_and_the_text_keeps_tags(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    # a step every 150 ms, so the panel is drawn while the job runs (with no wait between
    # steps the job could end before the first /stream read, on a loaded machine)
    streamed = PICTURE.replace('"step_ms": 0}', '"step_ms": 150, "steps": 4, "stream": true}')
    nb.run(f"%%runpod_job art --stream -o steps\n{streamed}")
    chunks = nb.shell.user_ns["steps"]
    assert len(chunks) == 4 and all("images" in chunk for chunk in chunks)  # -o: raw
    panel = nb.panel()
    assert chunks[0]["images"][0][:64] not in panel.text and panel.text.count("<PNG") == 4
    final = nb.displays[-1]["data"]
    assert "<PNG" in final["text/plain"] and chunks[0]["images"][0][:64] not in final["text/plain"]
    # While the job ran, the preview was drawn in the live output (plain HTML, no widget).
    live = [b["text/html"] for b in nb.outputs()[0] if 'data-state="IN_PROGRESS"' in b["text/html"]]
    assert any('class="nbext-media"' in page and "<img" in page for page in live)


def test_the_media_limits_are_traits_of_the_magics(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(f"%%runpod_job art\n{PICTURE}")
    assert "data:image/png;base64," in nb.displays[-1]["data"]["text/html"]

    nb.run("%config RunpodMagics.media_job_bytes = 0")  # keep no media in the notebook
    nb.run(f"%%runpod_job art\n{PICTURE}")
    kept = saved_panel(nb)
    assert 'class="nbext-media"' in kept and "data:image/png;base64," not in kept

    nb.run("%config RunpodMagics.media_job_bytes = 1048576")
    nb.run(f"%%runpod_job art\n{PICTURE}")
    assert "data:image/png;base64," in nb.displays[-1]["data"]["text/html"]
    with pytest.raises(TraitError, match="media_thumbnail_px must be >= 0"):
        nb.magics.media_thumbnail_px = -1


def big_picture_handler(job: dict[str, Any]) -> Any:
    """A job whose picture is past the inline limit (random pixels: about 1 MB)."""
    return {"images": [b64(noise_png(600, 600))], "seed": 7}


def saved_output(nb: Notebook) -> dict[str, str]:
    """The output the job's panel left in its cell: its last static rendering."""
    return dict(
        [d for d in nb.displays if "nbext-static" in d["data"].get("text/html", "")][-1]["data"]
    )


def saved_panel(nb: Notebook) -> str:
    return saved_output(nb)["text/html"]


def test_a_corrupt_picture_does_not_break_the_panel(nb: Notebook) -> None:
    corrupt = b"\x89PNG\r\n\x1a\n" + bytes(700_000)  # a PNG signature, then nothing valid
    cut = jpeg(200, 150)[:300]  # a JPEG cut short
    nb.deploy(lambda job: {"bad": b64(corrupt), "cut": b64(cut), "n": 1}, "corrupt")
    nb.run("%%runpod_job corrupt -o out\n{}")
    assert nb.record().state == "COMPLETED" and nb.shell.user_ns["out"]["bad"] == b64(corrupt)
    saved = saved_panel(nb)
    assert 'data-state="COMPLETED"' in saved and "not stored in the notebook" in saved
    assert "&lt;PNG, 684 KB&gt;" in saved and "&lt;JPEG 200×150, 300 B&gt;" in saved
    assert b64(corrupt)[:200] not in saved and "<PNG, 684 KB>" in saved_output(nb)["text/plain"]


def test_a_14_mb_output_keeps_the_page_and_the_notebook_small(nb: Notebook) -> None:
    """Near the largest output the service returns (20 MB, about 19 MB once in base64)."""
    video = b64(b"\x00\x00\x00\x18ftypisom" + bytes(14 * 1024 * 1024))
    nb.deploy(lambda job: {"video": video}, "huge")
    nb.run("%%runpod_job huge -o out\n{}")
    assert nb.shell.user_ns["out"]["video"] == video  # -o: the whole output, unchanged
    live = nb.panel().rendering().html  # what the browser gets while the kernel lives
    saved = saved_panel(nb)
    for drawn in (live, saved):
        assert "&lt;MP4, 14.0 MB&gt;" in drawn and len(drawn) < 10_000
    every = sum(len(str(d["data"])) for d in nb.displays)
    assert every < 100_000  # every display and update of the cell together


def test_a_large_picture_is_kept_small_and_links_to_its_full_file_beside_the_notebook(
    nb: Notebook, notebook_folder: Path
) -> None:
    nb.deploy(big_picture_handler, "big")
    nb.run("%%runpod_job big -o out\n{}")
    encoded = nb.shell.user_ns["out"]["images"][0]
    assert len(encoded) > 1_000_000  # -o keeps the raw output whole

    saved = saved_panel(nb)
    assert "(thumbnail)" in saved and encoded[:64] not in saved
    assert len(saved) < len(encoded) / 4  # a 512 px JPEG of random pixels, the worst case
    ((href, words),) = links(saved)
    assert words == "show full size"
    assert re.fullmatch(r"nbext-media/images-0-[0-9a-f]{16}\.png", href), href
    assert (notebook_folder / href).read_bytes() == base64.b64decode(encoded)
    assert links(nb.panel().rendering().html) == [(href, words)]  # the live panel too
    assert nb.displays[-1]["data"] == saved_output(nb)  # the panel is the cell's last output
    assert not any("widget-view" in str(d["data"]) for d in nb.displays[-1:])

    nb.run("%%runpod_job big\n{}")  # the same bytes again: the same file, nothing new
    assert links(saved_panel(nb)) == [(href, words)]
    assert [p.name for p in (notebook_folder / "nbext-media").iterdir()] == [href.split("/")[1]]


def test_a_long_sound_past_the_limits_is_offered_in_full_from_its_file(
    nb: Notebook, notebook_folder: Path
) -> None:
    speech = wav(20.0)  # 20 s at 16 kHz: 625 KB, past the 512 KB a file may keep
    nb.deploy(lambda job: {"reply": {"speech": b64(speech)}}, "talk")
    nb.run("%%runpod_job talk\n{}")
    saved = saved_panel(nb)
    assert "not stored in the notebook" in saved and "data:audio/wav" not in saved
    ((href, words),) = links(saved)
    assert words == "play in full" and href.endswith(".wav") and "reply-speech-" in href
    assert (notebook_folder / href).read_bytes() == speech


def test_small_pictures_get_no_link_and_no_file(nb: Notebook, notebook_folder: Path) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(f"%%runpod_job art\n{PICTURE}")
    assert links(saved_panel(nb)) == [] and "show full size" not in saved_panel(nb)
    assert not (notebook_folder / "nbext-media").exists()


def test_a_folder_that_cannot_be_written_leaves_the_text_form_and_one_warning_line(
    nb: Notebook,
    notebook_folder: Path,
    full_size_dir: Callable[[str], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (notebook_folder / "taken").write_text("a file where the folder would go")
    nb.deploy(lambda job: {"a": b64(noise_png(600, 600)), "b": b64(noise_png(600, 600, 2))}, "two")
    full_size_dir("taken/media")  # a file is in the way: as a read-only folder, for root too
    nb.run("%%runpod_job two -o out\n{}")
    assert nb.record().state == "COMPLETED" and len(nb.shell.user_ns["out"]["a"]) > 1_000_000
    saved = saved_panel(nb)
    assert 'data-state="COMPLETED"' in saved and links(saved) == []
    assert saved.count("nbext.media.find(output)") == 2  # each item says how to get it
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("nbext: could not write the full size of a, b to taken/media/ (")
    assert "Traceback" not in line and "thumbnail" in line

    full_size_dir("elsewhere")  # a folder that can be written: links again
    nb.run("%%runpod_job two\n{}")
    assert [words for _, words in links(saved_panel(nb))] == ["show full size"] * 2
    assert capsys.readouterr().err == ""


def test_an_empty_folder_name_writes_nothing(
    nb: Notebook, notebook_folder: Path, full_size_dir: Callable[[str], None]
) -> None:
    nb.deploy(big_picture_handler, "big")
    full_size_dir("")
    nb.run("%%runpod_job big\n{}")
    saved = saved_panel(nb)
    assert links(saved) == [] and "(thumbnail)" in saved and "nbext.media.find(" in saved
    assert list(notebook_folder.iterdir()) == []


def test_streamed_previews_write_no_file_the_output_at_the_end_does(
    nb: Notebook, notebook_folder: Path
) -> None:
    def previews(job: dict[str, Any]) -> Any:
        for step in range(3):  # each preview past the limits, as 1024 px diffusion steps are
            yield {"step": step, "images": [b64(noise_png(600, 600, seed=step))]}

    nb.deploy(previews, "steps")
    nb.run("%%runpod_job steps --stream -o out\n{}")
    assert len(nb.shell.user_ns["out"]) == 3  # the output: every step, as the service sends
    folder = notebook_folder / "nbext-media"
    names = sorted(path.name for path in folder.iterdir())
    # only the output's own three pictures (paths [0].images[0]...), no file per preview
    assert [name[:11] for name in names] == ["0-images-0-", "1-images-0-", "2-images-0-"]
    assert [href for href, _ in links(saved_panel(nb))] == [f"nbext-media/{n}" for n in names]


def test_a_large_svg_with_a_script_is_linked_as_a_drawing_its_owner_alone_reads(
    nb: Notebook, notebook_folder: Path
) -> None:
    """An SVG past the inline limit: the saved output links to a file that cannot run."""
    shapes = "".join(f'<circle cx="{n % 500}" cy="{n // 500}" r="1"/>' for n in range(20_000))
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)" width="500" height="40">'
        f'<script>alert(2)</script><image href="https://evil.example/t.png"/>{shapes}</svg>'
    )
    assert len(svg) > 512 * 1024
    uri = "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()
    nb.deploy(lambda job: {"diagram": uri}, "drawing")
    nb.run("%%runpod_job drawing\n{}")

    saved = saved_panel(nb)
    ((href, words),) = links(saved)
    assert words == "show full size"
    assert re.fullmatch(r"nbext-media/diagram-[0-9a-f]{16}\.svg", href), href
    assert "<script" not in saved and "onload" not in saved and "evil.example" not in saved
    on_disk = notebook_folder / href
    written = on_disk.read_text()
    assert "<script" not in written and "onload" not in written and "evil.example" not in written
    assert written.count("<circle") == 20_000  # the drawing is whole
    assert on_disk.stat().st_mode & 0o077 == 0  # its owner's only

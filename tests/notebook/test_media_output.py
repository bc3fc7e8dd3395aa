"""Media in a job's output are drawn in the panel and in its saved form, never spelled out."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from ipywidgets.widgets.widget import _instances
from traitlets import TraitError

from nbext.notebook import awaiting
from nbext.notebook.widgets.full_size import FullSizeControl
from tests.media.conftest import b64, jpeg, noise_png, wav

from .conftest import Notebook

PICTURE = '{"prompt": "a lake at dawn", "seed": 1, "width": 256, "height": 256, "step_ms": 0}'


def test_a_picture_is_drawn_and_its_base64_is_a_tag(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(f"%%runpod_job art -o out\n{PICTURE}")
    encoded = nb.shell.user_ns["out"]["images"][0]
    assert base64.b64decode(encoded).startswith(b"\x89PNG")  # -o keeps the raw output

    live = nb.panel().output_view.value
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
    streamed = PICTURE.replace("}", ', "steps": 4, "stream": true}')
    nb.run(f"%%runpod_job art --stream -o steps\n{streamed}")
    chunks = nb.shell.user_ns["steps"]
    assert len(chunks) == 4 and all("images" in chunk for chunk in chunks)  # -o: raw
    panel = nb.panel()
    assert chunks[0]["images"][0][:64] not in panel.text and panel.text.count("<PNG") == 4
    final = nb.displays[-1]["data"]
    assert "<PNG" in final["text/plain"] and chunks[0]["images"][0][:64] not in final["text/plain"]


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


def control_of(nb: Notebook) -> FullSizeControl:
    (control,) = [w for w in _instances.values() if isinstance(w, FullSizeControl)]
    return control


def test_a_large_picture_is_kept_small_and_its_full_size_shown_on_demand(nb: Notebook) -> None:
    nb.deploy(big_picture_handler, "big")
    nb.run("%%runpod_job big -o out\n{}")
    encoded = nb.shell.user_ns["out"]["images"][0]
    assert len(encoded) > 1_000_000  # -o keeps the raw output whole

    # the panel's static output: a thumbnail, and how to get the full picture from Python
    saved = saved_panel(nb)
    assert "(thumbnail)" in saved and encoded[:64] not in saved
    assert len(saved) < len(encoded) / 4  # a 512 px JPEG of random pixels, the worst case
    assert "is not stored in the notebook" in saved and "nbext.media.find(" in saved

    # under it, a live control: one button per picture kept small, nothing shown yet
    control = control_of(nb)
    shown = nb.displays[-1]
    assert "application/vnd.jupyter.widget-view+json" in shown["data"]
    assert "images[0]" in shown["data"]["text/plain"]
    (button,) = control.buttons
    assert button.description == "show full size: images[0]"
    assert control.views[0].value == "" and control.keep_button.layout.display == "none"

    displays = len(nb.displays)
    button.click()  # from the kernel's memory: nothing fetched, nothing written to cells
    assert f"base64,{encoded}" in control.views[0].value
    assert control.views[0].layout.display is None
    assert len(nb.displays) == displays and button.description.startswith("hide full size")
    button.click()  # hidden again: the page drops the megabytes
    assert control.views[0].value == "" and control.keep_button.layout.display == "none"


def test_keep_writes_the_full_picture_into_the_saved_output_in_place_of_the_control(
    nb: Notebook,
) -> None:
    nb.deploy(big_picture_handler, "big")
    nb.run("%%runpod_job big -o out\n{}")
    encoded = nb.shell.user_ns["out"]["images"][0]
    control = control_of(nb)
    control_id = nb.displays[-1]["transient"]["display_id"]
    control.buttons[0].click()
    control.keep_button.click()
    kept = nb.displays[-1]
    assert kept["update"] and kept["transient"]["display_id"] == control_id
    assert "application/vnd.jupyter.widget-view+json" not in kept["data"]
    assert f"base64,{encoded}" in kept["data"]["text/html"]
    assert kept["data"]["text/plain"] == "full size kept in the notebook: images[0]"
    assert control.kept and control.keep_button.comm is None  # closed: nothing left to ask


def test_small_pictures_get_no_control(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(f"%%runpod_job art\n{PICTURE}")
    assert not [w for w in _instances.values() if isinstance(w, FullSizeControl)]
    assert "show full size" not in nb.displays[-1]["data"]["text/html"]


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


def test_a_50_mb_output_keeps_the_page_and_the_notebook_small(nb: Notebook) -> None:
    video = b64(b"\x00\x00\x00\x18ftypisom" + bytes(50 * 1024 * 1024))
    nb.deploy(lambda job: {"video": video}, "huge")
    nb.run("%%runpod_job huge -o out\n{}")
    assert nb.shell.user_ns["out"]["video"] == video  # -o: the whole output, unchanged
    live = nb.panel().output_view.value  # what the browser gets while the kernel lives
    saved = saved_panel(nb)
    for drawn in (live, saved):
        assert "&lt;MP4, 50.0 MB&gt;" in drawn and len(drawn) < 10_000
    every = sum(len(str(d["data"])) for d in nb.displays)
    assert every < 100_000  # every display and update of the cell together


def test_a_long_sound_past_the_limits_is_offered_in_full_too(nb: Notebook) -> None:
    speech = b64(wav(20.0))  # 20 s at 16 kHz: 625 KB, past the 512 KB a file may keep
    nb.deploy(lambda job: {"speech": speech}, "talk")
    nb.run("%%runpod_job talk\n{}")
    assert "not stored in the notebook" in saved_panel(nb)
    control = control_of(nb)
    (button,) = control.buttons
    assert button.description == "show in full: speech"
    button.click()
    assert f'<audio controls preload="metadata" src="data:audio/wav;base64,{speech}"' in (
        control.views[0].value
    )


def test_the_control_can_be_turned_off_for_notebooks_that_are_shared(nb: Notebook) -> None:
    nb.deploy(big_picture_handler, "big")
    nb.run("%config RunpodMagics.media_full_size_control = False")
    nb.run("%%runpod_job big\n{}")
    assert not [w for w in _instances.values() if isinstance(w, FullSizeControl)]
    assert "nbext-static" in nb.displays[-1]["data"]["text/html"]  # the panel is the last
    assert "(thumbnail)" in saved_panel(nb)
    nb.run("%config RunpodMagics.media_full_size_control = True")
    nb.run("%%runpod_job big\n{}")
    assert control_of(nb).items[0].label == "images[0]"


@pytest.mark.anyio
@pytest.mark.parametrize("options", ["", " --sync"])
async def test_a_cell_that_awaits_the_job_offers_the_control_too(
    nb: Notebook, options: str
) -> None:
    nb.deploy(big_picture_handler, "big")
    await awaiting.run_cell_magic("runpod_job", "big" + options, "{}")
    control = control_of(nb)
    control.buttons[0].click()
    assert "data:image/png;base64," in control.views[0].value
    await nb.conn.aclose()

"""Media in a job's output are drawn in the panel and in its saved form, never spelled out."""

from __future__ import annotations

import base64

import pytest
from traitlets import TraitError

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
    kept = nb.displays[-1]["data"]["text/html"]
    assert 'class="nbext-media"' in kept and "data:image/png;base64," not in kept

    nb.run("%config RunpodMagics.media_job_bytes = 1048576")
    nb.run(f"%%runpod_job art\n{PICTURE}")
    assert "data:image/png;base64," in nb.displays[-1]["data"]["text/html"]
    with pytest.raises(TraitError, match="media_thumbnail_px must be >= 0"):
        nb.magics.media_thumbnail_px = -1

"""An SVG written beside the notebook draws and does nothing else; only its owner reads it.

The file is parsed back as a browser would meet it, a document of its own: no element
that runs or embeds (script, foreignObject, animations, other namespaces), no event
handler, no reference outside the file but inline raster pictures.
"""

from __future__ import annotations

import base64
import os
import stat
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from nbext.media import find, write_beside
from nbext.media.svg import SVG_NS, sanitised_svg

PNG_1PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
    )
).decode()

HOSTILE = f"""<?xml version="1.0"?>
<?xml-stylesheet href="https://evil.example/a.css"?>
<!-- a comment -->
<svg xmlns="{SVG_NS}" xmlns:xlink="http://www.w3.org/1999/xlink"
     xmlns:ev="http://www.w3.org/2001/xml-events" width="120" height="80" onload="alert(1)"
     ev:event="click">
  <script>alert(2)</script>
  <script xlink:href="https://evil.example/a.js"/>
  <style>@import url(https://evil.example/b.css); rect {{ fill: red }}</style>
  <style>.ok {{ fill: url(#sky) }}</style>
  <defs><linearGradient id="sky"><stop offset="0" stop-color="#39f"/></linearGradient></defs>
  <a xlink:href="javascript:alert(3)" target="_top"><rect id="r" class="ok" width="60"
     height="40" fill="url(#sky)" stroke="url(https://evil.example/p.svg#x)"
     onclick="alert(4)" OnMouseOver="alert(5)" style="fill: url(&quot;https://evil.example/q&quot;)"
     /></a>
  <image href="https://evil.example/tracker.png" width="1" height="1"/>
  <image xlink:href="data:image/png;base64,{PNG_1PX}" width="1" height="1"/>
  <image href="data:image/svg+xml;base64,PHN2Zy8+" width="1" height="1"/>
  <use href="#r" x="60"/>
  <use href="https://evil.example/sprites.svg#icon"/>
  <foreignObject><div xmlns="http://www.w3.org/1999/xhtml" onmouseover="alert(6)">x</div>
  </foreignObject>
  <set attributeName="href" to="javascript:alert(7)"/>
  <animate attributeName="fill" values="red;blue" dur="1s" onbegin="alert(8)"/>
  <iframe xmlns="http://www.w3.org/1999/xhtml" src="https://evil.example/"/>
  <g xml:base="https://evil.example/"
     style="background: image-set('https://evil.example/i.png' 1x)"/>
  <text x="4" y="70" font-family="monospace" xml:space="preserve">costs $5 &amp; &lt;more&gt;</text>
</svg>
""".encode()


def elements(data: bytes) -> Iterator[ET.Element]:
    return ET.fromstring(data).iter()


def assert_inert(data: bytes) -> None:
    """Nothing in ``data`` runs, embeds or loads anything outside the file."""
    text = data.decode()
    assert "<?xml-stylesheet" not in text and "<!--" not in text and "<!DOCTYPE" not in text
    for element in elements(data):
        assert element.tag.startswith(f"{{{SVG_NS}}}"), element.tag
        local = element.tag.split("}")[1]
        assert local not in ("script", "foreignObject", "set", "animate", "a", "iframe")
        for name, value in element.attrib.items():
            assert not name.split("}")[-1].lower().startswith("on"), (local, name)
            assert "evil.example" not in value and "javascript:" not in value, (local, value)
            if name.split("}")[-1] == "href":
                assert value.startswith(("#", "data:image/png;base64,")), value
        if local == "style":
            assert "@import" not in (element.text or "")


def test_what_draws_is_kept_and_what_runs_or_loads_is_not() -> None:
    clean = sanitised_svg(HOSTILE)
    assert clean is not None
    assert_inert(clean)
    root = ET.fromstring(clean)
    assert root.get("width") == "120" and root.get("height") == "80"
    tags = [e.tag.split("}")[1] for e in root.iter()]
    assert tags.count("image") == 3 and "linearGradient" in tags and "use" in tags
    rect = root.find(f".//{{{SVG_NS}}}rect")
    assert rect is not None and rect.get("fill") == "url(#sky)" and rect.get("stroke") is None
    assert rect.get("style") is None  # it loaded a file
    text = root.find(f"{{{SVG_NS}}}text")
    assert text is not None and text.text == "costs $5 & <more>"
    assert text.get("{http://www.w3.org/XML/1998/namespace}space") == "preserve"
    group = root.find(f"{{{SVG_NS}}}g[@id]")  # the link, now a group: none has an id
    assert group is None and not [g for g in root.iter(f"{{{SVG_NS}}}g") if g.attrib]
    styles = [e.text or "" for e in root.iter(f"{{{SVG_NS}}}style")]
    assert styles == ["", ".ok { fill: url(#sky) }"]


@pytest.mark.parametrize(
    "data",
    [
        b"<svg",  # not well-formed
        b"<html><script>alert(1)</script></html>",  # not an SVG
        b'<svg xmlns="http://example.org/not-svg"/>',
        b'<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
        f'<svg xmlns="{SVG_NS}">{"<g>" * 5000}{"</g>" * 5000}</svg>'.encode(),
    ],
    ids=["broken", "html", "other-namespace", "entities", "nested-5000"],
)
def test_what_is_not_a_plain_svg_is_refused(data: bytes) -> None:
    assert sanitised_svg(data) is None


@pytest.fixture
def umask() -> Iterator[None]:
    """A permissive umask, as on many desktops: the modes below must not follow it."""
    previous = os.umask(0o002)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.usefixtures("umask")
def test_the_file_on_disk_is_the_sanitised_svg_readable_by_its_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    item = find({"diagram": "data:image/svg+xml;base64," + base64.b64encode(HOSTILE).decode()})[0]
    href = write_beside(item, "nbext-media")
    assert href.startswith("nbext-media/diagram-") and href.endswith(".svg")
    written = (tmp_path / href).read_bytes()
    assert written == sanitised_svg(HOSTILE)
    assert_inert(written)
    assert stat.S_IMODE((tmp_path / href).stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "nbext-media").stat().st_mode) == 0o700
    assert write_beside(item, "nbext-media") == href  # again: the same name, one file
    assert len(list((tmp_path / "nbext-media").iterdir())) == 1


@pytest.mark.usefixtures("umask")
def test_a_stricter_umask_narrows_the_mode_further(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    os.umask(0o277)  # even the owner may not write
    item = find({"p": "data:image/svg+xml;base64," + base64.b64encode(HOSTILE).decode()})[0]
    href = write_beside(item, ".")
    assert stat.S_IMODE((tmp_path / href).stat().st_mode) == 0o400


def test_an_svg_that_cannot_be_sanitised_is_written_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    broken = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)'
    item = find({"d": "data:image/svg+xml;base64," + base64.b64encode(broken).decode()})[0]
    href = write_beside(item, "m")
    assert href.endswith(".svg.txt")  # served as text/plain: shown, never run
    assert (tmp_path / href).read_bytes() == broken

"""Media as HTML: a captioned gallery, native players, and guards on what gets stored.

The live panel and a saved notebook's static output draw from the same pure functions.
The HTML needs no kernel, network or script (nbconvert, GitHub), takes its colours from
JupyterLab's theme variables, and stores no more than ``Limits`` allows: past them a
picture is a thumbnail (or a placeholder) with a "show full size" control, so a 50 MB
output neither bloats the notebook nor stalls the browser. An untrusted notebook's
sanitiser drops the colours, never the pictures.
"""

from __future__ import annotations

from base64 import b64encode
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Literal
from urllib.parse import unquote

from .found import Media, human_size
from .thumbnails import thumbnail

Placement = Literal["full", "thumbnail", "placeholder", "link"]
"""How one item is stored: whole, as a thumbnail, as a placeholder, or by its URL."""


@dataclass(frozen=True)
class Limits:
    """What one output may add to the saved notebook."""

    inline_bytes: int = 512 * 1024
    """A file up to this size (bytes) is stored whole; a larger one only as a thumbnail."""
    job_bytes: int = 1024 * 1024
    """All media of one output together store at most this many bytes (as base64)."""
    thumbnail_px: int = 512
    """The longer side of a thumbnail, in pixels."""

    def __post_init__(self) -> None:
        for name in ("inline_bytes", "job_bytes", "thumbnail_px"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"Limits.{name} must be an integer >= 0, got {value!r}")


@dataclass(frozen=True)
class Rendered:
    """A gallery's HTML, how each item was stored, and the media bytes it carries."""

    html: str
    placements: tuple[Placement, ...]
    stored_bytes: int
    """Characters of media data (base64) inside ``html``: what the notebook grows by."""


Control = Callable[[Media, Limits], str]
"""The HTML of the "show full size" control of an item not stored whole."""

_FIGURE = (
    "margin:0;padding:4px;border:1px solid var(--jp-border-color2);border-radius:2px;"
    "background:var(--jp-layout-color1);box-sizing:border-box;max-width:{cell}px"
)
_CAPTION = (
    "font-family:var(--jp-ui-font-family);font-size:var(--jp-ui-font-size0);"
    "color:var(--jp-ui-font-color2);padding-top:2px;overflow-wrap:anywhere"
)
_SINGLE_CELL, _GALLERY_CELL = 512, 256


def gallery_html(
    items: Sequence[Media], limits: Limits | None = None, control: Control | None = None
) -> Rendered:
    """Every item in a wrapping gallery, each captioned with its path; players for sound.

    Items are stored in order while ``limits.job_bytes`` lasts: whole when small enough,
    else as a thumbnail, else as a placeholder. ``control`` draws the "show full size"
    control (default: a ``<details>`` saying how to show it from Python).
    """
    limits = limits or Limits()
    control = control or static_control
    cell = _SINGLE_CELL if len(items) == 1 else _GALLERY_CELL
    left = limits.job_bytes
    figures: list[str] = []
    placements: list[Placement] = []
    for item in items:
        placement, body, stored = _place(item, limits, left, cell)
        left -= stored
        extra = control(item, limits) if placement in ("thumbnail", "placeholder") else ""
        figures.append(_figure(item, body, cell, extra))
        placements.append(placement)
    html = (
        '<div class="nbext-media" style="display:flex;flex-wrap:wrap;gap:8px;'
        f'align-items:flex-start">{"".join(figures)}</div>'
    )
    return Rendered(html, tuple(placements), limits.job_bytes - left)


def full_size_html(item: Media) -> str:
    """One item whole, whatever its size: for a user who asked to see it in full."""
    body, _ = _whole(item, _SINGLE_CELL * 2)
    return _figure(item, body, _SINGLE_CELL * 2)


def inline_html(items: Sequence[Media], px: int = 48, most: int = 4) -> str:
    """Previews small enough for a table cell (a row per job): a thumbnail of each
    picture (its tag without Pillow), a tag for sound, video and URLs; past ``most``
    items, how many more."""
    parts: list[str] = []
    for item in items[:most]:
        src = _thumbnail_uri(item, px * 2)  # sharp on HiDPI
        if src is None:
            parts.append(f"<code>{escape(item.tag)}</code>")
            continue
        if item.data is not None and len(own := item.data_uri()) <= len(src):
            src = own  # a small picture is its own thumbnail
        alt = f"{item.label}: {item.describe()}"
        parts.append(
            f'<img src="{src}" alt="{escape(alt)}" title="{escape(alt)}" '
            f'style="max-height:{px}px;max-width:{px}px;vertical-align:middle">'
        )
    if len(items) > most:
        parts.append(f"<small>+{len(items) - most} more</small>")
    body = "".join(parts)
    return f'<span class="nbext-media-inline" style="display:inline-flex;gap:2px">{body}</span>'


def static_control(item: Media, limits: Limits) -> str:
    """The "show full size" text when no file of it was written: how to get it from Python."""
    why = (
        f"The full {escape(item.describe())} is not stored in the notebook, which keeps "
        f"at most {human_size(limits.inline_bytes)} a file and "
        f"{human_size(limits.job_bytes)} an output. From Python: "
        f"<code>nbext.media.find(output)[{escape(repr(item.path))}]</code> shows it, "
        "where <code>output</code> is the job's output (kept by <code>-o NAME</code>, "
        "or <code>job.output()</code>)."
    )
    return (
        f'<details style="{_CAPTION}"><summary style="cursor:pointer">{_show(item)}</summary>'
        f"{why}</details>"
    )


def link_control(item: Media, href: str) -> str:
    """The "show full size" link to the file written beside the notebook (``href`` is
    relative): it opens with no kernel, in JupyterLab and in an exported page alike."""
    title = f"the full {item.describe()}, in {unquote(href)} beside the notebook"
    return (
        f'<div style="{_CAPTION}"><a class="nbext-full-size" href="{escape(href)}" '
        f'target="_blank" rel="noopener" title="{escape(title)}">{_show(item)}</a></div>'
    )


def _show(item: Media) -> str:
    """``show full size`` for a picture; a sound or a video is offered ``in full``."""
    return "show full size" if item.kind == "image" else "play in full"


def _place(item: Media, limits: Limits, left: int, cell: int) -> tuple[Placement, str, int]:
    if item.data is None:
        return "link", _whole(item, cell)[0], 0
    if item.size is not None and item.size <= limits.inline_bytes:
        body, stored = _whole(item, cell)
        if stored <= left:
            return "full", body, stored
    src = _thumbnail_uri(item, limits.thumbnail_px)
    if src is not None and len(src) <= left:
        return "thumbnail", _img(item, src, cell, note="thumbnail"), len(src)
    return "placeholder", _placeholder(item, cell), 0


def _thumbnail_uri(item: Media, px: int) -> str | None:
    """A ``data:`` URI of ``item``'s thumbnail; None for what has no thumbnail."""
    small = thumbnail(item, px) if item.kind == "image" else None
    return None if small is None else f"data:{small[0]};base64,{b64encode(small[1]).decode()}"


def _whole(item: Media, cell: int) -> tuple[str, int]:
    """The item's own element (img, audio, video) and the data characters it carries."""
    src = item.data_uri()
    stored = 0 if item.data is None else len(src)
    if item.kind == "image":
        return _img(item, src, cell), stored
    preload = "none" if item.data is None else "metadata"
    width = f"width:{min(cell, 320) - 10}px" if item.kind == "audio" else "max-width:100%"
    element = (  # <audio ...> or <video ...>
        f'<{item.kind} controls preload="{preload}" src="{escape(src)}" '
        f'style="display:block;{width}"></{item.kind}>'
    )
    return element, stored


def _img(item: Media, src: str, cell: int, note: str = "") -> str:
    size = ""
    if item.width and item.height:
        scale = min(1.0, (cell - 10) / item.width)
        size = f' width="{round(item.width * scale)}" height="{round(item.height * scale)}"'
    alt = f"{item.label}: {item.describe()}" + (f" ({note})" if note else "")
    # A URL loads when scrolled to; inline data is in the page already, so it shows at once.
    lazy = ' loading="lazy"' if item.data is None else ""
    return (
        f'<img src="{escape(src)}" alt="{escape(alt)}"{size}{lazy} '
        'style="display:block;max-width:100%;height:auto">'
    )


def _placeholder(item: Media, cell: int) -> str:
    width = cell - 10
    height = round(width * item.height / item.width) if item.width and item.height else 96
    height = max(48, min(height, width))
    return (
        f'<div role="img" aria-label="{escape(item.label)}: not stored" style="display:flex;'
        f"align-items:center;justify-content:center;text-align:center;width:{width}px;"
        f"height:{height}px;background:var(--jp-layout-color2);color:var(--jp-ui-font-color2);"
        f'font-family:var(--jp-ui-font-family);font-size:var(--jp-ui-font-size1)">'
        f"{escape(item.describe())}<br>not stored in the notebook</div>"
    )


def _figure(item: Media, body: str, cell: int, extra: str = "") -> str:
    caption = f"<code>{escape(item.label)}</code> {escape(item.describe())}"
    if item.url is not None:
        caption += (
            f' · <a href="{escape(item.url)}" target="_blank" rel="noopener noreferrer">open</a>'
        )
    return (
        f'<figure class="nbext-media-item" style="{_FIGURE.format(cell=cell)}">{body}'
        f'<figcaption style="{_CAPTION}">{caption}</figcaption>{extra}</figure>'
    )

"""Media in job outputs: find images, sounds and videos; preview and draw them safely.

``nbext.media.find(output)`` is the one call: it returns a ``MediaList`` of ``Media``,
each with its path in the output (``images[2]``), MIME type, size and, for images,
width × height, and each ready to become an IPython display object (``.to_ipython()``),
a PIL image (``.to_pil()``) or plain bytes (``.data`` with ``.mime``). The output itself
is never changed. ``preview`` replaces blobs by short tags for reading; ``gallery_html``
draws them within the ``Limits`` of what a saved notebook should carry, and
``write_beside`` puts the full bytes of one kept small in a file its link points at.

This package knows nothing of the client, the emulator or the notebook layer: both the
live panel and the static saved output use it as plain functions.
"""

from __future__ import annotations

from .detect import detect, find
from .files import write_beside
from .formats import Format
from .found import Media, MediaList
from .preview import preview
from .render import (
    Limits,
    Rendered,
    full_size_html,
    gallery_html,
    inline_html,
    link_control,
    static_control,
)
from .thumbnails import thumbnail

__all__ = [
    "Format",
    "Limits",
    "Media",
    "MediaList",
    "Rendered",
    "detect",
    "find",
    "full_size_html",
    "gallery_html",
    "inline_html",
    "link_control",
    "preview",
    "static_control",
    "thumbnail",
    "write_beside",
]

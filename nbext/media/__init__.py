"""Media in job outputs: find images, sounds and videos; preview and draw them safely.

``find(output)`` returns a ``MediaList`` of ``Media``, each with its path in the output
(``images[2]``), MIME type and size, ready to become an IPython display object, a PIL
image or bytes. ``preview`` replaces blobs by short tags; ``gallery_html`` draws them
within ``Limits``; ``write_beside`` writes one's full bytes to a file a link points at.
This package knows nothing of the client, the emulator or the notebook layer.
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

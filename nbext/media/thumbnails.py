"""Small stand-ins for large images, made with Pillow when it is installed; without it, or
for an image it cannot read, the caller shows a placeholder: never a reason to fail."""

from __future__ import annotations

import warnings
from io import BytesIO

from .found import Media

MAX_PIXELS = 64_000_000
"""Larger images get no thumbnail: decoding them would hold the kernel for seconds."""


def thumbnail(media: Media, max_px: int) -> tuple[str, bytes] | None:
    """``(mime, bytes)`` of ``media`` shrunk to at most ``max_px`` on its longer side:
    JPEG when opaque (small), PNG to keep transparency; None when it cannot be made."""
    if media.data is None or media.kind != "image" or media.format.name == "SVG":
        return None
    if not media.width or not media.height or media.width * media.height > MAX_PIXELS:
        return None  # a header we cannot read: Pillow would only scan the bytes to fail
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(BytesIO(media.data))
            image.draft("RGB", (max_px, max_px))  # JPEG: decode at a reduced scale, fast
            image.thumbnail((max_px, max_px))
        transparent = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
        out = BytesIO()
        if transparent:
            image.convert("RGBA").save(out, "PNG", optimize=True)
            return "image/png", out.getvalue()
        image.convert("RGB").save(out, "JPEG", quality=85)
        return "image/jpeg", out.getvalue()
    except Exception:  # any unreadable image: no thumbnail, the caller shows a placeholder
        return None

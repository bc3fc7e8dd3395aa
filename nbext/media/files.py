"""A medium's full bytes as a file beside the notebook, for a saved output to link to.

A saved notebook keeps a large picture as a thumbnail only. Its full size has to live
somewhere that still answers when the kernel that ran the job is gone (a reopened
notebook, an nbconvert page, a colleague's copy): a file in a folder next to the
notebook, which a relative link in the output reaches through JupyterLab's contents
API, or straight from disk beside an exported page. The name is the content's hash, so
running the cell again writes nothing new and two outputs with the same bytes share it.

Such a file is opened as a document of the site that serves it, not as a picture in an
``<img>``: an SVG is written reduced to what draws (``svg.py``), or, when it cannot be,
as plain text, which no browser runs. The files and the folder nbext makes for them are
readable by their owner only (0600 and 0700, narrowed further by the umask): a notebook
may hold what its owner would not publish, and sharing the folder is the owner's call,
as sharing the notebook is.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from threading import get_ident
from urllib.parse import quote

from .formats import EXTENSIONS
from .found import Media
from .svg import sanitised_svg

_EXTENSION = {fmt: ext for ext, fmt in reversed(EXTENSIONS.items())}
"""Each format's usual extension: the first spelling listed (png, jpg, wav, mp4...)."""


def _written(item: Media) -> tuple[str, bytes]:
    """The file's name and the bytes it holds: ``item``'s own, but for an SVG (above).

    ``images-0-3f2a9c1b7d4e5a60.png``: where it sat in the output, for a person who
    browses the folder, then its content's hash, which makes the name stable."""
    if item.data is None:
        raise ValueError(f"{item.label} is a URL that was not fetched: it has no bytes to write")
    digest = hashlib.sha256(item.data).hexdigest()[:16]
    where = re.sub(r"[^A-Za-z0-9]+", "-", item.label).strip("-")[:60] or "output"
    suffix, data = _EXTENSION[item.format], item.data
    if item.format.mime == "image/svg+xml":
        picture = sanitised_svg(item.data)
        suffix, data = ("svg", picture) if picture is not None else ("svg.txt", item.data)
    return f"{where}-{digest}.{suffix}", data


def write_beside(item: Media, folder: str | os.PathLike[str]) -> str:
    """Write ``item``'s bytes into ``folder`` (relative to the working directory, which
    is the notebook's own in JupyterLab) and return the relative URL an output links to.

    An existing file of that name already holds these bytes (the name is their hash) and
    is left alone. The bytes go to a temporary file first, so a full disk never leaves a
    truncated file behind under the final name. Raises ``OSError`` when it cannot write.
    """
    name, data = _written(item)
    directory = Path(folder)
    target = directory / name
    if not (target.is_file() and target.stat().st_size == len(data)):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # one temporary name per thread: a live panel may redraw while the cell ends
        partial = target.with_name(f".{target.name}.{os.getpid()}-{get_ident()}.partial")
        partial.unlink(missing_ok=True)  # left by a crash, with whatever mode it had
        try:
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with open(descriptor, "wb") as file:
                file.write(data)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return quote(_relative(target).as_posix())


def _relative(target: Path) -> Path:
    """``target`` as seen from the working directory: a link from the output is relative."""
    if not target.is_absolute():
        return target
    try:
        return Path(os.path.relpath(target))
    except ValueError:  # another drive on Windows: no relative path exists
        return target

"""A medium's full bytes as a file beside the notebook, for a saved output to link to.

A saved notebook keeps a large picture as a thumbnail only. Its full size has to live
somewhere that still answers when the kernel that ran the job is gone (a reopened
notebook, an nbconvert page, a colleague's copy): a file in a folder next to the
notebook, which a relative link in the output reaches through JupyterLab's contents
API, or straight from disk beside an exported page. The name is the content's hash, so
running the cell again writes nothing new and two outputs with the same bytes share it.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from threading import get_ident
from urllib.parse import quote

from .formats import EXTENSIONS, Format
from .found import Media

_EXTENSION: dict[Format, str] = {}
for _ext, _fmt in EXTENSIONS.items():
    _EXTENSION.setdefault(_fmt, _ext)  # the first spelling listed: png, jpg, wav, mp4...


def extension(fmt: Format) -> str:
    """The usual file name extension of ``fmt`` (``png``, ``jpg``, ``wav``), no dot."""
    return _EXTENSION.get(fmt, fmt.name.lower())


def file_name(item: Media) -> str:
    """``images-0-3f2a9c1b7d4e5a60.png``: where it sat in the output, for a person who
    browses the folder, then its content's hash, which makes the name stable."""
    if item.data is None:
        raise ValueError(f"{item.label} is a URL that was not fetched: it has no bytes to write")
    digest = hashlib.sha256(item.data).hexdigest()[:16]
    where = re.sub(r"[^A-Za-z0-9]+", "-", item.label).strip("-")[:60] or "output"
    return f"{where}-{digest}.{extension(item.format)}"


def write_beside(item: Media, folder: str | os.PathLike[str]) -> str:
    """Write ``item``'s bytes into ``folder`` (relative to the working directory, which
    is the notebook's own in JupyterLab) and return the relative URL an output links to.

    An existing file of that name already holds these bytes (the name is their hash) and
    is left alone. The bytes go to a temporary file first, so a full disk never leaves a
    truncated file behind under the final name. Raises ``OSError`` when it cannot write.
    """
    directory = Path(folder)
    target = directory / file_name(item)
    data = item.data or b""
    if not (target.is_file() and target.stat().st_size == len(data)):
        directory.mkdir(parents=True, exist_ok=True)
        # one temporary name per thread: a live panel may redraw while the cell ends
        partial = target.with_name(f".{target.name}.{os.getpid()}-{get_ident()}.partial")
        try:
            partial.write_bytes(data)
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

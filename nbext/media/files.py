"""A medium's full bytes as a file beside the notebook, for a saved output to link to.

A saved notebook keeps a large picture as a thumbnail only; its full size must outlive
the kernel (a reopened notebook, an nbconvert page, a colleague's copy), so it goes in a
folder next to the notebook, named by its content's hash (a rerun writes nothing new).
Such a file opens as a document of the site serving it, so an SVG is written reduced to
what draws (``svg.py``), else as plain text. Files and folder are their owner's only
(0600, 0700): a notebook may hold what its owner would not publish.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from threading import get_ident
from urllib.parse import quote

from .found import Media
from .svg import sanitised_svg


def _written(item: Media) -> tuple[str, bytes]:
    """The file's name (``images-0-3f2a9c1b7d4e5a60.png``: where it sat, then its hash)
    and the bytes it holds: ``item``'s own, but for an SVG (above)."""
    if item.data is None:
        raise ValueError(f"{item.label} is a URL that was not fetched: it has no bytes to write")
    digest = hashlib.sha256(item.data).hexdigest()[:16]
    where = re.sub(r"[^A-Za-z0-9]+", "-", item.label).strip("-")[:60] or "output"
    suffix, data = item.format.extensions[0], item.data
    if item.format.mime == "image/svg+xml":
        picture = sanitised_svg(item.data)
        suffix, data = ("svg", picture) if picture is not None else ("svg.txt", item.data)
    return f"{where}-{digest}.{suffix}", data


def write_beside(item: Media, folder: str | os.PathLike[str]) -> str:
    """Write ``item``'s bytes into ``folder`` (relative to the working directory, the
    notebook's own in JupyterLab) and return the relative URL an output links to; raises
    ``OSError`` when it cannot. The bytes go to a temporary file first, so a full disk
    never leaves a truncated file under the final name."""
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

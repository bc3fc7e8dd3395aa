"""What detection found: one ``Media`` per blob or media URL, and the ``MediaList`` of them."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal, SupportsIndex, overload

from .formats import Format, Kind

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

Source = Literal["base64", "data-uri", "url", "bytes"]


def human_size(size: int) -> str:
    """``812 B``, ``340 KB``, ``4.1 MB``: the unit a person reads at a glance (1 KB = 1024 B)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def human_seconds(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{int(seconds // 60)}:{round(seconds % 60):02d}"


@dataclass(frozen=True)
class Media:
    """One image, sound or video found in an output, at ``path`` (e.g. ``images[2]``)."""

    path: str
    """Where in the output it sits, as a JSON path reads: ``images[2]``,
    ``result.audio``, ``['my key'][0]``; empty when the output itself is the media."""
    format: Format
    source: Source
    data: bytes | None = field(default=None, repr=False)
    """The file's bytes; None for a URL that was not fetched."""
    url: str | None = None
    width: int | None = None
    height: int | None = None
    duration: float | None = None
    """Seconds, where the header says it (WAV, FLAC)."""

    @property
    def mime(self) -> str:
        return self.format.mime

    @property
    def kind(self) -> Kind:
        return self.format.kind

    @property
    def size(self) -> int | None:
        """Bytes of the file; None for a URL not fetched."""
        return None if self.data is None else len(self.data)

    @property
    def label(self) -> str:
        """The path for a caption: ``output`` when the output itself is the media."""
        return self.path or "output"

    def describe(self) -> str:
        """``PNG 512×512, 340 KB``: format, then what is known of its extent and size."""
        parts = [self.format.name]
        if self.width and self.height:
            parts[0] += f" {self.width}×{self.height}"
        if self.duration is not None:
            parts[0] += f" {human_seconds(self.duration)}"
        if self.size is not None:
            parts.append(human_size(self.size))
        elif self.url is not None:
            parts.append("URL")
        return ", ".join(parts)

    @property
    def tag(self) -> str:
        """The short stand-in for the blob in a JSON preview: ``<PNG 512×512, 340 KB>``."""
        return f"<{self.describe()}>"

    def data_uri(self) -> str:
        """A ``data:`` URI of the bytes (a URL media gives its URL)."""
        if self.data is None:
            return self.url or ""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"

    def fetch(self, timeout: float = 30.0) -> Media:
        """A copy with the bytes the URL serves: the only way detection ever downloads."""
        if self.data is not None or self.url is None:
            return self
        import httpx

        from .detect import describe_bytes

        try:
            response = httpx.get(self.url, timeout=timeout, follow_redirects=True)
        except httpx.HTTPError as exc:
            raise OSError(f"could not fetch {self.label} from {self.url}: {exc}") from None
        if response.is_error:
            raise OSError(
                f"could not fetch {self.label} from {self.url}: HTTP {response.status_code} "
                f"{response.reason_phrase}"
            )
        found = describe_bytes(response.content, self.path, "url", declared=self.format)
        return replace(found or self, data=response.content, url=self.url)

    def to_ipython(self) -> Any:
        """An ``IPython.display`` ``Image``, ``Audio`` or ``Video`` of this media."""
        from importlib import import_module

        display: Any = import_module("IPython.display")  # its constructors are untyped
        kind = {"image": display.Image, "audio": display.Audio, "video": display.Video}[self.kind]
        if self.data is None:
            return kind(url=self.url)
        if self.format.name == "SVG":
            return display.SVG(data=self.data)
        if self.kind == "image":
            return kind(data=self.data, format=self.format.mime.split("/")[1])
        if self.kind == "video":
            return kind(data=self.data, embed=True, mimetype=self.mime)
        audio = kind(data=self.data)
        audio.mimetype = self.mime  # Audio takes no MIME type: it would guess WAV
        return audio

    def to_pil(self) -> PILImage:
        """A PIL image (needs Pillow); a URL media must be fetched first."""
        if self.kind != "image" or self.format.name == "SVG":
            raise ValueError(f"{self.label} is {self.mime}; only raster images become PIL images")
        if self.data is None:
            raise ValueError(f"{self.label} is a URL; call .fetch() first to download it")
        try:
            from PIL import Image
        except ImportError:
            raise ImportError("to_pil() needs Pillow: pip install pillow") from None
        from io import BytesIO

        image = Image.open(BytesIO(self.data))
        image.load()
        return image

    def _repr_mimebundle_(self, **_: Any) -> dict[str, Any]:
        from .render import full_size_html

        return {"text/plain": repr(self), "text/html": full_size_html(self)}

    def __repr__(self) -> str:
        where = self.url if self.data is None else self.tag
        return f"Media({self.label}: {where})"


class MediaList(tuple[Media, ...]):
    """The media of one output, in the order they appear; index by position or by path."""

    @overload
    def __getitem__(self, index: SupportsIndex | str) -> Media: ...

    @overload
    def __getitem__(self, index: slice) -> MediaList: ...

    def __getitem__(self, index: SupportsIndex | str | slice) -> Media | MediaList:
        if isinstance(index, slice):
            return MediaList(super().__getitem__(index))
        if isinstance(index, str):
            for item in self:
                if item.path == index:
                    return item
            paths = ", ".join(item.label for item in self) or "none"
            raise KeyError(f"no media at {index!r}; paths found: {paths}")
        return super().__getitem__(index)

    @property
    def paths(self) -> list[str]:
        return [item.path for item in self]

    @property
    def images(self) -> MediaList:
        return MediaList([m for m in self if m.kind == "image"])

    @property
    def audio(self) -> MediaList:
        return MediaList([m for m in self if m.kind == "audio"])

    @property
    def videos(self) -> MediaList:
        return MediaList([m for m in self if m.kind == "video"])

    def _repr_html_(self) -> str:
        from .render import gallery_html

        return gallery_html(self).html

    def __repr__(self) -> str:
        return "MediaList([" + ", ".join(repr(item) for item in self) + "])"

"""Media formats told apart by their first bytes, and what their headers say.

Only the container's header is read, enough for a size or a duration without decoding
a pixel, so a 50 MB output costs a few slices; a bad header yields ``None``, never an
exception: outputs come from code we do not control.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Literal

Kind = Literal["image", "audio", "video"]


@dataclass(frozen=True)
class Format:
    """A known media format: its short name, MIME type and kind."""

    name: str
    """What a person calls it: ``PNG``, ``WAV``, ``MP4``."""
    mime: str
    kind: Kind
    extensions: tuple[str, ...]
    """File name extensions, the one nbext writes first."""
    other_mimes: tuple[str, ...] = ()
    """MIME types some programs declare for it besides ``mime``."""


PNG = Format("PNG", "image/png", "image", ("png",))
JPEG = Format("JPEG", "image/jpeg", "image", ("jpg", "jpeg"), ("image/jpg",))
WEBP = Format("WebP", "image/webp", "image", ("webp",))
GIF = Format("GIF", "image/gif", "image", ("gif",))
SVG = Format("SVG", "image/svg+xml", "image", ("svg",))
WAV = Format("WAV", "audio/wav", "audio", ("wav",), ("audio/x-wav", "audio/wave"))
MP3 = Format("MP3", "audio/mpeg", "audio", ("mp3",), ("audio/mp3",))
OGG = Format("OGG", "audio/ogg", "audio", ("ogg", "oga"))
OPUS = Format("Opus", "audio/ogg", "audio", ("opus",), ("audio/opus",))
FLAC = Format("FLAC", "audio/flac", "audio", ("flac",), ("audio/x-flac",))
M4A = Format("M4A", "audio/mp4", "audio", ("m4a",))
MP4 = Format("MP4", "video/mp4", "video", ("mp4", "m4v"))
MOV = Format("MOV", "video/quicktime", "video", ("mov",))
WEBM = Format("WebM", "video/webm", "video", ("webm",), ("audio/webm",))
FORMATS = (PNG, JPEG, WEBP, GIF, SVG, WAV, MP3, OGG, OPUS, FLAC, M4A, MP4, MOV, WEBM)

SNIFF_BYTES = 48
"""How many leading bytes ``sniff`` needs to tell every format apart."""


def sniff(head: bytes) -> Format | None:
    """The format whose signature ``head`` (the first bytes of a file) starts with, if any."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return WEBP
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return WAV
    if head.startswith(b"fLaC"):
        return FLAC
    if head.startswith(b"OggS"):
        return OPUS if b"OpusHead" in head[:64] else OGG
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return WEBM
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        if brand in (b"M4A ", b"M4B "):
            return M4A
        return MOV if brand == b"qt  " else MP4
    if head.startswith(b"ID3") or _mp3_frame(head):
        return MP3
    return None


def _mp3_frame(head: bytes) -> bool:
    """An MPEG audio frame header: sync bits, a real layer, bit rate and sample rate."""
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version, layer = (head[1] >> 3) & 0x3, (head[1] >> 1) & 0x3
    bitrate, rate = head[2] >> 4, (head[2] >> 2) & 0x3
    return version != 1 and layer != 0 and bitrate not in (0x0, 0xF) and rate != 3


def format_for_mime(mime: str) -> Format | None:
    """The format a declared MIME type names (``data:`` URIs, URLs), if it is media."""
    return _BY_MIME.get(mime.split(";")[0].strip().lower())


EXTENSIONS = {ext: fmt for fmt in FORMATS for ext in fmt.extensions}
"""File name extensions of media a URL may point at."""

_BY_MIME = {
    mime: fmt
    for fmt in reversed(FORMATS)  # the first format of a MIME type wins: audio/ogg is OGG
    for mime in (fmt.mime, *fmt.other_mimes)
}


# ---- what the headers say ----------------------------------------------------------------


def image_size(fmt: Format, data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the image's header, or None when it cannot be read."""
    try:
        if fmt is PNG:
            return _positive(*struct.unpack(">II", data[16:24])) if data[12:16] == b"IHDR" else None
        if fmt is GIF:
            return _positive(*struct.unpack("<HH", data[6:10]))
        if fmt is JPEG:
            return _jpeg_size(data)
        if fmt is WEBP:
            return _webp_size(data)
    except (struct.error, IndexError):
        return None
    return None


def _positive(width: int, height: int) -> tuple[int, int] | None:
    return (width, height) if width > 0 and height > 0 else None


_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG's marker segments to the first start-of-frame."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return _positive(width, height)
        if marker == 0xDA or length < 2:  # scan data: no frame header before it
            return None
        i += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return _positive(width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return _positive((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return _positive(width, height)
    return None


def duration(fmt: Format, data: bytes) -> float | None:
    """Seconds of audio, where the header says it outright (WAV, FLAC); else None."""
    try:
        if fmt is WAV:
            return _wav_duration(data)
        if fmt is FLAC and len(data) >= 26 and data[4] & 0x7F == 0:  # STREAMINFO comes first
            info = int.from_bytes(data[18:26], "big")
            rate, samples = info >> 44, info & ((1 << 36) - 1)
            return samples / rate if rate and samples else None
    except (struct.error, IndexError):
        return None
    return None


def _wav_duration(data: bytes) -> float | None:
    i, byte_rate = 12, 0
    while i + 8 <= len(data):
        chunk, size = data[i : i + 4], int.from_bytes(data[i + 4 : i + 8], "little")
        if chunk == b"fmt ":
            (byte_rate,) = struct.unpack("<I", data[i + 16 : i + 20])
        elif chunk == b"data":
            size = min(size, len(data) - i - 8)
            return size / byte_rate if byte_rate else None
        i += 8 + size + (size & 1)
    return None

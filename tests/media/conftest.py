"""Real media files, made in the tests: Pillow for images, ``wave`` for sound, boxes for MP4."""

from __future__ import annotations

import base64
import io
import math
import random
import struct
import wave

from PIL import Image, ImageDraw


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def picture(width: int, height: int, mode: str = "RGB") -> Image.Image:
    """A gradient with a disc: real content, compressible like a rendered image."""
    image = Image.new(mode, (width, height))
    draw = ImageDraw.Draw(image)
    for y in range(height):
        shade = 40 + 180 * y // max(height - 1, 1)
        draw.line([(0, y), (width, y)], fill=(shade, 90, 255 - shade, 255)[: len(mode)])
    draw.ellipse([width // 4, height // 4, 3 * width // 4, 3 * height // 4], fill="orange")
    return image


def png(width: int = 64, height: int = 48, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    picture(width, height, mode).save(out, "PNG")
    return out.getvalue()


def jpeg(width: int = 80, height: int = 60, progressive: bool = False) -> bytes:
    out = io.BytesIO()
    picture(width, height).save(out, "JPEG", quality=90, progressive=progressive)
    return out.getvalue()


def save(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def noise_png(width: int, height: int, seed: int = 1) -> bytes:
    """Random pixels: a PNG that barely compresses (about 3 bytes a pixel)."""
    rng = random.Random(seed)
    return save(Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3)), "PNG")


def wav(seconds: float = 0.5, rate: int = 16000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        frames = int(seconds * rate)
        w.writeframes(
            b"".join(
                struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate)))
                for i in range(frames)
            )
        )
    return out.getvalue()


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def mp4(brand: bytes = b"isom") -> bytes:
    """An ``ftyp`` box then an empty ``moov`` and ``mdat``: what players read first."""
    ftyp = box(b"ftyp", brand + struct.pack(">I", 512) + b"isomiso2avc1mp41")
    return ftyp + box(b"moov", box(b"mvhd", bytes(100))) + box(b"mdat", bytes(64))


def flac(rate: int = 44100, samples: int = 88200) -> bytes:
    """``fLaC`` and a STREAMINFO block saying ``samples`` at ``rate`` (2 s by default)."""
    info = (rate << 44) | (1 << 41) | (15 << 36) | samples  # 2 channels, 16 bits
    streaminfo = struct.pack(">HH", 4096, 4096) + bytes(6) + info.to_bytes(8, "big") + bytes(16)
    return b"fLaC" + bytes([0x80]) + len(streaminfo).to_bytes(3, "big") + streaminfo


def ogg_opus() -> bytes:
    header = b"OggS" + bytes([0, 2]) + bytes(8) + b"\x01\x00\x00\x00" + bytes(8) + b"\x01\x13"
    return header + b"OpusHead\x01\x02\x38\x01\x80\xbb\x00\x00\x00\x00\x00"


def mp3() -> bytes:
    """An ID3v2 tag header then one MPEG-1 Layer III frame header (128 kbit/s, 44.1 kHz)."""
    return b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x64" + bytes(413)


def webm() -> bytes:
    return b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01" + b"\x42\x82\x84webm" + bytes(32)

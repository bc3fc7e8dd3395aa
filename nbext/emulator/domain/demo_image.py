"""``image-gen``: an offline stand-in for an image-generation model.

It paints a landscape from the prompt: words choose the sky (``sunset``, ``night``...),
the land (``desert``, ``forest``, ``snow``...) and water (``lake``, ``sea``...), and ``seed``
shapes the ridges, so the same prompt and seed give the same bytes and different prompts
give visibly different pictures. With ``"stream": true`` it yields a preview per step
that sharpens out of noise, as diffusion models' step previews do, then the full image.

Standard library only (a small PNG encoder on ``zlib``): the emulator must run where
no imaging library is installed. Pixels are painted a column run or a row at a time with
``bytearray`` slices, so a 512×512 picture costs a fraction of a second.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import math
import random
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from .demo_inputs import integer, number
from .handlers import current_job

RGB = tuple[int, int, int]

DEFAULT_SIZE, DEFAULT_STEPS = 512, 20
SIZE_RANGE = (256, 1024)
STEP_MS = 50.0
"""Time per step on the emulator's clock unless ``input.step_ms`` says otherwise."""
PREVIEW_SCALE = 4
"""Previews are a quarter of the size, like a model's latent previews."""


# ---- what the prompt asks for -------------------------------------------------------------


def _words(**scenes: str) -> dict[str, str]:
    """Word -> scene, from each scene's words separated by spaces."""
    return {word: scene for scene, words in scenes.items() for word in words.split()}


@dataclass(frozen=True)
class Sky:
    top: RGB
    horizon: RGB
    sun: RGB
    sun_height: float
    """0 on the horizon, 1 at the top of the sky."""
    glow: float
    light: float
    """How lit the land is (1 at noon)."""
    tint: RGB = (255, 255, 255)
    stars: bool = False


SKIES = {
    "day": Sky((62, 120, 205), (185, 218, 240), (255, 251, 232), 0.72, 0.35, 1.0),
    "sunset": Sky((40, 32, 96), (252, 146, 72), (255, 214, 140), 0.10, 0.95, 0.62, (255, 196, 160)),
    "sunrise": Sky(
        (86, 118, 196), (252, 196, 168), (255, 240, 205), 0.18, 0.7, 0.82, (255, 225, 215)
    ),
    "night": Sky(
        (6, 10, 32), (38, 56, 104), (238, 238, 222), 0.62, 0.25, 0.4, (150, 170, 235), True
    ),
    "storm": Sky((52, 56, 66), (138, 142, 150), (214, 216, 222), 0.55, 0.12, 0.62),
    "alien": Sky((72, 20, 64), (238, 122, 92), (206, 255, 222), 0.35, 0.6, 0.75, (255, 190, 200)),
}
SKY_WORDS = _words(
    day="day noon sunny summer",
    sunset="sunset dusk evening golden",
    sunrise="sunrise dawn morning",
    night="night moon stars starry midnight",
    storm="storm rain fog mist cloudy",
    alien="alien mars planet space",
)


@dataclass(frozen=True)
class Land:
    layers: tuple[RGB, ...]
    """Far to near."""
    roughness: float
    octaves: int
    trees: str = ""
    """``pine``, ``round`` or nothing."""
    snow: bool = False


LANDS = {
    "mountains": Land(((104, 118, 150), (78, 92, 124), (56, 66, 94), (34, 42, 62)), 1.0, 6),
    "forest": Land(((96, 134, 120), (64, 110, 80), (42, 84, 54), (24, 54, 34)), 0.7, 5, "pine"),
    "desert": Land(((222, 176, 124), (206, 150, 98), (184, 124, 78), (152, 98, 58)), 0.45, 2),
    "snow": Land(
        ((190, 202, 226), (160, 176, 206), (128, 146, 182), (98, 116, 154)), 1.1, 6, snow=True
    ),
    "autumn": Land(
        ((170, 126, 104), (196, 108, 56), (164, 74, 38), (104, 44, 28)), 0.6, 4, "round"
    ),
    "hills": Land(((120, 150, 110), (96, 134, 84), (74, 114, 62), (52, 88, 44)), 0.5, 3),
}
LAND_WORDS = _words(
    mountains="mountain mountains peak peaks alps",
    forest="forest forests trees woods pine jungle",
    desert="desert dune dunes sand canyon",
    snow="snow snowy winter ice glacier arctic",
    autumn="autumn fall maple",
    hills="hill hills meadow valley farm",
)
WATER_WORDS = frozenset(
    _words(water="lake sea ocean river water beach coast bay harbor harbour lighthouse pond")
)


@dataclass(frozen=True)
class Scene:
    sky: Sky
    land: Land
    water: bool


def scene_for(prompt: str) -> Scene:
    """The sky, land and water the prompt's words ask for; its hash picks what they omit."""
    words = [w.strip(".,;:!?\"'()").lower() for w in prompt.split()]
    digest = hashlib.sha256(prompt.strip().lower().encode()).digest()
    sky = next((SKY_WORDS[w] for w in words if w in SKY_WORDS), None)
    land = next((LAND_WORDS[w] for w in words if w in LAND_WORDS), None)
    skies, lands = sorted(SKIES), sorted(LANDS)
    water = any(w in WATER_WORDS for w in words) or (
        sky is None and land is None and digest[2] % 3 == 0
    )
    return Scene(
        SKIES[sky or skies[digest[0] % len(skies)]],
        LANDS[land or lands[digest[1] % len(lands)]],
        water,
    )


# ---- painting ------------------------------------------------------------------------------


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def _scale(c: RGB, f: float, tint: RGB = (255, 255, 255)) -> RGB:
    return (
        min(255, round(c[0] * f * tint[0] / 255)),
        min(255, round(c[1] * f * tint[1] / 255)),
        min(255, round(c[2] * f * tint[2] / 255)),
    )


def _ridge(rng: random.Random, octaves: int, width: int) -> list[float]:
    """Value noise in [0, 1] across the width: ``octaves`` layers of smoothed random points."""
    total = [0.0] * width
    amplitude, freq = 1.0, 3
    for _ in range(octaves):
        points = [rng.random() for _ in range(freq + 2)]
        for x in range(width):
            u = x / width * freq
            i = int(u)
            f = (1 - math.cos((u - i) * math.pi)) / 2
            total[x] += amplitude * (points[i] + (points[i + 1] - points[i]) * f)
        amplitude *= 0.5
        freq *= 2
    low, high = min(total), max(total)
    return [(v - low) / (high - low or 1) for v in total]


class Canvas:
    """An RGB raster; columns are painted with strided slices, rows with plain ones."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.stride = width * 3
        self.pixels = bytearray(self.stride * height)

    def row(self, y: int, color: RGB) -> None:
        self.pixels[y * self.stride : (y + 1) * self.stride] = bytes(color) * self.width

    def column(
        self, x: int, top: int, channels: tuple[bytes, bytes, bytes], bottom: int | None = None
    ) -> None:
        """Paint column ``x`` from row ``top`` down to ``bottom`` with per-row channel values."""
        top, bottom = max(0, top), self.height if bottom is None else min(self.height, bottom)
        if top >= bottom or not 0 <= x < self.width:
            return
        start, end = top * self.stride + x * 3, bottom * self.stride
        for c in range(3):
            self.pixels[start + c : end : self.stride] = channels[c][top:bottom]

    def set(self, x: int, y: int, color: RGB) -> None:
        i = y * self.stride + x * 3
        self.pixels[i : i + 3] = bytes(color)

    def get(self, x: int, y: int) -> RGB:
        i = y * self.stride + x * 3
        return self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]


def _gradient(height: int, stops: list[tuple[int, RGB]]) -> tuple[bytes, bytes, bytes]:
    """Per-row channel values through ``stops`` (row, colour), held past either end."""
    rows: list[RGB] = []
    for y in range(height):
        if y <= stops[0][0]:
            rows.append(stops[0][1])
            continue
        for (y0, c0), (y1, c1) in itertools.pairwise(stops):
            if y0 <= y <= y1:
                rows.append(_mix(c0, c1, (y - y0) / max(1, y1 - y0)))
                break
        else:
            rows.append(stops[-1][1])
    return bytes(r[0] for r in rows), bytes(r[1] for r in rows), bytes(r[2] for r in rows)


def paint(prompt: str, seed: int, width: int, height: int) -> bytes:
    """The picture for ``prompt`` and ``seed`` as raw RGB rows."""
    scene = scene_for(prompt)
    sky, land = scene.sky, scene.land
    rng = random.Random(f"{prompt.strip().lower()}\x00{seed}")
    canvas = Canvas(width, height)
    horizon = round(height * rng.uniform(0.5, 0.62))
    waterline = round(horizon + (height - horizon) * 0.18) if scene.water else height

    # Sky: a gradient that keeps brightening to the horizon, then haze below it.
    for y in range(height):
        t = min(1.0, y / max(1, horizon)) ** 1.6
        canvas.row(y, _mix(sky.top, sky.horizon, t))
    if sky.stars:
        for _ in range(width * horizon // 700):
            x, y = rng.randrange(width), rng.randrange(max(1, horizon * 3 // 4))
            canvas.set(x, y, _mix(canvas.get(x, y), (255, 255, 240), rng.uniform(0.3, 1.0)))
    _sun(canvas, rng, sky, horizon)

    # Land: layers far to near, each lighter and hazier the farther it is.
    count = len(land.layers)
    bottom = waterline if scene.water else height
    layers_drawn = 2 if scene.water else count
    for k in range(layers_drawn):
        depth = k / max(1, count - 1)
        base = (
            horizon + (bottom - horizon) * (0.08 + 0.7 * depth)
            if not scene.water
            else (horizon + (waterline - horizon) * (0.6 + 0.4 * k))
        )
        amplitude = height * (0.1 + 0.12 * depth) * land.roughness * (0.7 if scene.water else 1)
        ridge = _ridge(rng, land.octaves, width)
        colour = _scale(
            _mix(land.layers[k], sky.horizon, 0.55 * (1 - depth) ** 1.5), sky.light, sky.tint
        )
        shade = _gradient(
            height, [(round(base - amplitude), colour), (height, _scale(colour, 0.72))]
        )
        snow = _scale(_mix((236, 242, 252), sky.horizon, 0.3 * (1 - depth)), sky.light, sky.tint)
        cap = _gradient(height, [(0, snow)])
        wobble = rng.uniform(0, math.tau)
        for x in range(width):
            top = round(base - amplitude * ridge[x])
            canvas.column(x, top, shade)
            if land.snow:  # peaks above a wavering snow line
                line = base - amplitude * (0.52 + 0.07 * math.sin(x * 40 / width + wobble))
                canvas.column(x, top, cap, round(line))
        if land.trees and (k >= count - 2 or (scene.water and k == 1)):
            _trees(canvas, rng, land.trees, ridge, base, amplitude, _scale(colour, 0.6), depth)
    if scene.water:
        _reflect(canvas, waterline, rng, sky.horizon)
    return bytes(canvas.pixels)


def _sun(canvas: Canvas, rng: random.Random, sky: Sky, horizon: int) -> None:
    """A disc with a soft glow (a crescent at night), drawn where the land will not cover all."""
    w, h = canvas.width, canvas.height
    radius = min(w, h) * rng.uniform(0.045, 0.07)
    cx = w * rng.uniform(0.2, 0.8)
    cy = horizon - (horizon - radius * 2) * sky.sun_height - radius * 0.5
    reach = radius * (5 if sky.glow > 0.5 else 3.5)
    shadow = (cx + radius * 0.38, cy - radius * 0.22) if sky.stars else None
    for y in range(max(0, int(cy - reach)), min(h, int(cy + reach) + 1)):
        for x in range(max(0, int(cx - reach)), min(w, int(cx + reach) + 1)):
            d = math.hypot(x - cx, y - cy)
            if d <= radius and not (
                shadow and math.hypot(x - shadow[0], y - shadow[1]) < radius * 0.9
            ):
                canvas.set(x, y, _mix(canvas.get(x, y), sky.sun, min(1.0, radius - d + 0.5)))
            elif d < reach:
                glow = sky.glow * (1 - d / reach) ** 2.4
                canvas.set(x, y, _mix(canvas.get(x, y), sky.sun, glow))


def _trees(
    canvas: Canvas,
    rng: random.Random,
    kind: str,
    ridge: list[float],
    base: float,
    amplitude: float,
    colour: RGB,
    depth: float,
) -> None:
    """Pines (triangles) or broadleaf trees (discs on trunks) along a ridge."""
    w = canvas.width
    size = canvas.height * (0.035 + 0.04 * depth)
    solid = (bytes([colour[0]]) * canvas.height, bytes([colour[1]]) * canvas.height,
             bytes([colour[2]]) * canvas.height)  # fmt: skip
    x = rng.uniform(0, size)
    while x < w:
        height = size * rng.uniform(0.6, 1.3)
        half = height * (0.26 if kind == "pine" else 0.4)
        for px in range(int(x - half), int(x + half) + 1):
            ground = round(base - amplitude * ridge[max(0, min(w - 1, px))]) + 2
            off = abs(px - x) / half
            if kind == "pine":
                canvas.column(px, round(ground - 2 - height * (1 - off)), solid, ground)
                continue
            centre, spread = ground - height * 0.62, half * math.sqrt(max(0.0, 1 - off * off))
            canvas.column(px, round(centre - spread), solid, round(centre + spread * 0.8))
            if off < 0.1:  # the trunk
                canvas.column(px, round(centre), solid, ground)
        x += half * rng.uniform(1.0, 2.8) + (0 if rng.random() < 0.75 else size * 2)


def _reflect(canvas: Canvas, waterline: int, rng: random.Random, horizon: RGB) -> None:
    """Water below ``waterline``: the scene above, mirrored, rippled, darkened and tinted."""
    stride, h = canvas.stride, canvas.height
    phase = rng.uniform(0, math.tau)
    tables = []
    for j in range(8):
        f = 0.68 - 0.05 * j
        tables.append(
            tuple(
                bytes(min(255, round(v * f + horizon[c] * 0.12 + 6 * (c == 2))) for v in range(256))
                for c in range(3)
            )
        )
    for y in range(waterline, h):
        depth = (y - waterline) / max(1, h - waterline)
        src = max(0, 2 * waterline - y - 1)
        row = bytes(canvas.pixels[src * stride : (src + 1) * stride])
        shift = round(math.sin(y * 0.8 + phase) * (1 + 4 * depth)) * 3
        if shift:
            row = row[shift:] + row[:shift]
        table = tables[min(7, int(depth * 8))]
        out = bytearray(row)
        for c in range(3):
            out[c::3] = row[c::3].translate(table[c])
        canvas.pixels[y * stride : (y + 1) * stride] = out


# ---- PNG -----------------------------------------------------------------------------------


def png(width: int, height: int, rgb: bytes) -> bytes:
    """A truecolour PNG of raw RGB rows (no filtering: zlib does the work)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def picture(prompt: str, seed: int, width: int, height: int) -> bytes:
    """The PNG for ``prompt`` and ``seed``."""
    return png(width, height, paint(prompt, seed, width, height))


def step_preview(prompt: str, seed: int, width: int, height: int, step: int, steps: int) -> bytes:
    """Step ``step`` of ``steps``: a small picture that sharpens out of noise as steps pass."""
    w, h = max(32, width // PREVIEW_SCALE), max(32, height // PREVIEW_SCALE)
    t = step / steps
    coarse = max(1, round(8 * (1 - t) ** 2))  # blocks of coarse x coarse pixels
    sw, sh = max(8, w // coarse), max(8, h // coarse)
    small = paint(prompt, seed, sw, sh)
    grain = random.Random(f"noise\x00{seed}\x00{step}").randbytes(w * h * 3)
    noise = bytes(96 + v // 2 for v in grain)  # grey-ish, like a latent's noise decoded
    keep = 1 - (1 - t) ** 1.8
    out = bytearray(w * h * 3)
    for y in range(h):
        sy = min(sh - 1, y * sh // h)
        src = small[sy * sw * 3 : (sy + 1) * sw * 3]
        row = b"".join(src[(x * sw // w) * 3 : (x * sw // w) * 3 + 3] for x in range(w))
        base = y * w * 3
        n = noise[base : base + w * 3]
        out[base : base + w * 3] = bytes(
            round(a * keep + b * (1 - keep)) for a, b in zip(row, n, strict=True)
        )
    return png(w, h, bytes(out))


# ---- the handler ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    prompt: str
    seed: int
    width: int
    height: int
    steps: int
    num_images: int
    step_seconds: float
    stream: bool

    @classmethod
    def parse(cls, job_input: Any) -> Request:
        if not isinstance(job_input, dict):
            raise ValueError(
                f"input must be an object with a prompt, got {type(job_input).__name__}"
            )
        prompt = job_input.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError(f"input.prompt must be a non-empty string, got {prompt!r}")
        stream = job_input.get("stream", False)
        if not isinstance(stream, bool):
            raise ValueError(f"input.stream must be true or false, got {stream!r}")
        get = job_input.get
        return cls(
            prompt=prompt,
            seed=integer(get("seed"), "seed", random.randrange(2**32), 0, 2**32 - 1),
            width=integer(get("width"), "width", DEFAULT_SIZE, *SIZE_RANGE),
            height=integer(get("height"), "height", DEFAULT_SIZE, *SIZE_RANGE),
            steps=integer(get("steps"), "steps", DEFAULT_STEPS, 1, 150),
            num_images=integer(get("num_images"), "num_images", 1, 1, 4),
            step_seconds=number(get("step_ms"), "step_ms", STEP_MS, 0, 60_000) / 1000,
            stream=stream,
        )

    def seeds(self) -> range:
        return range(self.seed, self.seed + self.num_images)

    def describe(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "seed": self.seed,
            "width": self.width,
            "height": self.height,
            "steps": self.steps,
        }


async def image_gen(job: dict[str, Any]) -> Any:
    """Draw ``num_images`` pictures of ``input.prompt``; stream step previews if asked."""
    request = Request.parse(job["input"])
    if request.stream:
        return _stream(request)
    ctx = current_job()
    await ctx.sleep(request.step_seconds * request.steps)
    images = [
        _b64(await asyncio.to_thread(picture, request.prompt, s, request.width, request.height))
        for s in request.seeds()
    ]
    ctx.metrics.update(scenario="image-gen", steps=request.steps)
    return {"images": images, **request.describe()}


async def _stream(request: Request) -> AsyncIterator[dict[str, Any]]:
    ctx = current_job()
    for step in range(1, request.steps):
        await ctx.sleep(request.step_seconds)
        if ctx.cancelled:
            return
        previews = [
            _b64(
                await asyncio.to_thread(
                    step_preview,
                    request.prompt,
                    s,
                    request.width,
                    request.height,
                    step,
                    request.steps,
                )
            )
            for s in request.seeds()
        ]
        ctx.metrics.update(scenario="image-gen", step=step, steps=request.steps)
        yield {"step": step, "steps": request.steps, "images": previews}
    await ctx.sleep(request.step_seconds)
    images = [
        _b64(await asyncio.to_thread(picture, request.prompt, s, request.width, request.height))
        for s in request.seeds()
    ]
    ctx.metrics.update(scenario="image-gen", step=request.steps, steps=request.steps)
    yield {"step": request.steps, "steps": request.steps, "images": images, **request.describe()}

"""``image-gen``: an offline stand-in for an image-generation model, standard library
only (docs/architecture.md#the-demo-images)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import random
import struct
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from .demo_inputs import flag, integer, number
from .handlers import current_job

RGB = tuple[int, ...]

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
    light: float
    """How lit the land is (1 at noon)."""


SKIES = {
    "day": Sky((62, 120, 205), (185, 218, 240), (255, 251, 232), 0.72, 1.0),
    "sunset": Sky((40, 32, 96), (252, 146, 72), (255, 214, 140), 0.10, 0.62),
    "sunrise": Sky((86, 118, 196), (252, 196, 168), (255, 240, 205), 0.18, 0.82),
    "night": Sky((6, 10, 32), (38, 56, 104), (238, 238, 222), 0.62, 0.4),
    "storm": Sky((52, 56, 66), (138, 142, 150), (214, 216, 222), 0.55, 0.62),
    "alien": Sky((72, 20, 64), (238, 122, 92), (206, 255, 222), 0.35, 0.75),
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


LANDS = {
    "mountains": Land(((104, 118, 150), (78, 92, 124), (56, 66, 94), (34, 42, 62)), 1.0, 6),
    "forest": Land(((96, 134, 120), (64, 110, 80), (42, 84, 54), (24, 54, 34)), 0.7, 5),
    "desert": Land(((222, 176, 124), (206, 150, 98), (184, 124, 78), (152, 98, 58)), 0.45, 2),
    "snow": Land(((236, 242, 252), (190, 202, 226), (160, 176, 206), (128, 146, 182)), 1.1, 6),
    "autumn": Land(((170, 126, 104), (196, 108, 56), (164, 74, 38), (104, 44, 28)), 0.6, 4),
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


def scene_for(prompt: str) -> tuple[Sky, Land, bool]:
    """The sky, land and water the prompt's words ask for; its hash picks what they omit."""
    words = [w.strip(".,;:!?\"'()").lower() for w in prompt.split()]
    digest = hashlib.sha256(prompt.strip().lower().encode()).digest()
    sky = next((SKY_WORDS[w] for w in words if w in SKY_WORDS), None)
    land = next((LAND_WORDS[w] for w in words if w in LAND_WORDS), None)
    skies, lands = sorted(SKIES), sorted(LANDS)
    water = any(w in WATER_WORDS for w in words) or (
        sky is None and land is None and digest[2] % 3 == 0
    )
    return (
        SKIES[sky or skies[digest[0] % len(skies)]],
        LANDS[land or lands[digest[1] % len(lands)]],
        water,
    )


# ---- painting ------------------------------------------------------------------------------


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b, strict=True))


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


def _gradient(height: int, top: int, upper: RGB, lower: RGB) -> tuple[bytes, bytes, bytes]:
    """Per-row channel values: ``upper`` down to row ``top``, then fading to ``lower``."""
    rows = [_mix(upper, lower, max(0, y - top) / max(1, height - top)) for y in range(height)]
    return bytes(r[0] for r in rows), bytes(r[1] for r in rows), bytes(r[2] for r in rows)


def paint(prompt: str, seed: int, width: int, height: int) -> bytes:
    """The picture for ``prompt`` and ``seed`` as raw RGB rows, painted with ``bytearray``
    slices: a sky, a sun, ridges far to near (hazier the farther), water mirroring them."""
    sky, land, water = scene_for(prompt)
    rng = random.Random(f"{prompt.strip().lower()}\x00{seed}")
    stride = width * 3
    pixels = bytearray(stride * height)

    def column(x: int, top: int, bottom: int, channels: tuple[bytes, bytes, bytes]) -> None:
        top, bottom = max(0, top), min(height, bottom)
        if top < bottom and 0 <= x < width:
            start = top * stride + x * 3
            for c in range(3):
                pixels[start + c : bottom * stride : stride] = channels[c][top:bottom]

    horizon = round(height * rng.uniform(0.5, 0.62))
    waterline = round(horizon + (height - horizon) * 0.18) if water else height
    for y in range(height):  # a gradient that keeps brightening to the horizon
        t = min(1.0, y / max(1, horizon)) ** 1.6
        pixels[y * stride : (y + 1) * stride] = bytes(_mix(sky.top, sky.horizon, t)) * width
    radius = min(width, height) * rng.uniform(0.045, 0.07)
    cx = width * rng.uniform(0.2, 0.8)
    cy = horizon - (horizon - radius * 2) * sky.sun_height - radius * 0.5
    disc = _gradient(height, height, sky.sun, sky.sun)
    for x in range(int(cx - radius), int(cx + radius) + 1):
        half = math.sqrt(max(0.0, radius * radius - (x - cx) ** 2))
        column(x, round(cy - half), round(cy + half), disc)

    count = len(land.layers)
    for k in range(2 if water else count):
        depth = k / max(1, count - 1)
        if water:
            base = horizon + (waterline - horizon) * (0.6 + 0.4 * k)
        else:
            base = horizon + (height - horizon) * (0.08 + 0.7 * depth)
        amplitude = height * (0.1 + 0.12 * depth) * land.roughness * (0.7 if water else 1)
        ridge = _ridge(rng, land.octaves, width)
        near = _mix(land.layers[k], sky.horizon, 0.55 * (1 - depth) ** 1.5)
        colour = _mix((0, 0, 0), near, min(1.0, sky.light))
        shade = _gradient(height, round(base - amplitude), colour, _mix((0, 0, 0), colour, 0.72))
        for x in range(width):
            column(x, round(base - amplitude * ridge[x]), height, shade)

    # Water: the scene above, mirrored, rippled and darkened.
    phase = rng.uniform(0, math.tau)
    dark = bytes(round(v * 0.6) for v in range(256))
    for y in range(waterline, height):
        src = max(0, 2 * waterline - y - 1)
        row = bytes(pixels[src * stride : (src + 1) * stride])
        shift = round(math.sin(y * 0.8 + phase) * (1 + 4 * (y - waterline) / height)) * 3
        pixels[y * stride : (y + 1) * stride] = (row[shift:] + row[:shift]).translate(dark)
    # Grain: the lowest bit of every channel jitters, as a photograph's do, so the PNG
    # weighs what a generated picture does rather than what a flat drawing does.
    grain = int.from_bytes(rng.randbytes(len(pixels))) & int.from_bytes(b"\x01" * len(pixels))
    return (int.from_bytes(pixels) ^ grain).to_bytes(len(pixels))


# ---- PNG -----------------------------------------------------------------------------------


def png(width: int, height: int, rgb: bytes) -> bytes:
    """A truecolour PNG of raw RGB rows (no filtering: zlib does the work)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride : (y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def picture(prompt: str, seed: int, width: int, height: int, step: int, steps: int) -> bytes:
    """The PNG at step ``step`` of ``steps``: the picture at the last, before it a small
    one that sharpens out of noise as steps pass."""
    if step >= steps:
        return png(width, height, paint(prompt, seed, width, height))
    w, h = max(32, width // PREVIEW_SCALE), max(32, height // PREVIEW_SCALE)
    grain = random.Random(f"noise\x00{seed}\x00{step}").randbytes(w * h * 3)
    keep = 1 - (1 - step / steps) ** 1.8
    mixed = (  # grey-ish noise, as a latent's noise decoded looks
        round(a * keep + (96 + b // 2) * (1 - keep))
        for a, b in zip(paint(prompt, seed, w, h), grain, strict=True)
    )
    return png(w, h, bytes(mixed))


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
        get = job_input.get
        return cls(
            prompt=prompt,
            seed=integer(get("seed"), "seed", random.randrange(2**32), 0, 2**32 - 1),
            width=integer(get("width"), "width", DEFAULT_SIZE, *SIZE_RANGE),
            height=integer(get("height"), "height", DEFAULT_SIZE, *SIZE_RANGE),
            steps=integer(get("steps"), "steps", DEFAULT_STEPS, 1, 150),
            num_images=integer(get("num_images"), "num_images", 1, 1, 4),
            step_seconds=number(get("step_ms"), "step_ms", STEP_MS, 0, 60_000) / 1000,
            stream=flag(get("stream"), "stream"),
        )

    def describe(self) -> dict[str, Any]:
        """What the final answer repeats of the request (a seed drawn for it, say)."""
        return {n: getattr(self, n) for n in ("prompt", "seed", "width", "height", "steps")}


async def image_gen(job: dict[str, Any]) -> Any:
    """Draw ``num_images`` pictures of ``input.prompt``; stream step previews if asked."""
    request = Request.parse(job["input"])
    if request.stream:
        return _stream(request)
    ctx = current_job()
    await ctx.sleep(request.step_seconds * request.steps)
    ctx.metrics.update(scenario="image-gen", steps=request.steps)
    return {"images": await _draw(request, request.steps), **request.describe()}


async def _stream(request: Request) -> AsyncIterator[dict[str, Any]]:
    """A preview per step, a step's time apart; the last step sends the full pictures."""
    ctx = current_job()
    steps = request.steps
    for step in range(1, steps + 1):
        await ctx.sleep(request.step_seconds)
        if ctx.cancelled:
            return
        images = await _draw(request, step)
        ctx.metrics.update(scenario="image-gen", step=step, steps=steps)
        described = request.describe() if step == steps else {}
        yield {"step": step, "steps": steps, "images": images, **described}


async def _draw(request: Request, step: int) -> list[str]:
    """The step's PNG per seed, in base64, drawn in a thread (a fraction of a second)."""
    size = (request.width, request.height, step, request.steps)
    seeds = range(request.seed, request.seed + request.num_images)
    drawn = [await asyncio.to_thread(picture, request.prompt, seed, *size) for seed in seeds]
    return [base64.b64encode(png).decode("ascii") for png in drawn]

"""The media demos, run by the real emulator: ``image-gen`` paints PNGs, ``text-to-speech`` speaks.

Their outputs are checked as files (Pillow opens the PNGs, ``wave`` the WAVs) and through
``nbext.media``, which is how a notebook will find them.
"""

from __future__ import annotations

import base64
import io
import itertools
import math
import struct
import wave
from typing import Any

import httpx
import pytest
from PIL import Image, ImageChops, ImageStat

import nbext
from nbext.emulator import DEMOS, Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.jobs import Job

from .conftest import advance, status_of, submit, until

pytestmark = pytest.mark.anyio

FAST = {"step_ms": 0}


@pytest.fixture
async def media_emu(emu: Emulator) -> Emulator:
    emu.deploy("image-gen", endpoint_id="image")
    emu.deploy("text-to-speech", endpoint_id="speech")
    return emu


async def finished(emu: Emulator, endpoint: str, job: Job, seconds: float = 0.0) -> dict[str, Any]:
    """Move the clock ``seconds``, then wait (real time: drawing runs in a thread) for the end."""
    await settle()
    if seconds:
        await advance(emu, seconds)
    await until(lambda: job.status.value in ("COMPLETED", "FAILED", "CANCELLED"), f"job {job.id}")
    return status_of(emu, endpoint, job.id)


async def generate(emu: Emulator, **job_input: Any) -> dict[str, Any]:
    body = await finished(emu, "image", submit(emu, "image", {**FAST, **job_input}))
    assert body["status"] == "COMPLETED", body
    output: dict[str, Any] = body["output"]
    return output


def pil(b64: str) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(b64)))
    image.load()
    return image


def difference(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference per channel (0-255) of the two pictures at 64×64."""
    small = [im.convert("RGB").resize((64, 64), Image.Resampling.BILINEAR) for im in (a, b)]
    return sum(ImageStat.Stat(ImageChops.difference(*small)).mean) / 3


def test_the_media_demos_are_demo_images() -> None:
    assert {"image-gen", "text-to-speech"} <= set(DEMOS)


# ---- image-gen ---------------------------------------------------------------------------


async def test_image_gen_returns_a_png_of_the_asked_size(media_emu: Emulator) -> None:
    output = await generate(media_emu, prompt="a lighthouse at dusk", seed=7, width=384, height=256)
    assert {k: v for k, v in output.items() if k != "images"} == {
        "prompt": "a lighthouse at dusk",
        "seed": 7,
        "width": 384,
        "height": 256,
        "steps": 20,
    }
    [image] = output["images"]
    assert base64.b64decode(image).startswith(b"\x89PNG\r\n\x1a\n")
    assert pil(image).size == (384, 256) and pil(image).mode == "RGB"
    [found] = nbext.media.find(output)
    assert (found.path, found.mime, found.width, found.height) == (
        "images[0]",
        "image/png",
        384,
        256,
    )


async def test_image_gen_defaults_to_512_square_and_reports_the_seed_it_chose(
    media_emu: Emulator,
) -> None:
    output = await generate(media_emu, prompt="hills")
    assert pil(output["images"][0]).size == (512, 512)
    assert isinstance(output["seed"], int) and 0 <= output["seed"] < 2**32
    again = await generate(media_emu, prompt="hills", seed=output["seed"])
    assert again["images"] == output["images"]


async def test_the_same_prompt_and_seed_give_the_same_bytes(media_emu: Emulator) -> None:
    first = await generate(
        media_emu, prompt="snowy mountains at night", seed=3, width=256, height=256
    )
    second = await generate(
        media_emu, prompt="snowy mountains at night", seed=3, width=256, height=256
    )
    other_seed = await generate(
        media_emu, prompt="snowy mountains at night", seed=4, width=256, height=256
    )
    assert first["images"] == second["images"]
    assert other_seed["images"] != first["images"]
    assert difference(pil(first["images"][0]), pil(other_seed["images"][0])) > 2


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("a desert at noon", "a forest at night"),
        ("a lake at sunset", "snowy mountains at dawn"),
        ("a cat", "a dog"),  # no scene words: the prompt's hash chooses
        ("autumn hills", "alien planet"),
    ],
)
async def test_different_prompts_give_visibly_different_pictures(
    media_emu: Emulator, a: str, b: str
) -> None:
    size = {"seed": 1, "width": 256, "height": 256}
    first = pil((await generate(media_emu, prompt=a, **size))["images"][0])
    second = pil((await generate(media_emu, prompt=b, **size))["images"][0])
    assert difference(first, second) > 12


async def test_several_images_come_from_consecutive_seeds(media_emu: Emulator) -> None:
    output = await generate(
        media_emu, prompt="pine forest", seed=10, num_images=3, width=256, height=256
    )
    assert len(set(output["images"])) == 3
    single = await generate(media_emu, prompt="pine forest", seed=11, width=256, height=256)
    assert output["images"][1] == single["images"][0]
    assert nbext.media.find(output).paths == ["images[0]", "images[1]", "images[2]"]


async def test_image_gen_takes_its_steps_on_the_emulators_clock(media_emu: Emulator) -> None:
    job = submit(media_emu, "image", {"prompt": "dunes", "steps": 10, "step_ms": 100, "width": 256})
    await settle()
    await advance(media_emu, 0.99)
    assert job.status.value == "IN_PROGRESS"
    body = await finished(media_emu, "image", job, 0.01)
    assert body["status"] == "COMPLETED" and body["executionTime"] >= 1000


async def test_a_streamed_job_sharpens_step_by_step_then_sends_the_full_picture(
    media_emu: Emulator,
) -> None:
    job_input = {"prompt": "a lake at sunset", "seed": 5, "steps": 8, "width": 256, "height": 256}
    job = submit(media_emu, "image", {**job_input, "stream": True, "step_ms": 50})
    await settle()
    for step in range(1, 9):  # each step waits 50 ms of the clock, then draws in a thread
        assert job.status.value == "IN_PROGRESS"
        await advance(media_emu, 0.05)
        await until(lambda step=step: len(job.chunks) == step, f"preview {step}")
    body = await finished(media_emu, "image", job)
    chunks = (await media_emu.jobs.stream("image", job.id, 0)).to_wire()["stream"]
    outputs = [c["output"] for c in chunks]
    assert [o["step"] for o in outputs] == list(range(1, 9)) and {o["steps"] for o in outputs} == {
        8
    }
    assert [c["metrics"]["step"] for c in chunks] == list(range(1, 9))
    previews = [pil(o["images"][0]) for o in outputs[:-1]]
    assert {p.size for p in previews} == {(64, 64)}  # a quarter of the size, like latents
    final = pil(outputs[-1]["images"][0])
    assert final.size == (256, 256)
    distances = [difference(p, final) for p in previews]
    assert distances == sorted(distances, reverse=True) and distances[0] > 3 * distances[-1]
    plain = await generate(media_emu, **job_input)
    assert outputs[-1]["images"] == plain["images"] and outputs[-1]["seed"] == 5
    assert body["output"] == outputs  # the aggregated stream
    assert nbext.media.find(outputs[0]).paths == ["images[0]"]


async def test_cancelling_a_streamed_job_stops_the_previews(media_emu: Emulator) -> None:
    job = submit(media_emu, "image", {"prompt": "x", "steps": 50, "stream": True, "width": 256})
    await settle()
    await advance(media_emu, 0.05)
    await until(lambda: len(job.chunks) == 1, "the first preview")
    media_emu.jobs.cancel("image", job.id)
    await advance(media_emu, 5)
    await settle()
    assert job.status.value == "CANCELLED" and len(job.chunks) <= 2


async def test_image_gen_over_http_like_any_endpoint(
    media_emu: Emulator, http: httpx.AsyncClient
) -> None:
    answer = await http.post(
        "/v2/image/runsync", json={"input": {"prompt": "meadow at dawn", "seed": 2, **FAST}}
    )
    body = answer.json()
    assert answer.status_code == 200 and body["status"] == "COMPLETED", body
    assert nbext.media.preview(body["output"])["images"][0].startswith("<PNG 512×512, ")


async def test_streamed_previews_reach_an_http_client_as_chunks(
    media_emu: Emulator, http: httpx.AsyncClient
) -> None:
    job_input = {"prompt": "a quiet valley", "seed": 9, "steps": 4, "width": 256, "stream": True}
    started = await http.post("/v2/image/run", json={"input": {**job_input, **FAST}})
    job = media_emu.jobs.jobs[started.json()["id"]]
    await finished(media_emu, "image", job)
    stream = (await http.get(f"/v2/image/stream/{job.id}?wait=0")).json()["stream"]
    previews = [nbext.media.find(c["output"])[0] for c in stream]
    assert [(p.width, p.height) for p in previews] == [(64, 128)] * 3 + [(256, 512)]


# ---- text-to-speech ----------------------------------------------------------------------


async def speak(
    emu: Emulator, **job_input: Any
) -> tuple[dict[str, Any], wave.Wave_read, list[int]]:
    body = await finished(emu, "speech", submit(emu, "speech", job_input))
    assert body["status"] == "COMPLETED", body
    data = base64.b64decode(body["output"]["audio"])
    with wave.open(io.BytesIO(data)) as reader:
        frames = reader.readframes(reader.getnframes())
    return body["output"], reader, list(struct.unpack(f"<{len(frames) // 2}h", frames))


async def test_text_to_speech_returns_a_short_mono_wav(media_emu: Emulator) -> None:
    output, reader, samples = await speak(media_emu, text="Hello there, how are you?")
    assert (reader.getnchannels(), reader.getsampwidth(), reader.getframerate()) == (1, 2, 16000)
    seconds = reader.getnframes() / 16000
    assert 1.0 < seconds < 5.0 and output["duration"] == pytest.approx(seconds, abs=0.001)
    assert output["sample_rate"] == 16000 and output["text"] == "Hello there, how are you?"
    assert max(abs(s) for s in samples) > 20000  # loud enough to hear
    [found] = nbext.media.find(output)
    assert (found.path, found.mime, found.duration) == (
        "audio",
        "audio/wav",
        pytest.approx(seconds),
    )


def frame_levels(samples: list[int], ms: int = 20) -> list[float]:
    n = 16000 * ms // 1000
    return [
        math.sqrt(sum(s * s for s in samples[i : i + n]) / n) for i in range(0, len(samples) - n, n)
    ]


def crossings(samples: list[int]) -> float:
    """Zero crossings per sample: about 0.5 for white noise, far lower for voiced sound."""
    return sum((a < 0) != (b < 0) for a, b in itertools.pairwise(samples)) / len(samples)


async def test_the_speech_is_speech_like_not_noise(media_emu: Emulator) -> None:
    _, _, samples = await speak(media_emu, text="one two three. four five six.")
    levels = frame_levels(samples)
    loud = max(levels)
    # Syllables and pauses: the level rises and falls, with near silences between words.
    assert sum(level < loud * 0.05 for level in levels) >= 4
    assert sum(level > loud * 0.3 for level in levels) >= 10
    _, _, vowels = await speak(media_emu, text="aaaa oooo")
    assert crossings(vowels) < 0.15


def band_power(samples: list[int], low: int, high: int) -> float:
    """Energy between ``low`` and ``high`` Hz (Goertzel every 20 Hz) of the middle half."""
    middle = samples[len(samples) // 4 : 3 * len(samples) // 4]
    total = 0.0
    for freq in range(low, high, 20):
        k = 2 * math.cos(2 * math.pi * freq / 16000)
        s1 = s2 = 0.0
        for v in middle:
            s1, s2 = v + k * s1 - s2, s1
        total += s1 * s1 + s2 * s2 - k * s1 * s2
    return total


async def test_vowels_carry_their_formants(media_emu: Emulator) -> None:
    """An ``a`` is open (first formant near 730 Hz), ``i`` and ``u`` close (near 300 Hz),
    and ``i`` is front (second formant near 2250 Hz) where ``u`` is back: as in speech."""
    _, _, a = await speak(media_emu, text="aaaaaaaa")
    _, _, i = await speak(media_emu, text="iiiiiiii")
    _, _, u = await speak(media_emu, text="uuuuuuuu")
    assert band_power(a, 600, 860) > 10 * band_power(a, 240, 400)
    assert band_power(i, 240, 400) > 10 * band_power(i, 600, 860)
    assert band_power(u, 240, 400) > 10 * band_power(u, 600, 860)
    assert band_power(i, 2100, 2400) > 5 * band_power(u, 2100, 2400)


async def test_speech_is_deterministic_and_follows_the_text_pitch_and_speed(
    media_emu: Emulator,
) -> None:
    short, _, _ = await speak(media_emu, text="hello")
    again, _, _ = await speak(media_emu, text="hello")
    longer, _, _ = await speak(media_emu, text="hello, and welcome to the show")
    high, _, _ = await speak(media_emu, text="hello", pitch=220)
    fast, _, _ = await speak(media_emu, text="hello, and welcome to the show", speed=2)
    assert again["audio"] == short["audio"] and high["audio"] != short["audio"]
    assert longer["duration"] > 3 * short["duration"]
    assert fast["duration"] == pytest.approx(longer["duration"] / 2, rel=0.05)


@pytest.mark.parametrize(
    ("endpoint", "job_input", "message"),
    [
        ("image", {}, "input.prompt must be a non-empty string, got None"),
        ("image", {"prompt": "  "}, "input.prompt must be a non-empty string"),
        (
            "image",
            {"prompt": "x", "width": 100},
            "input.width must be an integer from 256 to 1024, got 100",
        ),
        (
            "image",
            {"prompt": "x", "height": 2048},
            "input.height must be an integer from 256 to 1024",
        ),
        (
            "image",
            {"prompt": "x", "height": 300.5},
            "input.height must be an integer from 256 to 1024",
        ),
        (
            "image",
            {"prompt": "x", "steps": 0},
            "input.steps must be an integer from 1 to 150, got 0",
        ),
        (
            "image",
            {"prompt": "x", "seed": -1},
            "input.seed must be an integer from 0 to 4294967295",
        ),
        ("image", {"prompt": "x", "seed": "7"}, "input.seed must be an integer"),
        (
            "image",
            {"prompt": "x", "num_images": 9},
            "input.num_images must be an integer from 1 to 4",
        ),
        (
            "image",
            {"prompt": "x", "stream": "yes"},
            "input.stream must be true or false, got 'yes'",
        ),
        ("image", {"prompt": "x", "step_ms": -5}, "input.step_ms must be a number from 0 to 60000"),
        ("speech", {}, "input.text must be a non-empty string, got None"),
        ("speech", {"text": ""}, "input.text must be a non-empty string"),
        ("speech", {"text": 5}, "input.text must be a non-empty string, got 5"),
        ("speech", {"text": "x" * 1001}, "input.text must be at most 1000 characters, got 1001"),
        (
            "speech",
            {"text": "hi", "pitch": 10},
            "input.pitch must be a number from 60 to 400, got 10",
        ),
        ("speech", {"text": "hi", "speed": 3}, "input.speed must be a number from 0.5 to 2, got 3"),
    ],
)
async def test_bad_input_fails_the_job_naming_the_field(
    media_emu: Emulator, endpoint: str, job_input: dict[str, Any], message: str
) -> None:
    body = await finished(media_emu, endpoint, submit(media_emu, endpoint, job_input))
    assert body["status"] == "FAILED"
    assert message in body["error"] and "\n" not in body["error"]


async def test_accents_digits_and_symbols_are_spoken_or_skipped_without_error(
    media_emu: Emulator,
) -> None:
    output, _, _ = await speak(media_emu, text="Crème brûlée × 2 — 日本 #1!")
    assert output["duration"] > 0.5

"""``text-to-speech``: an offline stand-in for a speech model, text in, a short WAV out
(a formant synthesiser: docs/architecture.md#the-demo-images)."""

from __future__ import annotations

import asyncio
import base64
import io
import math
import random
import struct
import unicodedata
import wave
from dataclasses import dataclass
from typing import Any

from .demo_inputs import number
from .handlers import current_job

SAMPLE_RATE = 16_000
MAX_CHARACTERS = 1000
_BLOCK = 32
"""Samples between updates of the filters: smooth glides at a fraction of the cost."""

Formants = tuple[float, float, float]
VOWELS: dict[str, Formants] = {
    "a": (730, 1090, 2440),
    "e": (530, 1840, 2480),
    "i": (300, 2250, 2950),
    "o": (570, 840, 2410),
    "u": (320, 900, 2240),
    "y": (300, 2100, 2800),
}
SONORANTS: dict[str, Formants] = {
    "l": (360, 1300, 2700),
    "r": (460, 1250, 1650),
    "m": (280, 1000, 2200),
    "n": (280, 1500, 2500),
    "w": (300, 650, 2200),
    "j": (280, 2200, 2900),
    "v": (300, 1200, 2400),
    "z": (300, 1600, 2600),
}
HISSES: dict[str, float] = {"s": 5200, "z": 4800, "f": 3800, "v": 3600, "h": 1600, "x": 3000}
"""Centre frequency of a fricative's noise."""
STOPS = frozenset("pbtdkgqc")
PAUSES = {" ": 0.06, ",": 0.18, ";": 0.22, ":": 0.22, ".": 0.34, "!": 0.34, "?": 0.34, "\n": 0.3}


@dataclass
class Segment:
    seconds: float
    formants: Formants
    voice: float
    """Loudness of the buzz (0 silent)."""
    hiss: float = 0.0
    hiss_freq: float = 4000.0


def segments(text: str) -> list[Segment]:
    """The sounds of ``text``, letter by letter (accents dropped, other symbols silent)."""
    plain = unicodedata.normalize("NFKD", text.lower())
    out: list[Segment] = []
    neutral: Formants = (500, 1500, 2500)
    last = neutral
    for ch in plain:
        if unicodedata.combining(ch):
            continue
        if ch in PAUSES or not ch.isalnum():
            out.append(Segment(PAUSES.get(ch, 0.05), last, 0.0))
        elif ch in VOWELS or ch.isdigit() or not ch.isascii():
            last = VOWELS.get(ch, VOWELS["a"] if not ch.isdigit() else VOWELS["o"])
            out.append(Segment(0.11, last, 1.0))
        elif ch in STOPS:
            voiced, burst = 0.35 if ch in "bdg" else 0.0, 2500 if ch in "kgqc" else 4000
            out += [Segment(0.045, last, 0.0), Segment(0.025, last, voiced, 0.5, burst)]
        elif ch in HISSES:
            voiced = 0.45 if ch in SONORANTS else 0.0
            out.append(Segment(0.09, SONORANTS.get(ch, last), voiced, 0.55, HISSES[ch]))
        else:
            last = SONORANTS.get(ch, neutral)
            out.append(Segment(0.065, last, 0.8))
    return out


class _Resonator:
    """A two-pole resonator (the classic formant filter), retuned as the mouth moves."""

    def __init__(self) -> None:
        self.a = self.b = self.c = 0.0
        self.y1 = self.y2 = 0.0

    def tune(self, freq: float, bandwidth: float) -> None:
        r = math.exp(-math.pi * bandwidth / SAMPLE_RATE)
        self.c = -r * r
        self.b = 2 * r * math.cos(2 * math.pi * freq / SAMPLE_RATE)
        self.a = 1 - self.b - self.c


def synthesise(text: str, pitch: float = 140.0, speed: float = 1.0) -> bytes:
    """A mono 16-bit WAV of ``text`` spoken at ``pitch`` Hz, ``speed`` times the usual rate."""
    segs = segments(text)
    rng = random.Random(f"{text}\x00{pitch}\x00{speed}")
    total = sum(s.seconds for s in segs) / speed
    samples: list[float] = []
    mouth, hiss = [_Resonator(), _Resonator(), _Resonator()], _Resonator()
    formants = list(segs[0].formants) if segs else [500.0, 1500.0, 2500.0]
    voice = noise = 0.0
    phase = previous = 0.0
    elapsed = 0.0
    for seg in segs:
        count = round(seg.seconds / speed * SAMPLE_RATE)
        hiss.tune(seg.hiss_freq, seg.hiss_freq * 0.35)
        for start in range(0, count, _BLOCK):
            # Glide towards this letter's mouth shape and loudness.
            for k, bandwidth in enumerate((80, 110, 160)):
                formants[k] += (seg.formants[k] - formants[k]) * 0.25
                mouth[k].tune(formants[k], bandwidth)
            voice += (seg.voice - voice) * 0.3
            noise += (seg.hiss - noise) * 0.4
            # The pitch falls through the utterance, with a lilt.
            progress = elapsed / total if total else 0.0
            f0 = pitch * (1.12 - 0.25 * progress + 0.06 * math.sin(elapsed * 5.3))
            step = f0 / SAMPLE_RATE
            for _ in range(min(_BLOCK, count - start)):
                phase = (phase + step) % 1.0
                glottal = math.sin(math.pi * phase / 0.6) if phase < 0.6 else 0.0
                source = (glottal - previous) * voice
                previous = glottal
                x = source
                for r in mouth:
                    y = r.a * x + r.b * r.y1 + r.c * r.y2
                    r.y2, r.y1 = r.y1, y
                    x = y
                h = 0.0
                if noise > 0.01:
                    h = hiss.a * rng.uniform(-1, 1) + hiss.b * hiss.y1 + hiss.c * hiss.y2
                    hiss.y2, hiss.y1 = hiss.y1, h
                samples.append(x + h * noise * 0.035)
            elapsed += _BLOCK / SAMPLE_RATE
    return _wav(samples)


def _wav(samples: list[float]) -> bytes:
    peak = max((abs(s) for s in samples), default=0.0) or 1.0
    gain = 0.8 * 32767 / peak
    fade = min(len(samples) // 2, SAMPLE_RATE // 100)  # 10 ms: no click at either end
    for i in range(fade):
        samples[i] *= i / fade
        samples[-1 - i] *= i / fade
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(struct.pack(f"<{len(samples)}h", *(round(s * gain) for s in samples)))
    return out.getvalue()


async def text_to_speech(job: dict[str, Any]) -> dict[str, Any]:
    """Speak ``input.text`` (at ``input.pitch`` Hz and ``input.speed``) as a WAV."""
    job_input = job["input"] if isinstance(job["input"], dict) else {}
    text = job_input.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"input.text must be a non-empty string, got {text!r}")
    if len(text) > MAX_CHARACTERS:
        raise ValueError(f"input.text must be at most {MAX_CHARACTERS} characters, got {len(text)}")
    pitch = number(job_input.get("pitch"), "pitch", 140.0, 60, 400)
    speed = number(job_input.get("speed"), "speed", 1.0, 0.5, 2.0)
    audio = await asyncio.to_thread(synthesise, text, pitch, speed)
    seconds = (len(audio) - 44) / 2 / SAMPLE_RATE
    current_job().metrics.update(scenario="text-to-speech", audio_seconds=round(seconds, 3))
    return {
        "audio": base64.b64encode(audio).decode("ascii"),
        "sample_rate": SAMPLE_RATE,
        "duration": round(seconds, 3),
        "text": text,
    }

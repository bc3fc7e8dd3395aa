"""Images: names bound to handlers, and the demo endpoints every emulator ships
(docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .demo_image import image_gen
from .demo_inputs import number
from .demo_llm import llm
from .demo_speech import text_to_speech
from .handlers import Handler, current_job
from .word_model import text_pieces


async def echo(job: dict[str, Any]) -> Any:
    """Return the input unchanged."""
    return job["input"]


async def sleep(job: dict[str, Any]) -> dict[str, Any]:
    """Sleep ``input.seconds`` on the emulator's clock; cancelling stops it at once."""
    seconds = number(job["input"].get("seconds"), "seconds", 1.0)
    await current_job().sleep(seconds)
    return {"slept": job["input"].get("seconds", 1.0)}


async def fail(job: dict[str, Any]) -> Any:
    """Always fail, with ``input.message`` as the error."""
    raise RuntimeError(str(job["input"].get("message", "the fail image always fails")))


async def stream_text(job: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """Yield ``input.text`` a word at a time, like a token-streaming model, with the sample
    metrics (tokens, throughput: docs/behaviour.md#images) that panels show."""
    text = job["input"].get("text", "")
    if not isinstance(text, str):
        raise ValueError(f"input.text must be a string, got {type(text).__name__}")
    delay = number(job["input"].get("delay_ms"), "delay_ms", 0.0) / 1000
    ctx = current_job()
    pieces = text_pieces(text)
    started = ctx.clock.now()
    for i, piece in enumerate(pieces, start=1):
        if delay:
            await ctx.sleep(delay)
        elapsed = ctx.clock.now() - started
        ctx.metrics.update(
            input_tokens=len(pieces),
            output_tokens=i,
            avg_gen_throughput=round(i / elapsed, 3) if elapsed > 0 else 0.0,
            scenario="stream-text",
        )
        yield {"text": [piece], "input_tokens": len(pieces), "output_tokens": i}


@dataclass(frozen=True)
class Demo:
    """A ``QUEUE`` demo runs its handler in the emulator, a ``LOAD_BALANCER`` one its
    server script as worker processes."""

    type: Literal["QUEUE", "LOAD_BALANCER"]
    handler: Handler | None = None
    server: Path | None = None


DEMOS: dict[str, Demo] = {
    "echo": Demo("QUEUE", echo),
    "sleep": Demo("QUEUE", sleep),
    "fail": Demo("QUEUE", fail),
    "stream-text": Demo("QUEUE", stream_text),
    "image-gen": Demo("QUEUE", image_gen),
    "text-to-speech": Demo("QUEUE", text_to_speech),
    "llm": Demo("QUEUE", llm),
    "llm-lb": Demo("LOAD_BALANCER", server=Path(__file__).parents[1] / "workers/llm_server.py"),
}
"""The one list of demos: ``deploy_demos``, the command line and the help texts use it."""


class ImageRegistry:
    """Image name -> handler. Thread-safe: notebooks register from the kernel's thread."""

    def __init__(self, with_demos: bool = True) -> None:
        self._lock = threading.Lock()
        demos = {n: d.handler for n, d in DEMOS.items() if d.handler is not None}
        self._images: dict[str, Handler] = demos if with_demos else {}
        self.listeners: list[Callable[[str], None]] = []

    def register(self, name: str, handler: Handler) -> None:
        """Bind ``name`` to ``handler``; endpoints running that image use it from now on."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("an image name must be a non-empty string")
        if not callable(handler):
            raise TypeError(f"the handler for image {name!r} must be callable")
        with self._lock:
            self._images[name] = handler
        for listener in list(self.listeners):
            listener(name)

    def get(self, name: str) -> Handler | None:
        with self._lock:
            return self._images.get(name)

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._images)

"""Chat with an LLM endpoint from a cell: conversations, the answer's events, its panel.

An LLM endpoint answers the OpenAI-compatible contract as a job (docs/openai.md) whose
streamed outputs are Server-Sent Events text. The notebook sends a job rather than call
``/openai/v1`` because a job has an id: Ctrl-C can cancel it on the service. The answer
is drawn as Markdown with raw HTML escaped: a model's HTML is never run.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .display.text import shorten
from .rendering import panel_frame
from .theme import BORDER, ERROR, MUTED, badge_html

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

CHAT_ROUTE = "/v1/chat/completions"
MODELS_ROUTE = "/v1/models"

STOP_HINT = "interrupt the kernel (■) to stop the answer and cancel its job"
"""Said while an answer comes: a blocking cell hears Ctrl-C, in every front end."""
CANCEL_HINT = "Cancel (below) or interrupt the kernel (■) to stop the answer and cancel its job"
"""Said instead in a cell that awaits, where the kernel hears the Cancel button."""


class NotAChatEndpoint(Exception):
    """The endpoint answered something other than the OpenAI chat contract."""


def markdown_html(text: str) -> str:
    """``text`` rendered as Markdown; any HTML in it is shown as text, never run."""
    rendered: str = _markdown().render(text)
    return rendered


@functools.cache
def _markdown() -> MarkdownIt:
    """CommonMark with raw HTML escaped; markdown-it refuses ``javascript:`` links."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def describe(value: Any) -> str:
    """A short account of an answer that was not what a chat endpoint sends."""
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:4]))
        return f"an object with {keys}" if keys else "an empty object"
    if isinstance(value, str):
        return f"the text {value[:60]!r}"
    return "nothing" if value is None else f"a {type(value).__name__}"


class EventReader:
    """Server-Sent Events text, fed in pieces, out as each event's data (its ``data:``
    lines joined; comments and other fields left out). A piece may hold several events,
    or end inside one: what is left over waits for the next piece. Lines end in LF, CRLF
    or a lone CR, as the SSE format allows."""

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, text: str) -> Iterator[str]:
        text = self._pending + text
        held = "\r" if text.endswith("\r") else ""  # the next piece may bring its "\n"
        text = text.removesuffix("\r").replace("\r\n", "\n").replace("\r", "\n")
        *events, rest = text.split("\n\n")
        self._pending = rest + held
        for event in events:
            lines = event.split("\n")
            data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
            if data:
                yield "\n".join(data)


def chat_event(data: str) -> dict[str, Any]:
    """A chat stream's event as its JSON object; one that is not is ``NotAChatEndpoint``."""
    try:
        value = json.loads(data)
    except json.JSONDecodeError:
        raise NotAChatEndpoint(f"it streamed an event that is not JSON: {data[:60]!r}") from None
    if not isinstance(value, dict):
        raise NotAChatEndpoint(f"it streamed an event holding {describe(value)}")
    return value


@dataclass
class Turn:
    """One message of a conversation, with what is known of how it was made."""

    role: str
    content: str
    model: str | None = None
    job_id: str | None = None
    ttft_s: float | None = None
    tokens: int | None = None
    tokens_per_s: float | None = None


@dataclass
class Conversation:
    """One endpoint's conversation in this kernel: the system prompt and the turns."""

    endpoint_id: str
    system: str | None = None
    model: str | None = None
    turns: list[Turn] = field(default_factory=list)

    def messages(self, user: str) -> list[dict[str, str]]:
        """What the next request sends: the system prompt, every turn, then ``user``."""
        head = [{"role": "system", "content": self.system}] if self.system else []
        past = [{"role": t.role, "content": t.content} for t in self.turns]
        return [*head, *past, {"role": "user", "content": user}]


@dataclass
class ChatView:
    """An answer as the panel shows it, live or final."""

    endpoint_id: str
    model: str | None
    question: str
    answer: str = ""
    state: str = "IN_QUEUE"
    job_id: str | None = None
    ttft_s: float | None = None
    tokens: int = 0
    elapsed_s: float = 0.0
    error: str | None = None
    note: str | None = None
    hint: str = STOP_HINT

    @property
    def tokens_per_s(self) -> float | None:
        """Tokens over the time since the first one (the model's pace, not the queue's)."""
        if self.ttft_s is None or self.tokens < 2:
            return None
        generating = self.elapsed_s - self.ttft_s
        return round(self.tokens / generating, 1) if generating > 0 else None

    def stats(self) -> str:
        parts = [f"{self.tokens} tokens"]
        if self.ttft_s is not None:
            parts.insert(0, f"first token {self.ttft_s:.2f} s")
        rate = self.tokens_per_s
        if rate is not None:
            parts.append(f"{rate:g} tokens/s")
        parts.append(f"{self.elapsed_s:.1f} s")
        return " · ".join(parts)

    def title(self) -> str:
        model = f" · {self.model}" if self.model else ""
        return f"{self.endpoint_id}{model}"

    def html(self) -> str:
        muted = f"color:{MUTED};font-size:0.85em"
        head = (
            f'<div style="display:flex;gap:0.6em;align-items:center">{badge_html(self.state)}'
            f"<b>{html.escape(self.title())}</b>"
            f'<span class="nbext-chat-stats" style="{muted}">{html.escape(self.stats())}'
            "</span></div>"
        )
        question = (
            f'<div class="nbext-chat-question" style="{muted};white-space:pre-wrap;'
            f'margin:0.3em 0">{html.escape(shorten(self.question, 300))}</div>'
        )
        answer = (
            f'<div class="nbext-chat-answer" style="border-left:3px solid {BORDER};'
            f'padding-left:0.8em">{markdown_html(self.answer)}</div>'
        )
        tail = ""
        if self.state in ("IN_QUEUE", "IN_PROGRESS"):
            tail += f'<div style="{muted}">{html.escape(self.hint)}</div>'
        if self.error:
            tail += (
                f'<div style="color:{ERROR};white-space:pre-wrap">{html.escape(self.error)}</div>'
            )
        if self.note:
            tail += f'<div style="{muted}">{html.escape(self.note)}</div>'
        return panel_frame("nbext-chat", self.state, head + question + answer + tail, live=False)

    def plain(self) -> str:
        lines = [f"{self.title()} [{self.state}] {self.stats()}", self.answer or "…"]
        if self.error:
            lines.append(f"error: {self.error}")
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)

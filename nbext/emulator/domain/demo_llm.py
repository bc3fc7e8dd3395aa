"""``llm``: a demo worker that speaks the service's OpenAI-route contract offline, as the
service's vLLM worker does (docs/architecture.md#the-demo-images)."""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from .demo_inputs import flag, integer, number
from .handlers import current_job
from .word_model import sentence, text_pieces, topic

MODEL_ID = "nbext-demo-word-model"
DEFAULT_TOKENS_PER_SECOND = 40.0
CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
MODELS = "/v1/models"
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
MAX_TOKENS_DEFAULT = 256
COUNT_MAX = 2**31 - 1
T = TypeVar("T")


class BadRequest(ValueError):
    """A request field the demo refuses: ``param`` names it, ``status`` is the HTTP code."""

    def __init__(self, message: str, param: str | None, status: int = 400) -> None:
        super().__init__(message)
        self.param = param
        self.status = status


def error_object(message: str, param: str | None, status: int) -> dict[str, Any]:
    """OpenAI's error shape, with the HTTP status in ``code`` as vLLM's worker writes it."""
    kind = "NotFoundError" if status == 404 else "BadRequestError"
    return {"error": {"message": message, "type": kind, "param": param, "code": status}}


async def llm(job: dict[str, Any]) -> AsyncIterator[Any]:
    """The demo's handler: one answer object, or SSE strings when the request streams."""
    payload = job["input"]
    route = payload.get("openai_route")  # absent: a plain job input, sent through /run
    body = payload if route is None else payload.get("openai_input")
    route = route or (CHAT if "messages" in payload else COMPLETIONS)
    try:
        if route == MODELS:
            yield models()
            return
        if route not in (CHAT, COMPLETIONS):
            served = f"the demo serves {CHAT}, {COMPLETIONS} and {MODELS}, not {route}"
            raise BadRequest(served, "openai_route", 404)
        request = _Request(route, body, job["id"])
    except BadRequest as exc:
        yield error_object(str(exc), exc.param, exc.status)
        return
    ctx = current_job()
    ctx.metrics.update(scenario="llm", input_tokens=request.prompt_tokens)
    if not request.stream:
        await ctx.sleep(request.pace * len(request.tokens))
        yield request.complete_response(int(ctx.clock.now()))
        return
    created = int(ctx.clock.now())
    pending = [request.event(created, first=True)]
    for i, token in enumerate(request.tokens, start=1):
        await ctx.sleep(request.pace)
        pending.append(request.event(created, token))
        ctx.metrics.update(output_tokens=i)
        yield "".join(pending)
        pending = []
    pending.append(request.event(created, finish=request.finish_reason))
    if request.include_usage:
        pending.append(_sse(request.answer(created, chunk=True, choices=[], usage=request.usage())))
    pending.append("data: [DONE]\n\n")
    yield "".join(pending)


def models() -> dict[str, Any]:
    """``/v1/models``: the one model the demo serves."""
    entry = {"id": MODEL_ID, "object": "model", "created": 1_767_225_600, "owned_by": "nbext"}
    return {"object": "list", "data": [entry]}


class _Request:
    """A validated chat or completions request, and the answer the demo makes for it."""

    def __init__(self, route: str, body: Any, job_id: str) -> None:
        if not isinstance(body, dict):
            raise BadRequest("the request body must be a JSON object", None)
        self.chat = route == CHAT
        self.id = ("chatcmpl-" if self.chat else "cmpl-") + job_id
        model = body.get("model", MODEL_ID)
        if model != MODEL_ID:
            missing = f"The model `{model}` does not exist; this demo serves `{MODEL_ID}`"
            raise BadRequest(missing, "model", 404)
        prompt, asked = _messages(body) if self.chat else (_prompt(body),) * 2
        self.stream = _field(flag, body, "stream")
        options = body.get("stream_options") or {}
        self.include_usage = isinstance(options, dict) and options.get("include_usage") is True
        limit_name = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
        self.max_tokens = _field(integer, body, limit_name, MAX_TOKENS_DEFAULT, 1, COUNT_MAX)
        if _field(integer, body, "n", 1, 1, COUNT_MAX) != 1:
            raise BadRequest("n: the demo answers one choice (n=1)", "n")
        temperature = _field(number, body, "temperature", 1.0, 0.0, 2.0)
        rate = _field(number, body, "tokens_per_second", DEFAULT_TOKENS_PER_SECOND, 0, 1e6)
        self.pace = 1.0 / rate if rate > 0 else 0.0
        seed = _field(integer, body, "seed", zlib.crc32(prompt.encode()), -(2**63), 2**63 - 1)
        rng = random.Random(seed)
        self.prompt_tokens = len(text_pieces(prompt))
        pieces = text_pieces(
            _cut_at_stop(_answer(asked, self.prompt_tokens, rng, temperature), body)
        )
        self.tokens = pieces[: self.max_tokens]
        self.finish_reason = "length" if len(pieces) > self.max_tokens else "stop"

    def usage(self) -> dict[str, int]:
        n, prompt = len(self.tokens), self.prompt_tokens
        return {"prompt_tokens": prompt, "completion_tokens": n, "total_tokens": prompt + n}

    def answer(self, created: int, *, chunk: bool = False, **fields: Any) -> dict[str, Any]:
        """An OpenAI response object (``chunk``: one of a stream's) with ``fields``."""
        kind = "chat.completion" if self.chat else "text_completion"
        kind += ".chunk" if self.chat and chunk else ""  # a completions chunk is unmarked
        return {"id": self.id, "object": kind, "created": created, "model": MODEL_ID, **fields}

    def complete_response(self, created: int) -> dict[str, Any]:
        text = "".join(self.tokens)
        said = {"message": {"role": "assistant", "content": text}} if self.chat else {"text": text}
        choice = {"index": 0, **said, "logprobs": None, "finish_reason": self.finish_reason}
        return self.answer(created, choices=[choice], usage=self.usage())

    def event(
        self, created: int, text: str = "", finish: str | None = None, first: bool = False
    ) -> str:
        """A stream's event: completions' carries ``text``; chat's a ``delta`` that names the
        role in the first event and is empty in the last."""
        said: dict[str, Any] = {"text": text}
        if self.chat:
            delta = {"content": text} if text else {}
            said = {"delta": {"role": "assistant", "content": ""} if first else delta}
        choice = {"index": 0, **said, "logprobs": None, "finish_reason": finish}
        return _sse(self.answer(created, chunk=True, choices=[choice]))


def _sse(value: dict[str, Any]) -> str:
    return f"data: {json.dumps(value, separators=(',', ':'))}\n\n"


def _answer(asked: str, prompt_words: int, rng: random.Random, temperature: float) -> str:
    """The demo's Markdown: an emphasised disclaimer, two sentences (the first begun with
    a word of the question ``asked``, where the text knows one), a list, a code block."""
    start = topic(asked)
    opening = f"**{start}**, you say? " if start else ""
    lines = [
        "*A demo answer from nbext's word model, which knows nothing: it strings together "
        "words from a short text.*",
        "",
        opening + sentence(rng, temperature, start) + " " + sentence(rng, temperature),
        "",
        *(f"- {sentence(rng, temperature)}" for _ in range(3)),
        "",
        "```python",
        f"prompt_words = {prompt_words}",
        f'model = "{MODEL_ID}"',
        "```",
    ]
    return "\n".join(lines)


def _messages(body: dict[str, Any]) -> tuple[str, str]:
    """Every message's text, and the last user message's (what the answer is about)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        wanted = "messages: a non-empty list of {role, content} objects is required"
        raise BadRequest(wanted, "messages")
    texts = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict):
            raise BadRequest(f"{where}: each message must be an object", where)
        if message.get("role") not in ROLES:
            roles = ", ".join(sorted(ROLES))
            wrong = f"{where}.role must be one of {roles}, got {message.get('role')!r}"
            raise BadRequest(wrong, f"{where}.role")
        if not isinstance(content := message.get("content"), str):
            raise BadRequest(f"{where}.content must be a string", f"{where}.content")
        texts.append(content)
    users = [t for m, t in zip(messages, texts, strict=True) if m["role"] == "user"]
    return "\n".join(texts), users[-1] if users else texts[-1]


def _prompt(body: dict[str, Any]) -> str:
    if not isinstance(prompt := body.get("prompt"), str):
        raise BadRequest("prompt: a string is required (the demo answers one prompt)", "prompt")
    return prompt


def _field(check: Callable[..., T], body: dict[str, Any], name: str, *limits: Any) -> T:
    """``body[name]`` as a media demo's ``check`` reads an input field, refused naming it."""
    try:
        return check(body.get(name), name, *limits, where="")
    except ValueError as exc:
        raise BadRequest(str(exc), name) from None


def _cut_at_stop(text: str, body: dict[str, Any]) -> str:
    """``text`` up to the first of the request's stop sequences, which is not included
    (as OpenAI does)."""
    stop = body.get("stop")
    stops = [] if stop is None else [stop] if isinstance(stop, str) else stop
    if (
        not isinstance(stops, list)
        or len(stops) > 4
        or not all(isinstance(s, str) and s for s in stops)
    ):
        raise BadRequest("stop must be a string or a list of up to 4 non-empty strings", "stop")
    return text[: min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))]

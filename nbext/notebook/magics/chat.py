"""``%%runpod_chat ENDPOINT``: the cell is a message to an LLM endpoint; the answer streams
(docs/openai.md#in-the-client-and-the-notebook)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx
import ipywidgets
from IPython.core.error import UsageError

from nbext.client import AsyncJob, Endpoint, Job, NbextError
from nbext.models import JobResult, JobStatus
from nbext.models.recording import digest

from ..chat import (
    CANCEL_HINT,
    CHAT_ROUTE,
    MODELS_ROUTE,
    STOP_HINT,
    ChatView,
    Conversation,
    EventReader,
    NotAChatEndpoint,
    Turn,
    chat_event,
    describe,
)
from ..cost import record_cost
from ..errors import OneLineError, one_line
from ..interrupts import Interrupted, deferred_interrupts
from ..ipython import argument, magic_arguments
from ..registry import JobRecord, RequestRecord
from ..rendering import Rendering
from ..widgets.controls import Controls
from ..widgets.live import LivePanel
from ..widgets.request import WORKER_HEADER
from .commands import subcommand
from .common import Magics, check_name, explain, store, usage_errors

if TYPE_CHECKING:
    import argparse

    import pandas as pd


MODELS_TIMEOUT = 120.0
"""Seconds to wait for an endpoint's model list (a cold worker may have to start)."""


class ChatFailed(OneLineError):
    """The answer did not come (the panel above says why)."""


def request_body(args: argparse.Namespace, conversation: Conversation, text: str) -> dict[str, Any]:
    """The chat completion request: streamed, with the usage at the end."""
    body: dict[str, Any] = {
        "messages": conversation.messages(text),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if conversation.model:
        body["model"] = conversation.model
    if args.temperature is not None:
        if not (math.isfinite(args.temperature) and 0 <= args.temperature <= 2):
            raise UsageError(f"--temperature must be from 0 to 2, got {args.temperature:g}")
        body["temperature"] = args.temperature
    if args.max_tokens is not None:
        if args.max_tokens < 1:
            raise UsageError(f"--max-tokens must be 1 or more, got {args.max_tokens}")
        body["max_tokens"] = args.max_tokens
    return body


def served_model(endpoint: Endpoint) -> str | None:
    """The first model the endpoint serves (``/v1/models``), or None if it lists none."""
    job = endpoint.run({"openai_route": MODELS_ROUTE, "openai_input": {}})
    result = job.wait(timeout=MODELS_TIMEOUT, raise_on_failure=False)
    output = result.output
    answer = output[0] if isinstance(output, list) and output else output
    if result.status is not JobStatus.COMPLETED:
        error = f": {result.error}" if result.error else ""
        raise NotAChatEndpoint(f"asked for its models, its job ended {result.status.value}{error}")
    models = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(models, list):
        raise NotAChatEndpoint(f"asked for its models, {_answered(answer)}")
    first = next((m.get("id") for m in models if isinstance(m, dict)), None)
    return first if isinstance(first, str) else None


class _Chat:
    """One cell's request, once sent: what both ways of following it share."""

    def __init__(self, magics: Magics, args: argparse.Namespace, cell: str, awaits: bool) -> None:
        """Check the cell, submit the job and show the answer's panel (timed from before the
        submission), with a Cancel button in a cell that awaits."""
        self.magics, self.args = magics, args
        self.text, self.output_name, conversation = _checked(magics, args, cell)
        with usage_errors():
            self.service = service = magics.connection.service()
        endpoint = service.client.endpoint(args.endpoint)
        if conversation.model is None:
            with usage_errors(f"endpoint {args.endpoint!r}"):
                try:
                    conversation.model = served_model(endpoint)
                except NotAChatEndpoint as exc:
                    raise UsageError(_not_chat(args.endpoint, exc)) from None
        self.conversation = conversation
        body = request_body(args, conversation, self.text)
        store(magics, self.output_name, None)
        started = time.monotonic()
        job_input = {"openai_route": CHAT_ROUTE, "openai_input": body}
        with (
            deferred_interrupts(deliver=False) as held,
            usage_errors(f"endpoint {args.endpoint!r}"),
        ):
            self.job = endpoint.run(job_input)
        self.interrupted = held.received  # Ctrl-C came while the job was being submitted
        self.record = JobRecord(self.job.id, args.endpoint, service.mode, "chat")
        self.record.replayed = service.replays(args.endpoint)
        self.record.input_digest = digest(job_input)
        hint = CANCEL_HINT if awaits else STOP_HINT
        view = ChatView(args.endpoint, conversation.model, self.text, job_id=self.job.id, hint=hint)
        self.answer = _Answer(magics, view, started, cancel_button=awaits, record=self.record)

    @contextlib.contextmanager
    def outcomes(self) -> Iterator[None]:
        """A chat endpoint that answers otherwise, or a failed call: FAILED, said in a line."""
        endpoint_id = self.args.endpoint
        try:
            yield
        except NotAChatEndpoint as exc:
            with contextlib.suppress(NbextError):
                self.job.cancel()
            self.answer.end("FAILED", error=_not_chat(endpoint_id, exc))
            raise UsageError(_not_chat(endpoint_id, exc)) from None
        except NbextError as exc:
            self.answer.end("FAILED", error=explain(exc))
            raise UsageError(explain(exc)) from None

    def conclude(self) -> None:
        """The answer ended: keep it in the conversation, or say it did not complete."""
        view, job, conversation = self.answer.view, self.job, self.conversation
        if record_cost(self.service, self.record) is not None:
            self.answer.refresh(force=True)  # its output's metadata says the cost
        if view.state != "COMPLETED":
            where = f"job {job.id} on {self.args.endpoint!r}"
            message = f"{where} ended {view.state}: {view.error or ''}"
            if self.magics.raise_on_failure and not self.args.no_raise:
                raise ChatFailed(one_line(message) + " (--no-raise lets the notebook go on)")
            return
        _keep(self.magics, conversation, self.text, view, self.output_name)


def _checked(
    magics: Magics, args: argparse.Namespace, cell: str
) -> tuple[str, str | None, Conversation]:
    """The message and the ``-o`` name, each refused in one line if wrong, and the
    conversation it goes on (``--new``, ``--system`` and ``--model`` applied)."""
    text = cell.strip()
    if not text:
        raise UsageError("%%runpod_chat ENDPOINT: the cell body is your message, and it is empty")
    output_name = check_name(args.output)
    conversations = magics.conversations
    if args.new or args.endpoint not in conversations:
        conversations[args.endpoint] = Conversation(args.endpoint)
    conversation = conversations[args.endpoint]
    if args.system is not None:
        conversation.system = args.system or None
    if args.model:
        conversation.model = args.model
    return text, output_name, conversation


def _keep(
    magics: Magics, conversation: Conversation, text: str, view: ChatView, name: str | None
) -> None:
    """A completed answer: its turn in the conversation, its text in ``-o NAME``."""
    conversation.turns.append(Turn("user", text))
    reply = Turn("assistant", view.answer, conversation.model, view.job_id)
    reply.ttft_s, reply.tokens, reply.tokens_per_s = view.ttft_s, view.tokens, view.tokens_per_s
    conversation.turns.append(reply)
    store(magics, name, view.answer)


def run_chat(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """The cell magic's body, after its arguments were parsed; Ctrl-C stops it."""
    if (http := _load_balancing(magics, args)) is not None:
        return run_chat_http(magics, args, cell, http)
    chat = _Chat(magics, args, cell, awaits=False)
    with chat.outcomes():
        try:
            if chat.interrupted:
                raise KeyboardInterrupt
            chat.answer.follow(chat.job)
        except KeyboardInterrupt:
            raise _cancel(chat.job, chat.answer, "Ctrl-C") from None
    chat.conclude()


async def run_chat_async(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """``run_chat`` in a cell that awaits, where the kernel hears the answer's Cancel (a
    load-balancing endpoint's answer is still read as a blocking cell reads it)."""
    if (http := _load_balancing(magics, args)) is not None:
        return run_chat_http(magics, args, cell, http)
    chat = _Chat(magics, args, cell, awaits=True)
    client = chat.service.async_client()
    job = client.endpoint(chat.job.endpoint_id).job(chat.job.id)
    following = chat.answer.following = asyncio.ensure_future(chat.answer.follow_async(job))
    try:
        with chat.outcomes():
            if chat.interrupted:
                following.cancel()
            try:
                await following
            except asyncio.CancelledError:
                current = asyncio.current_task()
                ctrl_c = current is not None and current.cancelling() > 0
                by = "Ctrl-C" if ctrl_c or not chat.answer.clicked else "the Cancel button"
                raise _cancel(chat.job, chat.answer, by) from None
    finally:
        chat.answer.close()  # ended or not, no button outlives the cell
    chat.conclude()


def _load_balancing(magics: Magics, args: argparse.Namespace) -> httpx.Client | None:
    """The endpoint's ``http()`` when it is a load-balancing one; None for a queue
    endpoint (or one whose record cannot be read: its job's error will say why)."""
    with usage_errors(), contextlib.suppress(NbextError):
        return magics.connection.service().client.endpoint(args.endpoint).http()
    return None


def run_chat_http(magics: Magics, args: argparse.Namespace, cell: str, http: httpx.Client) -> None:
    """A load-balancing endpoint whose server speaks OpenAI's API (vLLM's, ``llm-lb``):
    the same request and panel, sent to its ``/v1/chat/completions``; Ctrl-C closes the
    answer (there is no job to cancel)."""
    text, output_name, conversation = _checked(magics, args, cell)
    if conversation.model is None:
        with usage_errors(f"endpoint {args.endpoint!r}"):
            models = http.get(MODELS_ROUTE).json().get("data") or [{}]
        conversation.model = models[0].get("id")
    body = request_body(args, conversation, text)
    view = ChatView(args.endpoint, conversation.model, text, hint=STOP_HINT.split(" and ")[0])
    service = magics.connection.service()
    record = RequestRecord(args.endpoint, service.mode, "POST", CHAT_ROUTE)
    record.replayed, record.input_digest = service.replays(args.endpoint), digest(body)
    answer = _Answer(magics, view, time.monotonic(), record=record)
    store(magics, output_name, None)
    try:
        with http.stream("POST", CHAT_ROUTE, json=body) as response:
            view.job_id = record.worker = response.headers.get(WORKER_HEADER)  # the turn's id
            record.status = response.status_code
            for piece in response.iter_text():
                answer.take(piece)
        record.seconds = time.monotonic() - answer.started
        answer.finish(JobResult(id="-", status=JobStatus.COMPLETED))
    except KeyboardInterrupt:
        answer.end("CANCELLED", note="stopped by Ctrl-C")
        raise Interrupted(f"the answer of {args.endpoint!r} was stopped") from None
    except (NotAChatEndpoint, NbextError, httpx.HTTPError) as exc:
        not_chat = isinstance(exc, NotAChatEndpoint)
        said = _not_chat(args.endpoint, exc) if not_chat else f"{type(exc).__name__}: {exc}"
        answer.end("FAILED", error=one_line(magics.connection.redact(said)))
        raise UsageError(one_line(magics.connection.redact(said))) from None
    _keep(magics, conversation, text, view, output_name)


def _not_chat(endpoint_id: str, exc: Exception) -> str:
    return one_line(
        f"endpoint {endpoint_id!r} does not answer as a chat endpoint (the OpenAI chat "
        f"contract, docs/openai.md): {exc}"
    )


class _Answer(LivePanel):
    """An answer's panel, shown when made: a ``ChatView`` fed from the job's stream; in a
    cell that awaits, its Cancel button cancels ``following``."""

    def __init__(
        self,
        magics: Magics,
        view: ChatView,
        started: float,
        *,
        record: JobRecord | RequestRecord,
        cancel_button: bool = False,
    ) -> None:
        controls = None
        if cancel_button:
            button = ipywidgets.Button(
                description="Cancel", icon="stop", tooltip="stop the answer and cancel its job"
            )
            button.on_click(self._clicked)
            controls = Controls(button, hint=STOP_HINT)
        super().__init__(controls=controls)
        self.view = view
        self.redact = magics.connection.redact
        self.started = started
        self.reader = EventReader()
        self.usage_tokens: int | None = None
        self.events = 0
        self.following: asyncio.Future[None] | None = None
        self.clicked = False
        self.record = record
        self.provenance = record.provenance
        self.show()

    @property
    def final(self) -> bool:
        return self.view.state not in ("IN_QUEUE", "IN_PROGRESS")

    def rendering(self) -> Rendering:
        view = self.view
        view.elapsed_s = time.monotonic() - self.started
        return Rendering(view.html(), view.plain(), view.answer or " ")

    def controls_shown(self) -> bool:
        return True

    def _clicked(self, button: ipywidgets.Button) -> None:
        self.clicked = True
        button.disabled = True
        if self.following is not None:
            self.following.cancel()

    def follow(self, job: Job) -> None:
        for output in job.stream():
            self.take(output)
        self.finish(job.wait(raise_on_failure=False))

    async def follow_async(self, job: AsyncJob) -> None:
        """``follow``, awaiting the job's stream: the same feed, the same end."""
        async with contextlib.aclosing(job.stream()) as outputs:
            async for output in outputs:
                self.take(output)
        self.finish(await job.wait(raise_on_failure=False))

    def take(self, output: Any) -> None:
        """One output of the stream: its events go into the view, which is redrawn."""
        self.view.state = "IN_PROGRESS"
        if not isinstance(output, str):
            raise NotAChatEndpoint(_answered(output, "streamed"))
        for data in self.reader.feed(output):
            if data.strip() == "[DONE]":
                break  # the end of the chat stream
            self.events += 1
            self._take(chat_event(data))
        self.refresh()

    def finish(self, result: JobResult) -> None:
        """The job ended: the panel's last state, from the events and the job's result."""
        view = self.view
        if isinstance(self.record, JobRecord):
            self.record.result = result  # its output's metadata: worker, timings
        if result.status is JobStatus.COMPLETED and not self.events:
            output = result.output
            raise NotAChatEndpoint(
                _answered(output[0] if isinstance(output, list) and output else output)
            )
        if self.usage_tokens is not None:
            view.tokens = self.usage_tokens
        error = view.error or (self.redact(result.error) if result.error else None)
        failed = view.error is not None and result.status is JobStatus.COMPLETED
        self.end("FAILED" if failed else result.status.value, error=error)

    def _take(self, event: dict[str, Any]) -> None:
        view = self.view
        if "error" in event:
            view.error = self.redact(_error_text(event))
            return
        usage = event.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
            self.usage_tokens = usage["completion_tokens"]
        choices = event.get("choices")
        if not isinstance(choices, list):
            raise NotAChatEndpoint(f"it streamed {describe(event)}")
        for choice in choices:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            content = delta.get("content") if isinstance(delta, dict) else None
            if isinstance(content, str) and content:
                if view.ttft_s is None:
                    view.ttft_s = time.monotonic() - self.started
                view.answer += content
                view.tokens += 1

    def end(self, state: str, *, error: str | None = None, note: str | None = None) -> None:
        self.view.state = state
        self.view.error = error or self.view.error
        self.view.note = note
        self.refresh(force=True)


def _answered(value: Any, verb: str = "answered") -> str:
    """What an endpoint sent instead of chat events, its error's text if it is one."""
    if isinstance(value, dict) and ("error" in value or value.get("object") == "error"):
        return f"it {verb} an error: {_error_text(value)}"
    return f"it {verb} {describe(value)}"


def _error_text(value: dict[str, Any]) -> str:
    error = value.get("error")
    if isinstance(error, dict):
        return one_line(str(error.get("message") or error))
    return one_line(str(error if error is not None else value.get("message", value)))


def _cancel(job: Job, answer: _Answer, by: str) -> Interrupted:
    """Ctrl-C or the Cancel button (``by``): cancel the job on the service, end the
    panel, and say what happened."""
    with deferred_interrupts(deliver=False):
        try:
            job.cancel()
        except NbextError as exc:
            answer.end("CANCELLED", note=f"stopped by {by}; the cancel failed: {exc}")
            return Interrupted(
                f"stopped reading job {job.id}; the cancel failed ({one_line(str(exc))}): "
                f"%runpod cancel {job.id}"
            )
    answer.end("CANCELLED", note=f"stopped by {by}; the job was cancelled on the service")
    return Interrupted(f"job {job.id} on {job.endpoint_id!r} was cancelled")


# ---- %runpod chat history ----------------------------------------------------------------


@subcommand("chat", "a chat's history as a DataFrame: %runpod chat history [ENDPOINT]")
@magic_arguments("runpod chat")
@argument("what", choices=["history"], help="history: the conversation so far")
@argument("endpoint", nargs="?", help="the endpoint (default: every endpoint chatted with)")
def chat(magics: Magics, args: argparse.Namespace) -> pd.DataFrame:
    """The conversations of %%runpod_chat in this kernel, a row per message.

    Columns: endpoint, turn, role, content, model, job_id, ttft_s, tokens, tokens_per_s.
    """
    import pandas as pd

    conversations: dict[str, Conversation] = magics.conversations
    if args.endpoint is not None and args.endpoint not in conversations:
        known = ", ".join(sorted(conversations)) or "none yet"
        raise UsageError(f"no chat with endpoint {args.endpoint!r} in this kernel (chats: {known})")
    chosen = [args.endpoint] if args.endpoint else sorted(conversations)
    rows: list[dict[str, Any]] = []
    for endpoint_id in chosen:
        conversation = conversations[endpoint_id]
        if conversation.system:
            system = {"role": "system", "content": conversation.system}
            rows.append({"endpoint": endpoint_id, "turn": 0, **system})
        for i, turn in enumerate(conversation.turns):
            rows.append({"endpoint": endpoint_id, "turn": i // 2 + 1, **dataclasses.asdict(turn)})
    columns = ["endpoint", "turn", *(f.name for f in dataclasses.fields(Turn))]
    return pd.DataFrame(rows, columns=columns)

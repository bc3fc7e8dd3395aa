"""``%%runpod_chat`` in a real IPython shell against a real emulator: the answer streams
as Markdown, the conversation goes on, the output ends static, mistakes are one line."""

from __future__ import annotations

import _thread
import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from nbext.notebook import awaiting
from nbext.notebook.chat import EventReader
from nbext.notebook.interrupts import Interrupted
from nbext.notebook.magics.chat import ChatFailed

from .conftest import Notebook


def event(content: str) -> str:
    return f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': content}}]})}\n\n"


async def parrot(job: dict[str, Any]) -> AsyncIterator[Any]:
    """A chat endpoint that answers the last message back, in two events."""
    if job["input"]["openai_route"] == "/v1/models":
        yield {"object": "list", "data": [{"id": "parrot-1", "object": "model"}]}
        return
    text = job["input"]["openai_input"]["messages"][-1]["content"]
    half = len(text) // 2
    yield event(text[:half])
    yield event(text[half:]) + "data: [DONE]\n\n"


async def broken(job: dict[str, Any]) -> AsyncIterator[Any]:
    if job["input"]["openai_route"] == "/v1/models":
        yield {"object": "list", "data": [{"id": "broken-1", "object": "model"}]}
        return
    yield event("half an ans")
    raise RuntimeError("the GPU fell over")


@pytest.fixture
def chat(nb: Notebook) -> Notebook:
    nb.emu.deploy("llm", endpoint_id="llm")
    nb.deploy(parrot, "parrot")
    nb.deploy(broken, "broken")
    return nb


def chat_outputs(nb: Notebook) -> list[dict[str, Any]]:
    return [o for o in nb.displays if "nbext-chat" in str(o["data"].get("text/html", ""))]


def last_job(nb: Notebook, endpoint: str) -> Any:
    jobs = [j for j in nb.emu.jobs.jobs.values() if j.endpoint_id == endpoint]
    return max(jobs, key=lambda j: j.submitted_at)


def test_event_text_is_read_whatever_its_pieces() -> None:
    """One reader for chat answers and %%runpod_http streams: pieces may split an event,
    even its CRLF; comments and other fields are left out; a blank line ends the last."""
    reader = EventReader()
    pieces = [
        ": hi\r",
        '\ndata: {"a"',
        ": 1}\r\n\r",
        "\nevent: x\ndata: two\ndata:  lines\n\n",
        "data: end",
    ]
    seen = [data for piece in [*pieces, "\n\n"] for data in reader.feed(piece)]
    assert seen == ['{"a": 1}', "two\n lines", "end"]


def test_a_lone_cr_ends_an_event_line() -> None:
    """SSE lets a server end its lines with CR alone (httpx's line reader took it)."""
    reader = EventReader()
    pieces = ["data: one\r", "\rdata: two\r\r", "data: three\r", "\n\r\n"]
    assert [data for piece in pieces for data in reader.feed(piece)] == ["one", "two", "three"]


def test_the_answer_streams_as_markdown_and_ends_static(chat: Notebook) -> None:
    chat.run("%%runpod_chat llm -o answer\nTell me about a cold start")
    outputs = chat_outputs(chat)
    final = outputs[-1]["data"]
    assert set(final) == {"text/html", "text/markdown", "text/plain"}
    answer = chat.shell.user_ns["answer"]
    assert final["text/markdown"] == answer and answer.startswith("*A demo answer")
    html = final["text/html"]
    assert "<em>A demo answer" in html  # emphasis rendered
    assert "<ul>" in html and "<li>" in html  # the list
    assert '<pre><code class="language-python">' in html  # the code block
    assert 'data-state="COMPLETED"' in html and "first token" in html and "tokens/s" in html
    assert "[COMPLETED]" in final["text/plain"] and answer in final["text/plain"]
    updates = [o for o in outputs if o["update"]]
    assert len(updates) >= 3  # it was drawn while it came, not only at the end
    assert len({o["data"]["text/markdown"] for o in updates}) >= 3  # growing text


def test_redraws_are_at_most_ten_a_second(chat: Notebook) -> None:
    started = time.monotonic()
    chat.run("%%runpod_chat llm\nWhat is a queue?")
    elapsed = time.monotonic() - started
    live = [o for o in chat_outputs(chat) if o["update"]]
    assert len(live) <= 10 * elapsed + 2, (len(live), elapsed)


def test_the_conversation_goes_on_across_cells_and_new_starts_over(chat: Notebook) -> None:
    chat.run("%%runpod_chat parrot --system 'Be brief.'\nfirst question")
    chat.run("%%runpod_chat parrot\nsecond question")
    messages = last_job(chat, "parrot").input["openai_input"]["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("system", "Be brief."),
        ("user", "first question"),
        ("assistant", "first question"),
        ("user", "second question"),
    ]
    assert last_job(chat, "parrot").input["openai_input"]["model"] == "parrot-1"
    chat.run("%%runpod_chat parrot --new\nthird")
    messages = last_job(chat, "parrot").input["openai_input"]["messages"]
    assert messages == [{"role": "user", "content": "third"}]


def test_history_is_a_dataframe(chat: Notebook) -> None:
    chat.run("%%runpod_chat parrot --system 'Be brief.'\nhello there")
    frame = chat.run("%runpod chat history parrot")
    assert isinstance(frame, pd.DataFrame)
    assert list(frame["role"]) == ["system", "user", "assistant"]
    assert list(frame["content"]) == ["Be brief.", "hello there", "hello there"]
    assert frame["tokens"].iloc[-1] == 2 and frame["ttft_s"].iloc[-1] > 0
    with pytest.raises(UsageError, match="no chat with endpoint 'llm'"):
        chat.run("%runpod chat history llm")


def test_model_html_is_shown_as_text_never_run(chat: Notebook) -> None:
    chat.run('%%runpod_chat parrot\n<img src=x onerror="alert(1)"> and <script>alert(2)</script>')
    html = chat_outputs(chat)[-1]["data"]["text/html"]
    assert "<img" not in html and "<script" not in html
    assert "&lt;img src=x" in html and "&lt;script&gt;" in html


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%runpod_chat llm\n   \n", "the cell body is your message, and it is empty"),
        ("%%runpod_chat echo\nhello", "does not answer as a chat endpoint"),
        ("%%runpod_chat fail\nhello", "does not answer as a chat endpoint"),
        ("%%runpod_chat nope\nhello", "nope"),
        ("%%runpod_chat llm --temperature 3\nhello", "--temperature must be from 0 to 2"),
        ("%%runpod_chat llm --max-tokens 0\nhello", "--max-tokens must be 1 or more"),
        ("%%runpod_chat llm -o 1x\nhello", "not a valid Python variable name"),
    ],
)
def test_mistakes_are_one_line(chat: Notebook, cell: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        chat.run(cell)
    text = str(caught.value)
    assert message in text and "\n" not in text


def test_a_non_chat_endpoint_is_told_what_it_answered(chat: Notebook) -> None:
    with pytest.raises(UsageError) as caught:
        chat.run("%%runpod_chat echo\nhello")
    assert "openai_route" in str(caught.value)  # echo sent its input back


def test_a_failure_stops_run_all_unless_no_raise(chat: Notebook) -> None:
    with pytest.raises(ChatFailed, match="ended FAILED"):
        chat.run("%%runpod_chat broken\nhello")
    final = chat_outputs(chat)[-1]["data"]
    assert "the GPU fell over" in final["text/plain"] and "half an ans" in final["text/plain"]
    chat.run("%%runpod_chat broken --no-raise\nhello")  # does not raise
    assert chat.run("%runpod chat history broken").empty  # failed answers are not kept


@pytest.mark.usefixtures("sigint_handled")  # Ctrl-C arrives where SIGINT starts ignored
def test_ctrl_c_stops_the_answer_and_cancels_the_job(chat: Notebook) -> None:
    def interrupt_once_it_streams() -> None:
        chat.until(lambda: any(o["update"] for o in chat_outputs(chat)), "a first redraw")
        _thread.interrupt_main()

    threading.Thread(target=interrupt_once_it_streams, daemon=True).start()
    with pytest.raises(Interrupted, match="was cancelled"):
        chat.run("%%runpod_chat llm\nTell me a long story")
    job = last_job(chat, "llm")
    chat.until(lambda: job.status.value == "CANCELLED", "the job to be cancelled")
    final = chat_outputs(chat)[-1]["data"]
    assert "[CANCELLED]" in final["text/plain"] and "Ctrl-C" in final["text/plain"]


# ---- a cell that awaits (a Jupyter kernel, ipykernel 7.4+): the Cancel button ---------------
# As in test_awaiting.py, the awaited magic runs on the test's loop as ipykernel runs the
# cell, and the button is clicked as the browser's message would click it.

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def final_outputs(nb: Notebook) -> list[dict[str, Any]]:
    """The cell's outputs as a saved notebook keeps them: each display id's last data."""
    outputs: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for shown in nb.displays:
        display_id = shown["transient"].get("display_id")
        if shown["update"]:
            if display_id in by_id:
                by_id[display_id]["data"] = shown["data"]
            continue
        output = {"data": shown["data"]}
        outputs.append(output)
        if display_id:
            by_id[display_id] = output
    return outputs


def cancel_button() -> Any:
    import ipywidgets
    from ipywidgets.widgets.widget import _instances

    buttons = [w for w in list(_instances.values()) if isinstance(w, ipywidgets.Button)]
    return buttons[-1] if buttons else None


def test_chat_cells_are_made_to_await(chat: Notebook) -> None:
    lines = chat.shell.input_transformer_manager.transform_cell(
        "%%runpod_chat llm --system 'Be brief.'\nhello"
    )
    code = "".join(awaiting.await_job_cells(lines.splitlines(keepends=True)))
    assert code.startswith(awaiting.AWAITED_CALL) and "'runpod_chat'" in code
    assert chat.shell.should_run_async(code, transformed_cell=code)


def test_a_blocking_chat_shows_no_button(chat: Notebook) -> None:
    chat.run("%%runpod_chat parrot\nhello")
    assert not any(WIDGET_VIEW in o["data"] for o in chat.displays)
    assert "interrupt the kernel" in chat_outputs(chat)[0]["data"]["text/html"]


@pytest.mark.anyio
async def test_cancel_clicked_while_the_answer_streams_cancels_the_job(chat: Notebook) -> None:
    cell = asyncio.ensure_future(
        awaiting.run_cell_magic("runpod_chat", "llm -o answer", "Tell me a long story")
    )
    await chat.auntil(lambda: any(o["update"] for o in chat_outputs(chat)), "a first redraw")
    assert "Cancel (below)" in chat_outputs(chat)[0]["data"]["text/html"]
    button = cancel_button()
    assert button is not None and not button.disabled
    # Where the button cannot be drawn, its output's text says how to stop.
    (shown,) = [o["data"] for o in chat.displays if WIDGET_VIEW in o["data"]]
    assert shown["text/plain"] == "interrupt the kernel (■) to stop the answer and cancel its job"
    clicked = time.monotonic()
    button.click()
    with pytest.raises(Interrupted, match="was cancelled"):
        await asyncio.wait_for(cell, 10)
    assert time.monotonic() - clicked < 1.0  # the stream was cut, not read to its end
    job = last_job(chat, "llm")
    await chat.auntil(lambda: job.status.value == "CANCELLED", "the job to be cancelled")
    outputs = final_outputs(chat)
    assert not any(WIDGET_VIEW in o["data"] for o in outputs)
    panel = [o for o in outputs if "nbext-chat" in str(o["data"].get("text/html", ""))]
    final = panel[-1]["data"]
    assert 'data-state="CANCELLED"' in final["text/html"]
    assert "[CANCELLED]" in final["text/plain"] and "the Cancel button" in final["text/plain"]
    assert chat.shell.user_ns["answer"] is None
    assert chat.run("%runpod chat history").empty  # a cancelled answer is not kept
    await chat.conn.aclose()


@pytest.mark.anyio
async def test_ctrl_c_of_an_awaiting_chat_cancels_the_job(chat: Notebook) -> None:
    cell = asyncio.ensure_future(
        awaiting.run_cell_magic("runpod_chat", "llm", "Tell me a long story")
    )
    await chat.auntil(lambda: any(o["update"] for o in chat_outputs(chat)), "a first redraw")
    cell.cancel()  # what ipykernel does to an awaiting cell on Ctrl-C
    with pytest.raises(Interrupted, match="was cancelled"):
        await asyncio.wait_for(cell, 10)
    job = last_job(chat, "llm")
    await chat.auntil(lambda: job.status.value == "CANCELLED", "the job to be cancelled")
    final = chat_outputs(chat)[-1]["data"]
    assert "[CANCELLED]" in final["text/plain"] and "Ctrl-C" in final["text/plain"]
    assert not any(WIDGET_VIEW in o["data"] for o in final_outputs(chat))
    await chat.conn.aclose()


@pytest.mark.anyio
async def test_an_awaiting_chat_completes_and_keeps_no_button(chat: Notebook) -> None:
    await awaiting.run_cell_magic(
        "runpod_chat", "parrot --system 'Be brief.' -o answer", "hi there"
    )
    assert chat.shell.user_ns["answer"] == "hi there"
    outputs = final_outputs(chat)
    assert not any(WIDGET_VIEW in o["data"] for o in outputs)
    assert any(WIDGET_VIEW in o["data"] for o in chat.displays)  # it was shown meanwhile
    messages = last_job(chat, "parrot").input["openai_input"]["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    await chat.conn.aclose()

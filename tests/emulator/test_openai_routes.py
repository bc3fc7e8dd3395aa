"""The OpenAI-compatible routes, in process on the fake clock: shapes, errors, the job.

``/v2/{endpoint_id}/openai/v1/...`` makes a job whose input carries ``openai_route`` and
``openai_input``; these tests drive the demo ``llm`` endpoint and the other demos (which
do not speak the contract) through the HTTP app. The ``openai`` package against a real
server is in test_openai_package.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.demo_llm import MODEL_ID
from nbext.emulator.domain.ratelimit import LIMITS, Limit

from .conftest import advance, client_for

pytestmark = pytest.mark.anyio

CHAT = "/v2/llm/openai/v1/chat/completions"
INSTANT = {"tokens_per_second": 0}
"""No pacing: the fake clock would otherwise have to be moved for every token."""


def chat_body(text: str = "Tell me about cold starts", **extra: Any) -> dict[str, Any]:
    return {"model": MODEL_ID, "messages": [{"role": "user", "content": text}], **INSTANT,
            **extra}  # fmt: skip


def openai_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The ``error`` object of an OpenAI-shaped error answer that must have ``status``."""
    assert response.status_code == status, response.text
    body = response.json()
    assert list(body) == ["error"], body
    error: dict[str, Any] = body["error"]
    assert isinstance(error["message"], str) and error["message"]
    assert error["code"] == status and isinstance(error["type"], str)
    return error


@pytest.fixture
def llm(emu: Emulator) -> Emulator:
    emu.deploy("llm", endpoint_id="llm")
    return emu


async def test_models_lists_the_demo_model(llm: Emulator, http: httpx.AsyncClient) -> None:
    response = await http.get("/v2/llm/openai/v1/models")
    assert response.status_code == 200
    assert response.json()["object"] == "list"
    assert [m["id"] for m in response.json()["data"]] == [MODEL_ID]


async def test_a_chat_completion_is_a_job_with_the_route_and_the_body_as_input(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    body = chat_body(seed=7)
    response = await http.post(CHAT, json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["object"] == "chat.completion" and answer["model"] == MODEL_ID
    (choice,) = answer["choices"]
    assert choice["message"]["role"] == "assistant" and choice["finish_reason"] == "stop"
    text = choice["message"]["content"]
    assert text.startswith("*A demo answer from nbext's word model")  # it says what it is
    assert "\n- " in text and "```python\n" in text  # Markdown: a list and a code block
    usage = answer["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    (job,) = llm.jobs.jobs.values()
    assert job.input == {"openai_route": "/v1/chat/completions", "openai_input": body}
    assert answer["id"] == f"chatcmpl-{job.id}"
    listed = (await http.get("/v2/llm/requests")).json()
    assert [j["id"] for j in listed] == [job.id]  # an ordinary job of the endpoint


async def test_the_same_seed_gives_the_same_answer(llm: Emulator, http: httpx.AsyncClient) -> None:
    texts = set()
    for _ in range(2):
        answer = (await http.post(CHAT, json=chat_body(seed=3, temperature=1.2))).json()
        texts.add(answer["choices"][0]["message"]["content"])
    assert len(texts) == 1


async def test_max_tokens_cuts_the_answer_with_finish_reason_length(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    answer = (await http.post(CHAT, json=chat_body(max_tokens=5))).json()
    assert answer["choices"][0]["finish_reason"] == "length"
    assert answer["usage"]["completion_tokens"] == 5


async def test_a_stop_sequence_ends_the_answer_before_it(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    answer = (await http.post(CHAT, json=chat_body(stop=["\n"]))).json()
    text = answer["choices"][0]["message"]["content"]
    assert "\n" not in text and text.startswith("*A demo answer")


async def test_completions_answer_a_text_completion(llm: Emulator, http: httpx.AsyncClient) -> None:
    body = {"model": MODEL_ID, "prompt": "A queue", "max_tokens": 8, **INSTANT}
    answer = (await http.post("/v2/llm/openai/v1/completions", json=body)).json()
    assert answer["object"] == "text_completion"
    assert (
        isinstance(answer["choices"][0]["text"], str) and answer["usage"]["completion_tokens"] == 8
    )


@pytest.mark.parametrize("stream", [False, True])
async def test_each_request_gives_its_rate_limit_slot_back_when_its_answer_ends(
    llm: Emulator, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """One request in flight at a time: a slot kept after an answer (a stream's is given
    back only when the stream ends) would refuse the next request with a 429."""
    monkeypatch.setitem(LIMITS, "openai", Limit(rate=2000, concurrent=1))
    for _ in range(3):
        response = await http.post(CHAT, json=chat_body(stream=stream, max_tokens=4))
        assert response.status_code == 200, response.text
    refused = await http.post(CHAT, json=chat_body(model="no-such-model", stream=stream))
    assert refused.status_code == 404, refused.text
    assert (await http.post(CHAT, json=chat_body(stream=stream))).status_code == 200


async def test_a_streaming_request_is_answered_as_server_sent_events(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    response = await http.post(CHAT, json=chat_body(stream=True, max_tokens=6))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [e for e in response.text.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
    plain = (await http.post(CHAT, json=chat_body(max_tokens=6))).json()
    assert text == plain["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 3}]}, "messages[0].content"),
        ({"temperature": 5}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"stop": [1]}, "stop"),
        ({"seed": "x"}, "seed"),
    ],
)
async def test_an_invalid_request_is_an_openai_400_naming_the_field(
    llm: Emulator, http: httpx.AsyncClient, change: dict[str, Any], param: str
) -> None:
    error = openai_error(await http.post(CHAT, json={**chat_body(), **change}), 400)
    assert error["param"] == param and param.split("[")[0] in error["message"]


async def test_an_unknown_model_is_404(llm: Emulator, http: httpx.AsyncClient) -> None:
    error = openai_error(await http.post(CHAT, json={**chat_body(), "model": "gpt-x"}), 404)
    assert "gpt-x" in error["message"] and MODEL_ID in error["message"]


@pytest.mark.parametrize(
    ("body", "message"),
    [(b"[1]", "must be a JSON object"), (b"{", "not valid JSON"), (b"", "empty")],
)
async def test_a_body_that_is_not_a_json_object_is_400_and_makes_no_job(
    llm: Emulator, http: httpx.AsyncClient, body: bytes, message: str
) -> None:
    headers = {"Content-Type": "application/json"}
    error = openai_error(await http.post(CHAT, content=body, headers=headers), 400)
    assert message in error["message"]
    assert llm.jobs.jobs == {}


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("POST", "v1/embeddings", 404), ("GET", "v1/chat/completions", 405), ("POST", "x", 404)],
)
async def test_an_unknown_route_or_method_makes_no_job(
    llm: Emulator, http: httpx.AsyncClient, method: str, path: str, status: int
) -> None:
    response = await http.request(method, f"/v2/llm/openai/{path}", json=chat_body())
    assert f"/openai/{path}" in openai_error(response, status)["message"]
    assert llm.jobs.jobs == {}


async def test_an_unknown_endpoint_and_a_wrong_key_are_openai_errors(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    error = openai_error(await http.post("/v2/nope/openai/v1/chat/completions", json={}), 404)
    assert "endpoint 'nope' not found" in error["message"]
    async with client_for(llm, headers={"Authorization": "Bearer wrong"}) as stranger:
        openai_error(await stranger.get("/v2/llm/openai/v1/models"), 401)
    assert llm.jobs.jobs == {}


@pytest.mark.parametrize("stream", [False, True])
async def test_an_endpoint_whose_handler_does_not_speak_the_contract_is_a_502_at_once(
    llm: Emulator, http: httpx.AsyncClient, stream: bool
) -> None:
    response = await http.post("/v2/echo/openai/v1/chat/completions", json=chat_body(stream=stream))
    error = openai_error(response, 502)
    assert "openai_route" in error["message"] and "echo" in error["message"]
    assert response.headers["x-should-retry"] == "false"


async def test_a_handler_that_fails_is_a_500_with_its_error(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    response = await http.post("/v2/fail/openai/v1/chat/completions", json=chat_body())
    error = openai_error(response, 500)
    assert "handler failed" in error["message"] and "always fails" in error["message"]
    assert response.headers["x-should-retry"] == "false"  # a resend would run it again


async def test_a_job_no_worker_takes_is_a_504_and_is_cancelled(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    request = asyncio.ensure_future(
        http.post("/v2/held/openai/v1/chat/completions", json=chat_body())
    )
    for _ in range(50):
        if llm.jobs.jobs:
            break
        await asyncio.sleep(0)
    await advance(llm, 301)
    error = openai_error(await request, 504)
    assert "IN_QUEUE" in error["message"] and "cancelled" in error["message"]
    (job,) = llm.jobs.jobs.values()
    assert job.status.value == "CANCELLED"


async def test_a_cancel_ends_a_waiting_request_with_409(
    llm: Emulator, http: httpx.AsyncClient
) -> None:
    slow = chat_body(tokens_per_second=1)
    request = asyncio.ensure_future(http.post(CHAT, json=slow))
    for _ in range(50):
        if llm.jobs.jobs:
            break
        await asyncio.sleep(0)
    (job_id,) = llm.jobs.jobs
    health = (await http.get("/v2/llm/health")).json()
    assert health["jobs"]["inProgress"] == 1  # counted like any other job
    assert (await http.post(f"/v2/llm/cancel/{job_id}")).status_code == 200
    await advance(llm, 1)
    error = openai_error(await request, 409)
    assert job_id in error["message"] and "cancelled" in error["message"]


async def test_the_execution_timeout_ends_a_slow_answer_with_504(
    emu: Emulator, http: httpx.AsyncClient
) -> None:
    emu.deploy("llm", endpoint_id="slow-llm", execution_timeout_ms=5_000)
    request = asyncio.ensure_future(
        http.post("/v2/slow-llm/openai/v1/chat/completions", json=chat_body(tokens_per_second=1))
    )
    for _ in range(50):
        if emu.jobs.jobs:
            break
        await asyncio.sleep(0)
    await advance(emu, 6)
    error = openai_error(await request, 504)
    assert "execution timeout" in error["message"]
    (job,) = emu.jobs.jobs.values()
    assert job.status.value == "TIMED_OUT"
    listed = (await http.get("/v2/slow-llm/requests")).json()
    assert [(j["id"], j["status"]) for j in listed] == [(job.id, "TIMED_OUT")]

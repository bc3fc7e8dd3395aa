"""The official ``openai`` package, unmodified, against the emulator's OpenAI routes.

A real server on 127.0.0.1 and the real clock: the package's own HTTP client, SSE reader
and error mapping are what is tested, with ``base_url`` set as a user would set it for
the service (``{serverless_url}/{endpoint_id}/openai/v1``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import openai
import pytest

from nbext.emulator import Emulator, EmulatorServer
from nbext.emulator.domain.demo_llm import MODEL_ID
from nbext.emulator.domain.jobs import Job

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
MESSAGES = [{"role": "user", "content": "What is a cold start?"}]
FAST = {"tokens_per_second": 0}


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    emulator = Emulator(api_key=KEY, rate_limit=False)
    emulator.deploy("llm", endpoint_id="llm")
    emulator.deploy("echo", endpoint_id="echo")
    with EmulatorServer(emulator) as running:
        yield running
    emulator.close()


def base_url(server: EmulatorServer, endpoint: str = "llm") -> str:
    return f"{server.serverless_url}/{endpoint}/openai/v1"


@pytest.fixture
def client(server: EmulatorServer) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=base_url(server), api_key=KEY, timeout=30) as made:
        yield made


def jobs_of(server: EmulatorServer, endpoint: str) -> list[Job]:
    return [j for j in server.emulator.jobs.jobs.values() if j.endpoint_id == endpoint]


def test_models_list(client: openai.OpenAI) -> None:
    assert [m.id for m in client.models.list()] == [MODEL_ID]


def test_chat_completion(client: openai.OpenAI) -> None:
    answer = client.chat.completions.create(
        model=MODEL_ID, messages=MESSAGES, max_tokens=12, seed=1, extra_body=FAST
    )
    assert answer.choices[0].finish_reason == "length"
    assert answer.choices[0].message.content.startswith("*A demo answer")
    assert answer.usage is not None and answer.usage.completion_tokens == 12


def test_chat_completion_streamed_joins_into_the_plain_answer(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, seed=2,
                                           extra_body=FAST)  # fmt: skip
    stream = client.chat.completions.create(
        model=MODEL_ID, messages=MESSAGES, seed=2, stream=True,
        stream_options={"include_usage": True}, extra_body=FAST,
    )  # fmt: skip
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == plain.usage.completion_tokens  # type: ignore[union-attr]


def test_completions(client: openai.OpenAI) -> None:
    answer = client.completions.create(model=MODEL_ID, prompt="A queue", max_tokens=5,
                                       extra_body=FAST)  # fmt: skip
    assert answer.object == "text_completion" and answer.choices[0].finish_reason == "length"


@pytest.mark.anyio
async def test_async_chat_streams(server: EmulatorServer) -> None:
    async with openai.AsyncOpenAI(base_url=base_url(server), api_key=KEY, timeout=30) as client:
        stream = await client.chat.completions.create(
            model=MODEL_ID, messages=MESSAGES, stream=True, max_tokens=8, extra_body=FAST
        )
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        answer = await client.chat.completions.create(
            model=MODEL_ID, messages=MESSAGES, max_tokens=8, extra_body=FAST
        )
    assert "".join(p or "" for p in pieces) == answer.choices[0].message.content


def test_the_first_token_arrives_long_before_the_job_ends(client: openai.OpenAI) -> None:
    """Streaming is not buffered: at 20 tokens a second, 30 tokens take 1.5 s, and the
    first reaches the caller after about one token's time."""
    started = time.monotonic()
    stream = client.chat.completions.create(
        model=MODEL_ID, messages=MESSAGES, stream=True, max_tokens=30,
        extra_body={"tokens_per_second": 20},
    )  # fmt: skip
    first = None
    for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.monotonic() - started
    total = time.monotonic() - started
    assert first is not None and total >= 1.4
    assert first < total - 1.0, (first, total)


def test_a_client_that_stops_reading_cancels_the_job(
    server: EmulatorServer, client: openai.OpenAI
) -> None:
    before = {j.id for j in jobs_of(server, "llm")}
    stream = client.chat.completions.create(
        model=MODEL_ID, messages=MESSAGES, stream=True, extra_body={"tokens_per_second": 5}
    )
    next(iter(stream))
    stream.close()
    (job,) = [j for j in jobs_of(server, "llm") if j.id not in before]
    deadline = time.monotonic() + 10
    while job.status.value != "CANCELLED":
        assert time.monotonic() < deadline, f"the job is still {job.status.value}"
        time.sleep(0.02)


def test_an_invalid_request_is_a_bad_request_error_naming_the_field(
    client: openai.OpenAI,
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=MODEL_ID, messages=MESSAGES, temperature=9)
    assert "temperature" in str(caught.value)


def test_an_endpoint_that_does_not_speak_the_contract_fails_at_once(
    server: EmulatorServer,
) -> None:
    with openai.OpenAI(base_url=base_url(server, "echo"), api_key=KEY, timeout=30) as client:
        started = time.monotonic()
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model=MODEL_ID, messages=MESSAGES)
    assert caught.value.status_code == 502 and "openai_route" in str(caught.value)
    assert time.monotonic() - started < 5  # one answer, not re-sent (x-should-retry)
    assert len([j for j in jobs_of(server, "echo")]) >= 1


def test_a_wrong_key_is_an_authentication_error(server: EmulatorServer) -> None:
    with (
        openai.OpenAI(base_url=base_url(server), api_key="wrong", timeout=30) as client,
        pytest.raises(openai.AuthenticationError),
    ):
        client.models.list()

"""``endpoint.openai()`` / ``async_openai()``: the ``openai`` package set up for an endpoint."""

from __future__ import annotations

import sys

import openai
import pytest

from nbext import local_async_client, local_client
from nbext.client._openai import MissingExtra

LLM = {"llm": "llm"}
MESSAGES = [{"role": "user", "content": "hello"}]


def test_the_sync_client_talks_to_the_endpoint_s_openai_routes() -> None:
    with local_client(LLM, call_timeout=42) as client:
        llm = client.endpoint("llm").openai(max_retries=0)
        assert isinstance(llm, openai.OpenAI)
        assert str(llm.base_url) == f"{client.serverless_url}/llm/openai/v1/"
        assert llm.timeout == 42 and llm.max_retries == 0
        model = llm.models.list().data[0].id
        answer = llm.chat.completions.create(
            model=model, messages=MESSAGES, max_tokens=3, extra_body={"tokens_per_second": 0}
        )
        assert answer.usage is not None and answer.usage.completion_tokens == 3


@pytest.mark.anyio
async def test_the_async_client_streams() -> None:
    async with local_async_client(LLM) as client:
        # closed here: an AsyncOpenAI left to the garbage collector closes its pool on
        # whatever loop runs then, which is not this test's
        async with await client.endpoint("llm").async_openai() as llm:
            assert isinstance(llm, openai.AsyncOpenAI)
            stream = await llm.chat.completions.create(
                model="nbext-demo-word-model", messages=MESSAGES, max_tokens=4, stream=True,
                extra_body={"tokens_per_second": 0},
            )  # fmt: skip
            pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        assert len([p for p in pieces if p]) == 4


def test_without_the_package_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if it were not installed
    with local_client(LLM) as client, pytest.raises(MissingExtra) as caught:
        client.endpoint("llm").openai()
    assert (
        str(caught.value) == "endpoint.openai() needs the openai package: pip install 'nbext[llm]'"
    )

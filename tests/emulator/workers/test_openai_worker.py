"""A user's ``runpod`` worker script that speaks the OpenAI-route contract, unmodified,
answers the ``openai`` package through the emulator."""

from __future__ import annotations

import openai

from .conftest import KEY, Served


def client_for(served: Served, endpoint: str) -> openai.OpenAI:
    url = f"{served.server.serverless_url}/{endpoint}/openai/v1"
    return openai.OpenAI(base_url=url, api_key=KEY, timeout=120, max_retries=0)


def test_a_worker_script_answers_models_chat_and_a_stream(served: Served) -> None:
    endpoint = served.deploy("openai_worker.py", workers={"max": 1})
    messages = [{"role": "user", "content": "one two three"}]
    with client_for(served, endpoint) as client:
        assert [m.id for m in client.models.list()] == ["tiny-echo-model"]
        answer = client.chat.completions.create(model="tiny-echo-model", messages=messages)
        assert answer.choices[0].message.content == "three two one"
        stream = client.chat.completions.create(
            model="tiny-echo-model", messages=messages, stream=True
        )
        text = "".join(c.choices[0].delta.content or "" for c in stream)
        assert text == "three two one"


def test_a_worker_s_error_object_keeps_its_status(served: Served) -> None:
    endpoint = served.deploy("openai_worker.py", workers={"max": 1})
    with client_for(served, endpoint) as client:
        try:
            client.chat.completions.create(model="tiny-echo-model", messages=[])
        except openai.BadRequestError as exc:
            assert "messages is required" in str(exc)
        else:
            raise AssertionError("an empty messages list was accepted")

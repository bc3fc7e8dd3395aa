"""Chats sent through ``endpoint.openai()`` are recorded and replay offline
(docs/behaviour.md#recordings).

A standalone emulator with a key stands in for the cloud: its ``llm`` demo answers a
queue endpoint's OpenAI route, its ``llm-lb`` demo a load-balancing endpoint's ``/v1``.
The ``openai`` package that nbext hands out records, streamed and not, as ``http()``'s
requests are; the replay runs in a network namespace with loopback only and no key,
where the ``openai`` package, unmodified, gets the recorded tokens at their gaps.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nbext.client import Client
from nbext.models import recording
from tests.offline import python_offline
from tests.standalone import Standalone

from .conftest import KEY

pytestmark = pytest.mark.slow
ASK = [{"role": "user", "content": f"What is a cold start? My key is {KEY}"}]


@pytest.fixture
def cloud() -> Iterator[Standalone]:
    service = Standalone.module(
        "--api-key", KEY, "--endpoint", "llm=llm", "--endpoint", "lb=llm-lb"
    )
    try:
        yield service
    finally:
        service.stop()


def chats(path: Path, cloud: Standalone) -> dict[str, Any]:
    """Record a streamed and a whole chat on the queue route, one of each on the
    load-balancing endpoint (the whole one through ``async_openai()``)."""
    urls = cloud.exports["RUNPOD_ENDPOINT_BASE_URL"], cloud.exports["RUNPOD_REST_BASE_URL"]
    got: dict[str, Any] = {}
    with Client(KEY, serverless_url=urls[0], base_url=urls[1]) as client:
        queue, lb = client.endpoint("llm").openai(), client.endpoint("lb").openai()
        later = client.endpoint("llm").openai()  # made before recording: recorded all the same
        with client.record(path):
            for name, chat in (("queue", queue), ("lb", lb)):
                model = chat.models.list().data[0].id
                asked = {"model": model, "messages": ASK, "max_tokens": 8, "stream": True}
                got[name] = [c.model_dump() for c in chat.chat.completions.create(**asked)]
                got[name + "_asked"] = asked
            whole = {"model": got["queue_asked"]["model"], "messages": ASK, "max_tokens": 5}
            got["whole"] = later.chat.completions.create(**whole).model_dump()
            got["whole_asked"] = whole

            async def awaited() -> Any:
                async with client.endpoint("lb").async_openai() as chat:
                    asked = {**whole, "model": got["lb_asked"]["model"]}
                    got["lb_whole_asked"] = asked
                    return (await chat.chat.completions.create(**asked)).model_dump()

            got["lb_whole"] = asyncio.run(awaited())
    return got


OFFLINE = """
import json, time
import openai
from nbext.emulator import Emulator, EmulatorServer, replay
emulator = Emulator(api_key="rpa_CLASSROOM", demo_images=False)
with EmulatorServer(emulator) as server:
    replay.load(emulator, PATH)
    queue = openai.OpenAI(base_url=server.serverless_url + "/llm/openai/v1",
                          api_key="rpa_CLASSROOM")
    lb = openai.OpenAI(base_url=server.serverless_url.removesuffix("/v2") + "/lb/lb/v1",
                       api_key="rpa_CLASSROOM", max_retries=0)
    got = {}
    for name, chat in (("queue", queue), ("lb", lb)):
        got[name + "_models"] = [m.id for m in chat.models.list()]
        sent = time.monotonic()
        got[name] = [(time.monotonic() - sent, c.model_dump())
                     for c in chat.chat.completions.create(**ASKED[name + "_asked"])]
    got["whole"] = queue.chat.completions.create(**ASKED["whole_asked"]).model_dump()
    got["lb_whole"] = lb.chat.completions.create(**ASKED["lb_whole_asked"]).model_dump()
    for name, chat in (("queue_miss", queue), ("lb_miss", lb)):
        try:
            chat.chat.completions.create(**{**ASKED["whole_asked"], "max_tokens": 6})
        except openai.APIStatusError as exc:
            got[name] = [exc.status_code, exc.message]
    print(json.dumps(got))
emulator.close()
"""


def text(chunks: list[Any]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def test_openai_chats_record_and_replay_offline_token_by_token(
    cloud: Standalone, tmp_path: Path
) -> None:
    path = tmp_path / "chats.jsonl"
    got = chats(path, cloud)
    written = path.read_bytes()
    assert KEY.encode() not in written and b"uthorization" not in written
    calls = recording.read(path).calls
    assert all(c["kind"] == "http" for c in calls)
    assert [(c["endpoint"], c["input"]["method"], c["input"]["path"]) for c in calls] == [
        ("llm", "GET", "/openai/v1/models"),
        ("llm", "POST", "/openai/v1/chat/completions"),
        ("lb", "GET", "/v1/models"),
        ("lb", "POST", "/v1/chat/completions"),
        ("llm", "POST", "/openai/v1/chat/completions"),
        ("lb", "POST", "/v1/chat/completions"),
    ]
    streamed = calls[1]
    assert "My key is rpa_…EF42" in streamed["input"]["body"]
    assert streamed["headers"]["content-type"].startswith("text/event-stream")
    assert len(streamed["stream"]) > 3 and calls[3]["workerId"]
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(streamed["stream"]))

    asked = {k: v for k, v in got.items() if k.endswith("_asked")}
    masked = json.loads(json.dumps(asked).replace(KEY, "rpa_…EF42"))  # as recorded
    script = f"PATH = {str(path)!r}\nASKED = {masked!r}\n"
    replayed = json.loads(python_offline(script + OFFLINE)[-1])
    for name in ("queue", "lb"):
        assert text([c for _, c in replayed[name]]) == text(got[name]) != ""
        assert replayed[name + "_models"] == [got[name + "_asked"]["model"]]
    assert replayed["whole"] == got["whole"] and replayed["lb_whole"] == got["lb_whole"]
    tokens = [at for at, c in replayed["queue"] if c["choices"] and c["choices"][0]["delta"]]
    first, last = streamed["stream"][0][0] / 1000, streamed["stream"][-1][0] / 1000
    assert tokens[-1] - tokens[0] == pytest.approx(last - first, abs=0.1)
    assert last - first > 0.05  # the tokens came with gaps, and came back with them
    for name in ("queue_miss", "lb_miss"):
        status, message = replayed[name]
        assert status == 404 and "\n" not in message, message
        assert "was never recorded; nearest recorded inputs" in message, message
    assert "replay of endpoint 'llm'" in replayed["queue_miss"][1]
    assert "replay of endpoint 'lb'" in replayed["lb_miss"][1]

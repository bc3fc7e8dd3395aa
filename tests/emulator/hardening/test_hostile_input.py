"""Input that could be stored but not served back is refused with a 400 naming the field.

Before the fix a lone surrogate (``"\\ud800"``, legal as a JSON escape) was accepted and
then made ``/status``, ``/requests`` and the whole ``GET /v1/templates`` listing answer
500; an integer over 4300 digits answered 500 and dropped the keep-alive connection; a
PATCH with an unknown field on a locked pod answered 500.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, EmulatorServer, current_job

from ..conftest import AUTH, KEY
from ..management.conftest import ok, refused

pytestmark = pytest.mark.anyio

SURROGATE = b'{"input": {"x": "\\ud800"}}'
RAW_SURROGATE = b'{"input": {"x": "\xed\xa0\x80"}}'
SURROGATE_KEY = b'{"input": {"a": [1, {"\\udfff": 1}]}}'
HUGE_INT = b'{"input": {"n": ' + b"7" * 4301 + b"}}"
HUGE_FLOAT = b'{"input": {"f": 1e999}}'
DEEP = b'{"input": ' + b"[" * 250 + b"]" * 250 + b"}"


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        (SURROGATE, ("input.x", "lone surrogate", "\\ud800", "nothing was stored")),
        (RAW_SURROGATE, ("input.x", "lone surrogate")),
        (SURROGATE_KEY, ("input.a[1].\\udfff", "key holds a lone surrogate")),
        (HUGE_INT, ("more than 4300 digits",)),
        (HUGE_FLOAT, ("1e999", "too large")),
        (DEEP, ("nested more than 200 levels",)),
    ],
)
async def test_run_refuses_what_it_could_not_serve_back(
    http: httpx.AsyncClient, emu: Emulator, body: bytes, fragments: tuple[str, ...]
) -> None:
    for route in ("run", "runsync"):
        r = await http.post(f"/v2/echo/{route}", content=body)
        assert r.status_code == 400, r.text
        assert r.headers["content-type"] == "application/json"
        for fragment in fragments:
            assert fragment in r.json()["error"], r.json()
    assert emu.jobs.jobs == {}
    assert (await http.get("/v2/echo/requests")).json() == []


async def test_a_surrogate_pair_is_text_and_goes_through(http: httpx.AsyncClient) -> None:
    body = b'{"input": {"x": "\\ud83d\\ude00"}}'
    answer = (await http.post("/v2/echo/runsync", content=body)).json()
    assert answer["output"] == {"x": "\U0001f600"}


async def test_v1_creates_refuse_them_and_create_nothing(http: httpx.AsyncClient) -> None:
    before = await ok(http.get("/v1/templates"))
    body = b'{"name": "t\\ud800", "imageName": "echo"}'
    await refused(http.post("/v1/templates", content=body), "name", "lone surrogate")
    await refused(http.post("/v1/templates", content=HUGE_INT), "4300 digits")
    assert await ok(http.get("/v1/templates")) == before


async def test_output_that_cannot_be_sent_fails_its_job(
    make_emulator: Any,
) -> None:
    emu: Emulator = make_emulator(demos=False)

    def bad(job: dict[str, Any]) -> Any:
        return {"text": job["input"]["text"] + "\ud800", "big": 1}

    def bad_chunk(job: dict[str, Any]) -> Iterator[Any]:
        yield "fine"
        yield {"text": "\udfff"}

    def bad_metrics(job: dict[str, Any]) -> Iterator[Any]:
        current_job().metrics["who"] = "\ud800"
        yield "x"

    def raises_bad_text(job: dict[str, Any]) -> Any:
        raise ValueError("broken \ud800 text")

    for name, handler in [("bad", bad), ("chunk", bad_chunk), ("metrics", bad_metrics),
                          ("raises", raises_bad_text)]:  # fmt: skip
        emu.deploy(handler=handler, endpoint_id=name)
    from ..conftest import client_for

    async with client_for(emu) as http:
        for name, fragment in [
            ("bad", "handler output cannot be sent as JSON"),
            ("chunk", "streamed a chunk that cannot be sent as JSON"),
            ("metrics", "streamed a chunk that cannot be sent as JSON"),
            ("raises", "ValueError: broken \\ud800 text"),
        ]:
            r = await http.post(f"/v2/{name}/runsync", json={"input": {"text": "a"}})
            assert r.status_code == 200, r.text
            assert r.json()["status"] == "FAILED" and fragment in r.json()["error"], r.json()
            job_id = r.json()["id"]
            assert (await http.get(f"/v2/{name}/status/{job_id}")).status_code == 200
            assert (await http.get(f"/v2/{name}/stream/{job_id}")).status_code == 200
            assert (await http.get(f"/v2/{name}/requests")).status_code == 200


async def test_an_unknown_field_on_a_locked_pod_is_a_400(http: httpx.AsyncClient) -> None:
    body = {"name": "p", "imageName": "img", "gpuTypeIds": ["NVIDIA A40"], "locked": True}
    pod = await ok(http.post("/v1/pods", json=body), 201)
    url = f"/v1/pods/{pod['id']}"
    for locked in (True, False):
        await ok(http.patch(url, json={"locked": locked}))
        before = await ok(http.get(url))
        await refused(http.patch(url, json={"nosuchField": 1}), "nosuchField", "imageName")
        await refused(http.post(f"{url}/update", json={"name": "x", "bogus": 2}), "bogus")
        assert await ok(http.get(url)) == before


def test_the_keep_alive_connection_survives_a_refused_number() -> None:
    emulator = Emulator(api_key=KEY)
    emulator.deploy("echo", endpoint_id="echo")
    with EmulatorServer(emulator) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        headers = {**AUTH, "Content-Type": "application/json"}
        connection.request("POST", "/v2/echo/runsync", body=HUGE_INT, headers=headers)
        first = connection.getresponse()
        assert first.status == 400 and b"4300 digits" in first.read()
        sock = connection.sock
        connection.request("POST", "/v2/echo/runsync", body=b'{"input": {"n": 1}}', headers=headers)
        second = connection.getresponse()
        assert json.loads(second.read())["output"] == {"n": 1}
        assert connection.sock is sock, "the connection was dropped and opened again"
        connection.close()
    emulator.close()

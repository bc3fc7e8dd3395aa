"""Arbitrary JSON through ``/run``, ``/runsync`` and ``/v1`` creates: every answer is a 4xx
in the interface's error shape, or a state that reads back intact.

Bodies are written by hand rather than by ``json.dumps``, so they can hold what a client
may send but Python would not write: lone surrogates (as ``\\u`` escapes or as raw
bytes), integers past 4300 digits, floats that overflow, nesting past any limit. After
every example, the reads that one bad record used to poison still answer 200.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbext.emulator import Emulator, EmulatorServer

from ..conftest import AUTH, KEY


@dataclass(frozen=True)
class Raw:
    """A number written as its literal text (Python could not write or read it back)."""

    text: str


@dataclass(frozen=True)
class RawText:
    """A string written with raw bytes for its surrogates (invalid UTF-8), not escapes."""

    value: str


def write(value: Any) -> bytes:
    if isinstance(value, Raw):
        return value.text.encode()
    if isinstance(value, RawText):
        return b'"' + value.value.encode("utf-8", "surrogatepass").replace(b'"', b'\\"') + b'"'
    if isinstance(value, dict):
        items = [write(k) + b":" + write(v) for k, v in value.items()]
        return b"{" + b",".join(items) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(write(v) for v in value) + b"]"
    return json.dumps(value).encode()  # ASCII: surrogates become \u escapes


def read(value: Any) -> Any:
    """What the emulator should have understood ``value`` as, had it accepted it."""
    if isinstance(value, RawText):
        return value.value
    if isinstance(value, Raw):  # accepted: an integer of at most 4300 digits, or a float
        return int(value.text) if value.text.isdigit() else float(value.text)
    if isinstance(value, dict):
        return {read(k): read(v) for k, v in value.items()}
    if isinstance(value, list):
        return [read(v) for v in value]
    return value


ANY_CHAR = st.characters(exclude_categories=())  # surrogates included
text = st.text(ANY_CHAR, max_size=12) | st.text(max_size=12)
raw_text = st.text(ANY_CHAR, max_size=6).filter(lambda s: "\\" not in s).map(RawText)
numbers = (
    st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(4250, 4400).map(lambda n: Raw("9" * n))
    | st.sampled_from([Raw("1e999"), Raw("-1e400"), Raw("1e308"), Raw("2.5e-400")])
)
leaves = st.none() | st.booleans() | numbers | text | raw_text
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def nested(draw: st.DrawFn) -> Any:
    value = draw(values)
    for _ in range(draw(st.sampled_from([0, 0, 0, 5, 150, 198, 199, 200, 250]))):
        value = [value] if draw(st.booleans()) else {"k": value}
    return value


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    emulator = Emulator(api_key=KEY, rate_limit=False)
    emulator.deploy("echo", endpoint_id="echo")
    with (
        EmulatorServer(emulator) as server,
        httpx.Client(
            base_url=server.url, headers={**AUTH, "Content-Type": "application/json"}, timeout=30
        ) as http,
    ):
        yield http
    emulator.close()


def refusal(response: httpx.Response, key: str) -> bool:
    """A 4xx in the interface's shape: JSON with a one-line message under ``key``."""
    if not 400 <= response.status_code < 500:
        return False
    assert response.headers["content-type"] == "application/json", response.text
    message = response.json()[key]
    assert isinstance(message, str) and message and "\n" not in message
    return True


def reads_still_answer(client: httpx.Client) -> None:
    for path in ("/v2/echo/requests", "/v1/templates", "/v2/echo/health"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.text)
        response.json()


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(value=nested(), sync=st.booleans())
def test_job_input_is_refused_or_comes_back_intact(
    client: httpx.Client, value: Any, sync: bool
) -> None:
    body = b'{"input":{"v":' + write(value) + b"}}"
    response = client.post(f"/v2/echo/{'runsync' if sync else 'run'}", content=body)
    if not refusal(response, "error"):
        assert response.status_code == 200, response.text
        job = response.json()
        deadline = time.monotonic() + 30
        while job["status"] != "COMPLETED":
            assert time.monotonic() < deadline, job
            job = client.get(f"/v2/echo/status/{job['id']}").json()
        assert job["output"] == {"v": read(value)}
    reads_still_answer(client)


@SETTINGS
@given(name=text | raw_text, env_key=text, env_value=text | raw_text, readme=nested())
def test_a_template_is_refused_or_reads_back_intact(
    client: httpx.Client, name: Any, env_key: str, env_value: Any, readme: Any
) -> None:
    fields = {"name": name, "imageName": "img", "env": {env_key: env_value}, "readme": readme}
    response = client.post("/v1/templates", content=write(fields))
    if not refusal(response, "message"):
        assert response.status_code in (200, 201), response.text
        created = response.json()
        again = client.get(f"/v1/templates/{created['id']}").json()
        assert again == created
        assert again["name"] == read(name) and again["env"] == {env_key: read(env_value)}
        assert client.delete(f"/v1/templates/{created['id']}").status_code in (200, 204)
    reads_still_answer(client)

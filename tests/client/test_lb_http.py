"""``endpoint.http()``, ``async_http()`` and ``openai()`` on load-balancing endpoints.

Real workers: a FastAPI server and one of the standard library's ``http.server``, run
unmodified by a real emulator, reached through the real client; the ``openai`` package
against the emulator's load-balancing demo (``llm-lb``). Waits are bounded polls of a
condition, never sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from nbext.client import (
    AsyncClient,
    BadRequest,
    Client,
    NotFound,
    PayloadTooLarge,
    ServerError,
    Unauthorized,
)
from nbext.emulator import Emulator, EmulatorServer
from tests.lb_servers import FASTAPI_SERVER, STDLIB_SERVER, write

KEY = "rpa_5C0FFEE0DDBA11F00D5EED1234567890ABCDEF42"
START_S = 60.0
"""Bound for a worker process to start (far above what it takes)."""


def until(condition: Callable[[], object], what: str, timeout: float = START_S) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Emulator, EmulatorServer]]:
    folder = tmp_path_factory.mktemp("lb")
    emu = Emulator(api_key=KEY)
    server = EmulatorServer(emu).start()
    emu.deploy_worker(
        write(folder, "app.py", FASTAPI_SERVER), endpoint_id="api", type="LOAD_BALANCER"
    )
    emu.deploy_worker(
        write(folder, "plain.py", STDLIB_SERVER), endpoint_id="plain", type="LOAD_BALANCER"
    )
    emu.deploy("echo", endpoint_id="echo")
    emu.deploy("llm-lb", endpoint_id="llm-lb")
    try:
        yield emu, server
    finally:
        server.stop()
        emu.close()


@pytest.fixture
def client(served: tuple[Emulator, EmulatorServer]) -> Iterator[Client]:
    _, server = served
    with Client(KEY, serverless_url=server.serverless_url, base_url=f"{server.url}/v2") as c:
        yield c


def test_http_is_an_httpx_client_on_the_record_s_base_with_the_key(client: Client) -> None:
    record = client.endpoints.get("api")
    assert record.type == "LOAD_BALANCER" and record.request_urls is not None
    with client.endpoint("api").http() as http:
        assert isinstance(http, httpx.Client)
        assert str(http.base_url).rstrip("/") == record.request_urls.base
        assert KEY not in repr(http.headers) and KEY not in repr(http.auth)
        answer = http.post("/echo", json={"text": "hi"})  # through the cold start
        assert answer.json() == {"text": "hi"}
        assert answer.headers["X-Runpod-Worker-Id"].startswith("worker-")
        assert http.get("/items").json()[2] == {"id": 2, "square": 4}
        assert http.timeout.read == client._ctx.wait_timeout  # a request may wait for a worker


def test_http_and_openai_read_the_record_once_and_share_one_pool(
    served: tuple[Emulator, EmulatorServer],
) -> None:
    _, server = served
    asked: list[str] = []
    sender = httpx.Client(event_hooks={"request": [lambda r: asked.append(r.url.path)]})
    urls = {"serverless_url": server.serverless_url, "base_url": f"{server.url}/v2"}
    with sender, Client(KEY, http_client=sender, **urls) as client:
        http = client.endpoint("api").http()
        assert client.endpoint("api").http() is http  # one httpx client per endpoint
        assert str(client.endpoint("api").openai().base_url) == f"{http.base_url}v1/"
        assert str(client.endpoint("echo").openai().base_url).endswith("/echo/openai/v1/")
        client.endpoint("echo").openai()
        assert asked == ["/v2/serverless/api", "/v2/serverless/echo"]  # each record once
        http.close()  # its user closed it: the next call makes another, asking nothing
        again = client.endpoint("api").http()
        assert again is not http and not again.is_closed and len(asked) == 2
    assert again.is_closed  # the client closes what it made


def test_a_standard_library_server_serves_as_well(client: Client) -> None:
    with client.endpoint("plain").http() as http:
        assert http.post("/anything", content=b'{"n": 1}').json() == {"n": 1}


@pytest.mark.anyio
async def test_async_http_streams_server_sent_events(
    served: tuple[Emulator, EmulatorServer],
) -> None:
    _, server = served
    async with AsyncClient(
        KEY, serverless_url=server.serverless_url, base_url=f"{server.url}/v2"
    ) as aclient:
        http = await aclient.endpoint("api").async_http()
        assert isinstance(http, httpx.AsyncClient)
        async with http, http.stream("GET", "/count") as answer:
            lines = [line async for line in answer.aiter_lines() if line]
        assert lines == [": a comment", "data: one", "event: number", 'data: {"n": 2}']
        # openai() finds its URL as the sync client's does: from the record, read once
        llm = await aclient.endpoint("api").async_openai()
        assert str(llm.base_url) == f"{http.base_url}v1/"
        await llm.close()
        assert await aclient.endpoint("api").async_http() is not http  # closed: made again


def test_error_answers_are_the_client_s_errors_naming_path_and_worker(client: Client) -> None:
    with client.endpoint("api").http() as http:
        http.get("/items")  # a worker is up
        with pytest.raises(NotFound) as gone:
            http.get("/items", headers={"X-Runpod-Worker-Id": "strict worker-gone"})
        assert gone.value.reason == "affinity_worker_gone" and gone.value.status == 404
        assert str(gone.value) == "404 on GET /items (endpoint 'api'): affinity_worker_gone"
        with pytest.raises(Exception) as teapot:
            http.get("/teapot")  # the worker's own error status
        assert getattr(teapot.value, "status", None) == 418
        assert "no coffee here" in str(teapot.value) and "worker worker-" in str(teapot.value)
        http.auth = None  # as a request without the key
        with pytest.raises(Unauthorized):
            http.get("/items")


def test_a_body_over_30_mb_is_refused_before_it_is_sent(client: Client) -> None:
    with client.endpoint("api").http() as http, pytest.raises(PayloadTooLarge) as refused:
        http.post("/echo", content=b"x" * (30 * 1024 * 1024 + 1))
    assert refused.value.sent is False
    assert str(refused.value) == (
        "POST /echo (endpoint 'api'): the body is 31,457,281 bytes, over the service's 31,457,280"
    )


def test_a_crashed_worker_s_request_is_a_server_error_and_a_new_worker_answers_later(
    client: Client,
) -> None:
    with client.endpoint("plain").http() as http:
        http.get("/ok")
        with pytest.raises(ServerError) as crashed:
            http.post("/crash", content=b"{}")
        assert crashed.value.status == 502 and crashed.value.reason == "worker connection lost"

        def answered() -> bool:
            try:
                return http.get("/ok").json() == {"ok": True}
            except ServerError:
                return False

        until(answered, "a worker to answer again")


def test_each_kind_of_endpoint_refuses_the_other_s_calls_in_one_line(client: Client) -> None:
    with pytest.raises(BadRequest) as queue:
        client.endpoint("echo").http()
    assert queue.value.sent is False and str(queue.value) == (
        "endpoint 'echo' is queue-based: send it jobs with run() or run_sync(); "
        "http() is for load-balancing endpoints"
    )
    with pytest.raises(BadRequest) as lb:
        client.endpoint("api").run({"text": "hi"})
    assert "is a load-balancing endpoint" in str(lb.value) and "\n" not in str(lb.value)
    with pytest.raises(NotFound):
        client.endpoint("nope").http()


def test_the_openai_package_chats_with_the_load_balancing_demo(client: Client) -> None:
    llm = client.endpoint("llm-lb").openai(max_retries=0)
    base = client.endpoints.get("llm-lb").request_urls
    assert base is not None and str(llm.base_url) == f"{base.base}/v1/"
    assert isinstance(llm, openai.OpenAI)
    model = llm.models.list().data[0].id
    stream = llm.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hi"}], max_tokens=3, stream=True
    )
    pieces = [c.choices[0].delta.content for c in stream if c.choices]
    assert len([p for p in pieces if p]) == 3
    assert str(client.endpoint("echo").openai().base_url).endswith("/echo/openai/v1/")


def test_a_cold_start_s_request_waits_for_the_first_200(
    served: tuple[Emulator, EmulatorServer], client: Client, tmp_path: Path
) -> None:
    emu, _ = served
    ready = tmp_path / "ready"
    emu.deploy_worker(
        write(tmp_path, "cold.py", FASTAPI_SERVER),
        endpoint_id="cold",
        type="LOAD_BALANCER",
        env={"READY_FILE": str(ready)},
    )
    endpoint = client.endpoint("cold")
    answers: list[httpx.Response] = []
    with endpoint.http() as http:
        import threading

        sender = threading.Thread(target=lambda: answers.append(http.get("/items")))
        sender.start()
        until(lambda: endpoint.health().workers.initializing == 1, "a worker at 204")
        assert "cold start" in endpoint.diagnose().cause and not answers
        ready.touch()
        sender.join(START_S)
    assert answers and answers[0].status_code == 200
    idle = endpoint.diagnose().cause  # no job waits on a load-balancing endpoint
    assert idle == "1 worker idle, ready: a request or job sent now starts at once"


def test_a_with_block_on_the_endpoint_s_client_after_a_call_works_and_closes_it(
    client: Client,
) -> None:
    """The endpoint's one client, already opened by an earlier call (a cell of
    %%runpod_http, say), still serves a ``with`` block, which closes it as httpx does; the
    next ``http()`` is a new one."""
    endpoint = client.endpoint("api")  # the fixture's FastAPI worker
    first = endpoint.http()
    assert first.get("/items").status_code == 200  # opened by this call
    with endpoint.http() as http:
        assert http is first and http.get("/items").status_code == 200
    assert first.is_closed
    again = endpoint.http()
    assert again is not first and again.get("/items").status_code == 200

"""Load-balancing endpoints with real servers as workers, through a real emulator.

Each worker is a real HTTP server written to a temporary file: the standard library's
``http.server`` (``CONTROLLED``, steered by files the test creates beside it: ``ready``
turns its health path from 204 to 200, ``release`` lets a held request answer) or
FastAPI (``STREAMING``: SSE and a WebSocket). The emulator runs on a fake clock, so the
2-minute wait, the 5.5-minute limit and the strict-affinity wait pass when the test
advances it; processes and health checks are real time, waited for with ``until``.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import os
import re
import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator, EmulatorServer, FakeClock
from nbext.emulator.domain.balancer import BODY_LIMIT

from .conftest import KEY, until

AUTH = {"Authorization": f"Bearer {KEY}"}

CONTROLLED = textwrap.dedent(
    """
    import json, os, sys, time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from pathlib import Path

    HERE = Path(__file__).parent

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def answer(self, status, body=b"", kind="application/json", length=None):
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body) if length is None else length))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == os.environ["HEALTH_CHECK_PATH"]:
                forced = HERE / "health"
                if forced.exists():
                    return self.answer(int(forced.read_text()))
                return self.answer(200 if (HERE / "ready").exists() else 204)
            if self.path == "/env":
                return self.answer(200, json.dumps(dict(os.environ)).encode())
            if self.path == "/hold":
                while not (HERE / "release").exists():
                    time.sleep(0.01)
                return self.answer(200, b'{"held": true}')
            if self.path == "/linger":  # answers nothing; notes when its caller leaves
                (HERE / "lingering").touch()
                if not self.connection.recv(1):  # the emulator sends nothing more: EOF
                    (HERE / "closed").touch()
                return
            if self.path == "/crash":
                print("crashing on purpose", flush=True)
                os._exit(3)
            if self.path == "/big":
                return self.answer(200, b"x" * (30 * 1024 * 1024 + 1))
            body = {"path": self.path, "headers": dict(self.headers), "pid": os.getpid()}
            return self.answer(200, json.dumps(body).encode())

        def do_POST(self):
            size = int(self.headers["content-length"])
            data = self.rfile.read(size)
            self.answer(201, json.dumps({"size": len(data), "head": data[:10].decode()}).encode())

        def log_message(self, *args):
            pass

    print("serving on", os.environ["PORT"], flush=True)
    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)

STREAMING = textwrap.dedent(
    """
    import asyncio, os
    from pathlib import Path
    import uvicorn
    from fastapi import FastAPI, WebSocket
    from fastapi.responses import StreamingResponse

    HERE = Path(__file__).parent
    app = FastAPI()

    @app.get("/ping")
    async def ping():
        return {"status": "healthy"}

    @app.get("/events")
    async def events():
        async def gen():
            yield "data: first\\n\\n"
            while not (HERE / "release").exists():
                await asyncio.sleep(0.01)
            yield "data: second\\n\\n"
        return StreamingResponse(gen(), media_type="text/event-stream")

    @app.websocket("/ws-seen")
    async def ws_seen(socket: WebSocket):
        await socket.accept()
        await socket.send_json({"headers": dict(socket.headers), "cookies": socket.cookies})

    @app.websocket("/ws-refused")
    async def ws_refused(socket: WebSocket):
        await socket.close(code=1008)

    @app.websocket("/ws")
    async def ws(socket: WebSocket):
        await socket.accept()
        while True:
            text = await socket.receive_text()
            await socket.send_text(text.upper())

    uvicorn.run(app, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
    """
)

SILENT = "import time\nprint('loading a model that never finishes', flush=True)\ntime.sleep(3600)\n"


class LB:
    """An emulator on a fake clock, serving, and the endpoints of one test."""

    def __init__(self, tmp: Path, emulator: Emulator, server: EmulatorServer) -> None:
        self.tmp, self.emulator, self.server = tmp, emulator, server
        self.http = httpx.Client(base_url=server.url, headers=AUTH, timeout=60)
        self.pool = concurrent.futures.ThreadPoolExecutor(4)

    def deploy(self, source: str, endpoint_id: str, **kw: Any) -> Path:
        folder = self.tmp / endpoint_id
        folder.mkdir()
        script = folder / "server.py"
        script.write_text(source)
        self.emulator.deploy_worker(script, endpoint_id=endpoint_id, type="LOAD_BALANCER", **kw)
        return folder

    def background(self, method: str, url: str, **kw: Any) -> concurrent.futures.Future[Any]:
        return self.pool.submit(self.http.request, method, url, **kw)

    def waiting(self, endpoint_id: str, count: int = 1) -> None:
        balanced = self.emulator.balancer.endpoints[endpoint_id]
        until(lambda: balanced.waiting >= count, what="a request waiting for a worker")

    def held(self, endpoint_id: str, count: int = 1) -> None:
        flights = self.emulator.balancer.in_flight
        endpoint = self.emulator.jobs.endpoints[endpoint_id]
        until(
            lambda: sum(flights.get(w.id, 0) for w in endpoint.workers) >= count,
            what="a request on a worker",
        )

    def workers(self, endpoint_id: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.http.get(f"/v2/serverless/{endpoint_id}/workers").json()[
            "workers"
        ]
        return found


@pytest.fixture
def lb(tmp_path: Path) -> Iterator[LB]:
    emulator = Emulator(api_key=KEY, rate_limit=False, demo_images=False, clock=FakeClock())
    server = EmulatorServer(emulator).start()
    made = LB(tmp_path, emulator, server)
    try:
        yield made
    finally:
        for folder in tmp_path.iterdir():
            (folder / "release").touch()  # no worker thread is left holding a request
        made.pool.shutdown(wait=True)
        server.stop()
        emulator.close()


def test_a_request_waits_through_the_cold_start_204_then_200(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    pending = lb.background("GET", "/lb/web/hello?x=1")
    lb.waiting("web")
    until(lambda: "204" in (lb.workers("web") or [{}])[0].get("healthCheck", ""), what="204")
    [worker] = lb.workers("web")
    assert worker["status"] == "INITIALIZING"
    assert lb.http.get("/v2/web/health").json()["workers"]["initializing"] == 1
    assert not pending.done()
    (folder / "ready").touch()
    answer = pending.result(timeout=60)
    assert answer.status_code == 200
    assert answer.json()["path"] == "/hello?x=1"
    assert answer.headers["x-runpod-worker-id"] == worker["id"]
    assert "authorization" not in {k.lower() for k in answer.json()["headers"]}  # the key stays
    assert lb.workers("web")[0]["healthCheck"] == "GET /ping answered 200: ready"
    [served] = lb.http.get("/_emulator/endpoints/web/requests").json()["requests"]
    assert served["path"] == "/hello" and served["status"] == 200
    assert served["workerId"] == worker["id"] and served["costUsd"] >= 0
    assert served["startedAt"] == round(lb.emulator.clock.now() * 1000)  # epoch ms (fake clock)


def test_the_host_form_and_the_record_s_urls_reach_the_same_worker(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    record = lb.http.get("/v2/serverless/web").json()
    assert record["type"] == "LOAD_BALANCER"
    assert record["scaling"] == {"type": "REQUEST_COUNT", "requestCount": 4}
    base = record["requestUrls"]["base"]
    assert base == f"{lb.server.url}/lb/web"
    assert record["requestUrls"]["health"] == base + "/ping"
    by_path = httpx.get(f"{base}/a", headers=AUTH, timeout=60)
    host = {"Host": f"web.localhost:{lb.server.port}", **AUTH}
    by_host = httpx.get(f"{lb.server.url}/a", headers=host, timeout=60)
    assert by_path.json()["path"] == by_host.json()["path"] == "/a"
    seen = [{k.lower(): v for k, v in a.json()["headers"].items()} for a in (by_path, by_host)]
    assert seen[0]["x-forwarded-prefix"] == "/lb/web"  # where it is served
    assert "x-forwarded-prefix" not in seen[1]
    assert by_path.headers["x-runpod-worker-id"] == by_host.headers["x-runpod-worker-id"]


def test_a_worker_gets_the_port_variables_and_none_of_the_emulator_s_secrets(
    lb: LB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNPOD_API_KEY", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
    folder = lb.deploy(CONTROLLED, "web", env={"MODEL": "tiny"})
    (folder / "ready").touch()
    env = lb.http.get("/lb/web/env").json()
    worker = lb.workers("web")[0]["id"]
    assert env["PORT"] == env["PORT_HEALTH"] and env["HEALTH_CHECK_PATH"] == "/ping"
    assert env["RUNPOD_POD_ID"] == worker and env["RUNPOD_ENDPOINT_ID"] == "web"
    assert env["MODEL"] == "tiny"
    assert KEY not in json.dumps(env) and "do-not-leak" not in json.dumps(env)
    assert not any(name.startswith("RUNPOD_WEBHOOK") for name in env)


def test_a_script_that_never_listens_stays_initializing_and_the_wait_ends_at_two_minutes(
    lb: LB,
) -> None:
    lb.deploy(SILENT, "stuck")
    pending = lb.background("POST", "/lb/stuck/generate", json={"prompt": "hi"})
    lb.waiting("stuck")
    until(lambda: "nothing listens" in str(lb.workers("stuck")), what="a refused health check")
    [worker] = lb.workers("stuck")
    assert worker["status"] == "INITIALIZING"
    logs = lb.emulator.worker_logs("stuck")
    until(lambda: any("never finishes" in line for line in lb.emulator.worker_logs("stuck")))
    assert logs is not None
    lb.emulator.advance(121)
    answer = pending.result(timeout=60)
    assert answer.status_code == 503
    body = answer.json()
    assert body["error"] == "no workers available"
    assert "initializing" in body["message"] and "nothing listens" in body["message"]


def test_a_worker_answering_500_on_its_health_path_is_unhealthy_and_out_of_routing(
    lb: LB,
) -> None:
    folder = lb.deploy(CONTROLLED, "sick")
    (folder / "health").write_text("500")
    pending = lb.background("GET", "/lb/sick/x")
    lb.waiting("sick")
    until(lambda: lb.workers("sick")[0]["status"] == "UNHEALTHY" if lb.workers("sick") else False)
    assert "answered 500: unhealthy" in lb.workers("sick")[0]["healthCheck"]
    assert lb.http.get("/v2/sick/health").json()["workers"]["unhealthy"] == 1
    (folder / "health").unlink()
    (folder / "ready").touch()
    assert pending.result(timeout=60).status_code == 200  # healthy again: routed


def test_bodies_over_30_mb_are_refused_both_ways_and_25_mb_passes(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    fits = lb.http.post("/lb/web/upload", content=b"y" * (25 * 1024 * 1024))
    assert fits.status_code == 201 and fits.json()["size"] == 25 * 1024 * 1024
    over = lb.http.post("/lb/web/upload", content=b"y" * (BODY_LIMIT + 1))
    assert over.status_code == 413 and over.json()["error"] == "request too large"
    big = lb.http.get("/lb/web/big")
    assert big.status_code == 502 and big.json()["error"] == "response too large"
    assert big.headers["x-runpod-worker-id"]


def test_strict_affinity_gone_and_busy_and_a_preference_for_an_unknown_worker(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web", workers={"max": 1})
    lb.emulator.management.endpoints.get("web").scaling_value = 1  # one request a worker
    (folder / "ready").touch()
    first = lb.http.get("/lb/web/a")
    worker = first.headers["x-runpod-worker-id"]
    soft = lb.http.get("/lb/web/a", headers={"X-Runpod-Worker-Id": "worker-0000"})
    assert soft.status_code == 200 and soft.headers["x-runpod-worker-id"] == worker
    gone = lb.http.get("/lb/web/a", headers={"X-Runpod-Worker-Id": "strict worker-0000"})
    assert gone.status_code == 404 and gone.json()["error"] == "affinity_worker_gone"
    bad = lb.http.get("/lb/web/a", headers={"X-Runpod-Worker-Id": "sticky a b"})
    assert bad.status_code == 400 and "strict <worker id>" in bad.json()["error"]
    holding = lb.background("GET", "/lb/web/hold")
    lb.held("web")
    strict = lb.background("GET", "/lb/web/a", headers={"X-Runpod-Worker-Id": f"strict {worker}"})
    lb.waiting("web")
    lb.emulator.advance(301)
    timed_out = strict.result(timeout=60)
    assert timed_out.status_code == 400 and timed_out.json()["error"] == "worker_timeout"
    (folder / "release").touch()
    assert holding.result(timeout=60).status_code == 200


def test_strict_resume_starts_a_scaled_down_worker_again_under_its_id(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web", workers={"idleTimeout": 5})
    (folder / "ready").touch()
    worker = lb.http.get("/lb/web/a").headers["x-runpod-worker-id"]
    lb.emulator.advance(6)
    until(lambda: not lb.emulator.jobs.endpoints["web"].workers, what="the idle timeout")
    strict = lb.http.get("/lb/web/a", headers={"X-Runpod-Worker-Id": f"strict {worker}"})
    assert strict.status_code == 404
    resumed = lb.http.get("/lb/web/a", headers={"X-Runpod-Worker-Id": f"strict-resume {worker}"})
    assert resumed.status_code == 200 and resumed.headers["x-runpod-worker-id"] == worker


def test_processing_past_five_and_a_half_minutes_is_a_504(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    pending = lb.background("GET", "/lb/web/hold")
    lb.held("web")
    lb.emulator.advance(331)
    answer = pending.result(timeout=60)
    assert answer.status_code == 504 and answer.json()["error"] == "request timed out"
    assert "330 s" in answer.json()["message"]


@contextlib.contextmanager
def leaving(lb: LB, path: str) -> Iterator[None]:
    """A whole request to the emulator whose connection is closed, its answer unread, when
    the block ends: a client that gave up (a notebook interrupted, a caller's timeout)."""
    with socket.create_connection(("127.0.0.1", lb.server.port)) as client:
        request = f"GET {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {KEY}\r\n\r\n"
        client.sendall(request.encode())
        yield


def in_flight(lb: LB, endpoint_id: str) -> int:
    endpoint = lb.emulator.jobs.endpoints[endpoint_id]
    return sum(lb.emulator.balancer.in_flight.get(w.id, 0) for w in endpoint.workers)


def test_a_request_whose_client_left_stops_waiting_for_a_worker(lb: LB) -> None:
    lb.deploy(CONTROLLED, "web")  # never ready: its health path answers 204
    with leaving(lb, "/lb/web/a"):
        lb.waiting("web")
    balanced = lb.emulator.balancer.endpoints["web"]
    until(lambda: balanced.waiting == 0, timeout=10, what="the abandoned request's wait ending")


def test_a_request_whose_client_left_is_closed_toward_its_worker(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    with leaving(lb, "/lb/web/linger"):
        until(lambda: (folder / "lingering").exists(), what="the request reaching the worker")
    until(lambda: (folder / "closed").exists(), timeout=10, what="the worker's connection closed")
    until(lambda: in_flight(lb, "web") == 0, timeout=10, what="the request no longer in flight")
    [served] = lb.http.get("/_emulator/endpoints/web/requests").json()["requests"]
    assert served["status"] is None and "client left" in served["error"]


def test_stopping_the_emulator_after_an_abandoned_request_logs_no_traceback(
    lb: LB, caplog: pytest.LogCaptureFixture
) -> None:
    uvicorn_log = logging.getLogger("uvicorn")  # it keeps its records from the root logger
    uvicorn_log.addHandler(caplog.handler)
    try:
        lb.deploy(CONTROLLED, "web")
        with leaving(lb, "/lb/web/a"):  # waiting for a worker that is never ready
            lb.waiting("web")
        lb.server.stop()
    finally:
        uvicorn_log.removeHandler(caplog.handler)
    assert [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR] == []


def test_a_crash_fails_the_request_in_flight_and_the_next_waits_for_a_new_worker(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    first = lb.http.get("/lb/web/a")
    crashed = lb.http.get("/lb/web/crash")
    assert crashed.status_code == 502 and crashed.json()["error"] == "worker connection lost"
    assert crashed.headers["x-runpod-worker-id"] == first.headers["x-runpod-worker-id"]
    after = lb.http.get("/lb/web/a")
    assert after.status_code == 200 and after.json()["pid"] != first.json()["pid"]
    logs = "\n".join(lb.emulator.worker_logs("web"))
    assert "crashing on purpose" in logs and "exited (exit code 3)" in logs


def test_requests_in_flight_scale_the_endpoint_up_to_workers_max(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web", workers={"max": 2})
    lb.emulator.management.endpoints.get("web").scaling_value = 1
    (folder / "ready").touch()
    held = [lb.background("GET", "/lb/web/hold") for _ in range(3)]
    lb.held("web", 2)
    lb.waiting("web")  # the third: both workers have their one request
    assert len(lb.emulator.jobs.endpoints["web"].workers) == 2
    assert lb.http.get("/v2/web/health").json()["workers"]["running"] == 2
    (folder / "release").touch()
    ids = {f.result(timeout=60).status_code for f in held}
    assert ids == {200}
    billed = lb.http.get("/v2/billing/serverless", params={"bucketSize": "hour"})
    assert billed.status_code == 200


def test_a_queue_route_on_a_load_balancing_endpoint_and_the_reverse_are_one_line(
    lb: LB,
) -> None:
    lb.deploy(SILENT, "web", workers={"max": 0})
    lb.emulator.deploy("echo", endpoint_id="queue")
    run = lb.http.post("/v2/web/run", json={"input": {}})
    assert run.status_code == 400 and "load-balancing endpoint" in run.json()["error"]
    lb_on_queue = lb.http.get("/lb/queue/x")
    assert lb_on_queue.status_code == 400
    assert lb_on_queue.json()["error"] == "not a load-balancing endpoint"
    unknown = lb.http.get("/lb/nope/x")
    assert unknown.status_code == 404 and "nope" in unknown.json()["error"]
    assert httpx.get(f"{lb.server.url}/lb/web/x").status_code == 401


def test_sse_streams_unbuffered_and_a_websocket_is_forwarded(lb: LB) -> None:
    from websockets.sync.client import connect

    folder = lb.deploy(STREAMING, "api")
    with lb.http.stream("GET", "/lb/api/events", timeout=60) as answer:
        lines = answer.iter_lines()
        assert next(lines) == "data: first"  # before the worker is let to write the rest
        (folder / "release").touch()
        assert [line for line in lines if line] == ["data: second"]
    url = f"ws://127.0.0.1:{lb.server.port}/lb/api/ws"
    with connect(url, additional_headers=AUTH) as socket:
        socket.send("hello")
        assert socket.recv(timeout=30) == "HELLO"


def test_an_unmodified_fastapi_app_s_docs_work_under_the_path_prefix(lb: LB) -> None:
    """FastAPI's /docs page names its schema by the prefix the worker is served under
    (``/lb/ID``), and that URL reaches the worker through the emulator; the Host form,
    served at the root, keeps the plain path."""
    lb.deploy(STREAMING, "api")
    page = lb.http.get("/lb/api/docs")
    assert page.status_code == 200
    [schema_url] = re.findall(r"url: '([^']+)'", page.text)
    assert schema_url == "/lb/api/openapi.json"
    schema = lb.http.get(schema_url)
    assert schema.status_code == 200 and "/events" in schema.json()["paths"]
    hosted = lb.http.get("/docs", headers={"Host": "api.localhost"})
    assert re.findall(r"url: '([^']+)'", hosted.text) == ["/openapi.json"]


def test_a_cold_start_scenario_holds_a_load_balancing_worker_on_the_clock(lb: LB) -> None:
    folder = lb.deploy(CONTROLLED, "web")
    (folder / "ready").touch()
    lb.emulator.set_scenario("web", "cold-start:seconds=30")
    pending = lb.background("GET", "/lb/web/a")
    lb.waiting("web")
    [worker] = lb.emulator.jobs.endpoints["web"].workers
    assert worker.state == "initializing"
    supervisor = lb.emulator._supervisor
    assert supervisor is not None and supervisor.pids("web") == []  # held: no process yet
    lb.emulator.advance(31)
    assert pending.result(timeout=60).status_code == 200


def test_the_openai_package_against_the_load_balancing_demo(lb: LB) -> None:
    openai = pytest.importorskip("openai")
    made = lb.http.post(
        "/v2/serverless",
        json={
            "name": "chat",
            "type": "LOAD_BALANCER",
            "image": "llm-lb",
            "gpu": {"pools": ["AMPERE_48"]},
            "scaling": {"type": "REQUEST_COUNT", "requestCount": 2},
        },
    )
    assert made.status_code == 201, made.text
    base = made.json()["requestUrls"]["base"]
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=KEY, timeout=60)
    assert [m.id for m in client.models.list()] == ["nbext-demo-word-model"]
    answer = client.chat.completions.create(
        model="nbext-demo-word-model",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=5,
        extra_body={"tokens_per_second": 0},
    )
    assert answer.choices[0].message.content.startswith("*A demo")
    stream = client.chat.completions.create(
        model="nbext-demo-word-model",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=5,
        stream=True,
        extra_body={"tokens_per_second": 0},
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(pieces).startswith("*A demo")
    completion = client.completions.create(
        model="nbext-demo-word-model",
        prompt="Once",
        max_tokens=3,
        extra_body={"tokens_per_second": 0},
    )
    assert completion.choices[0].finish_reason == "length"
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4", messages=[{"role": "user", "content": "x"}])
    unknown = lb.http.get(f"{base}/v1/embeddings").json()["error"]["message"]
    assert unknown == (
        "no OpenAI route /v1/embeddings; the routes are POST /v1/chat/completions, "
        "POST /v1/completions, GET /v1/models"
    )
    wrong = lb.http.get(f"{base}/v1/chat/completions")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["message"] == "/v1/chat/completions takes POST, not GET"


def test_the_command_line_serves_an_lb_worker(tmp_path: Path) -> None:
    from .conftest import standalone

    script = tmp_path / "server.py"
    script.write_text(CONTROLLED)
    (tmp_path / "ready").touch()
    env = {**os.environ, "RUNPOD_API_KEY": KEY}
    with standalone("--lb-worker", f"web={script}", env=env) as (_proc, url):
        answer = httpx.get(f"{url}/lb/web/x", headers=AUTH, timeout=60)
        assert answer.status_code == 200 and answer.json()["path"] == "/x"


def test_websocket_refusals_carry_the_status_and_json_of_http(lb: LB) -> None:
    """Before accepting, the emulator answers the handshake as it answers HTTP, so a
    client library reports 401 or 404 and can read why, not a bare 403."""
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    lb.deploy(STREAMING, "api")
    lb.emulator.deploy("echo", endpoint_id="queue")
    cases = [("/lb/api/ws", {}), ("/lb/nope/ws", AUTH), ("/lb/queue/ws", AUTH)]
    for path, headers in cases:
        over_http = httpx.get(f"{lb.server.url}{path}", headers=headers)
        with pytest.raises(InvalidStatus) as refused:
            connect(f"ws://127.0.0.1:{lb.server.port}{path}", additional_headers=headers)
        answer = refused.value.response
        assert (answer.status_code, json.loads(answer.body or b"")) == (
            over_http.status_code,
            over_http.json(),
        )
        assert answer.headers["content-type"] == "application/json"
    assert [httpx.get(f"{lb.server.url}{p}", headers=h).status_code for p, h in cases] == [
        401,
        404,
        400,
    ]
    with pytest.raises(InvalidStatus) as by_worker:  # the worker's own refusal, as it was
        connect(f"ws://127.0.0.1:{lb.server.port}/lb/api/ws-refused", additional_headers=AUTH)
    assert by_worker.value.response.status_code == 403
    assert by_worker.value.response.headers["x-runpod-worker-id"]


def test_a_websocket_s_headers_and_cookies_reach_the_worker_but_not_the_key(lb: LB) -> None:
    from websockets.sync.client import connect

    lb.deploy(STREAMING, "api")
    sent = {**AUTH, "Cookie": "session=abc; theme=dark", "X-Tag": "t1", "User-Agent": "my-app"}
    url = f"ws://127.0.0.1:{lb.server.port}/lb/api/ws-seen"
    with connect(url, additional_headers=sent, user_agent_header=None) as socket:
        seen = json.loads(socket.recv(timeout=30))
    assert seen["cookies"] == {"session": "abc", "theme": "dark"}
    assert seen["headers"]["x-tag"] == "t1" and seen["headers"]["user-agent"] == "my-app"
    assert "authorization" not in seen["headers"]
    assert seen["headers"]["host"].startswith("127.0.0.1:")


def test_a_silent_worker_s_health_message_names_the_port_it_is_probed_on(lb: LB) -> None:
    lb.deploy(SILENT, "apart", env={"PORT_HEALTH": "9001"}, workers={"min": 1})
    lb.deploy(SILENT, "together", workers={"min": 1})
    [apart] = lb.emulator.remote_workers.pools["apart"].workers.values()
    [together] = lb.emulator.remote_workers.pools["together"].workers.values()
    until(lambda: "nothing listens" in str(lb.workers("apart")), what="a refused health check")
    until(lambda: "nothing listens" in str(lb.workers("together")), what="a refused check")
    assert apart.health_port != apart.port
    assert f"nothing listens on PORT_HEALTH {apart.health_port} yet" in str(lb.workers("apart"))
    assert f"nothing listens on PORT {together.port} yet" in str(lb.workers("together"))


ARGV_SERVER = textwrap.dedent(
    """
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"argv": sys.argv[1:]}).encode()
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
    """
)


def test_launch_arguments_reach_the_script_from_the_command_line_and_the_deploy_route(
    lb: LB, tmp_path: Path
) -> None:
    from .conftest import standalone

    (tmp_path / "cli").mkdir()  # the fixture's teardown walks folders
    script = tmp_path / "cli" / "argv.py"
    script.write_text(ARGV_SERVER)
    env = {**os.environ, "RUNPOD_API_KEY": KEY}
    launch = ("--lb-worker", f"web={script}", "--worker-args", "web=--generator --name 'a b'")
    with standalone(*launch, env=env) as (_proc, url):
        answer = httpx.get(f"{url}/lb/web/x", headers=AUTH, timeout=60)
        assert answer.json() == {"argv": ["--generator", "--name", "a b"]}
    body = {"path": str(script), "type": "LOAD_BALANCER", "args": ["--rate", "5"]}
    assert lb.http.put("/_emulator/scripts/api", json=body).status_code == 201
    assert lb.http.get("/lb/api/x").json() == {"argv": ["--rate", "5"]}
    refused = lb.http.put("/_emulator/scripts/bad", json={**body, "args": "--rate 5"})
    assert refused.status_code == 400
    assert "args must be a list of strings, got '--rate 5'" in refused.text
    assert lb.http.get("/v2/bad/health").status_code == 404  # and no endpoint was made


def test_worker_args_for_an_endpoint_that_runs_no_script_is_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    answer = subprocess.run(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", "--worker-args", "x=--fast"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode != 0
    assert "--worker-args x: no --worker or --lb-worker x" in answer.stderr

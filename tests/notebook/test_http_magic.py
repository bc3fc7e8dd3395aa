"""``%%runpod_http`` in a real IPython shell, on real load-balancing workers.

A FastAPI server runs unmodified as the endpoint's workers (``tests/lb_servers.py``); a
test ends a cold start or lets an event stream go on by creating a file the server
looks for, from a thread that waits until the panel shows what it must show first.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

import httpx
import pandas as pd
import pytest
from IPython.core.error import UsageError

from nbext.client import APIError, NotFound, ServerError
from tests.lb_servers import FASTAPI_SERVER, write

from .conftest import Notebook

START_S = 60.0


def deploy(nb: Notebook, folder: Path, name: str = "api", **env: str) -> None:
    script = write(folder, f"{name}.py", FASTAPI_SERVER)
    nb.emu.deploy_worker(script, endpoint_id=name, type="LOAD_BALANCER", env=env)


def plains(nb: Notebook) -> list[str]:
    return [str(o["data"].get("text/plain", "")) for o in nb.displays]


def final_html(nb: Notebook) -> str:
    """The last state of the newest panel (its controls' output, emptied, follows it)."""
    return str(next(o[-1]["text/html"] for o in reversed(nb.outputs()) if "text/html" in o[-1]))


def when_shown(nb: Notebook, text: str, then: Callable[[], None]) -> threading.Thread:
    """A thread that does ``then`` once a display shows ``text``."""

    def wait() -> None:
        nb.until(lambda: any(text in p for p in plains(nb)), f"{text!r} shown", START_S)
        then()

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    return thread


def test_a_request_is_drawn_and_listed_as_a_request_not_a_job(nb: Notebook, tmp_path: Path) -> None:
    deploy(nb, tmp_path)
    nb.run('%%runpod_http api POST /echo -o out\n{"text": "hi", "n": 2}')
    assert nb.shell.user_ns["out"] == {"text": "hi", "n": 2}
    html, plain = final_html(nb), plains(nb)[-1]
    assert 'class="nbext-static nbext-request-panel"' in html and "nbext-hint" not in html
    assert 'data-state="200 OK"' in html and "POST /echo · worker <code>worker-" in html
    assert plain.startswith("api POST /echo: 200 · worker worker-")
    assert "&quot;text&quot;: &quot;hi&quot;" in html
    for said in (html, plain):  # a request: no job, no queue, no job state
        assert not re.search(r"\bjob\b|queue|COMPLETED", said, re.IGNORECASE), said
    frame = nb.run("%runpod jobs --no-refresh -o listed")
    listed = nb.shell.user_ns["listed"]
    assert frame is None and isinstance(listed, pd.DataFrame)
    row = listed.iloc[0]
    assert row["request"] == "POST /echo" and row["status"] == 200
    assert row["via"] == "%%runpod_http" and row["endpoint"] == "api"
    assert row["worker"].startswith("worker-") and row["run_ms"] > 0
    assert row["cost_usd"] > 0 and row["cost_is"] == "estimate"
    assert pd.isna(row["id"]) and pd.isna(row["state"]) and pd.isna(row["delay_ms"])


def test_one_httpx_client_per_endpoint_serves_every_cell(nb: Notebook, tmp_path: Path) -> None:
    deploy(nb, tmp_path)
    nb.run("%runpod_http api GET /items")
    http = nb.conn.service().client.endpoint("api").http()
    opened = len(http._transport._pool.connections)  # type: ignore[attr-defined]
    for _ in range(3):
        nb.run("%runpod_http api GET /items")
    assert nb.conn.service().client.endpoint("api").http() is http and not http.is_closed
    assert len(http._transport._pool.connections) == opened == 1  # type: ignore[attr-defined]


def test_timeout_gives_up_on_an_answer_that_does_not_come(nb: Notebook, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    deploy(nb, tmp_path, GATE_FILE=str(gate))
    nb.run("%runpod_http api GET /ping")  # a worker is up
    with pytest.raises(httpx.ReadTimeout) as caught:
        nb.run("%runpod_http api GET /slow --timeout 0.5")
    assert str(caught.value) == "GET /slow on 'api': no answer within --timeout 0.5 s"
    gate.touch()
    with pytest.raises(UsageError) as refused:
        nb.run("%runpod_http api GET /slow --timeout 0")
    assert "--timeout must be more than 0" in str(refused.value)


def test_records_are_a_table_pictures_media_and_text_text(nb: Notebook, tmp_path: Path) -> None:
    deploy(nb, tmp_path)
    nb.run("%runpod_http api GET /items")
    assert "nbext-listing" in final_html(nb) and "square" in final_html(nb)
    nb.run("%runpod_http api GET /picture -o picture")
    assert "<img" in final_html(nb) and nb.shell.user_ns["picture"].startswith(b"\x89PNG")
    nb.run("%runpod_http api GET /hello -o text")
    assert nb.shell.user_ns["text"].startswith("hello from ")
    assert "hello from " in final_html(nb)


def test_an_event_stream_is_drawn_event_by_event(nb: Notebook, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    deploy(nb, tmp_path, GATE_FILE=str(gate))
    nb.run("%runpod_http api GET /ping")  # a worker is up
    opener = when_shown(nb, "one", gate.touch)
    nb.run("%runpod_http api GET /count -o events")
    opener.join()
    shown = plains(nb)
    first = next(i for i, p in enumerate(shown) if "one" in p)
    assert '{"n": 2}' not in shown[first] and 'one\n{"n": 2}' in shown[-1]
    assert "data:" not in final_html(nb) and "one\n{&quot;n&quot;: 2}</pre>" in final_html(nb)
    assert nb.shell.user_ns["events"] == ["one", {"n": 2}]


def test_a_cold_start_is_shown_while_it_lasts_then_timed(nb: Notebook, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    deploy(nb, tmp_path, READY_FILE=str(ready))
    opener = when_shown(nb, "initializing", ready.touch)
    nb.run('%%runpod_http api POST /echo\n{"a": 1}')
    opener.join()
    waiting = next(p for p in plains(nb) if "initializing" in p)
    assert "waiting for a worker · workers 0 ready, 1 initializing" in waiting
    assert "why: cold start: 1 worker initializing, none ready yet" in waiting
    assert "queue" not in waiting and "job" not in waiting
    assert "200 OK" in final_html(nb) and "worker <code>worker-" in final_html(nb)


def test_mistakes_are_one_line_before_anything_is_sent(nb: Notebook, tmp_path: Path) -> None:
    deploy(nb, tmp_path)
    nb.deploy(lambda job: job["input"], "queue")
    cases = {
        "%runpod_http queue GET /": "endpoint 'queue' is a queue endpoint: send it a job with "
        "%%runpod_job queue; %%runpod_http is for load-balancing endpoints",
        "%runpod_http apj GET /": "did you mean 'api'?",
        "%runpod_http api FETCH /": "invalid choice: 'FETCH' (choose from",
        "%runpod_http api GET items": "PATH is the worker's path and starts with '/'",
        '%%runpod_http api POST /echo\n{"a": }': "the cell body is not valid JSON",
        "%runpod_http api GET / -H nothing": "-H takes 'Name: value'",
    }
    for cell, said in cases.items():
        with pytest.raises(UsageError) as caught:
            nb.run(cell)
        assert said in str(caught.value) and "\n" not in str(caught.value), cell
    assert not nb.conn.registry.requests  # nothing was sent


def test_a_worker_s_error_status_is_the_client_s_error_said_once(
    nb: Notebook, tmp_path: Path
) -> None:
    deploy(nb, tmp_path)
    nb.run("%runpod_http api GET /items")  # a worker is up
    with pytest.raises(NotFound) as missing:
        nb.run("%runpod_http api GET /nothing-here -o gone")
    assert missing.value.status == 404 and "GET /nothing-here" in str(missing.value)
    assert nb.shell.user_ns["gone"] is None
    html = final_html(nb)
    assert 'data-state="404 Not Found"' in html and "nbext-error" not in html  # said once
    with pytest.raises(APIError) as unprocessable:
        nb.run("%runpod_http api GET /items/nine")
    assert unprocessable.value.status == 422 and type(unprocessable.value) is not APIError
    with pytest.raises(APIError) as teapot:
        nb.run("%runpod_http api GET /teapot")
    assert teapot.value.status == 418 and "no coffee here" in str(teapot.value)
    nb.run("%runpod_http api GET /items -H 'X-Runpod-Worker-Id: strict gone' --no-raise")
    assert "affinity_worker_gone" in final_html(nb)  # not raised: the panel says it
    listed = nb.run("%runpod jobs --no-refresh -o listed") or nb.shell.user_ns["listed"]
    assert list(listed["status"])[:4] == [404, 418, 422, 404]


NEVER_LISTENS = """
import time
print("loading the model from /models/missing", flush=True)
while True:
    time.sleep(3600)
"""


@pytest.mark.parametrize("fake_clock", [True])
def test_a_server_that_never_listens_fails_after_two_minutes_and_why_says_so(
    nb: Notebook, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.emu.deploy_worker(
        write(tmp_path, "mute.py", NEVER_LISTENS), endpoint_id="mute", type="LOAD_BALANCER"
    )
    when_shown(nb, "initializing", lambda: nb.emu.advance(121))
    with pytest.raises(ServerError) as caught:
        nb.run("%runpod_http mute GET /items")
    assert "503" in str(caught.value) and "no workers available" in str(caught.value)
    assert "\n" not in str(caught.value) and 'data-state="503 Service Unavailable"' in final_html(
        nb
    )
    nb.until(lambda: "/models/missing" in "\n".join(nb.emu.worker_logs("mute")), "its log", START_S)
    capsys.readouterr()
    nb.run("%runpod why")
    said = capsys.readouterr().out
    assert "request GET /items on 'mute': 503" in said
    assert "the endpoint now: cold start: 1 worker initializing" in said
    assert "loading the model from /models/missing" in said
    nb.run("%runpod health mute")
    assert "initializing" in nb.last_plain()


def test_chat_with_the_load_balancing_demo_goes_on_across_cells(nb: Notebook) -> None:
    nb.emu.deploy_demos()
    nb.run("%%runpod_chat llm-lb --max-tokens 4 -o first\nWhat is a cold start?")
    first = nb.shell.user_ns["first"]
    assert isinstance(first, str) and first
    final = nb.outputs()[-1][-1]
    assert 'data-state="COMPLETED"' in final["text/html"] and "4 tokens" in final["text/plain"]
    nb.run("%%runpod_chat llm-lb --max-tokens 2\nAnd a warm one?")
    history = nb.run("%runpod chat history llm-lb")
    assert list(history["role"]) == ["user", "assistant", "user", "assistant"]
    assert history["job_id"].iloc[1].startswith("worker-")  # which worker answered

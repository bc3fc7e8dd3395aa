"""Record a chat and load-balancing requests, replay them offline (docs/behaviour.md#recordings).

A standalone emulator with a key stands in for the cloud: its ``llm`` demo answers
``%%runpod_chat`` and a real ``http.server`` script, deployed as a load-balancing
endpoint, answers ``http()``, one answer streamed in chunks with gaps. A real IPython
shell records them; the replay runs in a network namespace with loopback only and no
key, where the ``openai`` package, unmodified, and httpx get the recorded answers.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbext.models import recording
from nbext.notebook import load_ipython_extension
from nbext.notebook.connection import Connection
from nbext.notebook.kernel import set_current
from tests.offline import python_offline
from tests.standalone import Standalone

from .conftest import KEY, Notebook
from .test_record_replay import CapturedOut

pytestmark = pytest.mark.slow
GAP_S = 0.2
FIRST_S = 0.4  # the answer's headers wait: a stand-in for a cold start

LB_SERVER = """
import json, os, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/ping":
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
            return
        time.sleep(FIRST_S)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Set-Cookie", "session=s3cret")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for word in ("alpha", "beta", "gamma"):
            self.wfile.write(b"%x\\r\\n%s\\r\\n" % (len(word), word.encode())); self.wfile.flush()
            time.sleep(GAP_S)
        self.wfile.write(b"0\\r\\n\\r\\n")

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answer = json.dumps({"sum": sum(body["numbers"])}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), Handler).serve_forever()
"""


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Standalone]:
    """The stand-in for the cloud: the ``llm`` demo and the load-balancing ``api``."""
    server = tmp_path / "server.py"
    server.write_text(f"GAP_S = {GAP_S}\nFIRST_S = {FIRST_S}\n{LB_SERVER}")
    service = Standalone.module(
        "--api-key", KEY, "--endpoint", "llm=llm", "--lb-worker", f"api={server}"
    )
    try:
        yield service
    finally:
        service.stop()


CHAT = f"%%runpod_chat llm --max-tokens 12\nWhat is a cold start? My key is {KEY}"


def record(shell: InteractiveShell, cloud: Standalone, path: Path) -> str:
    environ = {"RUNPOD_API_KEY": KEY} | {
        k: v for k, v in cloud.exports.items() if k.endswith("BASE_URL")
    }
    conn = Connection(environ=environ, config_file=path.with_name("none.toml"))
    before = set(shell.user_ns)
    load_ipython_extension(shell, connection=conn)
    cells = [
        f"%runpod record {path}",
        CHAT,
        "from nbext.notebook import client\napi = client().endpoint('api').http()",
        f"total = api.post('/sum', json={{'numbers': [1, 2, 3], 'key': {KEY!r}}}).json()",
        "with api.stream('GET', '/words') as r:\n    words = list(r.iter_raw())",
        "%runpod record stop",
    ]
    try:
        with CapturedOut() as out:
            for cell in cells:
                shell.run_cell(cell, store_history=False).raise_error()
        assert shell.user_ns["total"] == {"sum": 6}
        assert shell.user_ns["words"] == [b"alpha", b"beta", b"gamma"]
        return out.text
    finally:
        for name in set(shell.user_ns) - before:
            shell.user_ns.pop(name)
        set_current(None)
        conn.close()


OFFLINE = """
import json, os, time
import httpx, openai
from nbext.emulator import Emulator, EmulatorServer, replay
emulator = Emulator(api_key="rpa_CLASSROOM", demo_images=False)
with EmulatorServer(emulator) as server:
    replay.load(emulator, PATH)
    chat = openai.OpenAI(base_url=server.serverless_url + "/llm/openai/v1", api_key="rpa_CLASSROOM")
    models = [m.id for m in chat.models.list()]  # as %%runpod_chat asked first
    sent = time.monotonic()
    tokens = [(time.monotonic() - sent, c.choices[0].delta.content if c.choices else None)
              for c in chat.chat.completions.create(**CHAT)]
    lb = httpx.Client(base_url=server.serverless_url.removesuffix("/v2") + "/lb/api",
                      headers={"Authorization": "Bearer rpa_CLASSROOM"}, timeout=60)
    total = lb.post("/sum", json=SUM).json()
    sent = time.monotonic()
    with lb.stream("GET", "/words") as r:
        words = [(time.monotonic() - sent, w.decode()) for w in r.iter_raw()]
        headers = dict(r.headers)
    missed = lb.post("/sum", json={"numbers": [4]})
    print(json.dumps({"models": models, "tokens": tokens, "total": total, "words": words,
                      "headers": headers, "missed": [missed.status_code, missed.json()]}))
emulator.close()
"""


def test_chat_and_load_balancing_replay_offline_as_recorded(
    shell: InteractiveShell, cloud: Standalone, tmp_path: Path
) -> None:
    path = tmp_path / "class.jsonl"
    printed = record(shell, cloud, path)
    assert f"to {path}" in printed
    written = path.read_bytes()
    assert KEY.encode() not in written and b"s3cret" not in written
    assert b"uthorization" not in written and b"ookie" not in written
    calls = recording.read(path).calls
    chat = next(c for c in calls if c["input"].get("openai_route") == "/v1/chat/completions")
    assert len(chat["stream"]) > 3 and chat["costUsd"] > 0 and chat["workerId"]
    assert chat["delayTimeMs"] is not None and chat["executionTimeMs"] > 0
    lb = [c for c in calls if c["kind"] == "http"]
    assert [c["input"]["method"] + " " + c["input"]["path"] for c in lb] == [
        "POST /sum",
        "GET /words",
    ]
    summed, words = lb
    assert json.loads(summed["input"]["body"]) == {"numbers": [1, 2, 3], "key": "rpa_…EF42"}
    assert summed["httpStatus"] == 200 and summed["headers"]["content-type"] == "application/json"
    assert words["workerId"] and words["costUsd"] > 0
    assert [text for _, text in words["stream"]] == ["alpha", "beta", "gamma"]
    recorded_gaps = [(b[0] - a[0]) / 1000 for a, b in itertools.pairwise(words["stream"])]
    assert all(gap >= GAP_S / 2 for gap in recorded_gaps)

    body = chat["input"]["openai_input"]
    assert body["messages"][-1]["content"].endswith("My key is rpa_…EF42")
    asked = {"model": body["model"], "messages": body["messages"], "max_tokens": 12}
    asked |= {"stream": True, "stream_options": {"include_usage": True}}
    script = (
        f"PATH = {str(path)!r}\nCHAT = {asked!r}\nSUM = {json.loads(summed['input']['body'])!r}\n"
    )
    got = json.loads(python_offline(script + OFFLINE)[-1])
    events = [
        json.loads(line.removeprefix("data: "))
        for _, text in chat["stream"]
        for line in text.splitlines()
        if line.startswith("data: {")
    ]
    recorded_text = "".join(
        e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"]
    )
    assert "".join(t or "" for _, t in got["tokens"]) == recorded_text
    assert got["models"] == [body["model"]]
    first, last = chat["stream"][0][0] / 1000, chat["stream"][-1][0] / 1000
    timed = [at for at, token in got["tokens"] if token]
    assert timed[0] == pytest.approx(first, abs=0.25)  # the time to the first token kept
    assert timed[-1] - timed[0] == pytest.approx(last - first, abs=0.1)
    assert got["total"] == {"sum": 6}
    assert [w for _, w in got["words"]] == ["alpha", "beta", "gamma"]
    assert got["headers"]["content-type"] == "text/plain" and "set-cookie" not in got["headers"]
    assert words["timeline"][0][0] / 1000 >= FIRST_S  # when its headers came
    recorded_first = words["stream"][0][0] / 1000
    assert got["words"][0][0] == pytest.approx(recorded_first, abs=0.15)  # cold start kept
    replayed_gaps = [b[0] - a[0] for a, b in itertools.pairwise(got["words"])]
    for replayed, recorded in zip(replayed_gaps, recorded_gaps, strict=True):
        assert replayed == pytest.approx(recorded, abs=0.08)
    status, error = got["missed"]
    assert status == 404 and "\n" not in error["message"]
    assert error["message"].startswith("replay of endpoint 'api': input ")
    assert '"path": "/sum"' in error["message"] and "nearest recorded inputs" in error["message"]


def test_a_replayed_load_balancing_endpoint_is_listed_and_stops_the_notebook_on_a_miss(
    nb: Notebook, tmp_path: Path
) -> None:
    path = tmp_path / "lb.jsonl"
    asked = {"method": "POST", "path": "/sum", "body": '{"numbers":[1,2]}'}
    call = {"kind": "http", "endpoint": "api", "call": "http", "input": asked}
    call |= {"inputDigest": recording.digest(asked), "status": "COMPLETED", "httpStatus": 200}
    call |= {"headers": {"content-type": "application/json"}, "timeline": []}
    call |= {"stream": [[40, '{"sum": 3}']], "delayTimeMs": 40, "executionTimeMs": 41}
    recording.write(path, {"nbext": "0", "service": "cloud", "recordedAt": "x"}, [call])
    nb.run(f"%runpod replay {path} --instant")
    frame: Any = nb.run("%runpod endpoints -o listed\nlisted")
    assert "api (replay)" in list(frame["name"])
    nb.run("from nbext.notebook import client\napi = client().endpoint('api').http()")
    assert nb.run("api.post('/sum', content=b'{\"numbers\":[1,2]}').json()") == {"sum": 3}
    with pytest.raises(Exception, match="never recorded") as missed:
        nb.run("api.post('/sum', content=b'{\"numbers\":[5]}')")
    said = str(missed.value)
    assert "\n" not in said and "replay of endpoint 'api'" in said, said
    assert '"path": "/sum"' in said and "nearest recorded inputs" in said, said

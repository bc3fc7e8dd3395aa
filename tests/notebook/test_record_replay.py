"""Record on a service, replay anywhere (docs/behaviour.md#recordings).

A standalone emulator with a key stands in for the cloud; a real IPython shell records
through ``%runpod record`` against it; then ``python -m nbext.emulator --replay`` serves
the file to the ``runpod`` SDK, unmodified, and to nbext's client on the real clock.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from IPython.core.interactiveshell import InteractiveShell

from nbext.client import Client
from nbext.models import recording
from nbext.notebook import load_ipython_extension
from nbext.notebook.connection import Connection
from nbext.notebook.kernel import set_current
from tests.emulator.test_sdk_compat import Agent
from tests.offline import python_offline
from tests.standalone import Standalone, emulator_environment

from .conftest import KEY, Notebook

pytestmark = pytest.mark.slow
TEXT = "one two three four five"
GAP_MS = 150
PICTURE = "iVBORw0KGgo" + "A" * 6001  # long base64: kept beside the file, not in it


@pytest.fixture
def cloud() -> Iterator[Standalone]:
    """The stand-in for the cloud: an emulator that wants ``KEY``."""
    service = Standalone.module(
        "--api-key", KEY, "--endpoint", "stream-text=stream-text", "--endpoint", "echo=echo"
    )
    try:
        yield service
    finally:
        service.stop()


def record_session(shell: InteractiveShell, cloud: Standalone, path: Path) -> str:
    """Record, from a real shell connected to ``cloud``, a stream with gaps, a run_sync
    that holds the key and a picture, and a map; what ``record stop`` printed."""
    environ = {
        "RUNPOD_API_KEY": KEY,
        "RUNPOD_ENDPOINT_BASE_URL": cloud.exports["RUNPOD_ENDPOINT_BASE_URL"],
        "RUNPOD_REST_BASE_URL": cloud.exports["RUNPOD_REST_BASE_URL"],
    }
    conn = Connection(environ=environ, config_file=path.with_name("none.toml"))
    before = set(shell.user_ns)
    load_ipython_extension(shell, connection=conn)
    cells = [
        f"%runpod record {path}",
        "from nbext.notebook import client",
        f"job = client().endpoint('stream-text').run({{'text': {TEXT!r}, 'delay_ms': {GAP_MS}}})",
        "streamed = list(job.stream())",
        f"echoed = client().endpoint('echo').run_sync({{'key': {KEY!r}, 'img': {PICTURE!r}}})",
        "mapped = [r.output for _, r in client().endpoint('echo').map([{'n': 1}, {'n': 2}])]",
        "%runpod record stop",
    ]
    try:
        with CapturedOut() as out:
            for cell in cells:
                shell.run_cell(cell, store_history=False).raise_error()
        assert conn.mode == "cloud"
        assert shell.user_ns["echoed"].output["img"] == PICTURE
        return out.text
    finally:
        for name in set(shell.user_ns) - before:
            shell.user_ns.pop(name)
        set_current(None)
        conn.close()


class CapturedOut:
    """What cells print, read from ``sys.stdout``."""

    def __enter__(self) -> CapturedOut:
        import io

        self._old, self._buffer = sys.stdout, io.StringIO()
        sys.stdout = self._buffer
        return self

    def __exit__(self, *exc: object) -> None:
        sys.stdout = self._old
        self.text = self._buffer.getvalue()


def test_recorded_session_replays_to_the_sdk_and_on_time(
    shell: InteractiveShell, cloud: Standalone, tmp_path: Path
) -> None:
    path = tmp_path / "class.jsonl"
    printed = record_session(shell, cloud, path)
    assert f"recorded 4 calls to {path}" in printed
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["nbextRecording"] == 1 and header["service"] == "local"  # loopback
    kept = [json.loads(line) for line in lines[1:]]
    assert [(c["endpoint"], c["call"]) for c in kept] == [
        ("stream-text", "run"),
        ("echo", "runsync"),
        ("echo", "runsync"),
        ("echo", "runsync"),
    ]
    stream = kept[0]["stream"]
    assert len(stream) == len(TEXT.split())
    # it started before its first chunk came (each word comes GAP_MS after the last)
    assert kept[0]["delayTimeMs"] <= stream[0][0] - GAP_MS / 2
    # the planted key is in no byte written, the file's nor its media's
    media = list((tmp_path / "class.jsonl.media").iterdir())
    assert len(media) == 1 and PICTURE not in path.read_text()
    for written in [path, *media]:
        assert KEY.encode() not in written.read_bytes()

    replay = Standalone.module("--replay", str(path), "--api-key", KEY)
    agent = Agent(replay.exports["RUNPOD_ENDPOINT_BASE_URL"], tmp_path)
    try:
        echoed = recording.read(path).calls[1]  # its media put back
        answer = agent.call("run_sync", endpoint="echo", request=echoed["input"], timeout=30)
        assert answer == echoed["output"] == {"key": "rpa_…EF42", "img": PICTURE}
        for n in (1, 2):
            assert agent.call("run_sync", endpoint="echo", request={"n": n}, timeout=30) == {"n": n}
        missed = httpx.post(  # as curl would
            f"{replay.exports['RUNPOD_ENDPOINT_BASE_URL']}/echo/runsync",
            json={"input": {"n": 7}},
            headers={"Authorization": f"Bearer {KEY}"},
        ).json()
        assert missed["status"] == "FAILED"
        error = missed["error"]
        assert error.startswith(
            "replay of endpoint 'echo': input {\"n\": 7} was never recorded; nearest "
            'recorded inputs: {"n": '
        )
        assert '{"n": 1}' in error and '{"n": 2}' in error and "\n" not in error

        client = Client(KEY, serverless_url=replay.exports["RUNPOD_ENDPOINT_BASE_URL"])
        sent = time.monotonic()
        job = client.endpoint("stream-text").run({"text": TEXT, "delay_ms": GAP_MS})
        seen = [(time.monotonic() - sent, out) for out in job.stream()]
        client.close()
        assert [out for _, out in seen] == [out for _, out in stream]
        replayed_gaps = [b[0] - a[0] for a, b in itertools.pairwise(seen)]
        recorded_gaps = [(b[0] - a[0]) / 1000 for a, b in itertools.pairwise(stream)]
        for replayed, recorded in zip(replayed_gaps, recorded_gaps, strict=True):
            assert replayed == pytest.approx(recorded, abs=0.06)
    finally:
        agent.proc.terminate()
        agent.proc.wait(10)
        replay.stop()


def replay_error(path: Path) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "nbext.emulator", "--port", "0", "--replay", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=emulator_environment(),
    )
    return done.returncode, done.stderr


HEADER = json.dumps({"nbextRecording": 1, "nbext": "0", "service": "cloud", "recordedAt": "x"})
JOB = json.dumps(
    {
        "kind": "job",
        "endpoint": "echo",
        "call": "run",
        "input": {"a": 1},
        "inputDigest": "sha256:0",
        "status": "COMPLETED",
        "timeline": [],
        "stream": [],
        "output": 1,
    }
)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            json.dumps({"nbextRecording": 2}) + "\n",
            "is format version 2; this nbext reads 1: upgrade nbext",
        ),
        (HEADER + "\n" + JOB[:40], "line 2: not valid JSON"),
        (HEADER + "\n{}\n", "line 2: kind None is not one this nbext replays"),
        (HEADER + "\n" + JOB + "\n", "line 2: input does not match inputDigest"),
    ],
    ids=["future-version", "truncated", "not-a-job", "corrupt-digest"],
)
def test_a_bad_recording_is_one_line_naming_the_line_and_nothing_is_served(
    tmp_path: Path, text: str, said: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    code, err = replay_error(path)
    assert code == 2
    assert err.count("\n") == 1 and said in err, err


def test_replay_on_the_local_service_lists_replays_and_answers_as_recorded(
    nb: Notebook, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo.jsonl"
    nb.run(f"%runpod record {path}")
    recorded = nb.run(
        "from nbext.notebook import client\nclient().endpoint('echo').run_sync({'q': 1}).output"
    )
    nb.run("%runpod record stop")
    nb.run(f"%runpod replay {path} --instant")
    assert "replaying 1 recorded calls as endpoints echo" in capsys.readouterr().out
    frame: Any = nb.run("%runpod endpoints -o listed\nlisted")
    assert "echo (replay)" in list(frame["name"])
    assert nb.run("client().endpoint('echo').run_sync({'q': 1}).output") == recorded
    with pytest.raises(Exception, match=r"input \{\"q\": 2\} was never recorded; nearest"):
        nb.run("client().endpoint('echo').run_sync({'q': 2})")


OFFLINE = """
import json, os
from nbext.emulator import Emulator, EmulatorServer, replay
emulator = Emulator(api_key="rpa_CLASSROOM", demo_images=False)
print(json.dumps(replay.load(emulator, PATH, instant=True)))
with EmulatorServer(emulator) as server:
    os.environ["RUNPOD_ENDPOINT_BASE_URL"] = server.serverless_url
    import runpod  # reads the address as it is imported
    print(json.dumps(runpod.Endpoint("echo", api_key="rpa_CLASSROOM").run_sync({"n": 1}, 30)))
emulator.close()
"""


def test_a_replay_serves_with_no_network_route_and_no_key(tmp_path: Path) -> None:
    path = tmp_path / "class.jsonl"
    job = {"kind": "job", "endpoint": "echo", "call": "runsync", "input": {"n": 1}}
    job |= {"inputDigest": recording.digest({"n": 1}), "status": "COMPLETED"}
    job |= {"timeline": [], "stream": [], "output": {"answer": 42}, "executionTimeMs": 900}
    recording.write(path, {"nbext": "0", "service": "cloud", "recordedAt": "x"}, [job])
    printed = python_offline(f"PATH = {str(path)!r}\n{OFFLINE}")
    loaded, answer = (json.loads(line) for line in printed[-2:])
    assert loaded["endpoints"] == ["echo"] and answer == {"answer": 42}


MAPPED = "[r.output for _, r in sorted(client().endpoint('echo').map(xs * 3), key=lambda p: p[0])]"


def test_a_batch_and_a_map_of_repeated_inputs_replay_as_recorded(
    nb: Notebook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the batch magic keeps its inputs in the kernel's folder
    path = tmp_path / "sweep.jsonl"
    nb.run("from nbext.notebook import client\nxs = [{'n': 1}, {'n': 2}, {'n': 1}]")
    nb.run(f"%runpod record {path}")
    nb.run("%runpod batch echo xs -o first -q")
    nb.run(f"mapped = {MAPPED}")
    nb.run("%runpod record stop")
    kept = recording.read(path).calls
    batched = [c for c in kept if c["call"] == "batch"]
    assert [c["input"] for c in batched] == [{"n": 1}, {"n": 2}, {"n": 1}]
    assert all(c["batch"] and c["executionTimeMs"] is not None for c in batched)
    assert all(c["costUsd"] is not None for c in kept)  # a batch's requests name no worker
    assert all(c["workerId"] for c in kept if c["call"] != "batch")
    assert len(kept) == 3 + 9
    nb.run(f"%runpod replay {path} --instant")
    nb.run("%runpod batch echo xs -o again -q")
    assert nb.shell.user_ns["again"]["output"].tolist() == [{"n": 1}, {"n": 2}, {"n": 1}]
    assert nb.run(MAPPED) == nb.shell.user_ns["mapped"] == nb.shell.user_ns["xs"] * 3
    nb.run("ys = [{'n': 3}]\n%runpod batch echo ys -o missed -q")
    [error] = nb.shell.user_ns["missed"]["error"].tolist()
    assert 'input {"n": 3} was never recorded; nearest recorded inputs: {"n": ' in error


COUNTER = """\
import runpod

seen = 0


def handler(job):
    global seen
    seen += 1
    return {"asked": job["input"]["q"], "answer": seen}


runpod.serverless.start({"handler": handler})
"""


def test_identical_inputs_replay_in_recorded_order(tmp_path: Path) -> None:
    script = tmp_path / "counter.py"
    script.write_text(COUNTER)
    path = tmp_path / "same.jsonl"
    cloud = Standalone.module("--api-key", KEY, "--worker", f"count={script}")
    try:
        with settings_client(cloud) as client, client.record(path):
            recorded = [client.endpoint("count").run_sync({"q": "same"}).output for _ in "abc"]
    finally:
        cloud.stop()
    assert [r["answer"] for r in recorded] == [1, 2, 3]  # one worker, three answers
    replay = Standalone.module("--replay", str(path), "--api-key", KEY)
    try:
        with settings_client(replay) as client:
            again = [client.endpoint("count").run_sync({"q": "same"}).output for _ in "abcd"]
    finally:
        replay.stop()
    assert again == [*recorded, recorded[0]]  # in recorded order, then round again


def settings_client(service: Standalone) -> Client:
    """nbext's client on ``service``, as a user's script with the key would make it."""
    return Client(
        KEY,
        serverless_url=service.exports["RUNPOD_ENDPOINT_BASE_URL"],
        base_url=service.exports["RUNPOD_REST_BASE_URL"],
    )

"""Where a saved output came from: a real notebook run by a real kernel (nbclient, as
``jupyter execute`` runs it), saved, and its outputs' ``nbext`` metadata read back from
the .ipynb (docs/behaviour.md#provenance).

The kernel's emulator is private (in the kernel) and wants a planted key: a first job
goes to it as to the cloud (the key and the address set as a cloud's), then the rest as
the local service, then a recording of it is replayed.
"""

from __future__ import annotations

import json
import os
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from nbext._version import __version__
from nbext.models.recording import digest
from tests.e2e.notebook_files import write_notebook

pytestmark = pytest.mark.slow
BODY = {"messages": [{"role": "user", "content": "hi"}]}
KEY = "rpa_PLANTEDPROVENANCEKEY0123456789ABCDEF"
SETUP = f"""
from nbext.emulator import Emulator, EmulatorServer
from nbext.notebook import load_ipython_extension
from nbext.notebook.connection import Connection
emulator = Emulator(api_key={KEY!r})
server = EmulatorServer(emulator).start()
emulator.deploy_demos()
cloud = {{"RUNPOD_API_KEY": {KEY!r}, "RUNPOD_ENDPOINT_BASE_URL": server.serverless_url,
          "RUNPOD_REST_BASE_URL": server.url + "/v2"}}
connection = Connection(server=server, environ=cloud, config_file="/nonexistent", mode="cloud")
load_ipython_extension(get_ipython(), connection=connection)
"""
CELLS = [
    SETUP,
    '%%runpod_job echo\n{"as": "cloud"}',
    "%runpod connect local",
    '%%runpod_job echo\n{"as": "local"}',
    "%%runpod_chat llm\nWhat is a queue?",
    "%%runpod_http llm-lb POST /v1/chat/completions\n" + json.dumps(BODY),
    "naps = [{'seconds': 0}, {'seconds': 0.01}]\n%runpod map sleep naps",
    "%runpod record {path}",
    '%%runpod_job echo\n{"as": "recorded"}',
    "%runpod record stop\n%runpod replay {path} --instant",
    '%%runpod_job echo\n{"as": "recorded"}',
    "%runpod jobs -o listed --no-refresh\nprint(list(zip(listed['endpoint'], listed['service'])))",
]


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    base = tmp_path_factory.mktemp("provenance")
    cells = [c.replace("{path}", str(base / "class.jsonl")) for c in CELLS]
    path = write_notebook(base / "provenance.ipynb", cells)
    notebook = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD_", "JUPYTER"))}
    env.update(HOME=str(base), IPYTHONDIR=str(base / ".ipython"))
    client = NotebookClient(notebook, timeout=120, kernel_name="python3")
    client.execute(env=env, cwd=str(base))
    nbformat.write(notebook, path)
    return nbformat.read(path, as_version=4)


def origin(cell: nbformat.NotebookNode) -> dict[str, Any]:
    """The one ``nbext`` metadata entry among the cell's saved outputs."""
    (said,) = [o.metadata["nbext"] for o in cell.outputs if "nbext" in o.get("metadata", {})]
    return dict(said)


def test_a_saved_job_says_its_service_endpoint_ids_input_timings_cost_and_version(
    saved: nbformat.NotebookNode,
) -> None:
    cloud, local = origin(saved.cells[1]), origin(saved.cells[3])
    assert cloud["service"] == "cloud" and local["service"] == "local"
    for said, sent in ((cloud, {"as": "cloud"}), (local, {"as": "local"})):
        assert said["endpoint"] == "echo" and said["nbext"] == __version__
        assert said["job"] and said["worker"] and said["inputDigest"] == digest(sent)
        assert said["totalMs"] == said["delayMs"] + said["executionMs"]
        assert said["costUsd"] >= 0 and said["costIs"] == "estimate"
    assert local["job"] in saved.cells[3].outputs[0].data["text/plain"]


def test_a_saved_chat_and_request_say_where_they_came_from(
    saved: nbformat.NotebookNode,
) -> None:
    chat, request = origin(saved.cells[4]), origin(saved.cells[5])
    assert chat["service"] == "local" and chat["endpoint"] == "llm" and chat["job"]
    assert chat["worker"] and chat["inputDigest"].startswith("sha256:") and "costUsd" in chat
    assert request["service"] == "local" and request["endpoint"] == "llm-lb"
    assert request["request"] == "POST /v1/chat/completions" and request["status"] == 200
    assert request["worker"] and request["inputDigest"] == digest(BODY)
    assert request["totalMs"] >= request["executionMs"] > 0 and request["nbext"] == __version__


def test_a_saved_map_says_each_jobs_origin(saved: nbformat.NotebookNode) -> None:
    mapped = origin(saved.cells[6])
    assert mapped["service"] == "local" and mapped["endpoint"] == "sleep"
    digests = {job["inputDigest"] for job in mapped["jobs"]}
    assert digests == {digest({"seconds": 0}), digest({"seconds": 0.01})}
    assert all(job["worker"] and job["service"] == "local" for job in mapped["jobs"])


def test_a_replayed_job_says_replay_there_and_in_the_jobs_listing(
    saved: nbformat.NotebookNode,
) -> None:
    recorded, replayed = origin(saved.cells[8]), origin(saved.cells[10])
    assert recorded["service"] == "local" and replayed["service"] == "replay"
    assert replayed["inputDigest"] == recorded["inputDigest"] == digest({"as": "recorded"})
    printed = "".join(o.get("text", "") for o in saved.cells[11].outputs)
    assert "('echo', 'replay')" in printed and "('echo', 'cloud')" in printed


def test_the_key_is_in_no_saved_output(saved: nbformat.NotebookNode) -> None:
    outputs = [o for cell in saved.cells[1:] for o in cell.outputs]
    said = [o.metadata["nbext"] for o in outputs if "nbext" in o.get("metadata", {})]
    assert len(said) == 7  # the jobs', the chat's, the request's and the map's
    assert KEY not in json.dumps(outputs)
    assert "http" not in json.dumps(said)  # no address, which may carry the key

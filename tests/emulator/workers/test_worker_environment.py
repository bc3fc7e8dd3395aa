"""A worker process gets what a worker on the service gets, and none of the secrets in
the environment of the emulator that starts it (canaries: not in the worker, not in its
log)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx
import pytest

from nbext.emulator.__main__ import main
from nbext.emulator.workers.environment import passed

from .conftest import SCRIPTS, Served, standalone, until

CANARIES = {
    "RUNPOD_API_KEY": "rpa_CANARY0KEY0000000000000000000000000000",
    "AWS_SECRET_ACCESS_KEY": "canary-aws-secret-7f3a",
    "HF_TOKEN": "hf_canary_token_19b2",
}
RUN_WITH = {
    "LC_ALL": "C.UTF-8",
    "no_proxy": "127.0.0.1,localhost",
    "SSL_CERT_DIR": "/nonexistent/canary-free-certs",
}
PROTOCOL = {
    "RUNPOD_WEBHOOK_GET_JOB", "RUNPOD_WEBHOOK_POST_OUTPUT", "RUNPOD_WEBHOOK_POST_STREAM",
    "RUNPOD_WEBHOOK_PING", "RUNPOD_PING_INTERVAL", "RUNPOD_AI_API_KEY", "RUNPOD_POD_ID",
    "RUNPOD_POD_HOSTNAME", "RUNPOD_ENDPOINT_ID", "RUNPOD_SKIP_GPU_CHECK", "PYTHONUNBUFFERED",
}  # fmt: skip


def test_a_worker_gets_its_endpoint_env_and_what_it_needs_to_run_and_no_secret(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**CANARIES, **RUN_WITH}.items():
        monkeypatch.setenv(name, value)
    ep = served.deploy(
        "env_worker.py", endpoint_id="envs", workers={"max": 1}, env={"MODEL": "small"}
    )
    done = served.final(ep, served.run(ep, {}))
    assert done["status"] == "COMPLETED", done
    got: dict[str, str] = done["output"]

    assert got["MODEL"] == "small"
    assert {name: got.get(name) for name in RUN_WITH} == RUN_WITH
    path = got["PATH"].split(os.pathsep)
    assert path[0] == str(Path(sys.prefix) / "bin")  # its virtualenv, as if activated
    assert set(path) == {*os.environ["PATH"].split(os.pathsep), path[0]} - {""}
    assert got["HOME"] == os.environ["HOME"]
    assert got["VIRTUAL_ENV"] == sys.prefix  # the tests run in a virtualenv: its own
    assert set(got) >= PROTOCOL
    others = {name for name in got if name not in PROTOCOL and name != "MODEL"}
    # Python and the SDK may add a variable of their own; none of the emulator's others
    inherited = {name for name in others if name in os.environ and not passed(name)}
    assert inherited == set()

    def log_with_the_job() -> str:
        text = "\n".join(served.emulator.worker_logs(ep))
        return text if "environment in a job" in text else ""

    logs = until(log_with_the_job, what="the job's line in the worker's log")
    assert "environment at start: " in logs and '"MODEL": "small"' in logs
    for name, secret in CANARIES.items():
        assert secret not in str(got), name
        assert secret not in logs, name


def test_an_endpoint_env_overrides_the_passed_variables_but_not_the_protocol(
    served: Served,
) -> None:
    ep = served.deploy(
        "env_worker.py",
        endpoint_id="envs2",
        workers={"max": 1},
        env={"LANG": "fr_FR.UTF-8", "RUNPOD_ENDPOINT_ID": "spoofed"},
    )
    got = served.final(ep, served.run(ep, {}))["output"]
    assert got["LANG"] == "fr_FR.UTF-8"
    assert got["RUNPOD_ENDPOINT_ID"] == ep


def test_an_env_set_through_the_management_interface_reaches_new_workers(
    served: Served,
) -> None:
    ep = served.deploy(
        "env_worker.py", endpoint_id="envs3", workers={"max": 1}, env={"A": "deploy"}
    )
    r = served.http.patch(f"/v2/serverless/{ep}", json={"env": {"B": "rest", "A": "rest"}})
    assert r.status_code == 200, r.text
    got = served.final(ep, served.run(ep, {}))["output"]  # its first process starts now
    assert got["B"] == "rest"
    assert got["A"] == "deploy"  # what it was deployed with wins


def test_the_standalone_emulator_passes_only_the_variables_it_is_asked_to(
    tmp_path: Path,
) -> None:
    """``--worker-env NAME`` copies one variable; the key the emulator itself took from
    ``RUNPOD_API_KEY`` and every other secret stay with the emulator."""
    key = CANARIES["RUNPOD_API_KEY"]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RUNPOD_")},
        **CANARIES,
    }
    worker = ("--worker", f"cli-env={SCRIPTS / 'env_worker.py'}")
    passing = ("--worker-env", "HF_TOKEN", "--worker-env", "MODE=fast")
    with (
        standalone(*worker, *passing, env=env) as (_, url),
        httpx.Client(base_url=url, headers={"Authorization": key}, timeout=90) as http,
    ):
        done = http.post("/v2/cli-env/runsync", json={"input": {}}).json()
    assert done["status"] == "COMPLETED", done
    got = done["output"]
    assert got["HF_TOKEN"] == CANARIES["HF_TOKEN"] and got["MODE"] == "fast"
    assert "RUNPOD_API_KEY" not in got and "AWS_SECRET_ACCESS_KEY" not in got
    assert key not in str(got) and CANARIES["AWS_SECRET_ACCESS_KEY"] not in str(got)


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("NBEXT_TEST_UNSET_VARIABLE", "NBEXT_TEST_UNSET_VARIABLE is not set in this environment"),
        ("1BAD=x", "'1BAD' is not a variable name"),
        ("=x", "'' is not a variable name"),
    ],
)
def test_a_bad_worker_env_option_is_one_line(
    option: str, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--port", "0", "--worker", f"w={SCRIPTS / 'env_worker.py'}", "--worker-env", option]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1

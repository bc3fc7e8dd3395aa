"""Every magic's LINE is expanded as IPython expands its own (``$name``, ``{expr}``,
``$$name`` for a literal ``$name``, ``{{`` for a literal ``{``); a cell's BODY never is.

Through a real IPython shell on a real emulator; ``%%runpod_http`` on a real FastAPI
server run by the emulator as a load-balancing endpoint's worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbext.notebook import awaiting

from .conftest import Notebook
from .test_batch import only_batch
from .test_chat import parrot
from .test_http_magic import deploy
from .test_job_magic import usage_error

BODY = '{"text": "$x {y} $$z {{w}}"}'
"""A JSON body holding every form the line expands: it must reach the worker as is."""


@pytest.fixture(autouse=True)
def kernel_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where %runpod batch keeps its inputs


@pytest.fixture
def names(nb: Notebook) -> Notebook:
    nb.run("x, y, z, w = 'X', 'Y', 'Z', 'W'\nendpoint = 'echo'\nname = 'kept'")
    return nb


def test_runpod_subcommands_expand_dollar_and_braces(names: Notebook) -> None:
    names.run("%runpod jobs --no-refresh -o $name")
    names.run("%runpod jobs --no-refresh -o {name + '_too'}")
    assert {"kept", "kept_too"} <= set(names.shell.user_ns)


def test_a_double_dollar_is_a_literal_dollar(
    names: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(names, "%runpod jobs --no-refresh -o $$name", capsys)
    assert "-o '$name': not a valid Python variable name" in message


def test_a_job_cell_expands_its_line_and_sends_its_body_untouched(names: Notebook) -> None:
    names.run(f"%%runpod_job $endpoint -o {{name}} --execution-timeout {{2 * 30}}\n{BODY}")
    assert names.shell.user_ns["kept"] == {"text": "$x {y} $$z {{w}}"}
    job = names.job(names.record().id)
    assert job.endpoint_id == "echo" and job.execution_timeout_ms == 60_000


def test_an_awaited_job_cell_expands_its_line_in_the_cells_namespace(names: Notebook) -> None:
    """What a Jupyter kernel (ipykernel 7.4 and later) runs: the awaited call."""
    cell = f"%%runpod_job $endpoint -o $name\n{BODY}"
    lines = names.shell.input_transformer_manager.transform_cell(cell)
    code = "".join(awaiting.await_job_cells(lines.splitlines(keepends=True)))
    assert code.startswith(awaiting.AWAITED_CALL)
    names.run(code)
    assert names.shell.user_ns["kept"] == {"text": "$x {y} $$z {{w}}"}


def test_an_awaited_batch_line_expands_like_a_blocking_one(names: Notebook) -> None:
    names.run("xs = [{'n': 1}, {'n': 2}]\nwhat = 'xs'")
    code = awaiting.await_job_cells(
        ["get_ipython().run_line_magic('runpod', 'batch $endpoint $what -o $name -q')\n"]
    )
    assert code[0].startswith(awaiting.AWAITED_LINE)
    names.run(code[0])
    assert names.shell.user_ns["kept"]["output"].tolist() == [{"n": 1}, {"n": 2}]


def test_batch_attach_takes_the_id_from_a_variable(names: Notebook) -> None:
    names.run("xs = [{'n': i} for i in range(3)]")
    names.run("%runpod batch echo xs -q")
    names.shell.user_ns["batch_id"] = only_batch(names)
    names.run("%runpod batch attach echo $batch_id -o again")
    assert names.shell.user_ns["again"]["output"].tolist() == [{"n": i} for i in range(3)]


def test_http_paths_and_headers_expand_the_body_does_not(names: Notebook, tmp_path: Path) -> None:
    deploy(names, tmp_path)
    names.run("item_id = 7\ntag = 'from-the-notebook'")
    names.run('%runpod_http api GET /items/$item_id -H "X-Tag: {tag}" -o $name')
    assert names.shell.user_ns["kept"] == {"id": 7, "tag": "from-the-notebook"}
    names.run("%runpod_http api GET /items/{item_id + 1} -H 'X-Tag: {{\"n\": 1}}' -o got")
    assert names.shell.user_ns["got"] == {"id": 8, "tag": '{"n": 1}'}
    names.run(f"%%runpod_http api POST /echo -o $name\n{BODY}")
    assert names.shell.user_ns["kept"] == {"text": "$x {y} $$z {{w}}"}


def test_a_chat_cell_expands_its_line_and_sends_its_message_untouched(nb: Notebook) -> None:
    nb.deploy(parrot, "parrot")
    nb.run("bot, x, y = 'parrot', 'X', 'Y'")
    nb.run("%%runpod_chat $bot --system \"Be {y}, not '$x'.\" -o answer\nsay $x and {y}")
    # IPython's rule: $name within single quotes is left as it is, {expr} is not
    assert nb.magics.conversations["parrot"].system == "Be Y, not '$x'."
    assert nb.shell.user_ns["answer"] == "say $x and {y}"  # the parrot says it back

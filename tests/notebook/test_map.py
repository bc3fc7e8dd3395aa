"""``%runpod map`` and ``run_many``: a progress panel, then a DataFrame of results."""

from __future__ import annotations

import base64

import pandas as pd
import pytest

from nbext.client import JobOptions
from nbext.notebook import run_many
from nbext.notebook.display.specs import STATES
from nbext.notebook.map import MAYBE_QUEUED

from .conftest import Notebook
from .test_job_magic import usage_error

RESULT_COLUMNS = ["id", "state", "delay_ms", "run_ms", "output", "error"]


def check_result_dtypes(df: pd.DataFrame) -> None:
    assert str(df["id"].dtype) == "string"
    assert isinstance(df["state"].dtype, pd.CategoricalDtype)
    assert tuple(df["state"].cat.categories) == (*STATES, MAYBE_QUEUED)
    assert str(df["delay_ms"].dtype) == "Int64"
    assert str(df["run_ms"].dtype) == "Int64"
    assert df["output"].dtype == object
    assert str(df["error"].dtype) == "string"


def test_map_a_list_of_dicts(nb: Notebook) -> None:
    nb.run("inputs = [{'n': i, 'word': f'w{i}'} for i in range(12)]")
    nb.run("%runpod map echo inputs -o res --concurrency 4")
    df: pd.DataFrame = nb.shell.user_ns["res"]
    assert list(df.columns) == ["n", "word", *RESULT_COLUMNS]
    check_result_dtypes(df)
    assert df["n"].tolist() == list(range(12))  # input order, whatever the finishing order
    assert df["output"].tolist() == [{"n": i, "word": f"w{i}"} for i in range(12)]
    assert set(df["state"]) == {"COMPLETED"}
    final = [d for d in nb.displays if d["update"]][-1]["data"]
    assert set(final) == {"text/html", "text/plain"}  # static once the map ended
    assert final["text/plain"].startswith(f"echo |{'█' * 20}| 12/12 · COMPLETED 12 · ")
    assert "done in 0:0" in final["text/plain"]
    assert len(nb.conn.registry) == 12  # %runpod jobs knows them


def test_map_a_dataframe_keeps_its_columns_and_dtypes(nb: Notebook) -> None:
    nb.run(
        "import pandas as pd\n"
        "frame = pd.DataFrame({'id': [10, 20], 'prompt': ['a', 'b'], 'temp': [0.1, 0.9]})"
    )
    nb.run("%runpod map echo frame -o res")
    df: pd.DataFrame = nb.shell.user_ns["res"]
    assert list(df.columns) == ["input.id", "prompt", "temp", *RESULT_COLUMNS]
    assert df["input.id"].tolist() == [10, 20] and df["temp"].dtype == "float64"
    assert df["output"].tolist() == [
        {"id": 10, "prompt": "a", "temp": 0.1},
        {"id": 20, "prompt": "b", "temp": 0.9},
    ]
    check_result_dtypes(df)


def test_failures_are_rows_like_the_others(nb: Notebook) -> None:
    nb.run("inputs = [{'message': 'no'}, {'message': 'never'}]")
    nb.run("%runpod map fail inputs -o res -q")
    df = nb.shell.user_ns["res"]
    assert df["state"].tolist() == ["FAILED", "FAILED"]
    assert df["error"].tolist() == ["RuntimeError: no", "RuntimeError: never"]
    assert len(nb.displays) == 1  # the DataFrame; --quiet showed no panel
    assert "text/html" in nb.displays[0]["data"]


def test_run_many_from_python(nb: Notebook) -> None:
    df = run_many("echo", [{"x": 1}, {"x": 2}], concurrency=2, connection=nb.conn, quiet=True)
    assert df["output"].tolist() == [{"x": 1}, {"x": 2}]
    with pytest.raises(TypeError, match="input #1 is an int"):
        run_many("echo", [{"x": 1}, 2], connection=nb.conn)
    with pytest.raises(TypeError, match="list of dicts or a DataFrame, got one dict"):
        run_many("echo", {"x": 1}, connection=nb.conn)


def test_job_options_reach_every_job_of_a_batch(nb: Notebook) -> None:
    # One value from the magic's options (or run_many's) to each job's body.
    nb.run("inputs = [{'n': 1}, {'n': 2}]")
    nb.run(
        "%runpod map echo inputs -o res -q --execution-timeout 30 --ttl 3600 "
        "--webhook http://127.0.0.1:9/hook"
    )
    ids = nb.shell.user_ns["res"]["id"].tolist()
    df = run_many("echo", [{"n": 3}], JobOptions(ttl=600), quiet=True, connection=nb.conn)
    worded = run_many("echo", [{"n": 4}], execution_timeout=5, quiet=True, connection=nb.conn)
    jobs = [nb.job(job_id) for job_id in [*ids, *df["id"], *worded["id"]]]
    assert [job.ttl_ms for job in jobs] == [3_600_000, 3_600_000, 600_000, 86_400_000]  # 24 h
    assert [job.execution_timeout_ms for job in jobs] == [30_000, 30_000, None, 5_000]
    assert [job.webhook for job in jobs] == ["http://127.0.0.1:9/hook"] * 2 + [None, None]


@pytest.mark.parametrize(
    ("setup", "line", "expected"),
    [
        ("", "%runpod map echo missing", "no 'missing' in the notebook's namespace"),
        ("xs = [1, 2]", "%runpod map echo xs", "input #0 is an int; every input must be a dict"),
        ("xs = [{}]", "%runpod map echo xs --concurrency 0", "--concurrency must be at least 1"),
        ("xs = [{}]", "%runpod map nowhere xs", "endpoint 'nowhere' not found"),
        ("xs = [{}]", "%runpod map echo xs --ttl -1", "--ttl must be a number of seconds > 0"),
    ],
)
def test_mistakes(
    nb: Notebook, capsys: pytest.CaptureFixture[str], setup: str, line: str, expected: str
) -> None:
    if setup:
        nb.run(setup)
    assert expected in usage_error(nb, line, capsys)


def test_map_shows_media_outputs_as_small_previews_and_keeps_them_raw(nb: Notebook) -> None:
    nb.emu.deploy(image="image-gen", endpoint_id="art")
    nb.run(
        "prompts = [{'prompt': p, 'seed': 1, 'width': 256, 'height': 256, 'step_ms': 0}"
        " for p in ('a lake', 'a forest', 'a desert')]"
    )
    nb.run("%runpod map art prompts -o res")
    df: pd.DataFrame = nb.shell.user_ns["res"]
    blobs = [output["images"][0] for output in df["output"]]
    assert all(base64.b64decode(blob).startswith(b"\x89PNG") for blob in blobs)  # raw, whole

    (table,) = [d["data"] for d in nb.displays if "nbext-listing" in d["data"].get("text/html", "")]
    html, plain = table["text/html"], table["text/plain"]
    assert html.count('<img src="data:image/jpeg;base64,') == 3  # a thumbnail per row
    assert html.count("&lt;PNG 256×256") == 3 and plain.count("<PNG 256×256") == 3
    for blob in blobs:
        assert blob[:64] not in html and blob[:64] not in plain
    assert len(html) < sum(len(blob) for blob in blobs) / 4
    assert "<td>a lake</td>" in html  # the other cells are as before, escaped by pandas

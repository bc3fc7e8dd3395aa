"""Records to DataFrames by column spec, and the management listings' subcommands."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import pytest

from nbext.client import Client, NotFound
from nbext.models.v2 import BillingRecord, Endpoint, NetworkVolume, Pod, Registry, Template
from nbext.notebook.display import Column, ListingSpec, to_frame
from nbext.notebook.display.specs import BILLING, MANAGEMENT
from nbext.notebook.display.table import Table
from nbext.notebook.magics.listings import legend_labels
from tests.media.conftest import b64, noise_png

from .conftest import Notebook
from .test_job_magic import usage_error

TEMPLATES = MANAGEMENT["templates"]
PODS = MANAGEMENT["pods"]
ENDPOINTS = MANAGEMENT["endpoints"]
VOLUMES = MANAGEMENT["network_volumes"]
REGISTRY_AUTHS = MANAGEMENT["registry_auths"]


def dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {name: str(dtype) for name, dtype in frame.dtypes.items()}


def is_utc_datetime(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.DatetimeTZDtype) and str(series.dt.tz) == "UTC"


def test_templates_frame() -> None:
    records = [
        Template.model_validate(
            {
                "id": "t2",
                "name": "zeta",
                "image": "img:2",
                "serverless": True,
                "category": "NVIDIA",
                "disk": 50,
                "mounts": {"persistent": {"size": 20, "path": "/workspace"}},
                "ports": ["8888/http"],
                "env": {"A": "1"},
                "runtimeInMin": 5,
            }
        ),
        Template.model_validate({"id": "t1", "name": "alpha", "image": "img:1"}),
    ]
    frame = to_frame(records, TEMPLATES)
    assert list(frame.columns[: len(TEMPLATES.columns)]) == TEMPLATES.names
    assert TEMPLATES.names[:5] == ["id", "name", "image", "serverless", "category"]
    assert frame["name"].tolist() == ["alpha", "zeta"]  # sorted by name
    types = dtypes(frame)
    assert types["id"] == "string" and types["image"] == "string"
    assert types["serverless"] == "boolean" and types["category"] == "category"
    assert types["disk"] == "Int64" and types["mounts.persistent.size"] == "Int64"
    assert frame["mounts.persistent.size"].tolist() == [pd.NA, 20]  # alpha has no volume
    assert frame["category"].tolist()[1] == "NVIDIA"
    assert "env" not in frame.columns and "mounts.network" not in frame.columns  # hidden
    assert "runtime_in_min" in frame.columns  # other fields kept, named in Python style
    assert types["runtime_in_min"] == "Int64"
    assert {"start_ssh", "start_jupyter", "allowed_cuda_versions"} <= set(frame.columns)


def test_pods_frame() -> None:
    pod = Pod.model_validate(
        {
            "id": "p1",
            "name": "trainer",
            "status": "RUNNING",
            "actions": ["stop", "restart", "terminate"],
            "image": "pytorch:2",
            "gpu": {"id": "NVIDIA A40", "count": 2},
            "cost": 0.79,
            "startedAt": "2026-01-02T03:04:05Z",
            "locked": False,
        }
    )
    frame = to_frame([pod], PODS)
    types = dtypes(frame)
    assert types["status"] == "category" and frame["status"][0] == "RUNNING"
    assert list(frame["status"].cat.categories)[:3] == ["PROVISIONING", "STARTING", "RUNNING"]
    assert frame["gpu.id"][0] == "NVIDIA A40" and frame["gpu.count"][0] == 2
    assert frame["cpu.id"].isna().all()  # a GPU pod: its cpu's columns are missing, not there
    assert types["cost"] == "float64" and types["locked"] == "boolean"
    assert is_utc_datetime(frame["started_at"])
    assert frame["started_at"][0] == pd.Timestamp("2026-01-02T03:04:05Z")
    assert frame["actions"][0] == ["stop", "restart", "terminate"]
    assert "gpu" not in frame.columns and "cpu" not in frame.columns


def test_endpoints_frame_flattens_as_json_normalize_does() -> None:
    record = {
        "id": "e1",
        "name": "llm",
        "type": "QUEUE",
        "image": "vllm:latest",
        "requestUrls": {"run": "https://x/v2/e1/run", "runSync": "https://x/v2/e1/runsync"},
        "gpu": {"pools": ["ADA_24"], "count": 1},
        "workers": {"min": 0, "max": 3, "idleTimeout": 5},
        "scaling": {"type": "QUEUE_DELAY", "queueDelay": 4},
        "timeout": 600000,
        "flashboot": "OFF",
        "createdAt": "2026-01-01T00:00:00Z",
    }
    frame = to_frame([Endpoint.model_validate(record)], ENDPOINTS)
    types = dtypes(frame)
    assert ENDPOINTS.default_columns == [
        "id",
        "name",
        "type",
        "image",
        "gpu.pools",
        "workers.min",
        "workers.max",
        "scaling.type",
        "created_at",
    ]
    assert types["workers.max"] == "Int64" and frame["workers.max"][0] == 3
    assert frame["workers.idle_timeout"][0] == 5 and types["scaling.type"] == "category"
    assert frame["scaling.queue_delay"][0] == 4.0 and frame["scaling.request_count"].isna()[0]
    assert frame["gpu.pools"][0] == ["ADA_24"] and types["type"] == "category"
    assert frame["request_urls.run_sync"][0] == "https://x/v2/e1/runsync"
    assert is_utc_datetime(frame["created_at"])
    # the columns pandas itself gives such a record, in Python's names
    normalized = pd.json_normalize(Endpoint.model_validate(record).model_dump())
    assert set(normalized.columns) - {"env", "cpu"} <= set(frame.columns)


def test_volumes_and_registry_auths_frames() -> None:
    volumes = to_frame(
        [NetworkVolume.model_validate({"id": "v", "name": "d", "size": 100, "dataCenter": "EU"})],
        VOLUMES,
    )
    assert dtypes(volumes) == {
        "id": "string",
        "name": "string",
        "size": "Int64",
        "data_center": "category",
        "type": "category",
    }
    auths = to_frame([Registry(id="a", name="docker")], REGISTRY_AUTHS)
    assert list(auths.columns) == ["id", "name"]


def test_billing_frames() -> None:
    def record(start: str, **amounts: Any) -> BillingRecord:
        end = start.replace("T00", "T01")
        return BillingRecord.model_validate({"startTime": start, "endTime": end, **amounts})

    pods = to_frame(
        [
            record("2026-01-02T00:00:00Z", totalAmount=1.5, gpuAmount=1.5, podId="p1"),
            record("2026-01-01T00:00:00Z", totalAmount=0.5, gpuAmount=0.5, podId="p1"),
        ],
        BILLING["pods"],
    )
    assert list(pods.columns) == ["start_time", "end_time", "pod_id", "total_amount", "gpu_amount"]
    assert is_utc_datetime(pods["start_time"]) and pods["start_time"].is_monotonic_increasing
    assert dtypes(pods)["total_amount"] == "float64" and pods["total_amount"].sum() == 2.0
    assert dtypes(pods)["gpu_amount"] == "float64"
    volumes = to_frame(
        [record("2026-01-01T00:00:00Z", totalAmount=0.07, standardAmount=0.07)],
        BILLING["volumes"],
    )
    assert list(volumes.columns) == ["start_time", "end_time", "total_amount", "standard_amount"]


def test_frames_never_fail_on_odd_values() -> None:
    spec = ListingSpec(
        "odd",
        (
            Column("when", "datetime"),
            Column("n", "int"),
            Column("x", "float"),
            Column("state", "category", categories=("A", "B")),
        ),
    )
    frame = to_frame(
        [
            {"when": "not a date", "n": "seven", "x": None, "state": "C"},
            {"when": 1_767_225_600, "n": 7, "x": "2.5", "state": "A"},
            {"when": 1_767_225_600_000, "n": None, "x": 1, "state": None},
        ],
        spec,
    )
    assert frame["when"].isna().tolist() == [True, False, False]
    assert frame["when"][1] == frame["when"][2] == pd.Timestamp("2026-01-01", tz="UTC")
    assert frame["n"].tolist()[1] == 7 and frame["n"].isna().tolist() == [True, False, True]
    assert frame["x"].tolist()[1:] == [2.5, 1.0]
    assert list(frame["state"].cat.categories) == ["A", "B", "C"]  # a new state kept, last
    assert to_frame([], spec).columns.tolist() == ["when", "n", "x", "state"]
    with pytest.raises(TypeError, match="cannot list a int"):
        to_frame([3], spec)


MANAGEMENT = hasattr(Client, "templates")


@pytest.fixture
def api(nb: Notebook) -> Any:
    """The sync client of the test's emulator, once its management interface answers."""
    if not MANAGEMENT:
        pytest.skip("the client has no management API yet")
    client = nb.conn.client
    try:
        client.templates.list()
    except NotFound:
        pytest.skip("the emulator does not serve management yet")
    return client


A40 = {"id": "NVIDIA A40"}


def test_management_listings_against_the_emulator(nb: Notebook, api: Any) -> None:
    template = api.templates.create(name="tpl", image="echo", serverless=True)
    api.endpoints.create(
        template_id=template.id, name="ep1", workers={"max": 2}, gpu={"pools": ["ADA_24"]}
    )
    api.network_volumes.create(name="data", size=10, data_center="EU-RO-1")
    api.registry_auths.create(name="hub", username="me", password="hunter2-password")
    api.pods.create(name="trainer", image="pytorch", gpu=A40)
    expected = {
        "templates": (TEMPLATES, "tpl"),
        "endpoints": (ENDPOINTS, "ep1"),
        "volumes": (VOLUMES, "data"),
        "registry-auths": (REGISTRY_AUTHS, "hub"),
        "pods": (PODS, "trainer"),
    }
    for command, (spec, name) in expected.items():
        nb.displays.clear()
        nb.run(f"%runpod {command} -o frame")
        frame = nb.shell.user_ns["frame"]
        assert list(frame.columns[: len(spec.columns)]) == spec.names, command
        assert name in frame["name"].tolist(), command
        assert str(frame["id"].dtype) == "string"
        assert len(nb.displays) == 1
        assert "hunter2-password" not in frame.to_csv()
    pods = nb.shell.user_ns["frame"]
    assert is_utc_datetime(pods["created_at"]) and pods["cost"].dtype == "float64"
    nb.run("%runpod endpoints -o endpoints")
    endpoints = nb.shell.user_ns["endpoints"].set_index("name")
    assert endpoints.loc["ep1", "image"] == "echo"  # v2's endpoint carries its container
    assert endpoints.loc["ep1", "type"] == "QUEUE"
    assert (endpoints.loc["ep1", "workers.max"], endpoints.loc["ep1", "gpu.pools"]) == (
        2,
        ["ADA_24"],
    )
    assert endpoints.loc["ep1", "request_urls.run"].endswith("/run")


@pytest.mark.parametrize("fake_clock", [True])
def test_billing_plot_draws_a_bucket_without_spend_as_zero(nb: Notebook, api: Any) -> None:
    """A pod stopped for an hour has no record for that hour: its line must drop to 0
    there, not run straight across at the pod's hourly price as if it had been billed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    busy = api.pods.create(name="busy", image="pytorch", gpu=A40)
    paused = api.pods.create(name="paused", image="pytorch", gpu=A40)
    nb.emu.advance(3600)
    api.pods.stop(paused.id)
    nb.emu.advance(3600)
    api.pods.start(paused.id)
    nb.emu.advance(3600)
    plt.close("all")
    nb.run("%runpod billing pods --bucket hour --plot -o bill")
    lines = {line.get_label(): line for line in plt.gcf().axes[0].get_lines()}
    assert set(lines) == {"busy", "paused"}  # the legend names the pods, not their ids
    price = busy.cost
    assert list(lines["busy"].get_ydata()) == pytest.approx([price, price, price])
    assert list(lines["paused"].get_ydata()) == pytest.approx([price, 0.0, price])
    assert plt.gcf().axes[0].get_legend().get_title().get_text() == "pod"
    bill = nb.shell.user_ns["bill"]
    assert set(zip(bill["pod_id"], bill["pod_name"], strict=True)) == {
        (busy.id, "busy"),
        (paused.id, "paused"),
    }
    plt.close("all")


@pytest.mark.parametrize("fake_clock", [True])
def test_billing_listing_and_plot(
    nb: Notebook, api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    api.pods.create(name="trainer", image="pytorch", gpu=A40)
    nb.emu.advance(7200)
    plt.close("all")
    nb.run("%runpod billing pods --bucket hour --plot -o bill")
    bill = nb.shell.user_ns["bill"]
    assert list(bill.columns[:5]) == [
        "start_time",
        "end_time",
        "pod_id",
        "pod_name",
        "total_amount",
    ]
    assert {"gpu_amount", "cpu_amount", "disk_amount"} <= set(bill.columns)  # by category
    assert bill["pod_name"].tolist() == ["trainer", "trainer"]
    assert is_utc_datetime(bill["start_time"]) and bill["start_time"].is_monotonic_increasing
    assert len(bill) == 2 and bill["total_amount"].sum() > 0
    figure = plt.gcf()
    assert figure.axes[0].get_title() == "billing: pods"
    assert len(figure.axes[0].get_lines()) == 1  # one pod, one line
    plt.close("all")
    nb.run("%runpod billing volumes --start 2026-01-01 --end 2026-01-02 -o vb")
    assert list(nb.shell.user_ns["vb"].columns[:3]) == ["start_time", "end_time", "total_amount"]
    nb.run("%runpod billing serverless -o sb")
    assert list(nb.shell.user_ns["sb"].columns[:5]) == [
        "start_time",
        "end_time",
        "serverless_id",
        "endpoint_name",
        "total_amount",
    ]
    message = usage_error(nb, "%runpod billing endpoints", capsys)
    assert "invalid choice: 'endpoints'" in message and "serverless" in message
    message = usage_error(nb, "%runpod billing pods --bucket fortnight", capsys)
    assert "invalid choice: 'fortnight'" in message
    message = usage_error(nb, "%runpod billing pods --start yesterday-ish", capsys)
    assert message == (
        "--start 'yesterday-ish' is not an ISO date or date-time "
        "(e.g. 2026-01-31, or 2026-01-31T12:00:00Z)"
    )
    message = usage_error(nb, "%runpod billing pods --start 2026-02-01 --end 2026-01-01", capsys)
    assert message == "--start (2026-02-01) is after --end (2026-01-01)"


# ---- what a cell shows: one mark for missing values, times to the second, useful columns ----

NOISE = re.compile(r"\bNaN\b|<NA>|&lt;NA&gt;|\bNone\b|\bNaT\b|\d\d:\d\d:\d\d\.\d")
"""pandas' spellings of "missing", and times past the second: never in a shown listing."""


def shown(nb: Notebook) -> tuple[str, str]:
    """The text/plain and text/html of the one display the last cell made."""
    assert len(nb.displays) == 1
    data = nb.displays[0]["data"]
    return data["text/plain"], data["text/html"]


def test_a_pods_listing_shows_the_useful_columns_and_all_on_request(
    nb: Notebook, api: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    api.pods.create(name="trainer", image="pytorch", gpu=A40)
    nb.displays.clear()
    capsys.readouterr()
    nb.run("%runpod pods -o pods")
    plain, html = shown(nb)
    frame = nb.shell.user_ns["pods"]
    assert PODS.shown is not None
    assert plain.splitlines()[0].split() == [*PODS.shown[:-1], "started_at", "(UTC)"]
    assert len(frame.columns) > len(PODS.shown) + 10  # -o keeps every column
    assert capsys.readouterr().out.strip() == (
        f"pods: showing {len(PODS.shown)} of {len(frame.columns)} columns "
        "(all of them are in `pods`; --all shows every column)"
    )
    assert not NOISE.search(plain) and not NOISE.search(html), plain
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s*$", plain.splitlines()[1])
    nb.displays.clear()
    nb.run("%runpod pods --all")
    plain, html = shown(nb)
    assert "data_center_id" in plain and "mounts.persistent.size" in html
    assert capsys.readouterr().out == ""  # nothing cut, nothing to say
    assert "–" in plain  # the pod has no template: marked, not "None" or "<NA>"
    assert not NOISE.search(plain) and not NOISE.search(html), plain


def test_the_jobs_listing_shows_times_to_the_second(nb: Notebook) -> None:
    nb.run('%%runpod_job echo -q\n{"a": 1}')
    nb.displays.clear()
    nb.run("%runpod jobs -o df")
    plain, html = shown(nb)
    assert "submitted (UTC)" in plain and "submitted (UTC)" in html
    assert not NOISE.search(plain) and not NOISE.search(html), plain
    submitted = nb.shell.user_ns["df"]["submitted"][0]
    assert submitted.strftime("%Y-%m-%d %H:%M:%S") in plain  # the data keeps its precision


def test_a_table_marks_every_missing_value_alike() -> None:
    spec = ListingSpec(
        "mixed",
        (
            Column("name"),
            Column("n", "int"),
            Column("x", "float"),
            Column("ok", "bool"),
            Column("state", "category"),
            Column("when", "datetime"),
            Column("ports", "object"),
        ),
    )
    frame = to_frame(
        [
            {
                "name": "a",
                "n": 1,
                "x": 0.5,
                "ok": True,
                "state": "RUNNING",
                "when": "2026-01-02T03:04:05.678901Z",
                "ports": ["22/tcp"],
            },
            {},
        ],
        spec,
    )
    table = Table(frame)
    plain, html = repr(table), table._repr_html_()
    assert not NOISE.search(plain) and not NOISE.search(html), plain
    assert plain.splitlines()[2].split() == ["1", *["–"] * 7]
    assert "2026-01-02 03:04:05" in plain and '["22/tcp"]' in plain
    assert html.count("<td>–</td>") == 7
    assert "td, table.nbext-listing th { white-space: nowrap; }" in html  # ids stay whole
    # the data keeps pandas' own missing values, one per dtype
    assert frame["n"].isna()[1] and frame["x"].isna()[1] and frame["when"].isna()[1]


def test_daily_times_show_the_date() -> None:
    frame = to_frame(
        [{"time": "2026-01-01T00:00:00Z"}, {"time": "2026-01-02T00:00:00Z"}],
        ListingSpec("daily", (Column("time", "datetime"),)),
    )
    assert repr(Table(frame)).split() == ["time", "(UTC)", "0", "2026-01-01", "1", "2026-01-02"]


def test_nested_enums_are_their_values() -> None:
    pod = Pod.model_validate({"id": "p", "name": "p", "status": "EXITED", "actions": ["start"]})
    frame = to_frame([pod], PODS)
    assert frame["actions"][0] == ["start"] and type(frame["actions"][0][0]) is str
    assert frame["status"][0] == "EXITED"


def test_legend_labels_are_names_told_apart_by_id_where_shared() -> None:
    frame = pd.DataFrame(
        {
            "pod_id": ["p1", "p2", "p3", "p4"],
            "pod_name": pd.array(["trainer", "desk", "desk", None], dtype="string"),
        }
    )
    labels = legend_labels(frame, "pod_id", ["p1", "p2", "p3", "p4"])
    assert labels == ["trainer", "desk (p2)", "desk (p3)", "p4"]  # p4: deleted, no name
    gpus = pd.DataFrame({"gpu_type_id": ["NVIDIA A40"]})
    assert legend_labels(gpus, "gpu_type_id", ["NVIDIA A40"]) == ["NVIDIA A40"]


def test_a_listing_cell_holding_a_picture_shows_a_thumbnail_and_its_tag() -> None:
    picture = b64(noise_png(300, 300))
    frame = pd.DataFrame(
        {
            "output": [picture, {"text": "aGVsbG8gd29ybGQ="}, "https://x.org/a.png"],
            "word": ["<b>", "x", "y"],
        }
    )
    table = Table(frame)
    html, plain = table._repr_html_(), repr(table)
    assert html.count("<img") == 1 and picture[:64] not in html and len(html) < 30_000
    assert "&lt;PNG 300×300" in html and "<PNG 300×300" in plain and picture[:64] not in plain
    assert "aGVsbG8gd29ybGQ=" in html and "aGVsbG8gd29ybGQ=" in plain  # not media: text
    assert "&lt;b&gt;" in html  # every other cell is still escaped
    assert "<td>https://x.org/a.png</td>" in html  # a URL is not fetched, nor drawn
    assert frame["output"][0] is picture  # the frame is data: unchanged

"""Records to DataFrames by column spec, and the management listings' subcommands."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pandas as pd
import pytest

from nbext.client import Client, NotFound
from nbext.models import (
    BillingRecord,
    ContainerRegistryAuth,
    Endpoint,
    NetworkVolume,
    NetworkVolumeBillingRecord,
    Pod,
    Template,
)
from nbext.notebook.display import Column, ListingSpec, to_frame
from nbext.notebook.display.specs import (
    BILLING,
    ENDPOINTS,
    PODS,
    REGISTRY_AUTHS,
    TEMPLATES,
    VOLUMES,
)
from nbext.notebook.display.table import Table
from nbext.notebook.magics.listings import legend_labels
from tests.media.conftest import b64, noise_png

from .conftest import Notebook
from .test_job_magic import usage_error


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
                "imageName": "img:2",
                "isServerless": True,
                "category": "NVIDIA",
                "containerDiskInGb": 50,
                "volumeInGb": 20,
                "ports": ["8888/http"],
                "env": {"A": "1"},
                "runtimeInMin": 5,
            }
        ),
        Template.model_validate({"id": "t1", "name": "alpha", "imageName": "img:1"}),
    ]
    frame = to_frame(records, TEMPLATES)
    assert list(frame.columns[: len(TEMPLATES.columns)]) == TEMPLATES.names
    assert frame["name"].tolist() == ["alpha", "zeta"]  # sorted by name
    types = dtypes(frame)
    assert types["id"] == "string" and types["image_name"] == "string"
    assert types["is_serverless"] == "boolean" and types["category"] == "category"
    assert types["container_disk_gb"] == "Int64"
    assert frame["category"].tolist()[1] == "NVIDIA"
    assert "env" not in frame.columns and "readme" not in frame.columns  # hidden blobs
    assert "runtime_in_min" in frame.columns  # other fields kept, named in Python style
    assert types["runtime_in_min"] == "Int64"


def test_pods_frame() -> None:
    pod = Pod.model_validate(
        {
            "id": "p1",
            "name": "trainer",
            "desiredStatus": "RUNNING",
            "image": "pytorch:2",
            "gpu": {"id": "NVIDIA A40", "count": 2, "displayName": "A40"},
            "costPerHr": 0.79,
            "lastStartedAt": "2026-01-02T03:04:05Z",
            "locked": False,
            "memoryInGb": 62,
        }
    )
    frame = to_frame([pod], PODS)
    types = dtypes(frame)
    assert types["desired_status"] == "category" and frame["desired_status"][0] == "RUNNING"
    assert frame["gpu_type"][0] == "A40" and frame["gpu_count"][0] == 2
    assert types["cost_per_hr"] == "float64" and types["memory_gb"] == "float64"
    assert is_utc_datetime(frame["last_started_at"])
    assert frame["last_started_at"][0] == pd.Timestamp("2026-01-02T03:04:05Z")
    assert types["locked"] == "boolean"
    assert "gpu" not in frame.columns


def test_endpoints_frame() -> None:
    endpoint = Endpoint.model_validate(
        {
            "id": "e1",
            "name": "llm",
            "templateId": "t1",
            "template": {"id": "t1", "imageName": "vllm:latest"},
            "computeType": "GPU",
            "workersMin": 0,
            "workersMax": 3,
            "idleTimeout": 5,
            "executionTimeoutMs": 600000,
            "gpuTypeIds": ["NVIDIA A40"],
            "createdAt": "2026-01-01T00:00:00Z",
        }
    )
    frame = to_frame([endpoint], ENDPOINTS)
    types = dtypes(frame)
    assert frame["image_name"][0] == "vllm:latest"  # reached into the nested template
    assert types["workers_max"] == "Int64" and frame["workers_max"][0] == 3
    assert types["compute_type"] == "category"
    assert is_utc_datetime(frame["created_at"])
    assert frame["gpu_type_ids"][0] == ["NVIDIA A40"]


def test_volumes_and_registry_auths_frames() -> None:
    volumes = to_frame(
        [
            NetworkVolume.model_validate(
                {"id": "v", "name": "data", "size": 100, "dataCenterId": "EU-RO-1"}
            )
        ],
        VOLUMES,
    )
    assert dtypes(volumes) == {
        "id": "string",
        "name": "string",
        "size_gb": "Int64",
        "data_center_id": "category",
    }
    auths = to_frame([ContainerRegistryAuth(id="a", name="docker")], REGISTRY_AUTHS)
    assert list(auths.columns) == ["id", "name"]


def test_billing_frames() -> None:
    pods = to_frame(
        [
            BillingRecord.model_validate(
                {
                    "time": "2026-01-02T00:00:00Z",
                    "amount": 1.5,
                    "podId": "p1",
                    "timeBilledMs": 3600000,
                }
            ),
            BillingRecord.model_validate(
                {"time": "2026-01-01T00:00:00Z", "amount": 0.5, "podId": "p1"}
            ),
        ],
        BILLING["pods"],
    )
    assert list(pods.columns) == [
        "time",
        "pod_id",
        "gpu_type_id",
        "amount_usd",
        "time_billed_ms",
        "disk_space_billed_gb",
        "endpoint_id",
    ]
    assert is_utc_datetime(pods["time"]) and pods["time"].is_monotonic_increasing
    assert dtypes(pods)["amount_usd"] == "float64" and pods["amount_usd"].sum() == 2.0
    assert dtypes(pods)["time_billed_ms"] == "Int64"
    volumes = to_frame(
        [
            NetworkVolumeBillingRecord.model_validate(
                {
                    "time": datetime(2026, 1, 1, tzinfo=UTC),
                    "amount": 0.07,
                    "diskSpaceBilledGb": 10,
                    "highPerformanceStorageAmount": 0.0,
                }
            )
        ],
        BILLING["volumes"],
    )
    assert list(volumes.columns)[:3] == ["time", "amount_usd", "disk_space_billed_gb"]
    assert "high_performance_storage_amount" in volumes.columns


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
def v1(nb: Notebook) -> Any:
    """The sync client of the test's emulator, once its management interface answers."""
    if not MANAGEMENT:
        pytest.skip("the client has no management API yet")
    client = nb.conn.client
    try:
        client.templates.list()
    except NotFound:
        pytest.skip("the emulator does not serve /v1 yet")
    return client


def test_management_listings_against_the_emulator(nb: Notebook, v1: Any) -> None:
    template = v1.templates.create(name="tpl", image_name="echo", is_serverless=True)
    v1.endpoints.create(template_id=template.id, name="ep1", workers_max=2)
    v1.network_volumes.create(name="data", size=10, data_center_id="EU-RO-1")
    v1.registry_auths.create(name="hub", username="me", password="hunter2-password")
    v1.pods.create(name="trainer", image_name="pytorch", gpu_type_ids=["NVIDIA A40"])
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
    assert is_utc_datetime(pods["last_started_at"])
    nb.run("%runpod endpoints -o endpoints")
    endpoints = nb.shell.user_ns["endpoints"].set_index("name")
    assert endpoints.loc["ep1", "image_name"] == "echo"  # the listing asks for templates
    assert pods["cost_per_hr"].dtype == "float64"


@pytest.mark.parametrize("fake_clock", [True])
def test_billing_plot_draws_a_bucket_without_spend_as_zero(nb: Notebook, v1: Any) -> None:
    """A pod stopped for an hour has no record for that hour: its line must drop to 0
    there, not run straight across at the pod's hourly price as if it had been billed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    busy = v1.pods.create(name="busy", image_name="pytorch", gpu_type_ids=["NVIDIA A40"])
    paused = v1.pods.create(name="paused", image_name="pytorch", gpu_type_ids=["NVIDIA A40"])
    nb.emu.advance(3600)
    v1.pods.stop(paused.id)
    nb.emu.advance(3600)
    v1.pods.start(paused.id)
    nb.emu.advance(3600)
    plt.close("all")
    nb.run("%runpod billing pods --bucket hour --group podId --plot -o bill")
    lines = {line.get_label(): line for line in plt.gcf().axes[0].get_lines()}
    assert set(lines) == {"busy", "paused"}  # the legend names the pods, not their ids
    price = busy.cost_per_hr
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
    nb: Notebook, v1: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    v1.pods.create(name="trainer", image_name="pytorch", gpu_type_ids=["NVIDIA A40"])
    nb.emu.advance(7200)
    plt.close("all")
    nb.run("%runpod billing pods --bucket hour --group podId --plot -o bill")
    bill = nb.shell.user_ns["bill"]
    assert list(bill.columns[:7]) == [
        "time",
        "pod_id",
        "pod_name",
        "gpu_type_id",
        "amount_usd",
        "time_billed_ms",
        "disk_space_billed_gb",
    ]
    assert bill["pod_name"].tolist() == ["trainer", "trainer"]
    assert is_utc_datetime(bill["time"]) and bill["time"].is_monotonic_increasing
    assert len(bill) == 2 and bill["amount_usd"].sum() > 0
    figure = plt.gcf()
    assert figure.axes[0].get_title() == "billing: pods"
    assert len(figure.axes[0].get_lines()) == 1  # one pod, one line
    plt.close("all")
    nb.run("%runpod billing volumes --start 2026-01-01 --end 2026-01-02 -o vb")
    assert list(nb.shell.user_ns["vb"].columns[:3]) == [
        "time",
        "amount_usd",
        "disk_space_billed_gb",
    ]
    message = usage_error(nb, "%runpod billing volumes --group podId", capsys)
    assert "--group does not apply to volumes" in message
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
    nb: Notebook, v1: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    v1.pods.create(name="trainer", image_name="pytorch", gpu_type_ids=["NVIDIA A40"])
    nb.displays.clear()
    capsys.readouterr()
    nb.run("%runpod pods -o pods")
    plain, html = shown(nb)
    frame = nb.shell.user_ns["pods"]
    assert PODS.shown is not None
    assert plain.splitlines()[0].split() == [
        *PODS.shown[:-1],
        "last_started_at",
        "(UTC)",
    ]
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
    assert "machine_id" in plain and "public_ip" in html
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
    endpoint = Endpoint.model_validate(
        {"id": "e1", "name": "llm", "gpuTypeIds": ["NVIDIA A40"], "dataCenterIds": ["EU-RO-1"]}
    )
    frame = to_frame([endpoint], ENDPOINTS)
    assert frame["gpu_type_ids"][0] == ["NVIDIA A40"]
    assert type(frame["gpu_type_ids"][0][0]) is str
    assert frame["data_center_ids"][0] == ["EU-RO-1"]


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

"""The listings and billing DataFrames are the same whichever management interface the
notebook speaks: REST v2's records, with the same columns, dtypes and records through
the v1 adapter and REST v2.

One emulator serves both interfaces from one state; things are made once (through v2)
and every listing is run through a v1 and a v2 connection, and their frames compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from nbext.client import Client
from nbext.notebook import Connection
from nbext.notebook.display import ListingSpec
from nbext.notebook.display.specs import (
    BILLING,
    ENDPOINTS,
    PODS,
    REGISTRY_AUTHS,
    TEMPLATES,
    VOLUMES,
)

from .conftest import Notebook

LISTINGS = (
    "templates",
    "pods",
    "endpoints",
    "volumes",
    "registry-auths",
    "billing pods --bucket hour",
    "billing serverless --bucket hour",
    "billing volumes --bucket day",
)

SPECS: dict[str, ListingSpec] = {
    "templates": TEMPLATES,
    "pods": PODS,
    "endpoints": ENDPOINTS,
    "volumes": VOLUMES,
    "registry-auths": REGISTRY_AUTHS,
    **{f"billing {kind}": spec for kind, spec in BILLING.items()},
}

NOT_IN_V1 = {"endpoints": ["image"], "volumes": ["type"]}
"""Shown columns that REST v1 has no field for (its endpoints do not carry their
container's settings, nor its volumes a tier): empty through the v1 adapter, by v1's
design, not lost on the way."""
ONLY_V2 = re.compile(r"[a-z_]+_amount|network_volume_id")
"""v2's bills give each category's amount beside the total, and the volume each storage
record is for; v1's, the total alone, for all volumes together."""


@pytest.fixture
def both(nb: Notebook) -> Iterator[tuple[Connection, Connection]]:
    """A v1 and a v2 connection to ``nb``'s emulator, after a working morning."""
    v1 = nb.conn
    v1.management_api = "v1"
    v2 = Connection(
        server=nb.server,
        environ={},
        config_file=Path("/nonexistent/config.toml"),
        management_api="v2",
    )
    with Client(
        nb.emu.api_key, base_url=nb.server.base_url, serverless_url=nb.server.serverless_url
    ) as client:
        auth = client.registry_auths.create(name="acme", username="ci", password="s3cret")
        lab = client.templates.create(name="lab", image="acme/lab:1", registry=auth.id)
        worker = client.templates.create(name="worker", image="sleep", serverless=True)
        volume = client.network_volumes.create(name="data", size=50, data_center="EU-RO-1")
        client.pods.create(
            name="desk",
            template_id=lab.id,
            gpu={"id": "NVIDIA GeForce RTX 4090"},
            mounts={"network": [{"volume_id": volume.id, "path": "/data"}]},
        )
        endpoint = client.endpoints.create(
            template_id=worker.id, name="summarizer", gpu={"pools": ["ADA_24"]}
        )
        for _ in range(3):
            client.endpoint(endpoint.id).run({"seconds": 2})
            nb.emu.advance(3600)
    try:
        yield v1, v2
    finally:
        v2.close()


def frame_of(nb: Notebook, connection: Connection, line: str) -> pd.DataFrame:
    nb.magics.connection = connection
    try:
        nb.run(f"%runpod {line} -o frame")
    finally:
        nb.magics.connection = nb.conn
    frame: pd.DataFrame = nb.shell.user_ns.pop("frame")
    return frame


@pytest.mark.parametrize("fake_clock", [True])
@pytest.mark.parametrize("line", LISTINGS)
def test_columns_and_records_are_the_same_through_v1_and_v2(
    nb: Notebook, both: tuple[Connection, Connection], line: str
) -> None:
    through_v1, through_v2 = (frame_of(nb, c, line) for c in both)
    assert len(through_v1) > 0, f"{line}: nothing to compare"
    only_v2 = [c for c in through_v2.columns if c not in through_v1.columns]
    assert [c for c in through_v2.columns if c not in only_v2] == list(through_v1.columns)
    assert all(ONLY_V2.fullmatch(c) for c in only_v2), only_v2
    assert through_v2[through_v1.columns].dtypes.astype(str).to_dict() == (
        through_v1.dtypes.astype(str).to_dict()
    )
    key = "id" if "id" in through_v1 else "start_time"
    assert sorted(through_v2[key].astype(str)) == sorted(through_v1[key].astype(str))
    spec = SPECS[line.split(" --")[0]]
    empty = [
        column
        for column in spec.default_columns
        if through_v2[column].notna().any() and not through_v1[column].notna().any()
    ]
    assert empty == NOT_IN_V1.get(spec.kind, []), f"{line}: shown columns empty through v1"

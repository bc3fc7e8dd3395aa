"""The v2 wire models read every answer of the emulator's v2 and write it back unchanged.

The client reads the cloud (and the emulator) through these models, so each is checked
against real answers: parsed, and parsed again from what it writes.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from nbext.emulator import Emulator
from nbext.models import v2

from .conftest import GPU, endpoint, events, ok, pod, problem, template, volume

pytestmark = pytest.mark.anyio

LIST_KEYS = {row.segment: row.list_key for row in v2.RESOURCES} | {
    "catalog/gpus": "gpus",
    "catalog/cpus": "cpus",
    "catalog/datacenters": "dataCenters",
    "catalog/templates": "templates",
    "serverless/{id}/workers": "workers",
    "serverless/{id}/releases": "releases",
    "clusters/{id}/pods": "pods",
}
"""Path under ``/v2`` -> the key its list answer wraps the records in (the reference's)."""


def reads(model: type[BaseModel], data: dict[str, Any]) -> BaseModel:
    parsed = model.model_validate(data)
    again = model.model_validate(parsed.model_dump(by_alias=True, exclude_unset=True, mode="json"))
    assert again == parsed
    return parsed


async def listed(api: httpx.AsyncClient, path: str) -> list[dict[str, Any]]:
    answer = await ok(api.get(f"/v2/{path}"))
    key = LIST_KEYS[path.split("?")[0]]
    assert list(answer) == [key]
    items: list[dict[str, Any]] = answer[key]
    return items


async def test_every_resource_reads_into_its_model(api: httpx.AsyncClient) -> None:
    t = await template(api)
    p = await pod(api, mounts={"persistent": {"size": 20, "path": "/data"}})
    e = await endpoint(api, workers={"min": 1, "max": 1})
    v = await volume(api)
    await ok(api.post("/v2/registries", json={"name": "r", "username": "u", "password": "p"}), 201)
    arn = "arn:aws:ecr:us-east-2:418399314813:repository/a/b"
    await ok(api.post("/v2/registries/delegations", json={"resource": arn}), 201)
    cluster = {
        "name": "c",
        "type": "RAY",
        "compute": {"gpuTypeId": GPU, "gpuCountPerPod": 1, "podCount": 2},
    }
    c = await ok(api.post("/v2/clusters", json=cluster), 201)
    await ok(api.post(e["requestUrls"]["runSync"], json={"input": {}}))
    cases: list[tuple[type[BaseModel], str]] = [
        (v2.Template, "templates"),
        (v2.Pod, "pods"),
        (v2.Endpoint, "serverless"),
        (v2.NetworkVolume, "network-volumes"),
        (v2.Registry, "registries"),
        (v2.EcrDelegation, "registries/delegations"),
        (v2.Cluster, "clusters"),
        (v2.GpuType, "catalog/gpus?include=AVAILABILITY&product=POD"),
        (v2.CpuType, "catalog/cpus"),
        (v2.DataCenter, "catalog/datacenters?include=GPU_AVAILABILITY"),
        (v2.Template, "catalog/templates"),
    ]
    for model, path in cases:
        items = await listed(api, path)
        assert items, path
        for item in items:
            reads(model, item)
    assert (reads(v2.Pod, p)).mounts.persistent.path == "/data"  # type: ignore[attr-defined]
    assert reads(v2.Template, t).id == t["id"]  # type: ignore[attr-defined]
    assert reads(v2.NetworkVolume, v).size == 10  # type: ignore[attr-defined]
    workers = await ok(api.get(f"/v2/serverless/{e['id']}/workers"))
    worker = reads(v2.Worker, workers["workers"][0])
    for release in (await ok(api.get(f"/v2/serverless/{e['id']}/releases")))["releases"]:
        reads(v2.Release, release)
    for member in (await ok(api.get(f"/v2/clusters/{c['id']}/pods")))["pods"]:
        assert reads(v2.Pod, member).cluster is not None  # type: ignore[attr-defined]
    logs = await events(api, f"/v2/serverless/{e['id']}/workers/{worker.id}/logs")  # type: ignore[attr-defined]
    assert all(reads(v2.LogEvent, {**x, "cursor": x["id"]}) for x in logs)


async def test_billing_records_and_problems(api: httpx.AsyncClient, emu: Emulator) -> None:
    await pod(api)
    await emu.advance_async(1800)
    answer = await ok(api.get("/v2/billing?bucketSize=hour&lastN=1"))
    record = reads(v2.BillingRecord, answer["records"][0])
    assert record.amounts()["podGpuAmount"] > 0  # type: ignore[attr-defined]
    body = await problem(api.get("/v2/pods/nope"), 404)
    assert reads(v2.Problem, body).status == 404  # type: ignore[attr-defined]

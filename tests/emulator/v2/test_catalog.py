"""``/v2/catalog``: what hardware exists, where, for how much, and how available."""

from __future__ import annotations

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.management import catalog, offers

from .conftest import GPU, ok, problem

pytestmark = pytest.mark.anyio


async def test_gpu_types_with_prices_pools_and_memory(api: httpx.AsyncClient) -> None:
    gpus = (await ok(api.get("/v2/catalog/gpus")))["gpus"]
    assert [g["id"] for g in gpus] == list(catalog.GPUS)
    a40 = next(g for g in gpus if g["id"] == GPU)
    offer = catalog.gpu(GPU)
    assert a40["memory"] == 48 and a40["pool"] == "AMPERE_48"
    assert a40["price"]["secure"] == offer.secure_price
    assert a40["price"]["community"] == offer.community_price
    assert "availability" not in a40
    assert await ok(api.get(f"/v2/catalog/gpus/{GPU}")) == a40
    await problem(api.get("/v2/catalog/gpus/NVIDIA%20Nope"), 404, "GET /v2/catalog/gpus")


async def test_availability_is_per_data_centre_and_filtered(api: httpx.AsyncClient) -> None:
    url = "/v2/catalog/gpus?include=AVAILABILITY&product=POD&countryCodes=SE,NO"
    gpus = (await ok(api.get(url)))["gpus"]
    for g in gpus:
        assert {c["id"] for c in g["dataCenters"]} == {"EU-SE-1", "EUR-NO-1"}
        levels = [c["availability"] for c in g["dataCenters"]]
        assert g["availability"] == offers.overall(levels)
    assert len({g["availability"] for g in gpus}) > 1  # something to filter on
    huge = await ok(api.get(f"/v2/catalog/gpus/{GPU}?include=AVAILABILITY&product=POD&count=64"))
    assert huge["availability"] == "NONE"
    cuda = await ok(
        api.get(f"/v2/catalog/gpus/{GPU}?include=AVAILABILITY&product=POD&minCudaVersion=12.6")
    )
    assert [v["version"] for v in cuda["cudaVersions"]] == ["12.6", "12.8", "12.9", "13.0"]


async def test_availability_parameters_need_include(api: httpx.AsyncClient) -> None:
    await problem(api.get("/v2/catalog/gpus?count=2"), 400, "count: is valid only with include")
    await problem(api.get("/v2/catalog/gpus?include=AVAILABILITY"), 400, "product:")
    both = "include=AVAILABILITY&product=POD&cudaVersions=12.8&minCudaVersion=12"
    await problem(api.get(f"/v2/catalog/gpus?{both}"), 400, "not both")
    await problem(api.get("/v2/catalog/gpus?include=EVERYTHING"), 422, "include")
    await problem(
        api.get("/v2/catalog/cpus?include=AVAILABILITY&product=POD&vcpuCount=6"),
        400,
        "power of two",
    )


async def test_cpus_data_centres_and_public_templates(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    cpus = (await ok(api.get("/v2/catalog/cpus")))["cpus"]
    cpu3c = next(c for c in cpus if c["id"] == "cpu3c")
    assert cpu3c["ramGbPerVcpu"] == 2.0 and cpu3c["price"]["securePerVcpu"] == 0.03
    centres = (await ok(api.get("/v2/catalog/datacenters?regions=NORTH_AMERICA")))["dataCenters"]
    assert centres and all(c["region"] == "NORTH_AMERICA" for c in centres)
    assert all("gpuAvailability" not in c for c in centres)
    one = await ok(api.get("/v2/catalog/datacenters/EU-RO-1?include=GPU_AVAILABILITY"))
    assert "GDPR" in one["compliance"] and len(one["gpuAvailability"]) == len(catalog.GPUS)
    official = (await ok(api.get("/v2/catalog/templates")))["templates"]
    assert {t["id"] for t in official} == set(emu.management.templates.official)
    assert all(t["registry"] is None and t["serverless"] for t in official)
    assert (await ok(api.get("/v2/catalog/templates?source=community")))["templates"] == []

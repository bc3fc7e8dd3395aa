"""``client.catalog`` against the emulator's ``/v2/catalog``, four ways."""

from __future__ import annotations

import pytest

from nbext.client import BadRequest, NotFound
from nbext.models.v2 import CpuType, DataCenter, GpuType, Template

from .conftest import GPU, V2Harness

pytestmark = pytest.mark.anyio


async def test_gpus_list_every_type_with_prices(v2: V2Harness) -> None:
    gpus = await v2.call(v2.client.catalog.gpus)
    assert gpus and all(isinstance(g, GpuType) for g in gpus)
    a40 = next(g for g in gpus if g.id == GPU)
    assert a40.memory == 48 and a40.price["secure"] > 0
    assert a40.availability is None  # not asked for: the service leaves it out


async def test_gpu_filters_are_sent_or_applied(v2: V2Harness) -> None:
    everything = await v2.call(v2.client.catalog.gpus)
    big = await v2.call(v2.client.catalog.gpus, min_vram_gb=48)
    assert big and {g.id for g in big} == {g.id for g in everything if g.memory >= 48}
    cheapest = min(min(g.price["secure"], g.price["community"]) for g in everything)
    cheap = await v2.call(v2.client.catalog.gpus, max_price=cheapest)
    assert cheap and all(min(g.price["secure"], g.price["community"]) <= cheapest for g in cheap)
    available = await v2.call(v2.client.catalog.gpus, available=True)
    assert available and all(g.availability not in (None, "NONE") for g in available)
    assert all(g.data_centers for g in available)
    community = await v2.call(v2.client.catalog.gpus, cloud="community")
    assert {g.id for g in community} == {g.id for g in everything if g.community}
    assert all(g.availability is not None for g in community)  # cloud scopes availability
    priced = await v2.call(v2.client.catalog.gpus, cloud="COMMUNITY", max_price=cheapest)
    assert all(g.price["community"] <= cheapest for g in priced)
    too_many = await v2.call(v2.client.catalog.gpus, available=True, count=64)
    assert too_many == []


async def test_one_gpu_cpu_datacenter_and_the_public_templates(v2: V2Harness) -> None:
    c = v2.client.catalog
    assert (await v2.call(c.gpu, GPU)).id == GPU
    cpus = await v2.call(c.cpus)
    assert cpus and all(isinstance(x, CpuType) for x in cpus)
    assert (await v2.call(c.cpu, cpus[0].id)).id == cpus[0].id
    centres = await v2.call(c.datacenters)
    assert centres and all(isinstance(d, DataCenter) for d in centres)
    assert (await v2.call(c.datacenter, centres[0].id)).region == centres[0].region
    public = await v2.call(c.templates)
    assert public and all(isinstance(t, Template) and t.public for t in public)
    with pytest.raises(NotFound, match="GPU type 'no such gpu'"):
        await v2.call(c.gpu, "no such gpu")


@pytest.mark.parametrize(
    ("kw", "fragment"),
    [
        ({"min_vram_gb": -1}, "min_vram_gb must be a number >= 0, got -1"),
        ({"max_price": "cheap"}, "max_price must be a number >= 0"),
        ({"cloud": "moon"}, "cloud must be one of SECURE, COMMUNITY, got 'moon'"),
        ({"product": "toaster"}, "product must be one of POD, CLUSTER, SERVERLESS"),
        ({"count": 0}, "count must be a whole number >= 1, got 0"),
    ],
)
async def test_bad_filters_are_refused_before_sending(
    v2: V2Harness, kw: dict[str, object], fragment: str
) -> None:
    with pytest.raises(BadRequest) as caught:
        await v2.call(v2.client.catalog.gpus, **kw)
    assert fragment in str(caught.value) and "nothing was sent" in str(caught.value)
    assert caught.value.sent is False and "\n" not in str(caught.value)


async def test_empty_ids_are_refused(v2: V2Harness) -> None:
    for method in (v2.client.catalog.gpu, v2.client.catalog.cpu, v2.client.catalog.datacenter):
        with pytest.raises(BadRequest, match="must be a non-empty string"):
            await v2.call(method, "")

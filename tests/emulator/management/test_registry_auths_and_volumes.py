"""``/v1/containerregistryauth`` and ``/v1/networkvolumes``.

A registry auth's password is stored and never returned; a volume only grows; neither
can go while something uses it.
"""

from __future__ import annotations

import httpx
import pytest

from nbext.emulator import Emulator

from .conftest import ok, pod, refused, registry_auth, template, volume

pytestmark = pytest.mark.anyio

SECRET = "pw-very-secret-123"


async def test_registry_auth_lifecycle_never_returns_the_password(
    api: httpx.AsyncClient, emu: Emulator
) -> None:
    body = {"name": "hub", "username": "me", "password": SECRET}
    r = await api.post("/v1/containerregistryauth", json=body)
    created = await ok(r)
    assert set(created) == {"id", "name"} and created["name"] == "hub"
    assert created["id"].startswith("cl") and len(created["id"]) == 25
    answers = [
        r,
        await api.get("/v1/containerregistryauth"),
        await api.get(f"/v1/containerregistryauth/{created['id']}"),
    ]
    assert await ok(answers[1]) == [created]
    assert await ok(answers[2]) == created
    for answer in answers:
        assert SECRET not in answer.text and "password" not in answer.text
    assert SECRET not in repr(emu.management.registry_auths.book.items)
    # ... but it is kept, as the service must use it to pull images.
    assert emu.store.get("registry_auth", created["id"])["password"] == SECRET  # type: ignore[index]
    await ok(api.delete(f"/v1/containerregistryauth/{created['id']}"), 204)
    await refused(
        api.get(f"/v1/containerregistryauth/{created['id']}"),
        "container registry auth",
        "not found",
        status=404,
    )
    assert emu.store.get("registry_auth", created["id"]) is None


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "a", "username": "u"}, "password: is required"),
        ({"name": "a", "password": SECRET}, "username: is required"),
        ({"username": "u", "password": SECRET}, "name: is required"),
        ({"name": "a", "username": "u", "password": ""}, "password: "),
        ({"name": "a", "username": "u", "password": 12345678}, "password: Input should be"),
        ({"name": "", "username": "u", "password": SECRET}, "name: must not be empty"),
    ],
)
async def test_registry_auth_refusals(
    api: httpx.AsyncClient, body: dict[str, object], message: str
) -> None:
    text = await refused(api.post("/v1/containerregistryauth", json=body), message)
    assert SECRET not in text and "12345678" not in text
    assert await ok(api.get("/v1/containerregistryauth")) == []


async def test_registry_auth_names_are_unique(api: httpx.AsyncClient) -> None:
    first = await registry_auth(api, name="hub")
    await refused(
        api.post(
            "/v1/containerregistryauth", json={"name": "hub", "username": "x", "password": "y"}
        ),
        "name:",
        "'hub' already exists",
    )
    assert await ok(api.get("/v1/containerregistryauth")) == [first]


async def test_a_registry_auth_in_use_cannot_be_deleted(api: httpx.AsyncClient) -> None:
    auth = await registry_auth(api)
    t = await template(api, containerRegistryAuthId=auth["id"])
    p = await pod(api, containerRegistryAuthId=auth["id"])
    message = await refused(api.delete(f"/v1/containerregistryauth/{auth['id']}"), "is used by")
    assert f"template {t['id']}" in message and f"pod {p['id']}" in message
    await ok(api.delete(f"/v1/templates/{t['id']}"), 204)
    await ok(api.delete(f"/v1/pods/{p['id']}"), 204)
    await ok(api.delete(f"/v1/containerregistryauth/{auth['id']}"), 204)


async def test_volume_lifecycle(api: httpx.AsyncClient) -> None:
    v = await ok(
        api.post("/v1/networkvolumes", json={"name": "data", "size": 50, "dataCenterId": "EU-SE-1"})
    )
    assert v == {"id": v["id"], "name": "data", "size": 50, "dataCenterId": "EU-SE-1"}
    assert await ok(api.get("/v1/networkvolumes")) == [v]
    assert await ok(api.get(f"/v1/networkvolumes/{v['id']}")) == v
    grown = await ok(api.patch(f"/v1/networkvolumes/{v['id']}", json={"size": 60}))
    assert grown == {**v, "size": 60}
    renamed = await ok(api.post(f"/v1/networkvolumes/{v['id']}/update", json={"name": "d2"}))
    assert renamed == {**v, "size": 60, "name": "d2"}
    same = await ok(api.patch(f"/v1/networkvolumes/{v['id']}", json={"size": 60}))
    assert same["size"] == 60  # the same size is no shrink
    await ok(api.delete(f"/v1/networkvolumes/{v['id']}"), 204)
    await refused(api.get(f"/v1/networkvolumes/{v['id']}"), "not found", status=404)
    await refused(api.patch(f"/v1/networkvolumes/{v['id']}", json={}), "not found", status=404)


@pytest.mark.parametrize("how", ["PATCH", "POST"])
async def test_a_volume_never_shrinks(api: httpx.AsyncClient, how: str) -> None:
    v = await volume(api, size=100)
    url = f"/v1/networkvolumes/{v['id']}" + ("" if how == "PATCH" else "/update")
    await refused(
        api.request(how, url, json={"size": 99, "name": "changed"}),
        "size: a network volume can only grow",
        "100 GB",
    )
    assert await ok(api.get(f"/v1/networkvolumes/{v['id']}")) == v


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "v", "size": 4001, "dataCenterId": "EU-RO-1"}, "size: Input should be less"),
        ({"name": "v", "size": -1, "dataCenterId": "EU-RO-1"}, "size: Input should be greater"),
        ({"name": "v", "size": 1.5, "dataCenterId": "EU-RO-1"}, "size: Input should be"),
        ({"name": "v", "size": 10, "dataCenterId": "MARS-1"}, "dataCenterId: Input should be"),
        ({"name": "v", "size": 10}, "dataCenterId: is required"),
        ({"size": 10, "dataCenterId": "EU-RO-1"}, "name: is required"),
    ],
)
async def test_volume_refusals(
    api: httpx.AsyncClient, body: dict[str, object], message: str
) -> None:
    await refused(api.post("/v1/networkvolumes", json=body), message)
    assert await ok(api.get("/v1/networkvolumes")) == []


async def test_volume_update_refusals(api: httpx.AsyncClient) -> None:
    v = await volume(api)
    await refused(api.patch(f"/v1/networkvolumes/{v['id']}", json={"size": 4001}), "size:")
    await refused(api.patch(f"/v1/networkvolumes/{v['id']}", json={"name": None}), "name: must")
    assert await ok(api.get("/v1/networkvolumes")) == [v]


async def test_an_attached_volume_cannot_be_deleted(api: httpx.AsyncClient) -> None:
    v = await volume(api, dataCenterId="EU-CZ-1")
    p = await pod(api, networkVolumeId=v["id"])
    await refused(api.delete(f"/v1/networkvolumes/{v['id']}"), f"attached to pod {p['id']}")
    await ok(api.delete(f"/v1/pods/{p['id']}"), 204)
    await ok(api.delete(f"/v1/networkvolumes/{v['id']}"), 204)

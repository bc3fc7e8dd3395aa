"""Every row of the resource table (``nbext.models.v2.RESOURCES``) is served: its list
answer wraps records under its list key, and an id it does not know is a 404 naming the
resource, from whichever area of the domain declares the row its ``ROW``."""

from __future__ import annotations

import httpx
import pytest

from nbext.models.v2 import RESOURCES, Rest

from .conftest import ok

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("row", RESOURCES, ids=[row.segment for row in RESOURCES])
async def test_each_row_lists_and_refuses_an_unknown_id(api: httpx.AsyncClient, row: Rest) -> None:  # type: ignore[type-arg]
    assert (await ok(api.get(f"/v2/{row.segment}"))) == {row.list_key: []}
    asked = [api.delete(f"/v2/{row.segment}/nope")]
    if "get" in row.operations:
        asked.append(api.get(f"/v2/{row.segment}/nope"))
    for answer in asked:
        problem = (await answer).json()
        assert problem["status"] == 404 and row.what in problem["detail"], problem

"""REST v1's keywords are not taken: Python's own ``TypeError`` names the keyword, and
nothing reaches the service (the emulator is left as empty as it started)."""

from __future__ import annotations

import pytest

from .conftest import V2Harness

pytestmark = pytest.mark.anyio


async def test_a_v1_keyword_is_a_type_error_and_sends_nothing(v2: V2Harness) -> None:
    c = v2.client
    calls = [
        (c.templates.create, {"name": "t", "image_name": "img:1"}),
        (c.endpoints.create, {"name": "e", "image": "echo", "workers_max": 2}),
        (c.pods.create, {"name": "p", "image": "img:1", "gpu_type_ids": ["NVIDIA A40"]}),
    ]
    for method, keywords in calls:
        old = next(name for name in keywords if name not in ("name", "image"))
        with pytest.raises(TypeError, match=f"unexpected keyword argument '{old}'"):
            await v2.call(method, **keywords)
    assert await v2.call(c.templates.list) == []
    assert await v2.call(c.endpoints.list) == []
    assert await v2.call(c.pods.list) == []
    assert not hasattr(c.billing, "endpoints")  # v1's name for billing.serverless

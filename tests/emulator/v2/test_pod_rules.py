"""A v2 pod body's rules and status are the domain's: checked on a fake clock, no HTTP.

The routes only parse and serialise, so what a pod body may say, and what a pod does
over time, is tested here against the domain's ``m.pods`` itself.
"""

from __future__ import annotations

from typing import Any

import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.errors import Conflict
from nbext.emulator.domain.management.pod_status import PROVISIONING_S, STARTING_S
from nbext.emulator.domain.management.refusals import Unprocessable
from nbext.models.v2 import PodAction

from ..conftest import advance
from .conftest import GPU

pytestmark = pytest.mark.anyio


def body(**fields: Any) -> dict[str, Any]:
    return {"name": "p", "image": "img", **fields}


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        ({"gpu": {"id": GPU}, "cpu": {"id": "cpu3c", "vcpuCount": 2}}, "gpu: a pod takes gpu"),
        ({}, "gpu: a pod needs gpu (GPUs) or cpu (CPUs only)"),
        (
            {"gpu": {"id": GPU, "minCudaVersion": "12.4", "allowedCudaVersions": ["12.8"]}},
            "gpu.minCudaVersion: give minCudaVersion or",
        ),
        (
            {
                "cpu": {"id": "cpu3c", "vcpuCount": 2},
                "mounts": {"persistent": {"size": 20, "path": "/w"}},
            },
            "mounts.persistent: a CPU pod has no persistent volume",
        ),
        ({"gpu": {"id": GPU}, "args": "python 'unclosed"}, "args: No closing quotation"),
    ],
)
async def test_a_body_breaking_a_rule_is_refused_by_field_and_makes_nothing(
    emu: Emulator, fields: dict[str, Any], line: str
) -> None:
    pods = emu.management.pods
    with pytest.raises(Unprocessable) as refused:
        pods.create(body(**fields))
    assert refused.value.errors[0].startswith(line), refused.value.errors
    assert len(refused.value.errors) == 1
    assert pods.listing(include_cluster_pods=True) == []


async def test_status_and_actions_follow_the_clock(emu: Emulator) -> None:
    pods = emu.management.pods
    made = pods.view(pods.create(body(gpu={"id": GPU})))
    assert (made["status"], made["actions"]) == ("PROVISIONING", ["stop", "terminate"])
    with pytest.raises(Conflict, match=r"cannot start pod \w+, which is PROVISIONING"):
        pods.act(made["id"], PodAction.START)
    await advance(emu, PROVISIONING_S + STARTING_S)
    assert pods.get(made["id"])["status"] == "RUNNING"
    stopped = pods.act(made["id"], PodAction.STOP)
    assert stopped is not None and pods.view(stopped)["status"] == "EXITED"
    assert pods.act(made["id"], PodAction.TERMINATE) is None
    assert pods.listing(include_cluster_pods=False) == []

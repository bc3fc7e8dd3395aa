"""Restarts in process: two ``Emulator`` objects on one SQLite file, one after the other.

The subprocess test (``test_persistence``) proves the whole command line; these pin the
details: what ``--endpoint`` does to an endpoint that came back, and that usage (open
intervals included) carries over.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nbext.emulator import Emulator, FakeClock
from nbext.emulator.domain.management import catalog
from nbext.emulator.domain.store_port import CorruptRecord
from nbext.models import JobSubmission

from ..conftest import client_for

pytestmark = pytest.mark.anyio

KEY = "rpa_RESTART000000000000000000000000000000000"


def emulator(db: Path, clock: FakeClock) -> Emulator:
    emu = Emulator(api_key=KEY, clock=clock, db=db)
    emu.bind()
    return emu


async def billed_ms(emu: Emulator) -> list[int]:
    """The time ``/v1/billing/pods`` bills, record by record."""
    async with client_for(emu, headers={"Authorization": f"Bearer {KEY}"}) as http:
        response = await http.get("/v1/billing/pods")
    assert response.status_code == 200, response.text
    return [record["timeBilledMs"] for record in response.json()]


async def test_deploy_takes_back_a_restored_endpoint(tmp_path: Path) -> None:
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    first.deploy("echo", endpoint_id="a")
    first.deploy(endpoint_id="h", handler=lambda job: "one")
    first.management.endpoints.change("a", {"workers_max": 7})
    first.close()

    second = emulator(db, clock)
    assert second.deploy("echo", endpoint_id="a") == "a"  # no "already exists"
    assert second.jobs.endpoints["a"].workers_max == 7  # and nothing was reset
    second.deploy("sleep", endpoint_id="a")  # another image: the endpoint runs it now
    assert second.jobs.endpoints["a"].image == "sleep"
    record = second.management.endpoints.get("a")
    assert second.management.templates.get(record.template_id).image == "sleep"
    assert record.version == 1
    second.deploy(endpoint_id="h", handler=lambda job: "two")
    submission = JobSubmission.model_validate({"input": {}})
    result = await second.jobs.run_sync("h", submission, 5000)
    assert result["output"] == "two"
    second.close()


async def test_a_v1_endpoint_keeps_its_templates_image(tmp_path: Path) -> None:
    emu = emulator(tmp_path / "s.db", FakeClock())
    endpoint = emu.management.endpoints.add("demo-echo", {})
    with pytest.raises(ValueError, match="change that template's imageName"):
        emu.deploy("sleep", endpoint_id=endpoint.id)
    assert emu.jobs.endpoints[endpoint.id].image == "echo"
    emu.close()


async def test_usage_and_open_intervals_survive(tmp_path: Path) -> None:
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    gpu = {"id": str(catalog.DEFAULT_GPU_TYPE)}
    pod = first.management.pods.create({"name": "p", "image": "i", "gpu": gpu})
    clock.step(3600)
    first.close()
    clock.step(3600)  # the emulator was down; the pod stayed RUNNING all along
    second = emulator(db, clock)
    assert await billed_ms(second) == [7_200_000]
    second.management.pods.move(pod.id, "stop")
    clock.step(3600)
    assert await billed_ms(second) == [7_200_000]
    second.close()


async def test_a_job_running_at_a_restart_runs_again_with_its_later_ttl(tmp_path: Path) -> None:
    """A running job's worker dies with the emulator: it comes back queued and starts on a
    new worker; a TTL set while it ran is kept, still counted from its submission."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, FakeClock(clock.now()))
    first.deploy("sleep", endpoint_id="s", workers={"min": 0, "max": 1})
    submission = JobSubmission.model_validate({"input": {"seconds": 300}})
    job = first.jobs.submit("s", submission, sync=False)
    assert job.status.value == "IN_PROGRESS"
    first.jobs.status("s", job.id, ttl_ms=120_000)
    assert job.task is not None
    job.task.cancel()  # the worker dies with the emulator, which stops here
    await first.advance_async(0)
    first.close()

    clock.step(30)
    second = emulator(db, clock)
    second.deploy("sleep", endpoint_id="s")
    await second.advance_async(0)
    again = second.jobs.jobs[job.id]
    assert again.status.value == "IN_PROGRESS" and again.started_at == clock.now()
    assert again.ttl_ms == 120_000
    await second.advance_async(89.999)  # 119.999 s after submission
    assert second.jobs.status("s", job.id).status.value == "IN_PROGRESS"
    await second.advance_async(0.001)
    assert job.id not in second.jobs.jobs
    second.close()


OLD_ROWS = {
    "template": {"id": "tpl1", "view": {"id": "tpl1", "name": "old", "imageName": "img:1"}},
    "endpoint": {"id": "ep1", "view": {"id": "ep1", "templateId": "demo-echo"}, "vcpuCount": 2},
    "pod": {"id": "pod1", "view": {"id": "pod1", "image": "img:1"}, "cloudType": "SECURE"},
    "volume": {"id": "vol1", "name": "data", "size": 25, "dataCenterId": "EU-RO-1"},
}
"""Rows as development builds kept them before records took REST v2's shape (v1's view
beside the record's placement; a volume's ``dataCenterId``). No release wrote them."""


@pytest.mark.parametrize("kind", sorted(OLD_ROWS))
async def test_a_database_in_the_development_builds_v1_layout_is_refused_whole(
    tmp_path: Path, kind: str
) -> None:
    """Refused at start, naming the file, the record, why and the way out; not half read."""
    db, clock = tmp_path / "s.db", FakeClock()
    first = emulator(db, clock)
    row = OLD_ROWS[kind]
    first.store.put(kind, row["id"], row)
    first.close()
    with pytest.raises(CorruptRecord) as caught:
        emulator(db, clock)
    message = str(caught.value)
    assert message.startswith(f"{db}: stored record {kind} {row['id']!r} ")
    assert "kept in v1's shape, as development builds did" in message
    assert "no release wrote it" in message and "start on a new --db file" in message

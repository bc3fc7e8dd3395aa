"""Webhook delivery under hostile receivers: bounded per receiver, nothing dropped, records
pruned with their job, and the opt-in guard against link-local and metadata addresses.

Before the fix every webhook was a task of its own sharing one HTTP pool: a receiver
answering in 2 s made 5,000 ``/runsync`` jobs take 311 s instead of 9, 80 % of the
webhooks failed in the pool without leaving, and delivery records outlived their jobs.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import FakeClock, settle
from nbext.emulator.domain.webhooks import NotSent, WebhookDispatcher
from nbext.emulator.webhook_sender import forbidden

from ..conftest import MakeEmulator, Receiver, advance, status_of, submit, until

pytestmark = pytest.mark.anyio


async def test_a_hanging_receiver_holds_at_most_its_concurrency(
    make_emulator: MakeEmulator, receiver: Receiver, http: httpx.AsyncClient
) -> None:
    emu: Emulator = make_emulator(webhook_concurrency=3, rate_limit=False)
    receiver.hold.clear()
    jobs = [submit(emu, "echo", {"n": n}, webhook=receiver.url()) for n in range(10)]
    await settle()
    await until(lambda: receiver.arrived == 3, "three webhooks in flight")
    for _ in range(20):  # give any fourth attempt every chance to start
        await settle()
    assert receiver.arrived == 3 and emu.webhooks.pending == 10
    assert [status_of(emu, "echo", j.id)["status"] for j in jobs] == ["COMPLETED"] * 10
    receiver.hold.set()
    await until(lambda: receiver.count() == 10, "every webhook")
    await until(lambda: emu.webhooks.pending == 0, "the queue to empty")
    attempts = emu.webhooks.deliveries
    assert sorted(d.job_id for d in attempts) == sorted(j.id for j in jobs)
    assert all(d.attempt == 1 and d.acknowledged for d in attempts)


async def test_an_attempt_that_never_left_is_not_counted() -> None:
    clock = FakeClock()
    calls: list[str] = []

    async def send(url: str, body: dict[str, Any]) -> int:
        calls.append(url)
        if len(calls) <= 2:
            raise NotSent("no connection free in the pool")
        return 200

    dispatcher = WebhookDispatcher(clock, send, attempts=3)
    dispatcher.dispatch("job-1", "http://127.0.0.1:9/hook", {"id": "job-1"})
    await until(lambda: dispatcher.pending == 0, "the delivery")
    (attempt,) = dispatcher.deliveries
    assert len(calls) == 3 and attempt.attempt == 1 and attempt.acknowledged


async def test_records_go_with_their_jobs_retention(
    emu: Emulator, receiver: Receiver, http: httpx.AsyncClient
) -> None:
    receiver.answers = [500]
    early = submit(emu, "echo", webhook=receiver.url())
    await settle()
    await until(lambda: len(emu.webhooks.records_of(early.id)) == 1, "the first attempt")
    await advance(emu, 10)
    await until(lambda: len(emu.webhooks.records_of(early.id)) == 2, "the retry")
    await advance(emu, 1000)
    late = submit(emu, "echo", webhook=receiver.url())
    await settle()
    await until(lambda: len(emu.webhooks.records_of(late.id)) == 1, "the later job's webhook")
    await advance(emu, 800)  # the first job's 30 min retention ends; the second's goes on
    assert emu.webhooks.records_of(early.id) == []
    listed = (await http.get("/_emulator/webhooks")).json()
    assert [d["job_id"] for d in listed] == [late.id]
    runsync = await http.post("/v2/echo/runsync", json={"input": {}, "webhook": receiver.url()})
    sync_id = runsync.json()["id"]
    await until(lambda: len(emu.webhooks.records_of(sync_id)) == 1, "the runsync webhook")
    await advance(emu, 61)  # a /runsync result is kept for a minute
    assert emu.webhooks.records_of(sync_id) == []


async def test_a_purged_job_takes_its_records_along(emu: Emulator, receiver: Receiver) -> None:
    job = submit(emu, "held", webhook=receiver.url())
    emu.jobs.cancel("held", job.id)
    await until(lambda: len(emu.webhooks.records_of(job.id)) == 1, "the webhook")
    emu.jobs.reset()
    assert emu.webhooks.deliveries == []


async def test_the_guard_refuses_metadata_addresses_once_without_retries(
    make_emulator: MakeEmulator, receiver: Receiver
) -> None:
    emu: Emulator = make_emulator(webhook_guard=True)
    job = submit(emu, "echo", webhook="http://169.254.169.254/latest/meta-data/")
    allowed = submit(emu, "echo", webhook=receiver.url())
    await settle()
    await until(lambda: len(emu.webhooks.deliveries) == 2, "both attempts")
    await advance(emu, 60)
    (refused,) = emu.webhooks.records_of(job.id)
    assert refused.status_code is None and not refused.acknowledged
    assert refused.error is not None and "refused" in refused.error
    assert "169.254.169.254" in refused.error and "--webhook-guard" in refused.error
    assert emu.webhooks.records_of(allowed.id)[0].acknowledged  # loopback is fine


@pytest.mark.parametrize(
    ("address", "refused"),
    [
        ("169.254.169.254", True),
        ("169.254.0.1", True),
        ("fe80::1%eth0", True),
        ("::ffff:169.254.169.254", True),
        ("fd00:ec2::254", True),
        ("100.100.100.200", True),
        ("127.0.0.1", False),
        ("10.0.0.7", False),
        ("::1", False),
        ("93.184.216.34", False),
    ],
)
def test_what_the_guard_refuses(address: str, refused: bool) -> None:
    assert forbidden(address) is refused

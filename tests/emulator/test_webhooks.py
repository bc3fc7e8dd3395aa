"""Webhooks, delivered over real HTTP to a receiver on 127.0.0.1.

On every final state the emulator POSTs the ``/status`` body; only 200 acknowledges;
otherwise it tries twice more, ``webhook_retry_delay`` seconds of its clock apart; every
attempt is recorded; a slow receiver never holds up the queue.
"""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from nbext.emulator import Emulator
from nbext.emulator.domain.clock import settle

from .conftest import MakeEmulator, Receiver, advance, status_of, submit, until

pytestmark = pytest.mark.anyio


async def delivered(emu: Emulator, n: int) -> list[dict[str, Any]]:
    """Wait until ``n`` attempts are recorded (the POST is real I/O), then return them."""
    await until(lambda: len(emu.webhooks.deliveries) >= n, f"{n} webhook attempts")
    await settle()
    return [d.to_dict() for d in emu.webhooks.deliveries]


@pytest.mark.parametrize("state", ["COMPLETED", "FAILED", "TIMED_OUT", "CANCELLED"])
async def test_every_final_state_posts_the_status_body(
    emu: Emulator, receiver: Receiver, state: str
) -> None:
    hook = {"webhook": receiver.url()}
    if state == "COMPLETED":
        endpoint, job = "echo", submit(emu, "echo", {"v": 1}, **hook)
    elif state == "FAILED":
        endpoint, job = "fail", submit(emu, "fail", {"message": "x"}, **hook)
    elif state == "TIMED_OUT":
        policy = {"executionTimeout": 5_000}
        endpoint, job = "sleep", submit(emu, "sleep", {"seconds": 60}, policy=policy, **hook)
        await settle()
        await advance(emu, 5)
    else:
        endpoint, job = "held", submit(emu, "held", **hook)
        emu.jobs.cancel("held", job.id)
    await settle()
    (attempt,) = await delivered(emu, 1)
    assert receiver.received == [{"path": "/hook", "body": status_of(emu, endpoint, job.id)}]
    assert attempt["body"]["status"] == state
    assert attempt["acknowledged"] is True and attempt["status_code"] == 200


async def test_no_webhook_is_sent_before_the_job_ends(emu: Emulator, receiver: Receiver) -> None:
    job = submit(emu, "sleep", {"seconds": 10}, webhook=receiver.url())
    await settle()
    await advance(emu, 9)
    assert emu.webhooks.deliveries == [] and receiver.count() == 0
    await advance(emu, 1)
    (attempt,) = await delivered(emu, 1)
    assert attempt["job_id"] == job.id and attempt["body"]["output"] == {"slept": 10}


async def test_a_job_without_webhook_sends_nothing(emu: Emulator, receiver: Receiver) -> None:
    submit(emu, "echo")
    await settle()
    await advance(emu, 60)
    assert emu.webhooks.deliveries == [] and receiver.count() == 0


async def test_a_failing_receiver_gets_three_attempts_in_all(
    emu: Emulator, receiver: Receiver
) -> None:
    receiver.answers = [500, 500, 500, 500]
    job = submit(emu, "echo", webhook=receiver.url())
    await settle()
    await delivered(emu, 1)
    await advance(emu, 10)
    await delivered(emu, 2)
    await advance(emu, 10)
    attempts = await delivered(emu, 3)
    await advance(emu, 600)  # long after any retry; within the job's retention
    await settle()
    assert receiver.count() == 3 and len(emu.webhooks.deliveries) == 3
    assert [a["attempt"] for a in attempts] == [1, 2, 3]
    assert {a["job_id"] for a in attempts} == {job.id}
    assert [a["status_code"] for a in attempts] == [500, 500, 500]
    assert not any(a["acknowledged"] for a in attempts)
    assert all("only 200 acknowledges" in a["error"] for a in attempts)


async def test_retries_wait_the_delay_setting_on_the_emulators_clock(
    make_emulator: MakeEmulator, receiver: Receiver
) -> None:
    emu = make_emulator(webhook_retry_delay=2.5)
    receiver.answers = [503, 503]
    submit(emu, "echo", webhook=receiver.url())
    await settle()
    (first,) = await delivered(emu, 1)
    await advance(emu, 2.499)
    await settle()
    assert len(emu.webhooks.deliveries) == 1
    await advance(emu, 0.001)
    await delivered(emu, 2)
    await advance(emu, 2.5)
    attempts = await delivered(emu, 3)
    times = [a["at"] - first["at"] for a in attempts]
    assert times == pytest.approx([0, 2.5, 5.0])
    assert [a["acknowledged"] for a in attempts] == [False, False, True]


@pytest.mark.parametrize("code", [201, 202, 204, 301, 404])
async def test_only_200_acknowledges(emu: Emulator, receiver: Receiver, code: int) -> None:
    receiver.answers = [code]
    submit(emu, "echo", webhook=receiver.url())
    await settle()
    await delivered(emu, 1)
    await advance(emu, 10)
    attempts = await delivered(emu, 2)
    assert [(a["status_code"], a["acknowledged"]) for a in attempts] == [
        (code, False),
        (200, True),
    ]
    await advance(emu, 60)
    assert receiver.count() == 2


async def test_an_acknowledged_webhook_is_not_sent_again(emu: Emulator, receiver: Receiver) -> None:
    submit(emu, "echo", webhook=receiver.url())
    await settle()
    await delivered(emu, 1)
    await advance(emu, 600)  # long after any retry; within the job's retention
    await settle()
    assert receiver.count() == 1 and len(emu.webhooks.deliveries) == 1


async def test_an_unreachable_receiver_is_recorded_on_every_attempt(emu: Emulator) -> None:
    # a socket bound but not listening refuses connections, and holds its port so that
    # no other process of a loaded machine can start answering there mid-test
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        submit(emu, "echo", webhook=f"http://127.0.0.1:{held.getsockname()[1]}/hook")
        await settle()
        await delivered(emu, 1)
        await advance(emu, 10)
        await delivered(emu, 2)
        await advance(emu, 10)
        attempts = await delivered(emu, 3)
    assert [a["status_code"] for a in attempts] == [None, None, None]
    assert all(a["error"] and "Connect" in a["error"] for a in attempts)


async def test_a_hanging_receiver_never_blocks_the_queue(emu: Emulator, receiver: Receiver) -> None:
    receiver.hold.clear()  # the receiver takes the request and does not answer
    first = submit(emu, "echo", {"n": 1}, webhook=receiver.url())
    await settle()
    await until(lambda: receiver.arrived == 1, "the receiver to hold the first webhook")
    later = [submit(emu, "echo", {"n": n}) for n in range(2, 6)]
    await settle()
    assert status_of(emu, "echo", first.id)["status"] == "COMPLETED"
    outputs = [status_of(emu, "echo", j.id)["output"] for j in later]
    assert outputs == [{"n": n} for n in range(2, 6)]
    assert emu.webhooks.deliveries == []
    receiver.hold.set()
    (attempt,) = await delivered(emu, 1)
    assert attempt["acknowledged"] is True


async def test_deliveries_are_listed_under_the_control_interface(
    emu: Emulator, receiver: Receiver, http: httpx.AsyncClient
) -> None:
    receiver.answers = [500]
    job = submit(emu, "echo", webhook=receiver.url("/a"))
    await settle()
    await delivered(emu, 1)
    await advance(emu, 10)
    await delivered(emu, 2)
    listed = (await http.get("/_emulator/webhooks")).json()
    assert [(d["job_id"], d["url"], d["attempt"], d["status_code"]) for d in listed] == [
        (job.id, receiver.url("/a"), 1, 500),
        (job.id, receiver.url("/a"), 2, 200),
    ]


async def test_the_webhook_body_never_carries_s3_config(emu: Emulator, receiver: Receiver) -> None:
    s3 = {"accessId": "id", "accessSecret": "webhook-secret", "bucketName": "b"}
    submit(emu, "echo", {"q": 1}, webhook=receiver.url(), s3Config=s3)
    await settle()
    await delivered(emu, 1)
    assert "webhook-secret" not in repr(receiver.received)
    assert "s3Config" not in receiver.received[0]["body"]

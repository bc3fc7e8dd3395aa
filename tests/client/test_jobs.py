"""Every job method, sync and async, in-process and over a real server, every final state."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anyio
import pytest

from nbext.client import (
    Conflict,
    JobCancelled,
    JobFailed,
    JobTimedOut,
    NotFound,
    PayloadTooLarge,
    Timeout,
)
from nbext.emulator import current_job
from nbext.models import RUN_BODY_LIMIT, CancelResult, Health, JobResult, JobStatus, PurgeResult

from .conftest import Harness, MakeHarness

pytestmark = pytest.mark.anyio
S = JobStatus


async def test_run_then_wait_returns_the_typed_result(h: Harness) -> None:
    job = await h.call(h.endpoint("echo").run, {"x": 1, "text": "héllo"})
    assert job.endpoint_id == "echo" and h.job(job.id) is not None
    result = await h.call(job.wait, timeout=5)
    assert isinstance(result, JobResult)
    assert result.status is S.COMPLETED and result.output == {"x": 1, "text": "héllo"}
    assert result.id == job.id
    again = await h.call(job.status)
    assert again.status is S.COMPLETED and again.output == result.output
    assert job.id in repr(job) and "COMPLETED" in repr(job)


async def test_run_sync_returns_the_result_of_a_job_done_within_wait(h: Harness) -> None:
    result = await h.call(h.endpoint("echo").run_sync, {"n": 7}, wait=5, timeout=10)
    assert result.status is S.COMPLETED and result.output == {"n": 7}
    assert result.id.startswith("sync-")


async def test_failed_job_raises_job_failed_with_the_error_text(h: Harness) -> None:
    job = await h.call(h.endpoint("fail").run, {"message": "the GPU caught fire"})
    with pytest.raises(JobFailed) as info:
        await h.call(job.wait, timeout=5)
    err = info.value
    assert err.job_id == job.id and err.endpoint_id == "fail"
    assert err.status is S.FAILED and "the GPU caught fire" in (err.error or "")
    assert "the GPU caught fire" in str(err) and job.id in str(err)
    result = await h.call(job.wait, timeout=5, raise_on_failure=False)
    assert result.status is S.FAILED and "the GPU caught fire" in (result.error or "")


async def test_run_sync_of_a_failing_job_raises_or_returns(h: Harness) -> None:
    with pytest.raises(JobFailed, match="boom"):
        await h.call(h.endpoint("fail").run_sync, {"message": "boom"}, wait=5)
    result = await h.call(
        h.endpoint("fail").run_sync, {"message": "boom"}, wait=5, raise_on_failure=False
    )
    assert result.status is S.FAILED and "boom" in (result.error or "")


async def test_timed_out_job_raises_job_timed_out(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 60}, execution_timeout=5)
    await h.until(lambda: h.job(job.id).status is S.IN_PROGRESS, "job started")
    await h.advance(6)
    with pytest.raises(JobTimedOut) as info:
        await h.call(job.wait, timeout=5)
    assert info.value.status is S.TIMED_OUT and "5000 ms" in (info.value.error or "")


async def test_cancelled_job_raises_job_cancelled_and_its_stream_ends(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 60})
    await h.until(lambda: h.job(job.id).status is S.IN_PROGRESS, "job started")
    answer = await h.call(job.cancel)
    assert isinstance(answer, CancelResult) and answer.status is S.CANCELLED
    with pytest.raises(JobCancelled) as info:
        await h.call(job.wait, timeout=5)
    assert info.value.job_id == job.id
    assert await h.collect(job.stream(timeout=5)) == []  # ends at once, no endless loop
    again = await h.call(job.cancel)  # cancelling a cancelled job answers the same
    assert again.status is S.CANCELLED


async def test_cancel_of_a_finished_job_is_a_conflict(h: Harness) -> None:
    job = await h.call(h.endpoint("echo").run, {})
    await h.call(job.wait, timeout=5)
    with pytest.raises(Conflict) as info:
        await h.call(job.cancel)
    assert info.value.status == 409 and info.value.job_id == job.id


async def test_retry_runs_a_failed_job_again_under_the_same_id(h: Harness) -> None:
    attempts: list[str] = []

    def flaky(job: dict[str, Any]) -> dict[str, Any]:
        attempts.append(job["id"])
        if len(attempts) == 1:
            raise RuntimeError("transient")
        return {"ok": True, "input": job["input"]}

    h.emu.deploy(handler=flaky, endpoint_id="flaky")
    job = await h.call(h.endpoint("flaky").run, {"v": 1})
    first = await h.call(job.wait, timeout=5, raise_on_failure=False)
    assert first.status is S.FAILED
    same = await h.call(job.retry)
    assert same is job
    result = await h.call(job.wait, timeout=5)
    assert result.output == {"ok": True, "input": {"v": 1}} and result.id == job.id
    assert attempts == [job.id, job.id]
    health = await h.call(h.endpoint("flaky").health)
    assert health.jobs.retried == 1
    with pytest.raises(Conflict):
        await h.call(job.retry)  # COMPLETED jobs cannot be retried


async def test_wait_has_a_deadline_that_names_the_job(h: Harness) -> None:
    job = await h.call(h.endpoint("sleep").run, {"seconds": 30})
    started = time.monotonic()
    with pytest.raises(Timeout) as info:
        await h.call(job.wait, timeout=0.3)
    assert time.monotonic() - started < 2.0
    err = info.value
    assert err.job_id == job.id and job.id in str(err) and "0.3 s" in str(err)
    # a fresh job is waited for on the server's /stream long-poll, so what was last
    # seen of it may be its submission's IN_QUEUE
    assert err.last_status in (S.IN_QUEUE, S.IN_PROGRESS)
    assert str(err.last_status) in str(err)
    assert isinstance(err, TimeoutError)
    # The job went on; once it ends, waiting again returns its result.
    await h.advance(30)
    result = await h.call(job.wait, timeout=5)
    assert result.output == {"slept": 30}


async def test_a_handle_on_someone_elses_job_polls_and_has_a_deadline(h: Harness) -> None:
    submitted = await h.call(h.endpoint("sleep").run, {"seconds": 10})
    other = h.endpoint("sleep").job(submitted.id)
    with pytest.raises(Timeout, match=submitted.id):
        await h.call(other.wait, timeout=0.2)
    assert h.waiters(submitted.id) == 0  # it never held /stream open: it polled /status
    await h.advance(10)
    assert (await h.call(other.wait, timeout=5)).output == {"slept": 10}


async def test_run_sync_goes_on_waiting_past_wait_without_resubmitting(h: Harness) -> None:
    outcome: dict[str, Any] = {}

    async def runner() -> None:
        outcome["result"] = await h.call(
            h.endpoint("sleep").run_sync, {"seconds": 5}, wait=1, timeout=30
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner)
        await h.until(lambda: len(h.emu.jobs.jobs) == 1, "the /runsync job")
        (job_id,) = h.emu.jobs.jobs
        await h.until(lambda: h.waiters(job_id) == 1, "/runsync holding the request")
        await h.advance(1)  # /runsync's wait ends: it answers IN_PROGRESS
        await h.until(lambda: h.waiters(job_id) == 1, "the client waiting on the job")
        await h.advance(4)  # the job ends
    result = outcome["result"]
    assert result.status is S.COMPLETED and result.output == {"slept": 5}
    assert result.id == job_id and job_id.startswith("sync-")
    assert len(h.emu.jobs.jobs) == 1  # never submitted again


async def test_run_sync_deadline_raises_timeout(h: Harness) -> None:
    with pytest.raises(Timeout) as info:
        await h.call(h.endpoint("sleep").run_sync, {"seconds": 30}, wait=10, timeout=0.3)
    assert "id never arrived" in str(info.value)
    await h.advance(30)  # let the emulator answer the request the client gave up on


async def test_stream_yields_outputs_in_order_and_ends_with_the_job(h: Harness) -> None:
    text = "the quick brown fox jumps"
    job = await h.call(h.endpoint("stream").run, {"text": text})
    outputs = await h.collect(job.stream(timeout=5))
    assert "".join(o["text"][0] for o in outputs) == text
    assert [o["output_tokens"] for o in outputs] == [1, 2, 3, 4, 5]
    result = await h.call(job.wait, timeout=5)
    assert result.output == outputs  # aggregated stream


async def test_stream_chunks_keep_their_metrics(h: Harness) -> None:
    job = await h.call(h.endpoint("stream").run, {"text": "a b"})
    chunks = await h.collect(job.stream_chunks(timeout=5))
    assert [c.metrics["stream_index"] for c in chunks] == [0, 1]
    assert chunks[0].metrics["scenario"] == "stream-text"


async def test_wait_keeps_the_chunks_it_read_for_stream(h: Harness) -> None:
    job = await h.call(h.endpoint("stream").run, {"text": "one two three"})
    await h.call(job.wait, timeout=5)
    outputs = await h.collect(job.stream(timeout=5))
    assert "".join(o["text"][0] for o in outputs) == "one two three"


async def test_stream_reassembles_outputs_split_over_chunks(h: Harness) -> None:
    big_text = "αβγ-" * 700_000  # about 2.8 MB of UTF-8: three parts
    big_value = {"rows": [{"i": i, "s": "x" * 20} for i in range(60_000)]}  # JSON over 1 MB

    async def producer(job: dict[str, Any]) -> Any:
        yield "small"
        yield big_text
        yield big_value
        yield {"done": True}

    h.emu.deploy(handler=producer, endpoint_id="big")
    job = await h.call(h.endpoint("big").run, {})
    outputs = await h.collect(job.stream(timeout=20))
    assert len(outputs) == 4
    assert outputs[0] == "small" and outputs[1] == big_text
    assert outputs[2] == big_value and outputs[3] == {"done": True}


async def test_stream_of_a_job_cancelled_midway_ends(h: Harness) -> None:
    async def slow_words(job: dict[str, Any]) -> Any:
        yield "first"
        await current_job().sleep(100)
        yield "never"

    h.emu.deploy(handler=slow_words, endpoint_id="slow")
    job = await h.call(h.endpoint("slow").run, {})
    seen: list[Any] = []

    async def reader() -> None:
        seen.extend(await h.collect(job.stream(timeout=10)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        await h.until(lambda: h.job(job.id).stream_cursor == 1, "the first chunk read")
        await h.call(job.cancel)
    assert seen == ["first"]


async def test_health_and_purge_queue(h: Harness) -> None:
    held = h.endpoint("held")
    jobs = [await h.call(held.run, {"i": i}) for i in range(3)]
    health = await h.call(held.health)
    assert isinstance(health, Health) and health.jobs.in_queue == 3
    purged = await h.call(held.purge_queue)
    assert isinstance(purged, PurgeResult) and purged.removed == 3
    with pytest.raises(NotFound) as info:
        await h.call(jobs[0].status)
    assert info.value.status == 404 and info.value.job_id == jobs[0].id
    assert (await h.call(held.health)).jobs.in_queue == 0


async def test_job_removed_by_its_ttl_is_not_found(h: Harness) -> None:
    job = await h.call(h.endpoint("held").run, {}, ttl=10)
    await h.advance(11)
    with pytest.raises(NotFound, match=job.id):
        await h.call(job.wait, timeout=5)


async def test_webhook_policy_and_s3_config_reach_the_service(h: Harness) -> None:
    def inspect_job(job: dict[str, Any]) -> dict[str, Any]:
        return {"bucket": job.get("s3Config", {}).get("bucketName")}

    h.emu.deploy(handler=inspect_job, endpoint_id="inspect")
    queued = await h.call(
        h.endpoint("held").run, {"q": 1}, execution_timeout=30, ttl=3600, low_priority=True
    )
    record = h.job(queued.id)
    assert record.ttl_ms == 3_600_000 and record.execution_timeout_ms == 30_000
    assert record.low_priority is True
    job = await h.call(
        h.endpoint("inspect").run,
        {},
        webhook="http://127.0.0.1:9/hook",
        s3_config={"bucketName": "models", "accessSecret": "s3-secret"},
    )
    result = await h.call(job.wait, timeout=5)
    assert result.output == {"bucket": "models"}
    assert "s3-secret" not in result.model_dump_json() and "s3Config" not in str(result)
    await h.until(lambda: len(h.emu.webhooks.deliveries) >= 1, "a webhook attempt")
    assert h.emu.webhooks.deliveries[0].url == "http://127.0.0.1:9/hook"


async def test_a_body_over_the_limit_is_refused_before_sending(h: Harness) -> None:
    huge = {"blob": "x" * (RUN_BODY_LIMIT + 1)}
    with pytest.raises(PayloadTooLarge) as info:
        await h.call(h.endpoint("echo").run, huge)
    assert info.value.status == 413 and info.value.sent is False
    assert h.emu.jobs.jobs == {}
    # /runsync allows 20 MB: the same body is sent and runs.
    result = await h.call(h.endpoint("echo").run_sync, huge, wait=30, timeout=60)
    assert result.status is S.COMPLETED and len(result.output["blob"]) == RUN_BODY_LIMIT + 1


async def test_client_and_handles_are_context_managers_and_reprs(make: MakeHarness) -> None:
    h = await make()
    client = h.new_client()
    if h.is_async:
        async with client as c:
            assert (await c.endpoint("echo").run_sync({"a": 1}, wait=5)).output == {"a": 1}
    else:
        with client as c:
            result = await h.call(c.endpoint("echo").run_sync, {"a": 1}, wait=5)
            assert result.output == {"a": 1}
    assert repr(h.endpoint("echo")).endswith("Endpoint('echo')")


async def test_invalid_submissions_are_refused_locally(h: Harness) -> None:
    from nbext.client import BadRequest

    for bad in (
        {"input": ["not", "an", "object"]},
        {"input": {}, "ttl": 1},
        {"input": {}, "execution_timeout": 10**9},
        {"input": {}, "webhook": "ftp://example.com"},
        {"input": {"nan": float("nan")}},
    ):
        kw = dict(bad)
        value = kw.pop("input")
        with pytest.raises(BadRequest) as info:
            await h.call(h.endpoint("echo").run, value, **kw)
        assert info.value.sent is False
    assert h.emu.jobs.jobs == {}


async def test_async_stream_is_closed_when_the_consumer_stops(make: MakeHarness) -> None:
    h = await make()
    if not h.is_async:
        pytest.skip("async iterator protocol")
    job = await h.endpoint("stream").run({"text": "a b c d"})
    stream = job.stream(timeout=5)
    first = await stream.__anext__()
    assert first["text"] == ["a"]
    await stream.aclose()
    await asyncio.sleep(0)


def pausing_after_first(gate: threading.Event) -> Any:
    """A handler that yields one word, then waits for ``gate`` before its second."""

    def pausing(job: dict[str, Any]) -> Any:
        yield "first"
        yield "released" if gate.wait(timeout=30) else "not before the job's end"

    return pausing


@pytest.mark.parametrize("method", ["stream", "stream_batches"])
async def test_a_chunk_reaches_the_reader_while_the_job_still_runs(h: Harness, method: str) -> None:
    """A chunk is handed over once the service has it, not when the job next yields or
    ends: the handler goes on only when the reader holds its first word. (How soon is
    measured, not asserted: ``benchmarks/client_vs_sdk.py``, part 2.)"""
    gate = threading.Event()
    h.emu.deploy(handler=pausing_after_first(gate), endpoint_id="pausing")
    job = await h.call(h.endpoint("pausing").run, {})
    seen: list[Any] = []

    def take(item: Any) -> None:
        seen.append(item)
        gate.set()

    if h.is_async:
        async for item in getattr(job, method)(timeout=60):
            take(item)
    else:

        def read() -> None:
            for item in getattr(job, method)(timeout=60):
                take(item)

        await anyio.to_thread.run_sync(read)
    if method == "stream":
        assert seen == ["first", "released"]
    else:  # one answer each: the second word did not exist when the first was read
        assert [[c.output for c in batch] for batch in seen] == [["first"], ["released"]]
        assert [batch[0].metrics["stream_index"] for batch in seen] == [0, 1]


async def test_stream_batches_hand_over_what_is_at_hand_in_one_list(h: Harness) -> None:
    job = await h.call(h.endpoint("stream").run, {"text": "one two three four"})
    await h.call(job.wait, timeout=5)  # reads the whole stream and keeps it
    batches = await h.collect(job.stream_batches(timeout=5))
    assert len(batches) == 1
    assert "".join(c.output["text"][0] for c in batches[0]) == "one two three four"

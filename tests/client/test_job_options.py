"""Job options are one value, ``JobOptions``, from the caller to the body of /run and
/runsync; its fields as keywords make the same value (issue 31)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

import pytest

from nbext.client import BadRequest, JobOptions, JobOptionWords, PayloadTooLarge
from nbext.client._calls import submission_body

from .conftest import Harness

pytestmark = pytest.mark.anyio


def test_a_body_is_made_one_way_and_refused_as_the_service_would() -> None:
    from collections import OrderedDict

    value = {"text": "héllo", "n": [1, 2.5, None], "nested": {"ok": True}}
    body = submission_body("e", "run", value, JobOptions())
    assert body == submission_body("e", "run", OrderedDict(value), JobOptions())
    assert body == '{"input":{"text":"héllo","n":[1,2.5,null],"nested":{"ok":true}}}'.encode()
    with pytest.raises(BadRequest, match=r"input\.1\.\[key\]"):
        submission_body("e", "run", {1: "a"}, JobOptions())
    with pytest.raises(BadRequest, match="not JSON"):
        submission_body("e", "run", {"x": float("nan")}, JobOptions())
    with pytest.raises(PayloadTooLarge):
        submission_body("e", "run", {"x": "a" * (11 * 1024 * 1024)}, JobOptions())


WIRE = {
    "webhook": ("http://127.0.0.1:9/hook", {"webhook": "http://127.0.0.1:9/hook"}),
    "execution_timeout": (30, {"policy": {"executionTimeout": 30_000, "lowPriority": False}}),
    "ttl": (dt.timedelta(minutes=1), {"policy": {"ttl": 60_000, "lowPriority": False}}),
    "low_priority": (True, {"policy": {"lowPriority": True}}),
    "s3_config": ({"bucketName": "models"}, {"s3Config": {"bucketName": "models"}}),
}
"""Each option of a job, a value, and what it puts in the body besides the input."""


def test_every_job_option_reaches_the_body() -> None:
    # An option added to JobOptions but not to the body fails here: WIRE must name it.
    names = [option.name for option in dataclasses.fields(JobOptions)]
    assert sorted(WIRE) == sorted(names) == sorted(JobOptionWords.__annotations__)
    for name, (value, wire) in WIRE.items():
        body = submission_body("e", "runsync", {"x": 1}, JobOptions(**{name: value}))
        assert json.loads(body) == {"input": {"x": 1}, **wire}, name
    every = JobOptions(**{name: value for name, (value, _) in WIRE.items()})
    sent = json.loads(submission_body("e", "run", {}, every))
    assert set(sent) == {"input", "webhook", "policy", "s3Config"}
    assert sent["policy"] == {"executionTimeout": 30_000, "ttl": 60_000, "lowPriority": True}


def test_options_and_their_keywords_make_one_value() -> None:
    base = JobOptions(ttl=60, low_priority=True)
    assert JobOptions.of(None, {}) == JobOptions()
    assert JobOptions.of(base, {}) is base
    assert JobOptions.of(base, {"ttl": 30}) == JobOptions(ttl=30, low_priority=True)
    with pytest.raises(TypeError, match=r"unknown job option 'tll' \(accepted: webhook, "):
        JobOptions.of(None, {"tll": 30})  # type: ignore[typeddict-unknown-key]
    with pytest.raises(TypeError, match="options must be a JobOptions, got dict"):
        JobOptions.of({"ttl": 30}, {})  # type: ignore[arg-type]


async def test_a_maps_options_reach_every_job_and_keywords_mean_the_same(h: Harness) -> None:
    options = JobOptions(execution_timeout=30, ttl=3600)
    items = await h.collect(h.endpoint("echo").map([{"i": i} for i in range(3)], options))
    assert sorted(i for i, _ in items) == [0, 1, 2]
    worded = await h.call(h.endpoint("held").run, {}, ttl=3600, execution_timeout=30)
    both = await h.call(h.endpoint("held").run, {}, options, low_priority=True)
    jobs = [h.job(result.id) for _, result in items] + [h.job(worded.id), h.job(both.id)]
    assert all(job.ttl_ms == 3_600_000 and job.execution_timeout_ms == 30_000 for job in jobs)
    assert [job.low_priority for job in jobs] == [False, False, False, False, True]


async def test_an_option_out_of_range_is_refused_before_anything_is_sent(h: Harness) -> None:
    with pytest.raises(
        BadRequest, match="ttl: must be between 10000 and 604800000 ms, got 1000"
    ) as info:
        await h.call(h.endpoint("echo").run, {}, JobOptions(ttl=1))
    assert info.value.sent is False and h.emu.jobs.jobs == {}
    settings: Any = {"ttl": 1}
    with pytest.raises(BadRequest, match=r"map: input #0"):
        await h.collect(h.endpoint("echo").map([{}], **settings))
    assert h.emu.jobs.jobs == {}

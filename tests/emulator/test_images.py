"""The demo images, ``register_image``, and ``Emulator.deploy``'s argument checks."""

from __future__ import annotations

from typing import Any

import pytest

from nbext.emulator import DEMOS, Emulator
from nbext.emulator.domain.clock import settle
from nbext.emulator.domain.word_model import text_pieces

from .conftest import advance, status_of, submit

pytestmark = pytest.mark.anyio


def test_the_demos_are_the_queue_images_and_the_load_balancing_llm_server() -> None:
    assert sorted(n for n, d in DEMOS.items() if d.type == "QUEUE") == [
        "echo",
        "fail",
        "image-gen",
        "llm",
        "sleep",
        "stream-text",
        "text-to-speech",
    ]
    assert [n for n, d in DEMOS.items() if d.type == "LOAD_BALANCER"] == ["llm-lb"]
    assert all((d.handler is None) == (d.type == "LOAD_BALANCER") for d in DEMOS.values())


# ---- echo --------------------------------------------------------------------------------


async def test_echo_returns_its_input(emu: Emulator) -> None:
    payload = {"text": "hi", "n": [1, 2.5, None, True], "nested": {"a": {}}}
    job = submit(emu, "echo", payload)
    await settle()
    assert status_of(emu, "echo", job.id)["output"] == payload


# ---- sleep -------------------------------------------------------------------------------


async def test_sleep_sleeps_on_the_clock_and_returns_the_seconds(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 2.5})
    await settle()
    await advance(emu, 2.499)
    assert job.status.value == "IN_PROGRESS"
    await advance(emu, 0.001)
    body = status_of(emu, "sleep", job.id)
    assert body["output"] == {"slept": 2.5}
    assert body["executionTime"] == 2500


async def test_sleep_defaults_to_one_second(emu: Emulator) -> None:
    job = submit(emu, "sleep")
    await settle()
    await advance(emu, 1)
    assert status_of(emu, "sleep", job.id)["output"] == {"slept": 1.0}


async def test_sleep_of_zero_seconds_completes_without_the_clock_moving(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 0})
    await settle()
    assert status_of(emu, "sleep", job.id)["output"] == {"slept": 0}


@pytest.mark.parametrize("seconds", [-1, "ten", True])
async def test_sleep_with_bad_seconds_fails_naming_the_field(emu: Emulator, seconds: Any) -> None:
    job = submit(emu, "sleep", {"seconds": seconds})
    await settle()
    body = status_of(emu, "sleep", job.id)
    assert body["status"] == "FAILED"
    assert "input.seconds must be a number >= 0" in body["error"]


async def test_sleep_is_cooperative_with_cancel(emu: Emulator) -> None:
    job = submit(emu, "sleep", {"seconds": 100})
    await settle()
    emu.jobs.cancel("sleep", job.id)
    await advance(emu, 100)
    body = status_of(emu, "sleep", job.id)
    assert body["status"] == "CANCELLED" and "output" not in body
    assert emu.jobs.health("sleep").jobs.completed == 0


# ---- fail --------------------------------------------------------------------------------


async def test_fail_fails_with_the_input_message(emu: Emulator) -> None:
    job = submit(emu, "fail", {"message": "out of memory"})
    await settle()
    body = status_of(emu, "fail", job.id)
    assert body["status"] == "FAILED"
    assert body["error"] == "RuntimeError: out of memory"


async def test_fail_without_a_message_still_explains_itself(emu: Emulator) -> None:
    job = submit(emu, "fail")
    await settle()
    assert "always fails" in status_of(emu, "fail", job.id)["error"]


# ---- stream-text -------------------------------------------------------------------------

TEXT = "  The quick brown\tfox jumps\nover the lazy dog.  "


async def test_stream_text_pieces_join_back_into_the_text(emu: Emulator) -> None:
    job = submit(emu, "stream", {"text": TEXT})
    await settle()
    chunks = (await emu.jobs.stream("stream", job.id, 0)).to_wire()["stream"]
    assert "".join(piece for c in chunks for piece in c["output"]["text"]) == TEXT
    assert len(chunks) == 9
    final = status_of(emu, "stream", job.id)["output"]
    assert final == [c["output"] for c in chunks]


async def test_stream_text_chunks_carry_tokens_and_the_seeds_metrics(emu: Emulator) -> None:
    job = submit(emu, "stream", {"text": "one two three", "delay_ms": 500})
    await settle()
    await advance(emu, 1.5)
    chunks = (await emu.jobs.stream("stream", job.id, 0)).to_wire()["stream"]
    assert [c["output"] for c in chunks] == [
        {"text": ["one"], "input_tokens": 3, "output_tokens": 1},
        {"text": [" two"], "input_tokens": 3, "output_tokens": 2},
        {"text": [" three"], "input_tokens": 3, "output_tokens": 3},
    ]
    metrics = [c["metrics"] for c in chunks]
    assert [m["stream_index"] for m in metrics] == [0, 1, 2]
    assert [m["output_tokens"] for m in metrics] == [1, 2, 3]
    # One piece every 0.5 s of the emulator's clock: two pieces a second.
    assert [m["avg_gen_throughput"] for m in metrics] == [2.0, 2.0, 2.0]


async def test_stream_text_delay_is_on_the_emulators_clock(emu: Emulator) -> None:
    job = submit(emu, "stream", {"text": "a b c d", "delay_ms": 1000})
    await settle()
    await advance(emu, 2)
    assert len(job.chunks) == 2 and job.status.value == "IN_PROGRESS"
    await advance(emu, 2)
    assert len(job.chunks) == 4 and job.status.value == "COMPLETED"


async def test_stream_text_refuses_a_text_that_is_not_a_string(emu: Emulator) -> None:
    job = submit(emu, "stream", {"text": 42})
    await settle()
    assert "input.text must be a string" in status_of(emu, "stream", job.id)["error"]


@pytest.mark.parametrize("text", ["", "   ", "word", " lead", "trail ", "a  b\n\nc\t"])
def test_text_pieces_always_join_back(text: str) -> None:
    assert "".join(text_pieces(text)) == text


# ---- register_image ----------------------------------------------------------------------


async def test_register_image_binds_a_name_that_deploy_can_run(emu: Emulator) -> None:
    async def shout(job: dict[str, Any]) -> Any:
        return job["input"]["text"].upper()

    emu.register_image("shout:1.0", shout)
    assert "shout:1.0" in emu.images.names()
    emu.deploy("shout:1.0", endpoint_id="shout")
    job = submit(emu, "shout", {"text": "hi"})
    await settle()
    assert status_of(emu, "shout", job.id)["output"] == "HI"


@pytest.mark.parametrize("name", ["", "   "])
async def test_register_image_refuses_an_empty_name(emu: Emulator, name: str) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        emu.register_image(name, lambda job: None)


async def test_register_image_refuses_a_handler_that_is_not_callable(emu: Emulator) -> None:
    with pytest.raises(TypeError, match="must be callable"):
        emu.register_image("x", "not a function")  # type: ignore[arg-type]
    assert "x" not in emu.images.names()


# ---- Emulator.deploy ---------------------------------------------------------------------


async def test_deploy_returns_a_generated_id_shaped_like_the_services(emu: Emulator) -> None:
    endpoint_id = emu.deploy("echo")
    assert len(endpoint_id) == 14 and endpoint_id.isalnum() and endpoint_id.islower()
    assert endpoint_id in emu.jobs.endpoints


async def test_deploy_uses_the_console_defaults(emu: Emulator) -> None:
    endpoint = emu.jobs.endpoints[emu.deploy("echo")]
    assert (endpoint.workers_min, endpoint.workers_max) == (0, 3)
    assert endpoint.idle_timeout == 5.0
    assert endpoint.execution_timeout_ms == 600_000
    assert endpoint.aggregate_stream is True


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({}, ValueError, "exactly one of image= or handler="),
        ({"image": "echo", "handler": lambda job: None}, ValueError, "exactly one of"),
        ({"handler": "not callable"}, TypeError, "handler must be callable"),
        ({"image": "echo", "endpoint_id": "has space"}, ValueError, "must be 1-64 letters"),
        ({"image": "echo", "endpoint_id": "x" * 65}, ValueError, "must be 1-64 letters"),
        ({"image": "echo", "endpoint_id": "-lead"}, ValueError, "must be 1-64 letters"),
        ({"image": "echo", "endpoint_id": "echo"}, ValueError, "already exists"),
        ({"image": "echo", "workers": {"min": 4, "max": 3}}, ValueError, "must not exceed"),
        ({"image": "echo", "workers": {"min": -1}}, ValueError, "min must be a whole number"),
        ({"image": "echo", "workers": {"max": -1}}, ValueError, "max must be a whole number"),
        ({"image": "echo", "workers": {"idleTimeout": -1}}, ValueError, "Timeout must be sec"),
        ({"image": "echo", "workers": {"max": 1.5}}, ValueError, "max must be a whole number"),
        ({"image": "echo", "workers": {"idle": 1}}, ValueError, "workers has no 'idle'"),
        ({"image": "echo", "workers": 3}, ValueError, 'workers is {"min": N'),
        ({"image": "echo", "type": "QUEUED"}, ValueError, "type is QUEUE or LOAD_BALANCER"),
        ({"handler": print, "type": "LOAD_BALANCER"}, ValueError, "runs a server, not a"),
        ({"image": "echo", "execution_timeout_ms": 0}, ValueError, "execution_timeout_ms"),
        ({"image": "echo", "execution_timeout_ms": 4_999}, ValueError, "execution_timeout_ms"),
        ({"image": "echo", "execution_timeout_ms": 604_800_001}, ValueError, "between 5000"),
    ],
)
async def test_deploy_refuses_bad_arguments_and_deploys_nothing(
    emu: Emulator, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    before = set(emu.jobs.endpoints)
    with pytest.raises(error, match=message):
        emu.deploy(**kwargs)
    assert set(emu.jobs.endpoints) == before

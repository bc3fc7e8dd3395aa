"""A job's phase drawn: the line under its state, the cause, the folded log, the timings.

The phases are the client's own (``job.phases()``), read from a real emulator whose fake
clock is the client's: its pauses move the emulator's time, so a 20 s cold start is drawn
in no real time. Hand-made phases check what the emulator cannot be made to say (text
that needs escaping, a queue ahead).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest

from nbext.client import Client, Phase, Timings
from nbext.emulator import Emulator, EmulatorServer, FakeClock
from nbext.emulator.domain.scenarios import CRASH_LINE
from nbext.models import Health, HealthJobs, HealthWorkers, JobResult, JobStatus
from nbext.notebook.phases import phase_html, phase_line, phase_plain, timings_text

from .conftest import KEY


class EmulatorTime:
    """The client's clock made of the emulator's: a pause moves the emulator's time."""

    def __init__(self, emu: Emulator) -> None:
        self.emu = emu

    def now(self) -> float:
        return self.emu.clock.now()

    def sleep_until(self, instant: float) -> None:
        if instant > self.now():
            self.emu.advance(instant - self.now())


@pytest.fixture
def client() -> Iterator[tuple[Emulator, Client]]:
    emu = Emulator(api_key=KEY, clock=FakeClock())
    server = EmulatorServer(emu).start()
    made = Client(
        KEY,
        serverless_url=server.serverless_url,
        base_url=f"{server.url}/v2",
        clock=EmulatorTime(emu),
    )
    try:
        yield emu, made
    finally:
        made.close()
        server.stop()
        emu.close()


def followed(client: Client, endpoint_id: str, seconds: float = 0.5) -> list[Phase]:
    job = client.endpoint(endpoint_id).run({"seconds": seconds})
    return list(job.phases(timeout=120))


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_a_cold_start_reads_as_workers_starting_then_the_worker_then_timings(
    client: tuple[Emulator, Client],
) -> None:
    emu, c = client
    emu.deploy("sleep", endpoint_id="cold", scenario="cold-start:seconds=20")
    phases = followed(c, "cold", 3)
    lines = [phase_line(p) for p in phases]
    assert lines[0] == ""  # just queued: the state says it all
    waiting = [line for line in lines if line.startswith("in queue")]
    assert waiting[0] == "in queue · workers 0 ready, 1 initializing (2.1 s)"
    assert re.fullmatch(r"in queue · workers 0 ready, 1 initializing \(1\d s\)", waiting[-1])
    running = next(p for p in phases if p.status is JobStatus.IN_PROGRESS)
    assert phase_line(running) == f"running on {running.worker_id} · cold start 20 s"
    assert lines[-1] == "cold start 20 s, ran 3.0 s"
    worker = running.worker_id
    assert phase_plain(phases[-2]).splitlines() == [  # its log, read while it ran
        f"running on {worker} · cold start 20 s",
        f"log of {worker} (last lines):",
        f"  worker {worker} started (sleep)",
    ]
    assert phase_plain(phases[-1]) == "cold start 20 s, ran 3.0 s"  # a success: no log
    assert "cold start 20 s, ran 3.0 s" in text_of(phase_html(phases[-1]))
    cold = next(p for p in phases if p.cause)
    assert (
        phase_plain(cold).splitlines()[1]
        == "why: cold start: 1 worker initializing, none ready yet"
    )
    assert 'class="nbext-phase-cause"' in phase_html(cold)
    assert "var(--jp-ui-font-color2" in phase_html(cold)


def test_a_crash_loop_shows_the_last_line_as_an_error_and_folds_the_log(
    client: tuple[Emulator, Client],
) -> None:
    emu, c = client
    emu.deploy("echo", endpoint_id="crash", scenario="crash-loop")
    job = c.endpoint("crash").run({})
    phase = next(p for p in job.phases(timeout=60) if p.health is not None)
    assert phase_line(phase) == "in queue · workers 0 ready, 1 unhealthy"
    plain = phase_plain(phase).splitlines()
    markup = phase_html(phase)
    assert plain[1].startswith("why: no worker could start: 1 worker unhealthy")
    assert plain[2] == f"log of {phase.log_worker} (last lines):"
    assert plain[-1] == f"  {CRASH_LINE}"
    last = re.search(r'<pre class="nbext-phase-last-line" style="color:var\(--jp-error', markup)
    assert last is not None and html.escape(CRASH_LINE) in markup
    cause = re.search(r"nbext-phase-cause[^>]*>(.*?)</div>", markup)
    assert cause is not None and "last line" not in cause.group(1)  # said once, as an error
    folded = re.search(r"<details class=\"nbext-phase-log\">(.*?)</details>", markup, re.S)
    assert folded is not None and html.escape(CRASH_LINE) in folded.group(1)
    c.endpoint("crash").job(job.id).cancel()


def test_text_from_the_service_is_escaped_and_the_queue_ahead_counted() -> None:
    health = Health(
        jobs=HealthJobs(inQueue=4),
        workers=HealthWorkers(ready=1, running=1, throttled=2),
    )
    phase = Phase(
        JobResult(id="j1", status=JobStatus.IN_QUEUE),
        waited=30,
        health=health,
        cause="every worker is busy: 1 worker running; 4 jobs in queue",
        log_worker="w<1>",
        log=("<script>alert(1)</script>",),
    )
    assert phase.ahead == 3
    assert (
        phase_line(phase)
        == "in queue · up to 3 jobs ahead · workers 1 ready, 1 running, 2 throttled"
    )
    markup = phase_html(phase)
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert "<code>w&lt;1&gt;</code>" in markup


@pytest.mark.parametrize(
    ("timings", "text"),
    [
        (Timings(3.1, 6.7, 0.16), "queued 3.1 s, cold start 6.7 s, ran 0.16 s"),
        (Timings(0.01, None, 1.5), "queued 0.01 s, ran 1.5 s"),
        (Timings(0.01, 12.0, 75.0), "cold start 12 s, ran 1 min 15 s"),
        (Timings(None, None, None), ""),
    ],
)
def test_timings_name_each_phase_the_job_went_through(timings: Timings, text: str) -> None:
    assert timings_text(timings) == text


def test_a_job_that_ended_keeps_the_cold_start_a_phase_saw() -> None:
    running = Phase(
        JobResult(id="j1", status=JobStatus.IN_PROGRESS, delayTime=9800, workerId="worker-ab12"),
        cold_start=6.7,
    )
    assert phase_line(running) == "running on worker-ab12 · cold start 6.7 s"
    done = running.ended(
        JobResult(id="j1", status=JobStatus.COMPLETED, delayTime=9800, executionTime=160)
    )
    assert done.timings is not None and done.timings.queued == pytest.approx(3.1)
    assert (done.timings.cold_start, done.timings.ran) == (6.7, 0.16)
    assert phase_line(done) == "queued 3.1 s, cold start 6.7 s, ran 0.16 s"


def test_a_job_that_ended_without_a_cold_start_adds_no_line() -> None:
    quick = Phase(JobResult(id="j1", status=JobStatus.IN_QUEUE))
    done = quick.ended(
        JobResult(id="j1", status=JobStatus.COMPLETED, delayTime=12, executionTime=160)
    )
    assert done.timings == Timings(0.012, None, 0.16)
    assert phase_line(done) == "" and phase_html(done) == "" and phase_plain(done) == ""

"""``%runpod why [JOB|last]``: why a job failed, timed out, was cancelled or is stuck.

Ranks the likely causes without an LLM, each with the command to run next
(docs/behaviour.md#why-a-job-failed-or-waits-runpod-why). A check that cannot reach the
service is said and the rest still diagnosed: a partial answer beats none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from nbext.client import Diagnosis, NbextError, NotFound, WorkerTail
from nbext.models import TTL_DEFAULT_MS, JobResult, JobStatus

from ..errors import describe
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics
from .jobs import JOB_HELP, LAST, record_of

if TYPE_CHECKING:
    import argparse

    from nbext.client import Client
    from nbext.models.v2 import Endpoint

    from ..registry import RequestRecord


MAX_CAUSES = 3
"""Causes shown at most: more would bury the likely one."""
LOG_LINES = 3
"""Lines of the worker's log shown under the causes."""
DEFAULT_TTL_S = TTL_DEFAULT_MS / 1000


@dataclass
class Findings:
    """What could be read about a job and its endpoint, and what could not."""

    job_id: str
    endpoint_id: str
    result: JobResult | None = None
    diagnosis: Diagnosis | None = None
    """The endpoint's health, the likely cause, and a worker's log."""
    settings: Endpoint | None = None
    unchecked: list[str] = field(default_factory=list)
    gone: bool = False
    """The service answered that it does not know the job (any more)."""
    execution_timeout: float | None = None
    """The job's own policy, as this kernel submitted it (None: the default)."""
    ttl: float | None = None
    age: float | None = None
    """Seconds since the job was submitted, as this kernel saw it."""

    def could_not(self, what: str, exc: NbextError) -> None:
        self.unchecked.append(f"could not check {what}: {describe(exc, named=False)}")


def gather(client: Client, job_id: str, endpoint_id: str) -> Findings:
    """Every check, each on its own: one that fails is noted and the others still run."""
    found = Findings(job_id, endpoint_id)
    try:
        found.result = client.endpoint(endpoint_id).job(job_id).status()
    except NotFound as exc:
        found.gone = True
        found.could_not("the job's state", exc)
    except NbextError as exc:
        found.could_not("the job's state", exc)
    worker = found.result.worker_id if found.result is not None else None
    found.diagnosis = client.endpoint(endpoint_id).diagnose(worker)
    if found.diagnosis.error is not None:
        found.could_not("the endpoint's health", found.diagnosis.error)
    try:
        found.settings = client.endpoints.get(endpoint_id)
    except NbextError as exc:
        found.could_not("the endpoint's settings", exc)
    return found


def causes(found: Findings) -> list[tuple[str, str]]:
    """The likely causes, likeliest first, each with the command to run next."""
    eid, ranked = found.endpoint_id, []
    result, diagnosis, settings = found.result, found.diagnosis, found.settings
    health, tail = (diagnosis.health, diagnosis.tail) if diagnosis else (None, None)
    logs = f"%runpod logs {eid}" + (f" --worker {tail.worker}" if tail is not None else "")
    status = result.status if result is not None else None
    if status is JobStatus.COMPLETED:
        return []
    if status is JobStatus.FAILED:
        ranked.append((f"the handler raised: {result.error if result else ''}", logs))
    elif status is JobStatus.TIMED_OUT:
        ranked.append(_timed_out(found))
    elif status is JobStatus.CANCELLED:
        cancelled = "the job was cancelled (from this kernel or another client)"
        ranked.append((cancelled, f"%runpod retry {found.job_id}"))
    if found.gone:
        ranked.extend(_removed(found))
    if settings is not None and settings.workers.max == 0:
        ranked.append(("the endpoint's workers.max is 0: no worker may start", "%runpod endpoints"))
    waiting = status in (JobStatus.IN_QUEUE, None)
    if diagnosis is not None and health is not None and (waiting or health.workers.unhealthy):
        crashing = health.workers.unhealthy > 0
        ranked.append((diagnosis.cause, logs if crashing else f"%runpod health {eid}"))
    if waiting and found.ttl is not None and found.age is not None and not found.gone:
        left = found.ttl - found.age
        ranked.append(
            (
                f"its own TTL of {found.ttl:g} s (from submission, queue time included) "
                f"removes it in {max(0.0, left):.0f} s unless it has ended",
                f"%runpod cancel {found.job_id}, then submit it with a longer --ttl",
            )
        )
    return ranked[:MAX_CAUSES]


def _timed_out(found: Findings) -> tuple[str, str]:
    """A TIMED_OUT job: its own execution timeout against how long it ran, where the
    kernel knows it; else the endpoint's default."""
    result, settings, eid = found.result, found.settings, found.endpoint_id
    error = result.error if result is not None and result.error else ""
    ran = result.execution_time if result is not None else None
    ran_text = f", ran {ran / 1000:g} s" if ran is not None else ""
    if found.execution_timeout is not None:
        limit = found.execution_timeout
        return (
            f"it ran past its own execution timeout of {limit:g} s{ran_text}: {error}",
            f"%%runpod_job {eid} --execution-timeout SECONDS, more than {limit:g}",
        )
    endpoint_limit = settings.timeout if settings is not None else None
    default = f" (the endpoint's default: {endpoint_limit / 1000:g} s)" if endpoint_limit else ""
    return (
        f"it ran past its execution timeout: {error}",
        f"%%runpod_job {eid} --execution-timeout SECONDS, a higher one{default}",
    )


def _removed(found: Findings) -> list[tuple[str, str]]:
    """A job the service no longer knows: its TTL passed, or it ended and its retention
    passed (the kernel knows which from the job's policy and age)."""
    age, ttl = found.age, found.ttl if found.ttl is not None else DEFAULT_TTL_S
    if age is None:
        return []
    if age >= ttl:
        own = "its own TTL" if found.ttl is not None else "the default TTL"
        return [
            (
                f"{own} of {ttl:g} s passed (from submission, queue time included): the "
                "service removed the job, whatever its state",
                f"%%runpod_job {found.endpoint_id} --ttl SECONDS, a longer one",
            )
        ]
    if found.result is not None and found.result.status.is_final:
        return [
            (
                "the service no longer keeps it: a finished job is kept 30 min after /run, "
                "1 min after /runsync",
                "%runpod jobs (this kernel's last state of it)",
            )
        ]
    return [
        (
            "the service removed it before it ended, within its TTL: its endpoint's queue "
            "was purged, or the service lost it",
            f"%%runpod_job {found.endpoint_id} (submit it again)",
        )
    ]


def why_request(client: Client, request: RequestRecord) -> None:
    """A request to a load-balancing endpoint: how it ended, the endpoint now, and the log
    of the worker that answered, or else of one starting or unhealthy (it says why)."""
    endpoint_id, worker = request.endpoint_id, request.worker
    if worker is None:
        try:
            listed = client.endpoints.workers(endpoint_id)
        except NbextError:
            listed = []
        stuck = ("INITIALIZING", "UNHEALTHY")
        worker = next((w.id for w in listed if w.status.upper() in stuck), None)
    found = client.endpoint(endpoint_id).diagnose(worker)
    status = request.status if request.status is not None else "no answer"
    print(f"request {request.method} {request.path} on {endpoint_id!r}: {status}")
    if request.error:
        print(f"error: {request.error}")
    print(f"the endpoint now: {found.cause}")
    if found.tail is not None:
        logs = f"%runpod logs {endpoint_id} --worker {found.tail.worker}"
        _print_tail(found.tail, f"worker log (last lines), next: {logs}")


def _print_tail(tail: WorkerTail, heading: str = "worker log (last lines):") -> None:
    if tail.lines:
        print(heading)
        for line in tail.lines[-LOG_LINES:]:
            print(f"   {tail.worker}: {line}")


@subcommand("why", "why a job failed, timed out, was cancelled or is stuck: ranked causes")
@magic_arguments("runpod why")
@argument("job", nargs="?", default=LAST, help=JOB_HELP + " (default)")
@argument("--endpoint", help="the job's endpoint, if it was not submitted from this kernel")
def why(magics: Magics, args: argparse.Namespace) -> None:
    """Diagnose JOB: its state and error, the endpoint's health and settings, the
    worker's last log lines; then one to three causes, each with the command to run next.
    With no JOB, after a request of ``%%runpod_http``: how that request ended."""
    registry = magics.connection.registry
    request = registry.requests[-1] if registry.requests and args.job == LAST else None
    jobs = list(registry)
    if request is not None and (not jobs or jobs[-1].submitted <= request.submitted):
        service = magics.connection.service_named(request.service)
        if service is not None:  # the newest thing this kernel sent was a request
            return why_request(service.client, request)
    record, service = record_of(magics, args.job, args.endpoint, "why")
    found = gather(service.client, record.id, record.endpoint_id)
    found.execution_timeout, found.ttl = record.execution_timeout, record.ttl
    found.age = (datetime.now(UTC) - record.submitted).total_seconds()
    if found.result is not None:
        magics.connection.registry.update(record.id, found.result)
    else:
        found.result = record.result  # the last state seen is diagnosed instead
    state = found.result.status.value if found.result is not None else "state unknown"
    print(f"job {record.id} on {record.endpoint_id!r}: {state}")
    ranked = causes(found)
    if not ranked and found.result is not None and found.result.status is JobStatus.COMPLETED:
        print("nothing is wrong: it completed")
    for n, (cause, command) in enumerate(ranked, 1):
        print(f"{n}. {cause}\n   next: {command}")
    for line in found.unchecked:
        print(line)
    if found.diagnosis is not None and found.diagnosis.tail is not None:
        _print_tail(found.diagnosis.tail)

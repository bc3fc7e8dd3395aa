"""``%runpod jobs``, ``cancel``, ``retry``, ``purge``: this kernel's jobs and queues."""

from __future__ import annotations

from typing import TYPE_CHECKING

from IPython.core.error import UsageError

from nbext.client import Conflict, NbextError, NotFound

from ..cost import record_cost
from ..display import to_frame
from ..display.specs import JOBS
from ..errors import describe
from ..ipython import argument, magic_arguments
from ..registry import JobRecord
from .commands import subcommand
from .common import Magics, check_name, explain, store_and_show, usage_errors
from .job import start_retry, wait, wait_async

if TYPE_CHECKING:
    import argparse

    from ..connection import Service


def refresh(magics: Magics) -> None:
    """Ask the service for the state of every job of this kernel that has not ended (a
    background follower may not have polled while cells ran back to back), and price
    those that have."""
    connection = magics.connection
    for record in connection.registry:
        service = connection.service_named(record.service)
        if service is None:
            continue
        if not record.final:
            job = service.client.endpoint(record.endpoint_id).job(record.id)
            try:
                connection.registry.update(record.id, job.status())
            except NotFound as exc:
                connection.registry.mark_removed(record.id, describe(exc, named=False))
            except NbextError:
                continue  # keep the last state seen; the listing is still useful
        record_cost(service, record)


@subcommand("jobs", "the jobs this kernel submitted, refreshed (a DataFrame)")
@magic_arguments("runpod jobs")
@argument("-o", "--output", help="store the whole DataFrame in this variable")
@argument("--no-refresh", action="store_true", help="show the last states seen, ask nothing")
def jobs(magics: Magics, args: argparse.Namespace) -> None:
    """The jobs this kernel submitted, newest first: id, endpoint, state, queue delay and
    run time (ms), cost (dollars; ``cost_is`` says whether the service reported it or it
    is an estimate from the catalog), worker, submission time; its requests to
    load-balancing endpoints too (method and path, HTTP status). Unfinished jobs are asked
    for their state first."""
    name = check_name(args.output)
    if not args.no_refresh:
        refresh(magics)
    registry = magics.connection.registry
    frame = to_frame([*registry, *registry.requests], JOBS)
    store_and_show(magics, name, frame, "jobs")


LAST = "last"
"""What ``cancel`` and ``retry`` accept instead of an id: the newest job of this kernel
(a guide cannot know the id the previous cell's job will get)."""
EXTERNAL = "external"
"""How a job this kernel did not submit, named by id and --endpoint, was met (``via``)."""
JOB_HELP = f"the job id, or {LAST!r} for the newest job this kernel submitted"


def record_of(
    magics: Magics, job_id: str, endpoint: str | None, magic: str
) -> tuple[JobRecord, Service]:
    """A job by id (or ``last``) and its service: this kernel's records, or (with
    ``--endpoint``) any job; ``magic`` (``cancel``) is the subcommand asking, for the line a
    mistake suggests. A job of a service this kernel no longer has open is refused."""
    record = _record(magics, job_id, endpoint, magic)
    service = magics.connection.service_named(record.service)
    if service is None:
        raise UsageError(f"job {record.id} belongs to a service this kernel no longer has open")
    return record, service


def _record(magics: Magics, job_id: str, endpoint: str | None, magic: str) -> JobRecord:
    if job_id == LAST:
        if endpoint is not None:
            raise UsageError(f"--endpoint names a job's endpoint by id; {LAST!r} needs none")
        records = list(magics.connection.registry)
        if not records:
            raise UsageError(f"no job was submitted from this kernel yet, so there is no {LAST!r}")
        return records[-1]
    record = magics.connection.registry.get(job_id)
    if record is not None and not (
        record.via == EXTERNAL and endpoint is not None and endpoint != record.endpoint_id
    ):
        return record  # (a job named before with another --endpoint: that one was a typo)
    if endpoint is None:
        raise UsageError(
            f"job {job_id!r} was not submitted from this kernel; give its endpoint: "
            f"%runpod {magic} {job_id} --endpoint ENDPOINT"
        )
    with usage_errors():
        service = magics.connection.service()
    return magics.connection.registry.add(JobRecord(job_id, endpoint, service.mode, EXTERNAL))


@subcommand("cancel", "cancel a job (IN_QUEUE or IN_PROGRESS)")
@magic_arguments("runpod cancel")
@argument("job", help=JOB_HELP)
@argument("--endpoint", help="the job's endpoint, if it was not submitted from this kernel")
def cancel(magics: Magics, args: argparse.Namespace) -> None:
    """Cancel JOB: a queued job never starts, a running one is told to stop."""
    record, service = record_of(magics, args.job, args.endpoint, "cancel")
    job = service.client.endpoint(record.endpoint_id).job(record.id)
    ended = False
    try:
        try:
            job.cancel()
        except Conflict:
            ended = True  # it ended before the cancel arrived; its state says how
        result = job.status()
    except NotFound as exc:
        magics.connection.registry.mark_removed(record.id, describe(exc, named=False))
        raise UsageError(explain(exc)) from None
    except NbextError as exc:
        raise UsageError(explain(exc)) from None
    magics.connection.registry.update(record.id, result)  # its panels follow the record
    state = result.status
    where = f"job {record.id} on {record.endpoint_id!r}"
    if ended and state.is_final:
        print(f"{where}: already {state.value}, nothing to cancel")
    else:
        print(f"{where}: {state.value}")


async def retry_async(magics: Magics, args: argparse.Namespace) -> None:
    """``%runpod retry`` in a cell that awaits: the panel's Cancel is heard meanwhile."""
    record, service = record_of(magics, args.job, args.endpoint, "retry")
    started = start_retry(magics, record, service, background=args.background, quiet=args.quiet)
    if started is not None:
        await wait_async(*started, quiet=args.quiet, raises=bool(magics.raise_on_failure))


@subcommand("retry", "queue a FAILED or TIMED_OUT job again and follow it", awaited=retry_async)
@magic_arguments("runpod retry")
@argument("job", help=JOB_HELP)
@argument("--endpoint", help="the job's endpoint, if it was not submitted from this kernel")
@argument("--background", action="store_true", help="return at once; the panel keeps updating")
@argument("-q", "--quiet", action="store_true", help="no panel")
def retry(magics: Magics, args: argparse.Namespace) -> None:
    """Retry JOB (same id, same input) and show it in a new panel until it ends."""
    record, service = record_of(magics, args.job, args.endpoint, "retry")
    started = start_retry(magics, record, service, background=args.background, quiet=args.quiet)
    if started is not None:
        wait(*started, quiet=args.quiet, raises=bool(magics.raise_on_failure))


@subcommand("purge", "remove every queued job of an endpoint (running jobs go on)")
@magic_arguments("runpod purge")
@argument("endpoint", help="the endpoint id")
def purge(magics: Magics, args: argparse.Namespace) -> None:
    """Remove every IN_QUEUE job of ENDPOINT; jobs already running are not touched."""
    with usage_errors(f"endpoint {args.endpoint!r}"):
        service = magics.connection.service()
        result = service.client.endpoint(args.endpoint).purge_queue()
    print(f"purged {result.removed} queued job(s) from {args.endpoint!r}")

"""``%%runpod_job ENDPOINT [options]``: run the cell's input as a job and show it live.
Only the line is expanded, never the body (docs/behaviour.md#magic-lines-and-bodies)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from nbext.client import Job, JobOptions, NbextError, NotFound, Timeout
from nbext.models import JobResult, JobStatus, json_kind
from nbext.models.recording import digest

from ..errors import one_line
from ..follow import JobFollower
from ..interrupts import Interrupted, deferred_interrupts
from ..ipython import F, argument
from ..outcome import check_completed
from ..registry import JobRecord
from ..uipoll import running_loop
from ..widgets.job import JobPanel
from .common import Magics, check_name, explain, positive, store, usage_errors

if TYPE_CHECKING:
    import argparse

    from ..connection import Service


def parse_input(cell: str, *, python: bool, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The job's input from the cell body; a mistake is a one-line UsageError."""
    value = cell_value(cell, python=python, namespace=namespace)
    if not isinstance(value, Mapping):
        got = type(value).__name__ if python else json_kind(value)
        what = (
            "--python: the expression must give a dict"
            if python
            else "the cell body must be a JSON object"
        )
        raise UsageError(f"{what} (the job's input), got {got}")
    return dict(value)


def cell_value(cell: str, *, python: bool, namespace: Mapping[str, Any]) -> Any:
    """The cell body as JSON, or with ``python`` as a Python expression evaluated in
    the notebook; a mistake is a one-line UsageError."""
    if python:
        try:
            code = compile(cell.strip(), "<cell body>", "eval")
        except SyntaxError as exc:
            raise UsageError(
                f"--python: the cell body must be one Python expression: {exc.msg} "
                f"(line {exc.lineno}, column {exc.offset})"
            ) from None
        try:
            return eval(code, dict(namespace))
        except Exception as exc:
            raise UsageError(
                one_line(f"--python: evaluating the cell body raised {type(exc).__name__}: {exc}")
            ) from None
    try:
        return json.loads(cell)
    except json.JSONDecodeError as exc:
        lines = cell.splitlines() or [""]
        text = lines[exc.lineno - 1] if 0 < exc.lineno <= len(lines) else ""
        near = text.strip()[:60]
        raise UsageError(
            f"the cell body is not valid JSON: {exc.msg} at line {exc.lineno}, column "
            f"{exc.colno}"
            + (f" (in `{near}`)" if near else "")
            + "; use --python for a Python expression"
        ) from None


_JOB_OPTIONS = (
    argument(
        "--execution-timeout",
        type=float,
        metavar="SECONDS",
        help="the job's execution timeout (5 s to 7 days; default: the endpoint's)",
    ),
    argument(
        "--ttl",
        type=float,
        metavar="SECONDS",
        help="the job's time to live from submission (10 s to 7 days; default 24 h)",
    ),
    argument("--low-priority", action="store_true", help="do not start a worker for this job"),
    argument("--webhook", metavar="URL", help="the service POSTs the result to URL when done"),
)


def job_option_arguments(magic: F) -> F:
    """The job options of ``%%runpod_job`` and ``%runpod map``, read by ``job_options``."""
    for add in reversed(_JOB_OPTIONS):  # IPython lists a magic's arguments in reverse
        magic = add(magic)
    return magic


def job_options(args: argparse.Namespace) -> JobOptions:
    """The ``JobOptions`` a magic's arguments say (seconds), as the client takes them."""
    return JobOptions(
        webhook=args.webhook or None,
        execution_timeout=positive(args.execution_timeout, "--execution-timeout"),
        ttl=positive(args.ttl, "--ttl"),
        low_priority=args.low_priority,
    )


def _submit(
    magics: Magics, args: argparse.Namespace, cell: str, *, awaited: bool = False
) -> tuple[JobFollower, bool] | None:
    """Check the arguments, submit the job and show its panel; the follower to wait with
    and whether Ctrl-C came meanwhile (None: ``--sync`` is done, or ``--background``)."""
    endpoint_id = args.endpoint or magics.default_endpoint
    if not endpoint_id:
        raise UsageError(
            "which endpoint? `%%runpod_job ENDPOINT`, or set "
            "%config Magics.default_endpoint = 'NAME'"
        )
    output_name = check_name(args.output)
    timeout = positive(args.timeout, "--timeout")
    if args.sync and (args.background or args.stream):
        raise UsageError(
            "--sync waits for the whole result in one /runsync call; it cannot be combined "
            "with --background or --stream"
        )
    if args.background and running_loop() is None:
        raise UsageError(
            "--background updates the panel from the kernel's event loop, and none is "
            "running here (a Jupyter kernel has one; a terminal IPython does not)"
        )
    job_input = parse_input(cell, python=args.python, namespace=magics.user_ns)
    options = job_options(args)
    with usage_errors():
        service = magics.connection.service()
    run = _Cell(magics, args, service, endpoint_id, job_input, timeout, output_name)
    if args.sync:
        follower = run.sync(options, awaited)
        return None if follower is None else (follower, False)
    with deferred_interrupts(deliver=False) as held:
        with usage_errors(f"endpoint {endpoint_id!r}"):
            job = service.client.endpoint(endpoint_id).run(job_input, options)
        follower = run.follower(job)
    if args.background and not held.received:
        follower.start_background()
        return None
    return follower, held.received


def run_job(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """The cell magic's body, after its arguments were parsed: blocks until the end."""
    started = _submit(magics, args, cell)
    if started is not None:
        wait(*started, quiet=args.quiet, raises=_raises(magics, args))


async def run_job_async(magics: Magics, args: argparse.Namespace, cell: str) -> None:
    """``run_job`` in a cell that awaits, where the kernel hears the panel's Cancel."""
    started = _submit(magics, args, cell, awaited=True)
    if started is not None:
        await wait_async(*started, quiet=args.quiet, raises=_raises(magics, args))


def wait(follower: JobFollower, interrupted: bool, *, quiet: bool, raises: bool) -> None:
    with usage_errors():
        result = follower.follow(interrupted=interrupted)
    _conclude(follower.record, result, quiet=quiet, raises=raises)


async def wait_async(
    follower: JobFollower, interrupted: bool, *, quiet: bool, raises: bool
) -> None:
    with usage_errors():
        result = await follower.follow_async(interrupted=interrupted)
    _conclude(follower.record, result, quiet=quiet, raises=raises)


def _raises(magics: Magics, args: argparse.Namespace) -> bool:
    """Whether a job that did not complete makes its cell raise (the default)."""
    return bool(magics.raise_on_failure) and not args.no_raise


def _conclude(record: JobRecord, result: JobResult | None, *, quiet: bool, raises: bool) -> None:
    """After the panel shows the end: raise if the job did not complete (``raises``), else
    with ``--quiet``, which shows nothing when it completed, say in a line how it ended."""
    if raises:
        check_completed(result, record.endpoint_id)
    if not quiet or (result is not None and result.status is JobStatus.COMPLETED):
        return
    where = f"job {record.id} on {record.endpoint_id!r}"
    if not record.final:
        print(f"{where} is still {record.state}; stopped waiting for it", file=sys.stderr)
        return
    detail = f": {one_line(result.error)}" if result is not None and result.error else ""
    print(f"{where} ended {record.state}{detail}", file=sys.stderr)


def _panel(
    magics: Magics, endpoint_id: str, via: str, quiet: bool, stream: bool = False
) -> JobPanel | None:
    """The job's panel; None with ``--quiet``."""
    redact = magics.connection.redact
    return None if quiet else JobPanel(endpoint_id, stream=stream, via=via, redact=redact)


SYNC_HOLD = 1.0
"""In a cell that awaits, how long /runsync holds a ``--sync`` job before answering with
its id, to be followed with a Cancel (nothing can cancel a job whose id is unknown)."""
SYNC_FIRST = 2.0
"""How long such a cell waits on /runsync (a margin over the hold, so its answer comes)."""


@dataclass
class _Cell:
    """A ``%%runpod_job`` cell's checked arguments, which its job's record, panel and
    follower are made from."""

    magics: Magics
    args: argparse.Namespace
    service: Service
    endpoint_id: str
    job_input: dict[str, Any]
    timeout: float | None
    output_name: str | None

    def store_output(self, record: JobRecord) -> None:
        """The follower's ``on_end``: ``-o NAME`` gets the output, None if not completed."""
        result = record.result
        if result is None or result.status is not JobStatus.COMPLETED:
            result = None
        store(self.magics, self.output_name, None if result is None else result.output)

    def record(self, job_id: str, via: str, result: JobResult | None) -> JobRecord:
        """The job in the kernel's registry, with the policy the magic submitted it with."""
        record = JobRecord(job_id, self.endpoint_id, self.service.mode, via, result=result)
        record.replayed = self.service.replays(self.endpoint_id)
        record.input_digest = digest(self.job_input)
        record.execution_timeout, record.ttl = self.args.execution_timeout, self.args.ttl
        return self.magics.connection.registry.add(record)

    def follower(self, job: Job) -> JobFollower:
        """Record the job, show its panel, and make the follower that will feed them."""
        record, stream = self.record(job.id, "/run", job.result), self.args.stream
        panel = _panel(self.magics, job.endpoint_id, "/run", self.args.quiet, stream)
        if panel is not None:
            panel.start(job.id)
            panel.show()
        store(self.magics, self.output_name, None)  # no previous run's value looking current
        return JobFollower(
            self.service,
            self.magics.connection.registry,
            record,
            panel,
            job=job,
            stream=panel is not None and stream,
            timeout=self.timeout,
            on_end=self.store_output,
        )

    def sync(self, options: JobOptions, awaited: bool) -> JobFollower | None:
        """``--sync``: one /runsync call; the panel shows the outcome when it returns. In a
        cell that awaits, a job that outlives a short hold comes back as a follower to await."""
        args, endpoint_id, timeout = self.args, self.endpoint_id, self.timeout
        panel = _panel(self.magics, endpoint_id, "/runsync", args.quiet)
        if panel is not None:
            # The job's id comes with /runsync's answer: until then nothing can cancel it,
            # and the panel has no Cancel (``cancel_available`` stays False).
            panel.set_note("waiting for /runsync…")
            panel.show()
        store(self.magics, self.output_name, None)
        short = awaited and (timeout is None or timeout > SYNC_FIRST)
        limits = {"wait": SYNC_HOLD, "timeout": SYNC_FIRST} if short else {"timeout": timeout}
        started = time.monotonic()
        outlived: str | None = None
        try:
            with usage_errors(f"endpoint {endpoint_id!r}"):
                endpoint = self.service.client.endpoint(endpoint_id)
                try:
                    result = endpoint.run_sync(
                        self.job_input, options, raise_on_failure=False, **limits
                    )
                except Timeout as exc:
                    if not short or exc.job_id is None:
                        raise
                    outlived = exc.job_id
        except KeyboardInterrupt:
            if panel is not None:
                panel.set_removed("interrupted before /runsync answered")
            raise Interrupted(
                f"stopped waiting for /runsync on {endpoint_id!r}: the service had not returned "
                "the job's id, so it could not be cancelled and may still run"
            ) from None
        except UsageError:
            if panel is not None:
                panel.set_removed("the /runsync call failed")
            raise
        job_id = outlived if outlived is not None else result.id
        record = self.record(job_id, "/runsync", None if outlived else result)
        left = None if timeout is None else max(0.001, timeout - (time.monotonic() - started))
        registry = self.magics.connection.registry
        follower = JobFollower(
            self.service, registry, record, panel, timeout=left, on_end=self.store_output
        )
        if panel is not None:
            panel.note = ""
        if outlived is not None:
            if panel is not None:
                panel.start(job_id)
            return follower
        follower.finish(result)
        _conclude(record, result, quiet=args.quiet, raises=_raises(self.magics, args))
        return None


def start_retry(
    magics: Magics, record: JobRecord, service: Service, *, background: bool, quiet: bool
) -> tuple[JobFollower, bool] | None:
    """``%runpod retry JOB``: queue the job again and show its new panel; the follower to
    ``wait`` with, and whether Ctrl-C came meanwhile (None: ``background`` follows it)."""
    job = service.client.endpoint(record.endpoint_id).job(record.id)
    if background and running_loop() is None:
        raise UsageError("--background needs the kernel's event loop, and none is running here")
    with deferred_interrupts(deliver=False) as held:
        try:
            job.retry()
        except NotFound as exc:
            magics.connection.registry.mark_removed(record.id, str(exc))
            raise UsageError(explain(exc)) from None
        except NbextError as exc:
            raise UsageError(explain(exc)) from None
        # the connection heard the retry (``Connection._seen``): every panel follows it
        panel = _panel(magics, record.endpoint_id, "retry", quiet)
        if panel is not None:
            panel.retries = record.retries
            panel.start(record.id)
            panel.show()
        # The job's first run may have had ``-o NAME``: its retry fills NAME the same way.
        previous = record.follower
        follower = JobFollower(
            service,
            magics.connection.registry,
            record,
            panel,
            job=job,
            on_end=previous.on_end if previous is not None else None,
        )
    if background and not held.received:
        follower.start_background()
        return None
    return follower, held.received

"""What a user reads when something goes wrong: one line, in their terms, the job once.

Errors come from the real client against the real emulator where the service can be
made to give them; the rest (a 401, a 429, a 5xx, no answer) are the client's own error
classes built with the attributes the client sets, since the emulator will not fail that
way on request.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.error import UsageError

from nbext.client import (
    APIError,
    BadRequest,
    ConnectionError,
    JobFailed,
    NotFound,
    RateLimited,
    ServerError,
    Timeout,
    Unauthorized,
)
from nbext.models import JobResult, JobStatus
from nbext.notebook.errors import InvalidArgument, describe, did_you_mean
from nbext.notebook.ipython import argument, magic_arguments
from nbext.notebook.magics.commands import SUBCOMMANDS, subcommand
from nbext.notebook.magics.common import usage_errors

from .conftest import Notebook
from .test_job_magic import usage_error

HTTP = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE)\b|\b[1-5]\d\d on\b|/(run|status|cancel|retry)\b")
"""What a message in the user's terms never carries: methods, paths, "409 on"."""


def plain_message(message: str, job_id: str | None = None) -> str:
    assert "\n" not in message, message
    assert not HTTP.search(message), message
    if job_id is not None:
        assert message.count(job_id) == 1, message
    return message


# ---- the service's refusals, from the emulator ------------------------------------------


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        ("retry", "is COMPLETED; only FAILED or TIMED_OUT jobs can be retried"),
        ("cancel", "already ended COMPLETED; only queued or running jobs can be cancelled"),
    ],
)
def test_a_refusal_of_an_ended_job_names_it_once(nb: Notebook, operation: str, reason: str) -> None:
    job = nb.conn.client.endpoint("echo").run({"a": 1})
    job.wait(timeout=10)
    with pytest.raises(APIError) as caught:
        getattr(job, operation)()
    assert plain_message(describe(caught.value), job.id) == f"job {job.id} on 'echo' {reason}"
    assert describe(caught.value, named=False) == reason  # for a panel, which shows the job


def test_a_refusal_before_sending_says_what_was_wrong_and_that_nothing_was_sent(
    nb: Notebook,
) -> None:
    with pytest.raises(APIError) as caught:
        nb.conn.client.endpoint("echo").run({"x": float("nan")})
    message = plain_message(describe(caught.value))
    assert message.startswith("endpoint 'echo': the input is not JSON: ")
    assert message.endswith(" (nothing was sent)") and message.count("nothing was sent") == 1
    assert nb.emu.jobs.jobs == {}


@pytest.mark.parametrize(
    "cell",
    [
        '%%runpod_job ehco\n{"a": 1}',
        '%%runpod_job ehco --sync\n{"a": 1}',
        "%runpod health ehco",
        "%runpod purge ehco",
        "xs = [{}]\n%runpod map ehco xs",
    ],
)
def test_an_unknown_endpoint_gets_did_you_mean(
    nb: Notebook, capsys: pytest.CaptureFixture[str], cell: str
) -> None:
    message = plain_message(usage_error(nb, cell, capsys))
    assert message == "endpoint 'ehco' not found; did you mean 'echo'?"


def test_a_job_on_a_mistyped_endpoint_is_told_the_endpoint(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job is "not found" because its endpoint is not: say that, and let the corrected
    --endpoint be used next (not the typo remembered from the first try)."""
    nb.emu.deploy(image="no-such-image", endpoint_id="held")
    job = nb.conn.client.endpoint("held").run({})
    message = usage_error(nb, f"%runpod cancel {job.id} --endpoint hled", capsys)
    assert plain_message(message) == "endpoint 'hled' not found; did you mean 'held'?"
    capsys.readouterr()
    nb.run(f"%runpod cancel {job.id} --endpoint held")
    assert capsys.readouterr().out.strip() == f"job {job.id} on 'held': CANCELLED"
    assert nb.job(job.id).status is JobStatus.CANCELLED


def test_an_unknown_endpoint_far_from_any_lists_them(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    message = plain_message(usage_error(nb, "%runpod health zzzzzz", capsys))
    assert message == (
        "endpoint 'zzzzzz' not found; deployed endpoints: "
        "echo, fail, image-gen, llm, llm-lb, sleep, stream-text, text-to-speech"
    )


def test_an_endpoint_named_by_its_name_is_told_its_id(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    """On the cloud an endpoint's id is generated: a user who types the name learns the id."""
    template = nb.conn.client.templates.create(name="llm-template", image="echo", serverless=True)
    endpoint = nb.conn.client.endpoints.create(
        template_id=template.id, name="my-llm", gpu={"pools": ["ADA_24"]}
    )
    assert endpoint.id != "my-llm"
    message = plain_message(usage_error(nb, "%runpod health my-llm", capsys))
    assert message == "endpoint 'my-llm' not found; 'my-llm' is the name of endpoint " + (
        f"{endpoint.id!r}: use its id"
    )
    message = plain_message(usage_error(nb, "%runpod health my-lm", capsys))
    assert message == f"endpoint 'my-lm' not found; did you mean {endpoint.id!r} (named 'my-llm')?"


def test_did_you_mean_without_endpoints_adds_nothing() -> None:
    assert did_you_mean("echo", []) == ""


# ---- what the emulator does not do on request: the client's classes, as it raises them ----


def api_error(cls: type[APIError], status: int, path: str, body: str, **kw: Any) -> APIError:
    return cls(
        f"{status} on POST {path} (endpoint 'echo', job j-1): {body}",
        status=status,
        method="POST",
        path=path,
        operation=path.split("/")[1],
        body=body,
        endpoint_id="echo",
        job_id="j-1" if path.count("/") > 1 else None,
        **kw,
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            api_error(NotFound, 404, "echo/status/j-1", "job 'j-1' not found"),
            "job j-1 on 'echo' not found: the id is unknown, or the job was purged or expired",
        ),
        (
            api_error(BadRequest, 400, "echo/run", "input: must be a JSON object"),
            "endpoint 'echo': the service refused the request: input: must be a JSON object",
        ),
        (
            api_error(ServerError, 502, "echo/cancel/j-1", "bad gateway for job j-1"),
            "job j-1 on 'echo': the service failed (error 502): bad gateway for the job",
        ),
        (
            api_error(RateLimited, 429, "echo/run", "slow down", retry_after=2.0),
            "endpoint 'echo': the service is rate limiting requests; try again in 2 s",
        ),
        (
            Unauthorized(
                "401 on POST echo/run (endpoint 'echo'): bad key [key sent: rpa_…F42, from env]",
                status=401,
                method="POST",
                path="echo/run",
                operation="run",
                body="bad key",
                endpoint_id="echo",
                key_sent="rpa_…F42, from env",
            ),
            "endpoint 'echo': the service refused the API key [key sent: rpa_…F42, from env]",
        ),
        (
            api_error(APIError, 418, "echo/stream/j-1", "teapot"),
            "job j-1 on 'echo': the service answered 418: teapot",
        ),
        (
            api_error(APIError, 409, "echo/stream/j-1", "job j-1 is busy"),
            "job j-1 on 'echo' cannot read its stream now: the job is busy",
        ),
        (
            Timeout(
                "no answer in time: GET echo/status/j-1 (endpoint 'echo', job j-1): "
                "ReadTimeout: no answer within 30 s",
                endpoint_id="echo",
                job_id="j-1",
                reason="no answer within 30 s",
            ),
            "job j-1 on 'echo': the service did not answer in time (no answer within 30 s)",
        ),
        (
            Timeout(
                "job j-1 on endpoint 'echo' did not finish within 5 s (last seen IN_PROGRESS)",
                timeout=5.0,
                last_status=JobStatus.IN_PROGRESS,
                endpoint_id="echo",
                job_id="j-1",
            ),
            "job j-1 on endpoint 'echo' did not finish within 5 s (last seen IN_PROGRESS)",
        ),
        (
            ConnectionError(
                "POST echo/run (endpoint 'echo'): ConnectError: [Errno 111] Connection refused",
                endpoint_id="echo",
                reason="[Errno 111] Connection refused",
            ),
            "endpoint 'echo': could not reach the service ([Errno 111] Connection refused)",
        ),
        (
            JobFailed(
                "job j-1 on endpoint 'echo' ended FAILED: boom",
                result=JobResult(id="j-1", status=JobStatus.FAILED, error="RuntimeError:\nboom"),
                endpoint_id="echo",
            ),
            "job j-1 on 'echo' ended FAILED: RuntimeError: boom",
        ),
        (InvalidArgument("--start must be before --end"), "--start must be before --end"),
    ],
)
def test_describe_says_each_error_in_one_line(error: Exception, expected: str) -> None:
    assert plain_message(describe(error)) == expected


# ---- mistakes are one line; bugs keep their traceback -------------------------------------


@pytest.fixture
def broken_subcommand() -> Iterator[str]:
    """A subcommand with a bug in it, registered the way every subcommand is."""

    @magic_arguments("runpod broken")
    @argument("value")
    def broken(magics: Any, args: Any) -> None:
        with usage_errors("broken"):
            len(int(args.value))  # type: ignore[arg-type]  # the bug: len() of an int

    subcommand("broken", "a subcommand with a bug")(broken)
    try:
        yield "broken"
    finally:
        del SUBCOMMANDS["broken"]


def test_a_type_error_from_a_bug_keeps_its_traceback(
    nb: Notebook, capsys: pytest.CaptureFixture[str], broken_subcommand: str
) -> None:
    result = nb.shell.run_cell(f"%runpod {broken_subcommand} 3", store_history=False)
    assert isinstance(result.error_in_exec, TypeError)
    captured = capsys.readouterr()
    shown = re.sub(r"\x1b\[[0-9;]*m", "", captured.out + captured.err)
    assert "TypeError: object of type 'int' has no len()" in shown
    assert "len(int(args.value))" in shown  # the traceback shows the line with the bug
    assert not re.search(r"^UsageError:", shown, re.MULTILINE)


def test_a_value_error_from_a_bug_keeps_its_traceback(nb: Notebook, broken_subcommand: str) -> None:
    result = nb.shell.run_cell(f"%runpod {broken_subcommand} three", store_history=False)
    assert isinstance(result.error_in_exec, ValueError)
    assert not isinstance(result.error_in_exec, UsageError)


def test_a_mistake_from_python_helpers_stays_one_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run("def handler(job):\n    return 1")
    message = usage_error(nb, "%runpod deploy handler --name 'bad id!'", capsys)
    assert message.startswith("deploy: endpoint id 'bad id!' must be 1-64 letters")
    nb.run("%runpod deploy handler --name 'quoted-name'")  # quotes are the shell's, not the name's
    assert "quoted-name" in nb.emu.jobs.endpoints


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_an_unbalanced_quote_is_one_line_for_every_subcommand(
    nb: Notebook, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    message = usage_error(nb, f'%runpod {name} "echo', capsys)
    assert message == 'cannot read the arguments: a quote is not closed in `"echo`'


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("%%runpod_job 'echo\n{}", "cannot read the arguments: a quote is not closed in `'echo`"),
        (
            "%%runpod_job echo -o out \\\n{}",
            "cannot read the arguments: the line ends in a backslash in `echo -o out \\`",
        ),
        ("%%runpod_job echo --timeout inf\n{}", "--timeout must be a number of seconds > 0"),
    ],
)
def test_line_mistakes_are_one_line(
    nb: Notebook, capsys: pytest.CaptureFixture[str], line: str, expected: str
) -> None:
    assert usage_error(nb, line, capsys).startswith(expected)
    assert nb.emu.jobs.jobs == {}  # nothing reached the service


# ---- help reads as plain text ------------------------------------------------------------


@pytest.mark.parametrize("name", list(SUBCOMMANDS))
def test_help_of_every_subcommand_is_plain_text(
    nb: Notebook, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    nb.run(f"%runpod help {name}")
    text = capsys.readouterr().out
    assert text.startswith(f"usage: %runpod {name}")
    assert "``" not in text and "::" not in text, text
    indent = len(f"usage: %runpod {name} ")
    for line in text.split("\n\n")[0].splitlines()[1:]:  # wrapped: aligned under the first
        assert len(line) - len(line.lstrip()) == indent, text


def test_help_of_an_unknown_subcommand_suggests_one(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    message = usage_error(nb, "%runpod help helth", capsys)
    assert message.startswith("no %runpod subcommand 'helth'; did you mean 'health'?")


def test_a_tab_separates_the_subcommand_too(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    assert usage_error(nb, "%runpod health\tehco", capsys).startswith("endpoint 'ehco' not found")


def test_the_magics_own_help_page_is_plain_text(nb: Notebook) -> None:
    doc = nb.shell.find_line_magic("runpod").__doc__
    assert doc is not None and "``" not in doc and "::" not in doc

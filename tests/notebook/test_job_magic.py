"""``%%runpod_job``: every option, every mistake, blocking mode and its panel."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from IPython.core.error import UsageError

from nbext.models import JobStatus
from nbext.notebook.magics.job import parse_input
from nbext.notebook.outcome import JobNotCompleted

from .conftest import Notebook, flaky_handler


def usage_error(nb: Notebook, cell: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Run a cell that must fail with a one-line UsageError shown without a traceback."""
    with pytest.raises(UsageError) as caught:
        nb.run(cell)
    message = str(caught.value)
    assert "\n" not in message, message
    err = capsys.readouterr().err
    assert f"UsageError: {message}" in err
    assert "Traceback" not in err
    return message


# ---- the happy paths ---------------------------------------------------------------------


def test_echo_blocks_until_completed_and_stores_the_output(nb: Notebook) -> None:
    nb.run('%%runpod_job echo -o out\n{"text": "hi", "n": [1, 2]}')
    assert nb.shell.user_ns["out"] == {"text": "hi", "n": [1, 2]}
    panel = nb.panel()
    assert panel.state == "COMPLETED"
    record = nb.record()
    assert record.via == "/run" and record.state == "COMPLETED"
    assert nb.job(record.id).status is JobStatus.COMPLETED
    # The content is plain HTML and text from the first display to the last, updated in
    # place; the Cancel control is an output of its own, emptied at the end.
    content, controls = nb.outputs()
    assert all(set(bundle) == {"text/html", "text/plain"} for bundle in content)
    assert 'class="nbext-live nbext-job-panel" data-state="IN_QUEUE"' in content[0]["text/html"]
    assert "interrupt the kernel (■) to cancel" in content[0]["text/plain"]
    last = content[-1]
    assert 'class="nbext-static nbext-job-panel" data-state="COMPLETED"' in last["text/html"]
    assert "hi" in last["text/html"]
    assert "COMPLETED" in last["text/plain"] and '"text": "hi"' in last["text/plain"]
    assert "interrupt" not in last["text/plain"]  # nothing is live: no hint
    assert controls[-1] == {"text/plain": ""}
    assert panel.cancel_button.comm is None  # the widget was closed: nothing live is left


def test_python_body_is_evaluated_in_the_user_namespace(nb: Notebook) -> None:
    nb.run("prompt = 'tell me'\nn = 3")
    nb.run('%%runpod_job echo --python -o out\n{"prompt": prompt, "n": n * 2}')
    assert nb.shell.user_ns["out"] == {"prompt": "tell me", "n": 6}


def test_braces_and_dollars_in_the_body_are_not_interpolated(nb: Notebook) -> None:
    nb.run("secret = 'xyz'")
    nb.run('%%runpod_job echo -o out\n{"template": "{secret} and $secret"}')
    assert nb.shell.user_ns["out"] == {"template": "{secret} and $secret"}


def test_sync_runs_one_runsync_call(nb: Notebook) -> None:
    nb.run('%%runpod_job echo --sync -o out\n{"a": 1}')
    assert nb.shell.user_ns["out"] == {"a": 1}
    record = nb.record()
    assert record.id.startswith("sync-")
    assert record.via == "/runsync"
    assert nb.panel().state == "COMPLETED"
    assert "/runsync" in nb.last_plain()


def test_stream_shows_the_text_and_metrics(nb: Notebook) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    nb.run(f"%%runpod_job stream-text --stream -o out\n{json.dumps({'text': text})}")
    panel = nb.panel()
    assert panel.text == text
    shown = panel.rendering().html
    assert text in shown and 'class="nbext-job-text"' in shown
    assert "tokens in 9 / out 9" in shown
    assert "text: " + text in nb.last_plain()
    assert len(nb.shell.user_ns["out"]) == 9


def test_without_stream_the_text_is_not_shown(nb: Notebook) -> None:
    nb.run('%%runpod_job stream-text\n{"text": "a b c"}')
    panel = nb.panel()
    assert panel.state == "COMPLETED"
    assert "nbext-job-text" not in panel.rendering().html
    assert "text:" not in nb.last_plain()


def test_quiet_shows_nothing_but_stores(nb: Notebook, capsys: pytest.CaptureFixture[str]) -> None:
    nb.run('%%runpod_job echo -q -o out\n{"a": 1}')
    assert nb.shell.user_ns["out"] == {"a": 1}
    assert nb.displays == []
    assert capsys.readouterr().out == ""


def test_quiet_no_raise_still_says_a_failure(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job fail --quiet --no-raise -o out\n{"message": "no GPU today"}')
    assert nb.shell.user_ns["out"] is None
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "FAILED" in err[0] and "no GPU today" in err[0]


def test_quiet_failure_raises_one_line(nb: Notebook) -> None:
    with pytest.raises(JobNotCompleted) as caught:
        nb.run('%%runpod_job fail --quiet\n{"message": "no GPU today"}')
    assert nb.displays == []
    assert str(caught.value) == (
        f"job {nb.record().id} on 'fail' ended FAILED: RuntimeError: no GPU today "
        "(--no-raise lets the notebook go on)"
    )


def test_failed_job_shows_its_error_then_stops_the_notebook(nb: Notebook) -> None:
    nb.run("out = 'stale'")
    with pytest.raises(JobNotCompleted) as caught:
        nb.run('%%runpod_job fail -o out\n{"message": "boom"}')
    job_id = nb.record().id
    # one line, the id once, no traceback (as IPython and ipykernel render it)
    (line,) = caught.value._render_traceback_()
    assert line.startswith(f"JobNotCompleted: job {job_id} on 'fail' ended FAILED: ")
    assert line.count(job_id) == 1 and "\n" not in line
    assert nb.shell.user_ns["out"] is None
    panel = nb.panel()
    assert panel.state == "FAILED"
    assert "RuntimeError: boom" in panel.rendering().html
    # the panel showed the final state before the cell raised
    assert 'data-state="FAILED"' in nb.displays[-1]["data"]["text/html"]
    assert "error: RuntimeError: boom" in nb.last_plain()


def test_no_raise_and_the_trait_keep_the_notebook_going(nb: Notebook) -> None:
    nb.run('%%runpod_job fail --no-raise -o out\n{"message": "boom"}')
    assert nb.record().state == "FAILED"
    nb.run("%config RunpodMagics.raise_on_failure = False")
    nb.run('%%runpod_job fail -o out\n{"message": "boom"}')
    assert nb.record().state == "FAILED"
    nb.run("%config RunpodMagics.raise_on_failure = True")
    with pytest.raises(JobNotCompleted):
        nb.run('%%runpod_job fail --sync\n{"message": "boom"}')


def test_every_panel_of_a_job_follows_its_retry(nb: Notebook) -> None:
    nb.deploy(flaky_handler(), "flaky")
    nb.run("%%runpod_job flaky --no-raise -o out\n{}")
    first = nb.panel()
    first_display = nb.displays[0]["transient"]["display_id"]
    assert first.state == "FAILED"
    nb.run("%runpod retry last")
    assert first.state == "COMPLETED" and first.retries == 1 and first.error is None
    assert nb.shell.user_ns["out"] == {"attempt": 2}
    # the first cell's static output was replaced with the new state too
    updates = [d for d in nb.displays if d["transient"].get("display_id") == first_display]
    assert 'data-state="COMPLETED"' in updates[-1]["data"]["text/html"]
    assert "retried 1×" in updates[-1]["data"]["text/plain"]


def test_submission_options_reach_the_service(nb: Notebook) -> None:
    nb.run(
        "%%runpod_job echo --execution-timeout 5 --ttl 60 --webhook http://127.0.0.1:9/hook"
        ' -o out\n{"x": 1}'
    )
    job = nb.job(nb.record().id)
    assert job.execution_timeout_ms == 5000
    assert job.ttl_ms == 60_000
    assert job.webhook == "http://127.0.0.1:9/hook"
    assert job.low_priority is False


@pytest.mark.parametrize("fake_clock", [True])
def test_low_priority_does_not_start_a_worker(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --low-priority --timeout 0.3\n{"seconds": 1}')
    record = nb.record()
    assert nb.job(record.id).low_priority is True
    assert nb.job(record.id).status is JobStatus.IN_QUEUE
    panel = nb.panel()
    assert panel.state == "IN_QUEUE"
    assert "stopped waiting after 0.3 s; the job goes on" in panel.rendering().html
    # The cell ended: an interrupt no longer reaches the job; a command does.
    assert f"%runpod cancel {record.id} to cancel" in nb.last_plain()
    assert panel.controls_shown()


@pytest.mark.parametrize("fake_clock", [True])
def test_quiet_timeout_says_the_job_goes_on(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    nb.run('%%runpod_job sleep -q --timeout 0.2\n{"seconds": 100}')
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"job {nb.record().id} on 'sleep' is still IN_PROGRESS; stopped waiting for it"


@pytest.mark.parametrize("fake_clock", [True])
def test_timeout_leaves_the_job_running_and_cancel_button_stops_it(nb: Notebook) -> None:
    nb.run('%%runpod_job sleep --timeout 0.3 -o out\n{"seconds": 100}')
    assert nb.shell.user_ns["out"] is None
    record = nb.record()
    assert nb.job(record.id).status is JobStatus.IN_PROGRESS
    panel = nb.panel()
    assert panel.state == "IN_PROGRESS"
    panel.cancel_button.click()  # no loop runs here: the click cancels with the sync client
    assert nb.job(record.id).status is JobStatus.CANCELLED
    assert panel.state == "CANCELLED"
    assert nb.outputs()[1][-1] == {"text/plain": ""}  # the control is gone


@pytest.mark.parametrize("fake_clock", [True])
def test_timed_out_job(nb: Notebook) -> None:
    # The emulator's clock moves on its own thread while the cell waits.
    import threading

    def advance() -> None:
        nb.until(lambda: len(nb.conn.registry) == 1, "the job to be submitted")
        job_id = nb.record().id
        nb.until(lambda: nb.job(job_id).status is JobStatus.IN_PROGRESS, "the job to start")
        nb.emu.advance(6)

    mover = threading.Thread(target=advance)
    mover.start()
    with pytest.raises(JobNotCompleted, match="ended TIMED_OUT"):
        nb.run('%%runpod_job sleep --execution-timeout 5 -o out\n{"seconds": 60}')
    mover.join()
    panel = nb.panel()
    assert panel.state == "TIMED_OUT"
    assert "execution timeout" in panel.rendering().html
    assert nb.shell.user_ns["out"] is None


def test_default_endpoint_from_config(nb: Notebook) -> None:
    nb.run("%config RunpodMagics.default_endpoint = 'echo'")
    nb.run('%%runpod_job -o out\n{"via": "default"}')
    assert nb.shell.user_ns["out"] == {"via": "default"}
    assert nb.record().endpoint_id == "echo"


def test_help_lists_every_option(nb: Notebook) -> None:
    doc = nb.shell.find_cell_magic("runpod_job").__doc__
    assert doc is not None
    assert "%%runpod_job" in doc
    for option in (
        "--python",
        "--sync",
        "--stream",
        "--background",
        "--timeout",
        "--execution-timeout",
        "--ttl",
        "--low-priority",
        "--webhook",
        "--output",
        "--quiet",
    ):
        assert option in doc


# ---- mistakes: one line, no traceback, nothing submitted ---------------------------------


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('%%runpod_job nope\n{"a": 1}', "endpoint 'nope' not found; deployed endpoints: echo"),
        ('%%runpod_job echo\n{"a": 1,\n "b": }', "not valid JSON: Expecting value at line 2"),
        ("%%runpod_job echo\n[1, 2]", "must be a JSON object (the job's input), got an array"),
        ('%%runpod_job echo --bogus\n{"a": 1}', "unrecognized arguments: --bogus"),
        ('%%runpod_job echo --timeout soon\n{"a": 1}', "argument --timeout: invalid float"),
        ('%%runpod_job echo --timeout -1\n{"a": 1}', "--timeout must be a number of seconds > 0"),
        ('%%runpod_job echo --execution-timeout 1\n{"a": 1}', "between 5000 and 604800000 ms"),
        ('%%runpod_job echo --ttl 2\n{"a": 1}', "between 10000 and 604800000 ms"),
        ('%%runpod_job echo --webhook ftp://x\n{"a": 1}', "http:// or https:// URL"),
        ('%%runpod_job echo -o 1x\n{"a": 1}', "-o '1x': not a valid Python variable name"),
        ('%%runpod_job echo --sync --stream\n{"a": 1}', "cannot be combined"),
        ('%%runpod_job echo --background\n{"a": 1}', "--background updates the panel"),
        ('%%runpod_job\n{"a": 1}', "which endpoint?"),
        ("%%runpod_job echo --python\nundefined_name + 1", "NameError: name 'undefined_name'"),
        ("%%runpod_job echo --python\n[1, 2]", "must give a dict (the job's input), got list"),
        ("%%runpod_job echo --python\nfor x in y:", "must be one Python expression"),
    ],
)
def test_mistakes_are_one_line_usage_errors(
    nb: Notebook, capsys: pytest.CaptureFixture[str], cell: str, expected: str
) -> None:
    message = usage_error(nb, cell, capsys)
    assert expected in message
    assert len(nb.conn.registry) == 0
    assert nb.emu.jobs.jobs == {}  # nothing reached the service


def test_bad_json_says_where_it_broke() -> None:
    with pytest.raises(UsageError) as caught:
        parse_input('{\n  "a": 1\n  "b": 2\n}', python=False, namespace={})
    assert "line 3, column 3" in str(caught.value)
    assert '`"b": 2`' in str(caught.value)


def test_kernel_stays_usable_after_a_mistake(
    nb: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    usage_error(nb, '%%runpod_job nope\n{"a": 1}', capsys)
    nb.run('%%runpod_job echo -o out\n{"a": 2}')
    assert nb.shell.user_ns["out"] == {"a": 2}


# ---- a terminal IPython ---------------------------------------------------------------


@pytest.fixture
def terminal(nb: Notebook) -> Iterator[Notebook]:
    """``nb`` with IPython's own display publisher, as a terminal IPython has it: every
    display and every update is printed as text."""
    from IPython.core.displaypub import DisplayPublisher

    recording = nb.shell.display_pub
    nb.shell.display_pub = DisplayPublisher(shell=nb.shell)
    try:
        yield nb
    finally:
        nb.shell.display_pub = recording


def test_a_terminal_prints_the_first_state_and_the_last_as_plain_text(
    terminal: Notebook, capsys: pytest.CaptureFixture[str]
) -> None:
    words = " ".join(f"w{n}" for n in range(30))
    terminal.run(f'%%runpod_job stream-text --stream -o out\n{{"text": "{words}", "delay_ms": 20}}')
    printed = capsys.readouterr().out
    assert "\x1b" not in printed and "VBox(" not in printed and "Button(" not in printed
    blocks = [b for b in printed.split("stream-text /run job ") if b]
    assert len(blocks) == 2, printed  # not ten blocks a second: the start, then the end
    assert ": IN_QUEUE" in blocks[0] and "interrupt the kernel (■) to cancel" in blocks[0]
    assert ": COMPLETED" in blocks[1] and f"text: {words}" in blocks[1]
    assert "interrupt" not in blocks[1]

"""Which tests are slow, so ``make check`` (``-m "not slow and not e2e"``) can leave them
to ``make test``.

A test is slow here when it took seconds of its own in a measured run
(``--durations=0``, docs/performance.md): it starts processes (the emulator's command
line, worker scripts, a sub-run of pytest, mypy), waits out real rate-limit windows, or
pushes hundreds of megabytes. Some modules mark themselves (``pytestmark``, e.g. the
conformance suites and tests/e2e); the rest are listed here, in one place, so the list
is re-measured and changed without touching the tests. An entry is a module, or a test
with all its parametrizations.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nbext.service import files
from tests.local_service import stop_service

SLOW = (
    # processes: the standalone emulator, its CLI, worker scripts, a kill -9
    "tests/emulator/test_cli.py",
    "tests/emulator/test_banner.py",
    "tests/emulator/workers/test_worker_processes.py",
    "tests/emulator/workers/test_js_sdk.py",
    "tests/emulator/workers/test_worker_protocol.py",
    "tests/emulator/workers/test_worker_v2.py",
    "tests/emulator/workers/test_status_sync.py",
    "tests/emulator/hardening/test_chaos.py",
    "tests/emulator/hardening/test_batch_kill.py",
    "tests/emulator/hardening/test_stuck_handlers.py::test_sigterm_ends_the_emulator_while_a_handler_hangs",
    "tests/notebook/test_worker_scripts.py",
    "tests/notebook/test_worker_phases.py",  # a crash loop, a 5 s import: 7-9 s each
    "tests/client/test_lb_http.py",  # load-balancing workers: FastAPI and http.server
    "tests/notebook/test_http_magic.py",
    "tests/notebook/test_scenario_round_trips.py::test_a_crash_loop_on_a_warm_worker_script_is_named_and_ends",
    "tests/emulator/workers/test_worker_environment.py",  # the standalone emulator: 9 s
    "tests/emulator/workers/test_offline_worker.py",  # a network namespace: 8 to 18 s
    "tests/emulator/workers/test_oversized_outputs.py",  # a worker posting 70 MB
    "tests/emulator/workers/test_openai_worker.py",
    "tests/emulator/workers/test_load_balancing.py",  # real servers as workers: 20 s
    "tests/emulator/test_cli_key.py",
    "tests/test_local.py::test_importing_nbext_does_not_import_the_emulator",
    "tests/test_local.py::test_the_v2_rulebook_is_loaded_by_the_first_management_call_not_by_the_first_job",
    # a real Jupyter kernel
    "tests/notebook/test_live_kernel.py",
    "tests/service/test_kernels.py",
    "tests/service/test_lifetime.py",  # the local service's own processes
    "tests/notebook/test_batch_worker_script.py",  # worker processes
    "tests/notebook/test_login.py::test_login_through_a_real_kernel_leaves_the_key_nowhere",
    "tests/notebook/test_first_result.py",  # a fresh interpreter: what the first job imports
    # the README's commands, as a newcomer runs them: emulators, shells, fresh interpreters
    "tests/test_readme.py::test_python_blocks_run_offline_as_written",
    "tests/test_readme.py::test_magic_blocks_run_in_ipython",
    "tests/test_readme.py::test_the_emulator_commands_serve_and_print_the_banner_shown",
    "tests/test_readme.py::test_curl_and_the_sdk_run_after_the_printed_exports",
    "tests/test_readme.py::test_the_cloud_setup_commands_exist",
    "tests/test_readme.py::test_the_figures_commands_exist",  # each benchmark's --help: 10 s
    # a sub-run of pytest, or of mypy
    "tests/test_makefile.py::test_check_is_the_suite_without_the_browser_the_guides_binder_or_slow_tests",
    "tests/notebook/test_interrupt.py::test_these_tests_pass_when_the_run_starts_with_sigint_ignored",
    "tests/client/test_handle_twins.py::test_a_type_checker_sees_each_twin_return_what_it_does",
    "tests/test_suite_bounds.py::test_a_hung_test_fails_with_its_name_and_stack_and_the_run_goes_on",
    # real time: rate-limit windows of 10 s
    "tests/client/test_map.py::test_map_paces_three_windows_without_losing_one",
    # 300 maps, each answered one request at a time: about 25 s
    "tests/client/test_map_retry_after.py",
    # real time: a wait's own timeout, a server reading slowly or not at all
    "tests/client/test_wait_diagnosis.py::test_run_sync_that_times_out_in_queue_says_why",
    "tests/client/test_misbehaving_servers.py::test_a_slow_reader_gets_the_whole_upload",
    "tests/client/test_misbehaving_servers.py::test_a_reader_that_never_reads_is_a_write_timeout",
    # hundreds of megabytes, or thousands of generated cases
    "tests/client/test_misbehaving_servers.py::test_a_gzip_bomb_stops_at_the_cap",
    "tests/notebook/test_media_output.py::test_a_14_mb_output_keeps_the_page_and_the_notebook_small",
    "tests/emulator/test_stateful.py::test_random_operation_sequences_agree_with_the_model",
    "tests/client/test_stream_unit.py::test_any_values_split_by_the_emulator_come_back_whole",
    # measured at the end of issues 31-33 (--durations, a quiet machine): the quick tier
    # had grown past 3 minutes; each of these takes a second or more per case
    "tests/client/test_wait_diagnosis.py",  # 32 s: every case waits out a real deadline
    "tests/emulator/test_sdk_compat.py",  # 12 s: the SDK's own polling intervals
    "tests/client/test_jobs.py::test_wait_has_a_deadline_that_names_the_job",
    "tests/client/test_stream_deadline.py",
    "tests/client/test_map_faults.py",
    "tests/emulator/hardening/test_arbitrary_json.py",  # hypothesis, 6 s
    "tests/emulator/test_batches.py::test_50000_waiting_requests_per_endpoint",
    "tests/notebook/test_chat.py::test_the_answer_streams_as_markdown_and_ends_static",
    "tests/notebook/test_chat.py::test_redraws_are_at_most_ten_a_second",
)


def is_listed(nodeid: str) -> bool:
    return any(nodeid == entry or nodeid.startswith((f"{entry}::", f"{entry}[")) for entry in SLOW)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Captured output and logs with lone surrogates spelled ``\\ud800``: the hostile-input
    tests make the emulator log such text, and xdist (``make check``) cannot send a
    report holding it from its worker (UTF-8 refuses it), which ends the whole run."""
    report = yield
    report.sections = [
        (title, text.encode("utf-8", "backslashreplace").decode())
        for title, text in report.sections
    ]
    return report


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_listed(item.nodeid):
            item.add_marker(pytest.mark.slow)


@dataclass
class Folders:
    """A local service's runtime and data folders."""

    runtime: Path
    data: Path

    def service_file(self) -> files.ServiceFile:
        found = files.read(self.runtime)
        assert found is not None, "no service.json"
        return found


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Folders]:
    """A local service of this test's own: its folders, inherited by every kernel and
    process the test starts; whatever service ran there is ended by its id at the end."""
    made = Folders(tmp_path / "run", tmp_path / "data")
    monkeypatch.setenv("NBEXT_RUNTIME_DIR", str(made.runtime))
    monkeypatch.setenv("NBEXT_DATA_DIR", str(made.data))
    monkeypatch.delenv("NBEXT_IDLE_STOP", raising=False)
    for name in [n for n in os.environ if n.startswith("RUNPOD_")]:
        monkeypatch.delenv(name)
    try:
        yield made
    finally:
        stop_service(made.runtime)

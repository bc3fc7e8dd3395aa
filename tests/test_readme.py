"""Every code block of README.md, run as written, offline, so the README cannot drift.

Blocks are read from the file at test time. Each kind has one test below, and
``test_every_block_is_run_by_a_test`` fails when a block appears that no test claims:

- Python blocks run in a fresh interpreter, with no ``RUNPOD_*`` variable and an empty
  HOME: a newcomer's machine. Those that use the service's SDK run in a shell after the
  ``export`` lines of a standalone emulator started with the README's own command.
- Magic blocks (``%...``) run in a real IPython shell in a subprocess: the extension
  starts its embedded emulator, as in a notebook with no key.
- Shell blocks: the emulator commands run (``--port 0`` appended, as the port may be
  taken), in a directory holding the README's ``handler.py`` and a link to this venv, so
  ``.venv/bin/python`` means what it says; the curl block runs after the printed
  ``export`` lines; ``make`` targets are checked with ``make -n`` (``tests/test_makefile.py``
  serves ``make lab`` for real).
- The sample banner must match what the emulator prints, but for the port and key.

The benchmark commands live with their figures in ``docs/performance.md``; their
``--help`` runs (a benchmark takes minutes and a quiet machine).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .standalone import Standalone, clean_environment, run_in_shell, run_python_after

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PERFORMANCE = ROOT / "docs" / "performance.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    lang: str
    code: str
    line: int

    def __str__(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'untagged'})"


def blocks(page: Path = README) -> list[Block]:
    text = page.read_text()
    return [
        Block(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1)
        for m in FENCE.finditer(text)
    ]


def is_sdk(block: Block) -> bool:
    return block.lang == "python" and "import runpod" in block.code


def is_handler_file(block: Block) -> bool:
    return block.lang == "python" and block.code.startswith("def handler(")


def is_script(block: Block) -> bool:
    return block.lang == "python" and not is_sdk(block) and not is_handler_file(block)


def is_magic(block: Block) -> bool:
    return block.lang == "" and block.code.lstrip().startswith("%")


def is_emulator_command(block: Block) -> bool:
    return block.lang == "sh" and block.code.startswith(".venv/bin/python -m nbext.emulator")


def is_curl(block: Block) -> bool:
    return block.lang == "sh" and block.code.startswith("curl ")


def is_make(block: Block) -> bool:
    return block.lang == "sh" and all(line.startswith("make ") for line in commands(block.code))


def is_cloud_setup(block: Block) -> bool:
    """Configuring a real key: needs an account, so only its commands' existence is checked."""
    return block.lang == "sh" and block.code.startswith(".venv/bin/runpod config")


def is_benchmark(block: Block) -> bool:
    """Benchmark runs take minutes and a quiet machine: their ``--help`` is run instead."""
    return block.lang == "sh" and all(
        line.startswith(".venv/bin/python benchmarks/") for line in commands(block.code)
    )


def is_banner(block: Block) -> bool:
    return block.lang == "text" and block.code.startswith("nbext emulator listening on")


def is_diagram(block: Block) -> bool:
    """A drawing, not code: nothing to run."""
    return block.lang == "text" and not is_banner(block)


KINDS = [
    is_sdk,
    is_handler_file,
    is_script,
    is_magic,
    is_emulator_command,
    is_curl,
    is_make,
    is_cloud_setup,
    is_banner,
    is_diagram,
    is_benchmark,
]


def commands(code: str) -> list[str]:
    """The command lines of a shell block, comments and continuations joined."""
    joined = code.replace("\\\n", " ")
    lines = [line.split("  #")[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def of_kind(kind: object) -> list[Block]:
    return [block for block in blocks() if kind(block)]  # type: ignore[operator]


def test_every_block_is_run_by_a_test() -> None:
    found = blocks()
    assert len(found) >= 10, "the README's code blocks were not found"
    for block in found:
        claims = [kind.__name__ for kind in KINDS if kind(block)]
        assert len(claims) == 1, f"{block} is claimed by {claims}: give it exactly one test"


def test_no_placeholder_keys() -> None:
    text = README.read_text()
    assert "rpa_..." not in text and "rpa_…" not in text.replace("rpa_…ab12", "")
    assert "<your" not in text.lower()


@pytest.mark.parametrize("block", of_kind(is_script), ids=str)
def test_python_blocks_run_offline_as_written(block: Block, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", block.code],
        cwd=tmp_path,
        env=clean_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{block}\n{result.stdout[-2000:]}\n{result.stderr}"
    assert "Traceback" not in result.stderr
    for printed in expected_prints(block.code):
        assert printed in result.stdout.splitlines(), f"{block}: no line {printed!r}"


def expected_prints(code: str) -> list[str]:
    """What ``print(...)  # X`` lines promise, when ``X`` reads as output, not prose."""
    promised = []
    for line in code.splitlines():
        match = re.search(r"print\(.*\)\s+#\s+(.+)$", line)
        if match and re.fullmatch(r"[A-Z_]+|\{.*\}|\w+Error: .*", match.group(1)):
            promised.append(match.group(1))
    return promised


def test_expected_prints_reads_only_outputs() -> None:
    code = (
        'print(x)   # COMPLETED\nprint(y)  # {"a": 1}\nprint(z)  # RuntimeError: boom\n'
        "print(w)  # streamed pieces, as they come\n"
    )
    assert expected_prints(code) == ["COMPLETED", '{"a": 1}', "RuntimeError: boom"]


def test_magic_blocks_run_in_ipython(tmp_path: Path) -> None:
    cells = [block.code for block in of_kind(is_magic)]
    assert cells, "no magic blocks found"
    script = (
        "import json, sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "shell = InteractiveShell.instance()\n"
        "for cell in json.loads(sys.argv[1]):\n"
        "    result = shell.run_cell(cell)\n"
        "    if not result.success:\n"
        "        raise SystemExit(f'cell failed: {cell!r}: {result.error_in_exec!r}')\n"
        "print(json.dumps(shell.user_ns.get('reply')))\n"
        "shell.run_line_magic('unload_ext', 'nbext')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(cells)],
        cwd=tmp_path,
        env=clean_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "nbext: local service at http://127.0.0.1:" in result.stdout
    assert json.loads(result.stdout.splitlines()[-1]) == {"message": "hello"}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A directory like the repository's root: ``.venv`` and the README's ``handler.py``."""
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    (handler,) = of_kind(is_handler_file)
    (tmp_path / "handler.py").write_text(handler.code)
    return tmp_path


@pytest.fixture
def served(workdir: Path) -> Iterator[list[tuple[Block, Standalone]]]:
    """Each emulator command of the README, running."""
    started: list[tuple[Block, Standalone]] = []
    try:
        for block in of_kind(is_emulator_command):
            (command,) = commands(block.code)
            started.append((block, Standalone(f"{command} --port 0", cwd=workdir)))
        yield started
    finally:
        for _, server in started:
            server.stop()


def normalised(banner: str) -> str:
    banner = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", banner)
    banner = re.sub(r"rpa_[0-9A-F]{40}", "rpa_KEY", banner)
    return banner.strip()


def test_the_emulator_commands_serve_and_print_the_banner_shown(
    served: list[tuple[Block, Standalone]],
) -> None:
    assert len(served) == 2
    (sample,) = of_kind(is_banner)
    plain, with_endpoints = (server for _, server in served)
    assert normalised(plain.banner) == normalised(sample.code)
    assert "endpoints:  echo, mine" in with_endpoints.banner


def test_curl_and_the_sdk_run_after_the_printed_exports(
    served: list[tuple[Block, Standalone]], workdir: Path
) -> None:
    _, server = served[-1]  # the one serving handler.py as "mine"
    (curl,) = of_kind(is_curl)
    (command,) = commands(curl.code)
    answer = json.loads(run_in_shell(server.export_lines, command, home=workdir, cwd=workdir))
    shown = json.loads(curl.code.rsplit("# ", 1)[1].replace("…", ""))
    assert set(answer) == set(shown)
    assert (answer["status"], answer["output"]) == (shown["status"], shown["output"])

    (sdk,) = of_kind(is_sdk)
    out = run_python_after(server.export_lines, sdk.code, home=workdir, cwd=workdir)
    assert out.splitlines()[-2:] == expected_prints(sdk.code)


def test_make_targets_exist() -> None:
    if shutil.which("make") is None:
        pytest.skip("needs make")
    for block in of_kind(is_make):
        for line in commands(block.code):
            result = subprocess.run(
                ["make", "-n", "-o", ".venv/.nbext-installed", *line.split()[1:]],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert result.returncode == 0, f"{block}: {line}: {result.stderr}"


def test_the_cloud_setup_commands_exist() -> None:
    """``runpod config`` needs a real key; that the commands exist is what can be checked."""
    venv_bin = Path(sys.executable).parent
    for block in of_kind(is_cloud_setup):
        for line in commands(block.code):
            program = line.split()[0]
            if program.startswith(".venv/bin/"):
                assert (venv_bin / program.removeprefix(".venv/bin/")).exists(), line
                result = subprocess.run(
                    [
                        str(venv_bin / program.removeprefix(".venv/bin/")),
                        *line.split()[1:2],
                        "--help",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert result.returncode == 0, f"{block}: {line}: {result.stderr}"
            else:
                assert program == "make", line


def test_the_figures_commands_exist(workdir: Path) -> None:
    """docs/performance.md gives each figure's command: each benchmark's ``--help`` runs,
    each timed ``make`` target exists."""
    (workdir / "benchmarks").symlink_to(ROOT / "benchmarks")
    found = blocks(PERFORMANCE)
    assert [b for b in found if is_benchmark(b)], "no benchmark commands in performance.md"
    for block in found:
        assert block.lang == "sh", f"{PERFORMANCE.name}:{block.line}: only commands there"
        for line in commands(block.code):
            if is_benchmark(block):
                run_in_shell([], f"{line} --help", home=workdir, cwd=workdir)
            else:
                assert line.startswith("/usr/bin/time -v make "), line
                if shutil.which("make") is None:
                    continue  # tests/test_makefile.py says so with its skip
                target = line.split()[3]  # /usr/bin/time -v make TARGET [VARIABLE=...]
                made = subprocess.run(
                    ["make", "-n", "-o", ".venv/.nbext-installed", target],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert made.returncode == 0, f"{line}: {made.stderr}"

"""The layer rules of DESIGN.md, and the linters, as part of the test run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_import_layers_hold() -> None:
    """models import nothing of ours; client and emulator never import each other; ..."""
    result = run(str(BIN / "lint-imports"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower() or " 0 broken" in result.stdout


def test_ruff_is_clean() -> None:
    result = run(str(BIN / "ruff"), "check", "nbext", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr

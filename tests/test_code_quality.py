"""The layer rules of docs/architecture.md#import-rules, the linters, and a repository
that stands on its own, as part of the test run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_no_dead_code() -> None:
    """Nothing in nbext that nothing calls (vulture, configured in pyproject.toml)."""
    result = run(str(BIN / "vulture"))
    assert result.returncode == 0, result.stdout + result.stderr


# Spelled in pieces so that this file does not match itself.
OUTSIDE_DOCUMENTS = re.compile(
    "|".join(
        [
            re.escape("SPEC" + ".md"),
            re.escape("DESIGN" + ".md"),
            re.escape("../" + "shared"),
            re.escape("/work/" + "shared"),
            r"\bthe " + r"seed\b",
        ]
    ),
    re.IGNORECASE,
)


def test_the_repository_stands_on_its_own() -> None:
    """No tracked file outside docs/ points at documents the repository does not hold.

    What the code relies on is written in docs/behaviour.md and docs/architecture.md;
    a reference to anything else is one a reader of a fresh clone cannot follow.
    """
    listed = run("git", "ls-files", "-z")
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    offending: dict[str, list[int]] = {}
    for name in listed.stdout.split("\0"):
        path = ROOT / name
        if not name or name.startswith("docs/") or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # images and other binary files
        lines = [n for n, line in enumerate(text.splitlines(), 1) if OUTSIDE_DOCUMENTS.search(line)]
        if lines:
            offending[name] = lines
    assert not offending, f"files citing documents outside the repository: {offending}"


CITATION = re.compile(r"docs/([\w-]+\.md)#([\w-]+)")


def anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, spaces as dashes."""
    found = set()
    for line in markdown.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_anchors_follow_github() -> None:
    assert anchors("## Rate limits\n### TTL\n## Import rules\n") == {
        "rate-limits",
        "ttl",
        "import-rules",
    }


def test_every_cited_section_of_docs_exists() -> None:
    """Code cites docs/behaviour.md#retention and the like: those headings must stay."""
    listed = run("git", "ls-files", "-z")
    if listed.returncode != 0:
        pytest.skip(f"not a git checkout: {listed.stderr.strip()}")
    pages: dict[str, set[str]] = {}
    broken = []
    checked = 0
    for name in filter(None, listed.stdout.split("\0")):
        path = ROOT / name
        if not path.is_file() or path.suffix not in (".py", ".md", ".ipynb", ".toml", ".cfg"):
            continue
        for page, anchor in CITATION.findall(path.read_text(encoding="utf-8")):
            if page not in pages:
                target = ROOT / "docs" / page
                pages[page] = anchors(target.read_text()) if target.is_file() else set()
            checked += 1
            if anchor not in pages[page]:
                broken.append(f"{name}: docs/{page}#{anchor}")
    assert checked, "no citation found: the pattern no longer matches how code cites docs/"
    assert not broken, f"citations of missing sections: {broken}"

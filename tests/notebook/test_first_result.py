"""The first result pays only for what it uses: ``%load_ext nbext`` and a first job import
neither pandas (a third of a second) nor markdown-it; the first DataFrame and the first
chat do (benchmarks/first_result.py times the whole way)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FIRST_RESULT = """
import sys
from IPython.core.interactiveshell import InteractiveShell

ip = InteractiveShell.instance()
ip.run_cell("%load_ext nbext", store_history=True).raise_error()
ip.run_cell('%%runpod_job echo -o reply\\n{"n": 1}', store_history=True).raise_error()
assert ip.user_ns["reply"] == {"n": 1}, ip.user_ns.get("reply")
for heavy in ("pandas", "markdown_it"):
    assert heavy not in sys.modules, f"{heavy} imported on the way to the first result"
ip.run_cell("%runpod endpoints -o listing", store_history=True).raise_error()
assert type(ip.user_ns["listing"]).__name__ == "DataFrame" and "pandas" in sys.modules
assert "<p>" in sys.modules["nbext.notebook.chat"].markdown_html("a *b*")
"""


def test_the_first_job_imports_no_pandas_and_the_first_frame_does(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RUNPOD", "IPYTHON"))}
    env.update(HOME=str(tmp_path))  # no key anywhere: the embedded emulator answers
    result = subprocess.run(
        [sys.executable, "-c", FIRST_RESULT],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]

"""``run_many``: many inputs as jobs of one endpoint, a progress panel, a DataFrame back.

Built on the client's ``endpoint.map`` (bounded concurrency, paced under the service's
rate limit, results as they finish). The panel counts finished jobs by state; the
DataFrame has one row per input, in input order: the input's columns, then the job's
id, state, queue delay and run time (ms), output and error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from nbext.models import JobResult

from .connection import Connection, current
from .display.frames import ListingSpec, to_frame
from .display.specs import RESULT_COLUMNS
from .errors import Interrupted
from .outputs import PanelOutput, show_panel
from .registry import JobRecord
from .widgets.batch import BatchPanel

DEFAULT_CONCURRENCY = 8
RESULTS = ListingSpec("results", RESULT_COLUMNS, extra="drop")


def inputs_of(inputs: Any) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """The job inputs, and the frame of input columns the results start with.

    A DataFrame gives one input per row (values made JSON-ready: numpy numbers become
    Python numbers, timestamps ISO text); a list gives its dicts as they are.
    """
    if isinstance(inputs, pd.DataFrame):
        frame = inputs.reset_index(drop=True)
        if not all(isinstance(c, str) for c in frame.columns):
            raise ValueError(
                "the DataFrame's column names must be strings (they become input keys)"
            )
        records = json.loads(frame.to_json(orient="records", date_format="iso"))
        return records, frame
    if isinstance(inputs, Mapping | str | bytes):
        raise TypeError(
            f"inputs must be a list of dicts or a DataFrame, got one {type(inputs).__name__}"
        )
    if not isinstance(inputs, Iterable):
        raise TypeError(
            f"inputs must be a list of dicts or a DataFrame, got {type(inputs).__name__}"
        )
    items = list(inputs)
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise TypeError(
                f"input #{i} is a {type(item).__name__}; every input must be a dict (a JSON object)"
            )
    return [dict(item) for item in items], pd.DataFrame.from_records(items, index=range(len(items)))


def results_frame(
    input_frame: pd.DataFrame, results: Mapping[int, JobResult], total: int
) -> pd.DataFrame:
    """Input columns, then the result columns; a clashing input column gets ``input.``."""
    rows = []
    for i in range(total):
        result = results.get(i)
        rows.append(
            {
                "id": result.id if result else None,
                "state": result.status.value if result else None,
                "delay_ms": result.delay_time if result else None,
                "run_ms": result.execution_time if result else None,
                "output": result.output if result else None,
                "error": result.error if result else None,
            }
        )
    out = to_frame(rows, RESULTS)
    clash = {c: f"input.{c}" for c in input_frame.columns if c in out.columns}
    inputs = input_frame.rename(columns=clash).reset_index(drop=True)
    return pd.concat([inputs, out], axis=1)


def run_many(
    endpoint: str,
    inputs: Any,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout: float | None = None,
    execution_timeout: float | None = None,
    ttl: float | None = None,
    low_priority: bool = False,
    quiet: bool = False,
    connection: Connection | None = None,
) -> pd.DataFrame:
    """Run every input as a job of ``endpoint``; a DataFrame of the results.

    ``inputs``: a list of dicts, or a DataFrame whose rows are the inputs. At most
    ``concurrency`` jobs run at once; ``timeout`` bounds each job's wait (seconds).
    Failed jobs are rows like the others (their ``state`` and ``error`` say so).
    Ctrl-C stops the batch (jobs already submitted may still run on the service) and
    raises ``Interrupted``.
    """
    items, input_frame = inputs_of(inputs)
    conn = connection or current()
    service = conn.service()
    panel = None if quiet else BatchPanel(endpoint, len(items))
    output: PanelOutput | None = show_panel(panel) if panel is not None else None
    results: dict[int, JobResult] = {}
    started = time.monotonic()
    options: dict[str, Any] = {"low_priority": low_priority}
    if execution_timeout is not None:
        options["execution_timeout"] = execution_timeout
    if ttl is not None:
        options["ttl"] = ttl

    def close(note: str = "") -> None:
        if panel is not None and output is not None:
            panel.finish(time.monotonic() - started, note)
            output.update()  # the line becomes static: a saved notebook keeps it

    batch = service.client.endpoint(endpoint).map(
        items, concurrency=concurrency, timeout=timeout, **options
    )
    try:
        for index, result in batch:
            results[index] = result
            conn.registry.add(JobRecord(result.id, endpoint, service.mode, "map", result=result))
            if panel is not None:
                panel.add(result.status.value)
    except KeyboardInterrupt:
        close(f"interrupted: {len(results)} of {len(items)} finished")
        raise Interrupted(
            f"batch on {endpoint!r} stopped after {len(results)} of {len(items)} jobs; "
            "jobs already submitted may still run (their results are not collected)"
        ) from None
    except BaseException as exc:
        close(f"stopped: {exc}")
        raise
    close()
    return results_frame(input_frame, results, len(items))

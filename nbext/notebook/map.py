"""``run_many``: many inputs as jobs of one endpoint, a progress panel, a DataFrame back.

An input whose submission got no answer is a ``MAYBE_QUEUED`` row, not sent again
(docs/behaviour.md#maps-under-faults; design: docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Unpack

from nbext.client import Abandoned, BudgetExceeded, JobCost, JobOptions, JobOptionWords, MaybeQueued
from nbext.models import JobResult
from nbext.models.recording import digest

from .connection import Connection
from .cost import record_cost, record_cost_async
from .display.frames import to_frame
from .display.specs import MAYBE_QUEUED, RESULTS
from .errors import InvalidArgument, WrongType, a_kind
from .interrupts import Interrupted
from .kernel import current
from .registry import JobRecord, provenance
from .widgets.map import MapPanel

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_CONCURRENCY = 8
TICK = 0.1
"""Seconds between two redraws of a waiting map's elapsed time and ETA."""


def inputs_of(inputs: Any) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """The job inputs, and the frame of input columns the results start with.

    A DataFrame gives one input per row (values made JSON-ready: numpy numbers become
    Python numbers, timestamps ISO text); a list gives its dicts as they are.
    """
    import pandas as pd

    if isinstance(inputs, pd.DataFrame):
        frame = inputs.reset_index(drop=True)
        if not all(isinstance(c, str) for c in frame.columns):
            raise InvalidArgument(
                "the DataFrame's column names must be strings (they become input keys)"
            )
        records = json.loads(frame.to_json(orient="records", date_format="iso"))
        return records, frame
    if isinstance(inputs, Mapping | str | bytes):
        raise WrongType(
            f"inputs must be a list of dicts or a DataFrame, got one {type(inputs).__name__}"
        )
    if not isinstance(inputs, Iterable):
        raise WrongType(
            f"inputs must be a list of dicts or a DataFrame, got {type(inputs).__name__}"
        )
    items = list(inputs)
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise WrongType(
                f"input #{i} is {a_kind(item)}; every input must be a dict (a JSON object)"
            )
    return [dict(item) for item in items], pd.DataFrame.from_records(items, index=range(len(items)))


def results_frame(
    input_frame: pd.DataFrame, results: Mapping[int, JobResult | MaybeQueued], total: int
) -> pd.DataFrame:
    """Input columns, then the result columns; a clashing input column gets ``input.``."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for i in range(total):
        result = results.get(i)
        if isinstance(result, MaybeQueued):
            rows.append({"id": result.job_id, "state": MAYBE_QUEUED, "error": str(result)})
            continue
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


class _Run:
    """One map being run: its panel, the results so far, the records (shared by
    ``run_many`` and ``run_many_async``, which differ in how they wait)."""

    def __init__(
        self,
        endpoint: str,
        inputs: Any,
        *,
        quiet: bool,
        cancellable: bool,
        connection: Connection | None,
    ) -> None:
        self.endpoint = endpoint
        self.items, self.input_frame = inputs_of(inputs)
        self.conn = connection or current()
        self.service = self.conn.service()
        self.replayed = self.service.replays(endpoint)
        self.results: dict[int, JobResult | MaybeQueued] = {}
        self.records: list[JobRecord] = []
        self.cancelled = asyncio.Event() if cancellable else None
        self.panel = None if quiet else MapPanel(endpoint, len(self.items))
        if self.panel is not None:
            if self.cancelled is not None:
                self.panel.cancel_available = True
                self.panel.on_cancel = self.cancelled.set
            self.panel.show()

    def take(self, index: int, result: JobResult | MaybeQueued) -> JobRecord | None:
        """Count one input's outcome; its job's record (None: no job id to follow)."""
        self.results[index] = result
        if isinstance(result, MaybeQueued):  # no id to follow: its row says what is known
            if self.panel is not None:
                self.panel.add(MAYBE_QUEUED)
            return None
        record = JobRecord(result.id, self.endpoint, self.service.mode, "map", result=result)
        record.replayed = self.replayed
        record.input_digest = digest(self.items[index])
        self.records.append(self.conn.registry.add(record))
        if self.panel is not None:
            self.panel.add(result.status.value)
        return record

    def priced(self, cost: JobCost | None) -> None:
        """A finished job's cost joins the panel's running total."""
        if self.panel is not None:
            self.panel.add_cost(cost)

    def tick(self) -> None:
        if self.panel is not None:
            self.panel.refresh()  # throttled: at most ten redraws a second

    def close(self, note: str = "") -> None:
        if self.panel is not None:  # the line becomes static: a saved notebook keeps it
            self.panel.provenance = self.provenance
            self.panel.finish(note)

    def provenance(self) -> dict[str, Any]:
        """Where the map's results came from: each job's ``provenance``."""
        source = "replay" if self.replayed else self.service.mode
        return provenance(source, self.endpoint, jobs=[r.provenance() for r in self.records])

    def stopped(self, how: str, abandoned: Abandoned | None) -> Interrupted:
        """The map was stopped (Ctrl-C, Cancel): the panel says so; the error to raise."""
        done, total = len(self.results), len(self.items)
        left = _left(abandoned)
        self.close(f"{how}: {done} of {total} finished; {left}")
        return Interrupted(
            f"map on {self.endpoint!r} stopped after {done} of {total} jobs ({how}); {left}"
        )

    def failed(self, exc: BaseException, abandoned: Abandoned | None) -> str:
        """The map stopped on an error: its panel says so. The line it shows."""
        line = f"stopped: {exc}; {_left(abandoned)}"
        self.close(line)
        return line

    def budget_reached(self, exc: BudgetExceeded, abandoned: Abandoned | None) -> pd.DataFrame:
        """The kernel's budget stopped the map: the frame of what finished
        (docs/behaviour.md#budget); quiet, a printed line says so."""
        line = self.failed(exc, abandoned)
        if self.panel is None:
            print(f"map on {self.endpoint!r} {line}")
        return results_frame(self.input_frame, self.results, len(self.items))

    def frame(self) -> pd.DataFrame:
        self.close()
        return results_frame(self.input_frame, self.results, len(self.items))


def _left(abandoned: Abandoned | None) -> str:
    """What a stopped map did with the jobs it had in flight, for its panel."""
    if abandoned is None:
        return "no job was in flight"
    return str(abandoned).removeprefix("map left before its end: ")


def run_many(
    endpoint: str,
    inputs: Any,
    options: JobOptions | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    deadline: float | None = None,
    quiet: bool = False,
    connection: Connection | None = None,
    **option_words: Unpack[JobOptionWords],
) -> pd.DataFrame:
    """Run every input as a job of ``endpoint``; a DataFrame of the results.

    ``inputs``: a list of dicts, or a DataFrame whose rows are the inputs. At most
    ``concurrency`` jobs run at once; ``deadline`` bounds each job's wait (seconds);
    ``options`` (a ``JobOptions``, or its fields as keywords: ``ttl=``...) go with every job.
    Failed jobs are rows like the others (their ``state`` and ``error`` say so). Ctrl-C
    cancels the jobs in flight and raises ``Interrupted``; the cell blocks, so its panel has
    no Cancel: ``await run_many_async(...)`` has one. Reaching the kernel's ``budget_usd``
    stops the map too, but returns what finished.
    """
    run = _Run(endpoint, inputs, quiet=quiet, cancellable=False, connection=connection)
    batch = run.service.client.endpoint(endpoint).map(
        run.items, options, concurrency=concurrency, deadline=deadline, **option_words
    )
    try:
        for index, result in batch:
            record = run.take(index, result)
            if record is not None:
                run.priced(record_cost(run.service, record))
    except KeyboardInterrupt:
        batch.close()  # the jobs in flight are cancelled before the cell ends
        raise run.stopped("interrupted", batch.abandoned) from None
    except BudgetExceeded as exc:
        batch.close()
        return run.budget_reached(exc, batch.abandoned)
    except BaseException as exc:
        batch.close()
        run.failed(exc, batch.abandoned)
        raise
    return run.frame()


async def run_many_async(
    endpoint: str,
    inputs: Any,
    options: JobOptions | None = None,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    deadline: float | None = None,
    quiet: bool = False,
    connection: Connection | None = None,
    **option_words: Unpack[JobOptionWords],
) -> pd.DataFrame:
    """``run_many`` for a cell that awaits, where the panel's Cancel stops the map: nothing
    more is submitted, and the cell raises ``Interrupted``, as Ctrl-C does."""
    run = _Run(endpoint, inputs, quiet=quiet, cancellable=True, connection=connection)
    assert run.cancelled is not None
    client = run.service.async_client()
    batch = client.endpoint(endpoint).map(
        run.items, options, concurrency=concurrency, deadline=deadline, **option_words
    )
    cancel: asyncio.Future[Any] = asyncio.ensure_future(run.cancelled.wait())
    following: asyncio.Future[Any] | None = None
    try:
        while True:
            if following is None:
                following = asyncio.ensure_future(anext(batch, None))
            await asyncio.wait(
                {following, cancel}, timeout=TICK, return_when=asyncio.FIRST_COMPLETED
            )
            if cancel.done():
                following.cancel()
                await asyncio.gather(following, return_exceptions=True)
                await batch.aclose()  # the jobs in flight are cancelled first
                raise run.stopped("cancelled", batch.abandoned)
            if not following.done():
                run.tick()  # elapsed and ETA move on between results
                continue
            got, following = following.result(), None
            if got is None:
                break
            record = run.take(*got)
            if record is not None:
                run.priced(await record_cost_async(run.service, record))
    except asyncio.CancelledError:
        await batch.aclose()
        raise run.stopped("interrupted", batch.abandoned) from None
    except Interrupted:
        raise
    except BudgetExceeded as exc:
        await batch.aclose()
        return run.budget_reached(exc, batch.abandoned)
    except BaseException as exc:
        await batch.aclose()
        run.failed(exc, batch.abandoned)
        raise
    finally:
        cancel.cancel()
        await batch.aclose()
    return run.frame()

"""``%runpod batch``: a sweep the service keeps, followed in the map's panel, a DataFrame
back; it outlives the kernel (docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nbext.client import AsyncBatch, Batch
from nbext.models.batches import BatchRecord, BatchRequest

from .cost import total_text
from .map import inputs_of, results_frame
from .widgets.map import MapPanel

if TYPE_CHECKING:
    import pandas as pd

KEPT_INPUTS = Path("nbext-batches")
"""Where the inputs of the batches started here are kept, relative to the kernel's folder."""


def attach_line(batch: Batch | AsyncBatch) -> str:
    return f"%runpod batch attach {batch.endpoint_id} {batch.id}"


def keep_inputs(batch_id: str, items: list[dict[str, Any]]) -> None:
    """Keep a batch's inputs for whoever attaches later; a folder that cannot be written
    costs only the input columns then, said in one line."""
    try:
        KEPT_INPUTS.mkdir(mode=0o700, exist_ok=True)
        path = KEPT_INPUTS / f"{batch_id}.json"
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            json.dump(items, f)
    except OSError as exc:
        print(f"batch {batch_id}: its inputs were not kept ({exc})", file=sys.stderr)


def kept_inputs(batch_id: str) -> pd.DataFrame:
    """The inputs kept for ``batch_id`` as a frame (empty when none were kept here)."""
    import pandas as pd

    with contextlib.suppress(OSError, ValueError):
        return inputs_of(json.loads((KEPT_INPUTS / f"{batch_id}.json").read_text()))[1]
    return pd.DataFrame()


def batch_frame(inputs: pd.DataFrame, results: list[BatchRequest]) -> pd.DataFrame:
    """One row per input: its columns, then the request's id, state, run_ms, output,
    error, and when it started and completed."""
    import pandas as pd

    if len(inputs) != len(results):
        inputs = pd.DataFrame(index=range(len(results)))
    frame = results_frame(inputs, dict(enumerate(results)), len(results))
    for column in ("started_at", "completed_at"):
        stamps = [getattr(r, column) for r in results]
        frame[column] = pd.to_datetime(pd.Series(stamps, dtype="Int64"), unit="ms", utc=True)
    return frame


class BatchPanel(MapPanel):
    """The map's panel, fed from the batch's record; it names the batch and how to attach."""

    def __init__(self, batch: Batch | AsyncBatch, *, cancellable: bool) -> None:
        record = batch.record
        assert record is not None
        ago = time.time() - record.created_at / 1000 if record.created_at else 0.0
        super().__init__(f"{batch.endpoint_id} · {batch.id}", record.request_total, started_ago=ago)
        self.batch = batch
        cancel = f"%runpod batch cancel {batch.endpoint_id} {batch.id} cancels it"
        self.hint = (
            f"{cancel} (or the Cancel button)"
            if cancellable
            else (f"interrupt the kernel (■) to detach, the batch runs on; {cancel}")
        )
        self.cancel_available = cancellable
        self.progress(record)

    def progress(self, record: BatchRecord) -> None:
        self.total = record.request_total
        self.counts = +Counter(
            {"COMPLETED": record.request_completed, "FAILED": record.request_failed}
        )
        self.costs = self.batch.costs
        self.note = (
            f"{record.status.value} · {record.request_in_progress} running · "
            f"attach from any kernel: {attach_line(self.batch)}"
        )
        self.refresh()

    def end(self, how: str) -> None:
        self.finish(f"batch {self.batch.id} {how}; read it again: {attach_line(self.batch)}")


def follow(batch: Batch, inputs: pd.DataFrame, quiet: bool = False) -> pd.DataFrame | None:
    """Follow ``batch`` in a panel (``quiet``: a line at the end) until every request
    has ended; its frame (None when the kernel was interrupted: the batch runs on)."""
    panel = None
    try:
        if not quiet:
            panel = BatchPanel(batch, cancellable=False)
            panel.show()
        record = batch.wait(timeout=float("inf"), progress=panel.progress if panel else None)
    except KeyboardInterrupt:
        if panel is not None:
            panel.end("detached: it runs on")
        print(f"detached from batch {batch.id}, which runs on: {attach_line(batch)}")
        return None
    except BaseException as exc:
        if panel is not None:
            panel.end(f"not followed: {exc}")
        raise
    frame = batch_frame(inputs, batch.results())
    if panel is not None:
        panel.end(f"{record.status.value}: every request ended")
    else:  # quiet: one line
        spent = total_text(batch.costs)
        print(
            f"batch {batch.id} {record.status.value}: {record.request_completed:,} of "
            f"{record.request_total:,} completed, {record.request_failed:,} failed"
            + (f"; {spent}" if spent else "")
        )
    return frame


async def follow_async(batch: AsyncBatch, inputs: pd.DataFrame) -> pd.DataFrame | None:
    """``follow`` by awaiting (a background task, or a cell that awaits): the panel's
    Cancel cancels the batch, which is then followed until its running requests end."""
    panel = BatchPanel(batch, cancellable=True)
    cancels: list[asyncio.Task[Any]] = []
    panel.on_cancel = lambda: cancels.append(asyncio.ensure_future(batch.cancel()))
    panel.show()
    try:
        record = await batch.wait(timeout=float("inf"), progress=panel.progress)
        frame = batch_frame(inputs, await batch.results())
    except asyncio.CancelledError:
        panel.end("detached: it runs on")
        return None
    except BaseException as exc:
        panel.end(f"not followed: {exc}")
        raise
    panel.end(f"{record.status.value}: every request ended")
    return frame

"""``StreamLedger`` alone: which chunks continue a stream, and what the output gives back."""

from __future__ import annotations

import pytest

from nbext.client import ChunksMissing
from nbext.client._stream import StreamLedger
from nbext.models import JobResult, JobStatus, StreamChunk


def chunk(index: int | None, output: str = "x") -> StreamChunk:
    metrics = {} if index is None else {"stream_index": index}
    return StreamChunk(output=output, metrics=metrics)


def test_a_chunk_handed_out_twice_is_taken_once_and_a_skipped_index_breaks() -> None:
    ledger = StreamLedger()
    assert [c.metrics["stream_index"] for c in ledger.admit([chunk(0), chunk(1), chunk(0)])] == [
        0,
        1,
    ]
    assert not ledger.needs_output
    assert ledger.admit([chunk(3), chunk(4)]) == []  # #2 never came: nothing after it either
    assert ledger.broken and ledger.admit([chunk(2)]) == []


def test_a_doubt_is_cleared_by_the_next_expected_index() -> None:
    ledger = StreamLedger()
    ledger.admit([chunk(0)])
    ledger.maybe_lost()
    assert ledger.needs_output
    assert len(ledger.admit([chunk(1)])) == 1
    assert not ledger.needs_output


def test_unnumbered_chunks_stop_at_the_first_doubt() -> None:
    ledger = StreamLedger()
    assert len(ledger.admit([chunk(None)])) == 1
    ledger.maybe_lost()
    assert ledger.broken and ledger.admit([chunk(None)]) == []


def test_recovery_gives_the_outputs_not_yet_read_or_says_what_may_be_missing() -> None:
    ledger = StreamLedger(values=2, broken=True)
    done = JobResult(id="j", status=JobStatus.COMPLETED, output=["a", "b", "c", "d"])
    assert [c.output for c in ledger.recover(done, "ep")] == ["c", "d"]
    assert not ledger.needs_output
    failed = JobResult(id="j", status=JobStatus.FAILED, error="boom")
    with pytest.raises(ChunksMissing, match=r"output #4 on may be missing.*ended FAILED"):
        StreamLedger(values=4, doubt=True).recover(failed, "ep")
    short = JobResult(id="j", status=JobStatus.COMPLETED, output=[])
    with pytest.raises(ChunksMissing, match="does not aggregate"):
        StreamLedger(values=1, doubt=True).recover(short, "ep")

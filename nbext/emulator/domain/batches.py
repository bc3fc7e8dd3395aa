"""Batch jobs (docs/behaviour.md#batches): each request runs as a job of the endpoint and
keeps that job's result (how: docs/architecture.md#job-domain-modules)."""

from __future__ import annotations

import logging
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nbext.models import TTL_DEFAULT_MS, JobStatus, json_kind
from nbext.models.batches import (
    BATCH_QUEUED_MAX,
    BATCH_REQUESTS_MAX,
    BATCHES_ACTIVE_MAX,
    BatchStatus,
)

from .clock import Clock
from .endpoints import Endpoint
from .errors import Conflict, InvalidInput, NotFound, StoreFailed
from .ids import new_id
from .job_service import JobService
from .jobs import UNSET, Job
from .store_port import Record, read_record

log = logging.getLogger("nbext.emulator")
B, S = BatchStatus, JobStatus
BATCH, REQUEST = "batch", "batch_request"
NOT_OK = (S.FAILED, S.TIMED_OUT, S.CANCELLED)
"""The end states ``requestFailed`` counts: a request that did not complete."""
Row = tuple[str, str, Record]
FIELDS = ("id", "input", "error", "started_at", "completed_at")
"""A request record's fields kept as they are (with ``batch_id``, ``status``, ``output``)."""


@dataclass(eq=False)
class Request:
    """One input of a batch, and its result once its job ended."""

    id: str
    input: dict[str, Any]
    status: JobStatus = S.IN_QUEUE
    output: Any = UNSET
    error: str | None = None
    started_at: float | None = None
    completed_at: float | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status.value}
        if self.status is S.COMPLETED:
            out["output"] = None if self.output is UNSET else self.output
        elif self.status in NOT_OK:
            cancelled = "cancelled: its batch or its job was" if self.status is S.CANCELLED else ""
            out["error"] = self.error or cancelled
        out["startedAt"] = _ms(self.started_at)
        out["completedAt"] = _ms(self.completed_at)
        return out

    def to_record(self, batch_id: str) -> Record:
        record = {name: getattr(self, name) for name in FIELDS}
        unset = self.output is UNSET
        output = {"has_output": not unset, "output": None if unset else self.output}
        return {**record, "batch_id": batch_id, "status": self.status.value, **output}


@dataclass(eq=False)
class Batch:
    """A batch of one endpoint; ``requests`` in the order they were added."""

    id: str
    endpoint_id: str
    created_at: float
    status: BatchStatus = B.DRAFT
    requests: dict[str, Request] = field(default_factory=dict)
    pending: deque[Request] = field(default_factory=deque)
    """Requests of a FINALIZED batch not handed to the queue yet, in order."""
    fed: int = 0
    """Requests handed to the queue whose jobs have not ended."""

    def count(self, *statuses: JobStatus) -> int:
        return sum(1 for request in self.requests.values() if request.status in statuses)

    @property
    def ended(self) -> int:
        return self.count(S.COMPLETED, *NOT_OK)

    @property
    def active(self) -> bool:
        """Counts toward the 10 of its endpoint: a draft, or running and not done."""
        done = self.ended == len(self.requests)
        return self.status is B.DRAFT or (self.status is B.FINALIZED and not done)

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "endpointId": self.endpoint_id,
            "status": self.status.value,
            "requestTotal": len(self.requests),
            "requestInProgress": self.count(S.IN_PROGRESS),
            "requestCompleted": self.count(S.COMPLETED),
            "requestFailed": self.count(*NOT_OK),
            "createdAt": _ms(self.created_at),
        }

    def to_record(self) -> Record:
        return {
            "id": self.id,
            "endpoint_id": self.endpoint_id,
            "status": self.status.value,
            "created_at": self.created_at,
        }


class Batches:
    """Every batch of one emulator; runs their requests through ``JobService``."""

    def __init__(self, clock: Clock, jobs: JobService, endpoint_type: Callable[[str], str]) -> None:
        self.clock = clock
        self.jobs = jobs
        self.store = jobs.store
        self.endpoint_type = endpoint_type
        """The endpoint record's ``type``: batches run on QUEUE endpoints only."""
        self.batches: dict[str, Batch] = {}
        self._restored = False
        jobs.on_change.append(self._job_changed)

    # ---- reading ---------------------------------------------------------------------

    def known(self, endpoint_id: str) -> None:
        """404 for an endpoint that neither exists nor has batches (one since deleted has:
        its batches are still read)."""
        if not any(b.endpoint_id == endpoint_id for b in self.batches.values()):
            self.jobs.endpoint(endpoint_id)

    def get(self, endpoint_id: str, batch_id: str) -> Batch:
        batch = self.batches.get(batch_id)
        if batch is None or batch.endpoint_id != endpoint_id:
            raise NotFound(f"batch {batch_id!r} not found on endpoint {endpoint_id!r}")
        return batch

    def listing(self, endpoint_id: str, offset: int, limit: int) -> dict[str, Any]:
        """The endpoint's batches, newest first, a page at a time."""
        mine = [b for b in self.batches.values() if b.endpoint_id == endpoint_id][::-1]
        return _page("batches", mine, offset, limit)

    def results(self, endpoint_id: str, batch_id: str, offset: int, limit: int) -> dict[str, Any]:
        """A page of the batch's requests, in the order they were added."""
        requests = list(self.get(endpoint_id, batch_id).requests.values())
        return _page("requests", requests, offset, limit)

    # ---- drafts ----------------------------------------------------------------------

    def create(self, endpoint_id: str, body: Any) -> Batch:
        """``POST /batch``: a DRAFT holding the requests of ``body`` (a JSON array)."""
        endpoint = self._queue_endpoint(endpoint_id)
        if not isinstance(body, list):
            raise InvalidInput('request body must be a JSON array such as [{"input": {...}}]')
        inputs = _inputs(body, "body")
        active = sum(1 for b in self.batches.values() if b.endpoint_id == endpoint_id and b.active)
        if active >= BATCHES_ACTIVE_MAX:
            raise Conflict(
                f"endpoint {endpoint_id} has {active} active batches, the most it may have; "
                "a batch stops counting once done or cancelled: wait for one, or cancel one"
            )
        batch = Batch(
            id="batch_" + new_id(20), endpoint_id=endpoint_id, created_at=self.clock.now()
        )
        self._check_room(endpoint, batch, len(inputs))
        self._add(batch, inputs, (BATCH, batch.id, batch.to_record()))
        self.batches[batch.id] = batch
        return batch

    def add(self, endpoint_id: str, batch_id: str, body: Any) -> Batch:
        """``POST /batch/{id}/requests``: more requests at the end of a draft."""
        batch = self._draft(endpoint_id, batch_id, "requests can be added")
        inputs = _inputs(_requests_of(body, '{"requests": [{"input": {...}}]}'), "requests")
        self._check_room(self._queue_endpoint(endpoint_id), batch, len(inputs))
        self._add(batch, inputs)
        return batch

    def update(self, endpoint_id: str, batch_id: str, body: Any) -> Batch:
        """``PUT /batch/{id}``: new inputs for requests of a draft, named by id."""
        batch = self._draft(endpoint_id, batch_id, "requests can be updated")
        items = _requests_of(body, '{"requests": [{"id": "...", "input": {...}}]}')
        changes: list[Request] = []
        for i, item in enumerate(items):
            _check_item(item, f"requests[{i}]", ("id", "input"))
            old = batch.requests.get(item["id"]) if isinstance(item["id"], str) else None
            if old is None:
                raise NotFound(
                    f"requests[{i}]: batch {batch_id} has no request {item['id']!r}; "
                    "nothing was changed"
                )
            changes.append(Request(old.id, item["input"]))
        self.store.put_many([(REQUEST, r.id, r.to_record(batch.id)) for r in changes])
        for request in changes:
            batch.requests[request.id].input = request.input
        return batch

    def remove_request(self, endpoint_id: str, batch_id: str, request_id: str) -> Batch:
        """``DELETE /batch/{id}/requests/{requestId}``: take a request out of a draft."""
        batch = self._draft(endpoint_id, batch_id, "requests can be removed")
        request = batch.requests.get(request_id)
        if request is None:
            raise NotFound(f"batch {batch_id} has no request {request_id!r}")
        self.store.delete(REQUEST, request_id)
        del batch.requests[request_id]
        return batch

    def finalize(self, endpoint_id: str, batch_id: str) -> Batch:
        """``POST /batch/{id}/finalize``: the draft starts running (again: no change)."""
        batch = self.get(endpoint_id, batch_id)
        if batch.status is B.FINALIZED:
            return batch
        self._draft(endpoint_id, batch_id, "a batch can be finalized")
        if not batch.requests:
            raise Conflict(
                f"batch {batch_id} has no requests; add some before finalizing it "
                f"(POST /batch/{batch_id}/requests)"
            )
        self._queue_endpoint(endpoint_id)
        self.store.put(BATCH, batch.id, {**batch.to_record(), "status": B.FINALIZED.value})
        batch.status = B.FINALIZED
        batch.pending.extend(batch.requests.values())
        self._feed(batch)
        return batch

    def cancel(self, endpoint_id: str, batch_id: str) -> Batch:
        """``POST /batch/{id}/cancel``: requests not started are dropped (never run, so
        never billed); requests in progress finish. Cancelling again changes nothing."""
        batch = self.get(endpoint_id, batch_id)
        if batch.status is B.CANCELLED:
            return batch
        if not batch.active:
            raise Conflict(
                f"batch {batch_id} is {batch.status.value} and every request of it has "
                "ended; there is nothing left to cancel"
            )
        now = self.clock.now()
        queued = [r for r in batch.requests.values() if r.status is S.IN_QUEUE]
        unfed = [r for r in queued if r.id not in self.jobs.jobs]
        dropped = {"status": "CANCELLED", "completed_at": now}
        records = [(REQUEST, r.id, {**r.to_record(batch.id), **dropped}) for r in unfed]
        records.append((BATCH, batch.id, {**batch.to_record(), "status": B.CANCELLED.value}))
        self.store.put_many(records)  # all of it, or nothing changed (StoreFailed)
        batch.status = B.CANCELLED
        batch.pending.clear()
        for request in unfed:
            request.completed_at, request.status = now, S.CANCELLED
        for request in queued:
            job = self.jobs.jobs.get(request.id)
            if job is not None and job.status is S.IN_QUEUE:
                self.jobs.lifecycle.transition(job, S.CANCELLED)
        return batch

    # ---- running ---------------------------------------------------------------------

    def _feed(self, batch: Batch) -> None:
        """Hand requests to the endpoint's queue until ``window`` of them are there."""
        if batch.status is not B.FINALIZED:
            return
        endpoint = self.jobs.endpoints.get(batch.endpoint_id)
        if endpoint is None:
            self._fail(batch, f"endpoint {batch.endpoint_id} was deleted")
            return
        window = max(4, 2 * endpoint.workers_max)
        while batch.pending and batch.fed < window:
            request = batch.pending.popleft()
            now = self.clock.now()
            job = Job(
                id=request.id,
                endpoint_id=batch.endpoint_id,
                input=request.input,
                sync=False,
                submitted_at=now,
                queued_at=now,
                ttl_ms=TTL_DEFAULT_MS,
                batch_id=batch.id,
            )
            batch.fed += 1
            try:
                self.jobs.enqueue(job)
            except StoreFailed as exc:  # the request waits; the store is tried again
                batch.fed -= 1
                batch.pending.appendleft(request)
                log.error("batch %s waits for the store: %s", batch.id, exc.message)
                self.clock.call_later(1.0, self._feed, batch)
                return

    def _job_changed(self, job: Job) -> None:
        """A job's state changed: if it runs a request, the request follows it."""
        if job.batch_id is None or not self._restored:
            return
        batch = self.batches.get(job.batch_id)
        request = batch.requests.get(job.id) if batch is not None else None
        if batch is None or request is None or request.status.is_final:
            return  # (a request's result is its job's first end; a retry is the job's)
        if job.over:
            batch.fed -= 1
        if job.removed is not None and batch.status is not B.FINALIZED:
            self._end(batch, request, S.CANCELLED, None)  # its batch no longer runs
        elif job.removed is not None:  # purge-queue, its TTL: the request is queued again
            request.status = S.IN_QUEUE
            batch.pending.appendleft(request)
            # Later, not now: the endpoint itself may be going (its jobs go first).
            self.clock.call_later(0, self._feed, batch)
        elif job.status is S.IN_PROGRESS:
            request.started_at, request.status = job.started_at, S.IN_PROGRESS
        elif job.status.is_final:
            self._end(batch, request, job.status, job)
            self._feed(batch)

    def _end(
        self, batch: Batch, request: Request, status: JobStatus, job: Job | None, error: str = ""
    ) -> None:
        """The request's result: its job's, or ``error`` when it ends without running."""
        if job is not None:
            request.output, request.error = job.output, job.error
            request.started_at, request.completed_at = job.started_at, job.ended_at
        else:
            request.error, request.completed_at = error or None, self.clock.now()
        request.status = status
        self.jobs.persistence.write(REQUEST, request.id, request.to_record(batch.id))

    def _fail(self, batch: Batch, reason: str) -> None:
        """The batch itself failed (its endpoint was deleted): what had not ended fails."""
        batch.status = B.FAILED
        batch.pending.clear()
        self.jobs.persistence.write(BATCH, batch.id, batch.to_record())
        for request in batch.requests.values():
            if not request.status.is_final:
                self._end(batch, request, S.FAILED, None, reason)

    # ---- checks and records ----------------------------------------------------------

    def _queue_endpoint(self, endpoint_id: str) -> Endpoint:
        endpoint = self.jobs.endpoint(endpoint_id)
        kind = self.endpoint_type(endpoint_id)
        if kind != "QUEUE":
            raise InvalidInput(
                f"endpoint {endpoint_id} is a {kind} endpoint; batches run on queue-based "
                "(QUEUE) endpoints only"
            )
        return endpoint

    def _draft(self, endpoint_id: str, batch_id: str, what: str) -> Batch:
        batch = self.get(endpoint_id, batch_id)
        if batch.status is not B.DRAFT:
            raise Conflict(f"batch {batch_id} is {batch.status.value}; {what} only in a DRAFT")
        return batch

    def _check_room(self, endpoint: Endpoint, batch: Batch, adding: int) -> None:
        total = len(batch.requests) + adding
        if total > BATCH_REQUESTS_MAX:
            raise InvalidInput(
                f"a batch holds at most {BATCH_REQUESTS_MAX:,} requests, and this call would "
                f"make {total:,}; nothing of it was added. Put the rest in another batch"
            )
        queued = sum(1 for j in endpoint.queue.values() if j.batch_id is None) + sum(
            b.count(S.IN_QUEUE) for b in self.batches.values() if b.endpoint_id == endpoint.id
        )
        if queued + adding > BATCH_QUEUED_MAX:
            raise Conflict(
                f"endpoint {endpoint.id} has {queued:,} requests waiting to start, and may "
                f"have at most {BATCH_QUEUED_MAX:,}; nothing of this call was added. Wait "
                "for some to start"
            )

    def _add(self, batch: Batch, inputs: list[dict[str, Any]], *more: Row) -> None:
        """New requests, stored (with ``more``) then kept, or ``StoreFailed`` and none."""
        requests = [Request(str(uuid.uuid4()), value) for value in inputs]
        self.store.put_many([*((REQUEST, r.id, r.to_record(batch.id)) for r in requests), *more])
        batch.requests.update((request.id, request) for request in requests)

    # ---- restart and reset -----------------------------------------------------------

    def load(self) -> None:
        """Read the stored batches (before the jobs are restored; ``restore`` follows)."""
        for record in self.store.all(BATCH):
            batch = read_record(BATCH, record, _batch_from_record)
            self.batches[batch.id] = batch
        for record in self.store.all(REQUEST):
            batch_id, request = read_record(REQUEST, record, _request_from_record)
            owner = self.batches.get(batch_id)
            if owner is not None:  # else its batch's creation was never answered
                owner.requests[request.id] = request

    def restore(self) -> None:
        """Take back what had not ended, once the jobs are back (on the loop)."""
        self._restored = True
        for batch in self.batches.values():
            for request in batch.requests.values():
                if request.status.is_final:
                    continue
                job = self.jobs.jobs.get(request.id)
                if job is None and batch.status is B.FINALIZED:
                    batch.pending.append(request)
                elif job is None and batch.status is not B.DRAFT:  # dropped by a cancel
                    self._end(batch, request, S.CANCELLED, None)
                elif job is None:
                    continue
                elif job.status.is_final or batch.status is B.FINALIZED:
                    batch.fed += 1  # as it was fed; its state (ended, say) follows
                    self._job_changed(job)
                else:  # cancelled while it ran, then queued again as its worker died
                    self.jobs.lifecycle.transition(job, S.CANCELLED)
            if batch.status is B.FINALIZED:
                self._feed(batch)

    def reset(self) -> None:
        """Forget every batch (``Emulator.reset``; before the jobs go, so none is fed)."""
        self.batches.clear()
        self.store.clear(BATCH)
        self.store.clear(REQUEST)


# ---- wire and records -----------------------------------------------------------------


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def _page(name: str, every: list[Batch] | list[Request], offset: int, limit: int) -> dict[str, Any]:
    items = [item.to_wire() for item in every[offset : offset + limit]]
    more = offset + len(items) < len(every)
    return {name: items, "total": len(every), "offset": offset, "limit": limit, "hasMore": more}


def _requests_of(body: Any, shape: str) -> list[Any]:
    if (
        not isinstance(body, dict)
        or set(body) != {"requests"}
        or type(body["requests"]) is not list
    ):
        raise InvalidInput(f"request body must be a JSON object such as {shape}, no more")
    return list(body["requests"])


def _inputs(items: list[Any], where: str) -> list[dict[str, Any]]:
    """Each item's ``input``; an item that is not ``{"input": {...}}`` refuses them all."""
    for i, item in enumerate(items):
        _check_item(item, f"{where}[{i}]", ("input",))
    return [item["input"] for item in items]


def _check_item(item: Any, at: str, fields: tuple[str, ...]) -> None:
    """``item`` has exactly ``fields``, its ``input`` a JSON object; else one line saying
    which item and what it has."""
    if not isinstance(item, dict) or set(item) != set(fields):
        got = f"fields {', '.join(map(repr, item))}" if isinstance(item, dict) else json_kind(item)
        shape = ", ".join(f'"{name}": ...' for name in fields)
        raise InvalidInput(f"{at} must be an object {{{shape}}}, got {got}; nothing was changed")
    if not isinstance(item["input"], dict):
        got = json_kind(item["input"])
        raise InvalidInput(f"{at}.input must be a JSON object, got {got}; nothing was changed")


def _batch_from_record(record: Record) -> Batch:
    fields = (str(record["id"]), str(record["endpoint_id"]), float(record["created_at"]))
    return Batch(*fields, status=B(record["status"]))


def _request_from_record(record: Record) -> tuple[str, Request]:
    output = record["output"] if record["has_output"] else UNSET
    request = Request(**{n: record[n] for n in FIELDS}, status=S(record["status"]), output=output)
    return str(record["batch_id"]), request

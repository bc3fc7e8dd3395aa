"""Following a job to its end: feeding its panel and record, and the panel's Cancel.

The polling and streaming are the client's; why Cancel only asks mid-cell:
docs/architecture.md#notebook-modules.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from nbext.client import AsyncJob, Conflict, Job, NbextError, NotFound, Phase, Timeout
from nbext.models import JobResult, JobStatus, StreamChunk

from .cost import record_cost
from .errors import NotebookError
from .interrupts import Interrupted, deferred_interrupts
from .uipoll import UiPump, running_loop
from .widgets.live import INTERRUPT_HINT

if TYPE_CHECKING:
    from .connection import Service
    from .registry import JobRecord, JobRegistry
    from .widgets.job import JobPanel

NO_LIMIT = 7 * 24 * 3600.0
"""How long following may take when the user set no ``--timeout``: a job's longest life."""
FINAL_WAIT = 30.0
"""Deadline for reading the result of a job whose stream has ended (it is final)."""
CANCEL_CONFIRM = 30.0
"""How long Ctrl-C waits for the service to confirm CANCELLED."""
CANCELLED_NOTE = "cancelled from the panel"
UNKNOWN_OUTCOME = "cancel sent; its outcome is unknown"
TICK = 0.1
"""Seconds between two redraws of a running panel's clock in the background."""


class JobFollower:
    """Follows one job for its panel and record; performs the panel's Cancel.

    ``job``: the sync handle (made from the record if None); ``stream``: read the job's
    stream for the panel (``--stream``); ``timeout``: how long to follow (None: to the
    end); ``on_end``: called with the record at each final state (``-o NAME``).
    """

    def __init__(
        self,
        service: Service,
        registry: JobRegistry,
        record: JobRecord,
        panel: JobPanel | None = None,
        *,
        job: Job | None = None,
        stream: bool = False,
        timeout: float | None = None,
        on_end: Callable[[JobRecord], None] | None = None,
    ) -> None:
        self.service = service
        self.registry = registry
        self.record = record
        self.panel = panel
        self.job = job or service.client.endpoint(record.endpoint_id).job(record.id)
        self.stream = stream
        self.timeout = timeout
        self.on_end = on_end
        self.task: asyncio.Task[JobResult | None] | None = None
        self._actions: set[asyncio.Task[Any]] = set()
        self._pump: UiPump | None = None
        """Set while a blocking follow handles clicks; Cancel then only asks."""
        self._cancel_asked = False
        self._awaited = False
        """A cell awaits ``follow_async``: Cancel is handled by the loop meanwhile."""
        self._error: NbextError | None = None
        self._polling: asyncio.Future[JobResult] | None = None
        """The async follower's states, while it polls: a cancel cuts them short."""
        self._own_change = False
        record.follower = self
        if panel is not None:
            panel.provenance = record.provenance
            panel.cancel_button.on_click(self._cancel_clicked)
            record.watchers.append(self._record_changed)

    # ---- what happens to the job -------------------------------------------------------

    def _take(self, batch: list[StreamChunk]) -> float:
        """Give one answer's chunks to the panel; seconds to pause before drawing them."""
        if self.panel is None:
            return 0.0
        for chunk in batch:
            self.panel.add_chunk(chunk, draw=False)
        return self.panel.throttle_wait()

    def _draw(self) -> None:
        """Draw a stream answer's chunks unless the throttle's tick just did (twice is waste)."""
        if self.panel is not None:
            self.panel.refresh()

    def _tick(self) -> None:
        if self.panel is not None:
            self.panel.tick()

    @contextlib.contextmanager
    def _own_change_of_record(self) -> Iterator[None]:
        """The record changes by this follower's hand: its watcher need not show it."""
        self._own_change = True
        try:
            yield
        finally:
            self._own_change = False

    def _result(self, result: JobResult) -> None:
        with self._own_change_of_record():
            self.registry.update(self.record.id, result)
        if self.panel is not None:
            self.panel.set_result(result)

    def _removed(self, exc: NotFound) -> None:
        reason = f"the service no longer knows job {self.record.id}: {exc}"
        with self._own_change_of_record():
            self.registry.mark_removed(self.record.id, reason)
        if self.panel is not None:
            self.panel.set_removed(reason)

    def _note(self, note: str) -> None:
        if self.panel is not None:
            self.panel.set_note(note)

    def finish(self, result: JobResult) -> None:
        """Show a final result: record, panel and its cost, ``on_end`` (``-o NAME``)."""
        self._result(result)
        if self.panel is not None:
            self.panel.cost = record_cost(self.service, self.record)
            self.panel.refresh(force=True)
        if self.on_end is not None:
            self.on_end(self.record)

    def _record_changed(self, record: JobRecord) -> None:
        """The job's record changed elsewhere (another cell, ``%runpod``): show it."""
        if self._own_change or self.panel is None:
            return
        panel = self.panel
        if record.removed is not None:
            if panel.state != "REMOVED":
                panel.set_removed(record.removed)
            return
        result = record.result
        if result is None:
            return
        if panel.final and not result.status.is_final:
            panel.restart()  # retried from elsewhere: this panel follows the new run
        panel.retries = record.retries
        panel.cost = record.cost
        panel.set_result(result)

    def _left(self, started: float) -> float:
        """What is left of the following's time for the stream, once the job runs."""
        limit = NO_LIMIT if self.timeout is None else self.timeout
        return max(0.0, started + limit - time.monotonic())

    def _polls_on(self, phase: Phase) -> bool:
        """Show one /status answer and its phase; whether to go on polling: not once the
        job ended, nor, with ``stream``, once it left the queue (its stream is read
        instead, and chunks the job yielded before are kept for it by the service)."""
        result = phase.result
        if self.panel is not None:
            self.panel.phase = phase
        self._result(result)
        if result.status.is_final:
            return False
        return not (self.stream and result.status is not JobStatus.IN_QUEUE)

    def _stopped(self, exc: BaseException, *, reraise: bool) -> None:
        """How following ended early: removed, given up, or an error (noted; re-raised
        for a blocking cell, kept for an awaiting one)."""
        if isinstance(exc, NotFound):
            self._removed(exc)
            return
        if isinstance(exc, Timeout) and exc.timeout is not None and self.timeout is not None:
            self._note(  # the user's --timeout passed (not one request's)
                f"stopped waiting after {self.timeout:g} s; the job goes on "
                f"(%runpod jobs shows it, %runpod cancel {self.record.id} stops it)"
            )
            return
        if not isinstance(exc, Exception) or (reraise and not isinstance(exc, NbextError)):
            raise exc
        detail = str(exc) if isinstance(exc, NbextError) else f"{type(exc).__name__}: {exc}"
        self._note(f"stopped following the job: {detail}")
        if isinstance(exc, NbextError):
            if reraise:
                raise exc
            self._error = exc  # an awaiting cell raises it

    # ---- blocking ----------------------------------------------------------------------

    def follow(self, interrupted: bool = False) -> JobResult | None:
        """Follow the job from the calling thread; the final result, or None when the job
        was removed or ``timeout`` passed. Ctrl-C cancels the job, waits for CANCELLED and
        raises ``Interrupted``; ``interrupted``: Ctrl-C came during the submission."""
        with UiPump(enabled=self.panel is not None) as pump:
            self._stoppable(pump.available, INTERRUPT_HINT)
            self._pump = pump
            try:
                if interrupted:
                    raise KeyboardInterrupt
                return self._follow_sync(pump)
            except KeyboardInterrupt:
                raise self._interrupted() from None
            finally:
                self._pump = None
                self._left_running()

    def _left_running(self) -> None:
        """The cell ends with the job running (``--timeout``): the idle kernel hears Cancel
        again but no interrupt, so the panel names the command that cancels it."""
        if self.panel is not None and not self.panel.final:
            self._stoppable(True, f"%runpod cancel {self.record.id} to cancel")

    def _stoppable(self, cancel_available: bool, hint: str) -> None:
        """Whether the panel's Cancel can act now, and how else to stop the job."""
        if self.panel is not None:
            self.panel.cancel_available = cancel_available
            self.panel.hint = hint
            self.panel.refresh(force=True)

    def _heard(self, pump: UiPump, seconds: float = 0.0) -> bool:
        """Between two answers: handle the clicks that came (for ``seconds``, the
        panel's draw throttle); a Cancel click is acted on at once. Whether it was."""
        pump.wait(seconds, until=lambda: self._cancel_asked, tick=self._tick)
        if not self._cancel_asked:
            return False
        self._cancel_asked = False
        self.cancel(follow=False)
        return True

    def _polled(self, pump: UiPump, started: float) -> JobResult:
        """The client's states until one ends the polling; they start again after a
        Cancel click, so the job's new state is read at once."""
        while True:
            with contextlib.closing(self.job.phases(timeout=self._left(started))) as phases:
                for phase in phases:
                    polls_on = self._polls_on(phase)
                    if self._heard(pump) or not polls_on:
                        break
            if not polls_on:
                return phase.result

    def _follow_sync(self, pump: UiPump) -> JobResult | None:
        started = time.monotonic()
        try:
            result = self._polled(pump, started)
            if self.stream:
                left = self._left(started)
                with contextlib.closing(self.job.stream_batches(timeout=left)) as batches:
                    for batch in batches:
                        self._heard(pump, self._take(batch))
                        self._draw()
                result = self.job.wait(timeout=FINAL_WAIT, raise_on_failure=False)
        except BaseException as exc:
            self._stopped(exc, reraise=True)
            return None
        self.finish(result)
        return result

    def _interrupted(self) -> Interrupted:
        """Ctrl-C arrived while following: cancel the job and say how that went."""
        job_id, where = self.record.id, f"on endpoint {self.record.endpoint_id!r}"
        self._note("Ctrl-C: cancelling the job…")
        try:
            with deferred_interrupts():
                self.job.cancel()
        except Conflict:
            result = self.job.status()
            self.finish(result)
            return Interrupted(
                f"job {job_id} {where} had already ended {result.status.value} "
                "before the cancel arrived"
            )
        except NotFound as exc:
            self._removed(exc)
            return Interrupted(f"job {job_id} {where} is gone from the service; nothing to cancel")
        except NbextError as exc:
            self._note(f"the cancel request failed: {exc}")
            return Interrupted(
                f"job {job_id} {where}: the cancel request failed ({exc}); it may still run: "
                f"%runpod cancel {job_id}"
            )
        try:
            result = self.job.wait(timeout=CANCEL_CONFIRM, raise_on_failure=False)
        except KeyboardInterrupt:
            self._note("cancel requested; stopped waiting for the service to confirm it")
            return Interrupted(
                f"cancel of job {job_id} {where} requested; stopped waiting for confirmation"
            )
        except NbextError as exc:
            self._note(f"cancel requested, but its confirmation did not come: {exc}")
            return Interrupted(f"cancel of job {job_id} {where} requested; not confirmed: {exc}")
        if self.panel is not None:
            self.panel.note = f"cancelled by Ctrl-C ({result.status.value})"
        self.finish(result)
        return Interrupted(f"job {job_id} {where} was cancelled ({result.status.value})")

    # ---- background --------------------------------------------------------------------

    def start_background(self) -> asyncio.Task[JobResult | None]:
        """Follow the job in a task on the running loop; returns the task (``panel.task``)."""
        if (loop := running_loop()) is None:
            raise NotebookError(
                "background mode updates the panel from the kernel's event loop, and no loop "
                "is running here (a Jupyter kernel has one; a terminal IPython does not)"
            )
        self.task = loop.create_task(self._follow_async(), name=f"nbext-job-{self.record.id}")
        if self.panel is not None:
            self.panel.task = self.task
            self._left_running()  # an idle kernel ignores an interrupt
        return self.task

    def follow_again(self) -> None:
        """The job was queued again from elsewhere (``job.retry()``): a follower with no
        panel follows the new run in the background (the panels follow its record)."""
        JobFollower(self.service, self.registry, self.record, on_end=self.on_end).start_background()

    @property
    def following(self) -> bool:
        """Whether a cell awaits the job, or a background task follows it."""
        return self._awaited or (self.task is not None and not self.task.done())

    async def follow_async(self, interrupted: bool = False) -> JobResult | None:
        """``follow`` for an awaiting cell (the kernel hears clicks meanwhile); Ctrl-C
        comes as the cell's cancellation. An ``NbextError`` that stopped it is raised."""
        self._stoppable(True, INTERRUPT_HINT)
        self._awaited, self._error = True, None
        try:
            if interrupted:
                raise asyncio.CancelledError
            result = await self._follow_async()
        except asyncio.CancelledError:
            raise self._interrupted() from None
        finally:
            self._awaited = False
            self._left_running()
        if self._error is not None:
            raise self._error
        return result

    def _async_job(self) -> AsyncJob:
        client = self.service.async_client()
        return client.endpoint(self.record.endpoint_id).job(self.record.id)

    async def _ticking(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            self._tick()

    async def _follow_async(self) -> JobResult | None:
        job = self._async_job()
        started = time.monotonic()
        ticker = asyncio.get_running_loop().create_task(self._ticking())
        try:
            result = await self._apolled(job, started)
            if self.stream:
                left = self._left(started)
                async with contextlib.aclosing(job.stream_batches(timeout=left)) as batches:
                    async for batch in batches:
                        await asyncio.sleep(self._take(batch))
                        self._draw()
                result = await job.wait(timeout=FINAL_WAIT, raise_on_failure=False)
        except Exception as exc:  # a task's error would otherwise go unseen
            self._stopped(exc, reraise=False)
            return None
        finally:
            ticker.cancel()
        self.finish(result)
        return result

    async def _apolled(self, job: AsyncJob, started: float) -> JobResult:
        """``_polled`` on the loop: a cancel from the panel (``cancel_async``) cuts the
        client's pause short, and the states start again."""
        while True:
            polling = asyncio.ensure_future(self._states(job, self._left(started)))
            self._polling = polling
            try:
                return await polling
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if not polling.cancelled() or (current is not None and current.cancelling()):
                    raise  # the cell or the task itself was cancelled (Ctrl-C)
            finally:
                self._polling = None

    async def _states(self, job: AsyncJob, timeout: float) -> JobResult:
        async with contextlib.aclosing(job.phases(timeout=timeout)) as phases:
            async for phase in phases:
                if not self._polls_on(phase):
                    break
        return phase.result

    # ---- Cancel ------------------------------------------------------------------------

    def _cancel_clicked(self, _button: Any = None) -> None:
        if self._pump is not None:
            self._cancel_asked = True  # the blocking loop cancels before it reads on
        elif (loop := running_loop()) is None:
            self.cancel()
        else:
            task = loop.create_task(self.cancel_async())
            self._actions.add(task)  # the loop holds its tasks only weakly
            task.add_done_callback(self._actions.discard)

    def _failed(self, exc: NbextError, note: str) -> None:
        """A request about the panel's Cancel failed: a job the service no longer knows
        shows as removed, any other failure as a note."""
        if isinstance(exc, NotFound):
            self._removed(exc)
        else:
            self._note(f"{note}: {exc}")

    def cancel(self, *, follow: bool = True) -> None:
        """Cancel the job (sync client) and show the outcome; ``follow=False`` leaves
        reading the final state to the caller's loop (a blocking follow)."""
        try:
            self.job.cancel()
        except Conflict:
            self._show_now()  # the job ended meanwhile: show the state it ended in
            return
        except NbextError as exc:
            self._failed(exc, "cancel failed")
            return
        self._note(CANCELLED_NOTE)
        if follow:
            self._show_now()

    def _show_now(self) -> None:
        try:
            result = self.job.status()
        except NbextError as exc:
            self._failed(exc, UNKNOWN_OUTCOME)
            return
        if result.status.is_final:
            self.finish(result)
        else:
            self._result(result)

    async def cancel_async(self) -> None:
        """Cancel the job (async client) and show it ended; a following task or cell
        reads the final result at once and ends."""
        job = self._async_job()
        try:
            cancelled = await job.cancel()
        except Conflict:
            cancelled = None  # the job ended meanwhile: show the state it ended in
        except NbextError as exc:
            self._failed(exc, "cancel failed")
            return
        if self.following:
            if cancelled is not None:
                self._result(JobResult(id=cancelled.id, status=cancelled.status))
                self._note(CANCELLED_NOTE)
            if self._polling is not None:
                self._polling.cancel()  # the follower reads the job's state now
            return
        try:
            result = await job.status()
        except NbextError as exc:
            self._failed(exc, UNKNOWN_OUTCOME)
            return
        self.finish(result)

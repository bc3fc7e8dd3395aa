"""A notebook function served from the kernel that deployed it, over the worker protocol
(docs/architecture.md#a-notebook-function-as-an-endpoint; why long polls:
docs/architecture.md#notebook-modules).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from .errors import NotebookError

READ_TIMEOUT_S = 30.0
"""Longer than the emulator holds a poll (2 s for the attach, 10 s for a take)."""
RETRY_S = 1.0
"""The wait before calling again after a failed call (the emulator restarting)."""
POSTS = 3
"""Attempts at posting a result, as the SDK makes."""
ENDED = (401, 404, 409)
"""Answers that end a worker (its key is no longer valid) or the attachment (another
kernel serves the endpoint now, or it was deleted)."""


@dataclass(eq=False)
class _Worker:
    """One worker the emulator started in this kernel."""

    id: str
    key: str
    dropped: set[str] = field(default_factory=set)
    """Jobs the emulator stopped (cancelled, timed out) while the function ran them."""
    ended: threading.Event = field(default_factory=threading.Event)


class KernelWorker:
    """Serves ``function`` for one endpoint of the emulator at ``root_url``, in daemon
    threads, until ``stop``. A job the emulator stops meanwhile runs to its end (a thread
    cannot be killed) and its result is dropped; a generator is not resumed."""

    def __init__(
        self, root_url: str, key: str, endpoint_id: str, function: Callable[..., Any]
    ) -> None:
        self.root_url = root_url
        self.endpoint_id = endpoint_id
        self.function = function
        """Read as each job starts: assigning it (deploying again) runs new jobs with it."""
        self._http = httpx.Client(
            base_url=root_url,
            headers={"Authorization": f"Bearer {key}"},
            timeout=httpx.Timeout(READ_TIMEOUT_S, connect=5.0),
        )
        self._kernel: str | None = None
        self._attach_path = ""
        self._workers: dict[str, _Worker] = {}
        self._stopped = threading.Event()
        self._attacher: threading.Thread | None = None

    def deploy(self, settings: dict[str, Any]) -> None:
        """Create or update the endpoint, and serve it; a refused setting raises
        ValueError with the emulator's words."""
        path = f"/_emulator/kernel-endpoints/{self.endpoint_id}"
        try:
            answer = self._http.put(path, json={**settings, "kernel": self._kernel})
        except httpx.HTTPError as exc:
            raise NotebookError(
                f"the emulator at {self.root_url} cannot be reached: {exc}"
            ) from None
        if answer.status_code == 400:
            raise ValueError(answer.json().get("error", answer.text))
        if answer.status_code != 200:
            raise NotebookError(
                f"the emulator refused the deploy: {answer.status_code} {answer.text}"
            )
        found = answer.json()
        self._kernel, self._attach_path = found["kernel"], found["attach"]
        if self._attacher is None or not self._attacher.is_alive():
            self._attacher = self._spawn(self._attach, "attach")

    def stop(self) -> None:
        """Stop serving, telling the emulator at once (the jobs wait for another kernel)."""
        self._stopped.set()
        if self._kernel is not None:
            with contextlib.suppress(httpx.HTTPError):  # the emulator is gone too
                self._http.delete(self._attach_path, timeout=2.0)
        self._http.close()

    def _spawn(self, target: Callable[..., None], what: str, *args: Any) -> threading.Thread:
        name = f"nbext-kernel-{what}-{self.endpoint_id}"
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        return thread

    def _get(self, path: str, **kwargs: Any) -> httpx.Response | None:
        """A call; None when it failed (after waiting ``RETRY_S``) or serving stopped."""
        try:
            answer = self._http.get(path, **kwargs)
        except (httpx.HTTPError, RuntimeError):  # RuntimeError: the client was closed
            self._stopped.wait(RETRY_S)
            return None
        return None if self._stopped.is_set() else answer

    # ---- the attachment --------------------------------------------------------------

    def _attach(self) -> None:
        while not self._stopped.is_set():
            answer = self._get(self._attach_path)
            if answer is None or answer.status_code == 204:
                continue
            if answer.status_code in ENDED:
                break
            if answer.status_code != 200:
                self._stopped.wait(RETRY_S)
                continue
            found = answer.json()
            for start in found["start"]:
                if start["key"] not in {w.key for w in self._workers.values()}:
                    self._start(_Worker(start["id"], start["key"]))
            for worker_id in found["stop"]:
                if (worker := self._workers.get(worker_id)) is not None:
                    worker.ended.set()
        for worker in list(self._workers.values()):
            worker.ended.set()

    def _start(self, worker: _Worker) -> None:
        old = self._workers.get(worker.id)
        if old is not None:
            old.ended.set()  # started again, with a new key
        self._workers[worker.id] = worker
        self._spawn(self._serve, worker.id, worker)
        self._spawn(self._serve, f"{worker.id}-stops", worker, "job-stop")

    # ---- a worker --------------------------------------------------------------------

    def _api(self, worker: _Worker, call: str, job_id: str = "") -> str:
        return f"/v2/{self.endpoint_id}/{call}/{worker.id}" + (f"/{job_id}" if job_id else "")

    def _serve(self, worker: _Worker, call: str = "job-take") -> None:
        """Take and run jobs (``job-take``), or watch for jobs to stop (``job-stop``)."""
        while not (self._stopped.is_set() or worker.ended.is_set()):
            answer = self._get(self._api(worker, call), headers=_auth(worker))
            if answer is not None and answer.status_code in ENDED:
                worker.ended.set()
            elif answer is not None and answer.status_code == 200 and call == "job-take":
                self._run(worker, answer.json())
            elif answer is not None and answer.status_code == 200:
                worker.dropped.update(answer.json()["jobsToStop"])
        if call == "job-take" and self._workers.get(worker.id) is worker:
            del self._workers[worker.id]

    def _run(self, worker: _Worker, job: dict[str, Any]) -> None:
        job_id = job["id"]
        body = self._call(worker, job)
        if job_id in worker.dropped:
            worker.dropped.discard(job_id)
            return
        self._post(worker, "job-done", job_id, body)

    def _call(self, worker: _Worker, job: dict[str, Any]) -> dict[str, Any]:
        """The job-done body: the function's output, or its error as the SDK reports
        one (a generator's chunks are posted as they come, and all of them end it)."""
        try:
            output = self.function(job)
            if inspect.iscoroutine(output):
                output = asyncio.run(output)
            if inspect.isgenerator(output):
                chunks = []
                for chunk in output:
                    if job["id"] in worker.dropped:
                        break
                    chunks.append(chunk)
                    self._post(worker, "job-stream", job["id"], {"output": chunk})
                return {"output": chunks}
        except BaseException as exc:  # sys.exit() in the function ends its job alone
            return {"error": _error(exc, worker.id)}
        if isinstance(output, dict) and "error" in output:  # the SDK's failed-job convention
            rest = {k: v for k, v in output.items() if k != "error"}
            return {"error": output["error"], **({"output": rest} if rest else {})}
        return {"output": output}

    def _post(self, worker: _Worker, call: str, job_id: str, body: dict[str, Any]) -> None:
        """Post a chunk or a result; one JSON cannot carry fails its job instead."""
        try:
            content = json.dumps(body)
        except (TypeError, ValueError) as exc:
            if call == "job-stream":
                message = f"a chunk the function yielded cannot be sent as JSON: {exc}"
                raise TypeError(message) from None
            content = json.dumps({"error": f"the function's output cannot be sent as JSON: {exc}"})
        headers = {**_auth(worker), "Content-Type": "application/json"}
        for _ in range(POSTS):
            try:
                self._http.post(self._api(worker, call, job_id), content=content, headers=headers)
                return
            except (httpx.HTTPError, RuntimeError):
                if self._stopped.wait(RETRY_S):
                    return


def _auth(worker: _Worker) -> dict[str, str]:
    """A worker sends its own key, bare, as the SDK does."""
    return {"Authorization": worker.key}


def _error(exc: BaseException, worker_id: str) -> str:
    """A raised exception as the SDK reports it: JSON text with its traceback."""
    return json.dumps(
        {
            "error_type": str(type(exc)),
            "error_message": str(exc),
            "error_traceback": "".join(  # from the function's own frame on
                traceback.format_exception(type(exc), exc, exc.__traceback__.tb_next)
                if exc.__traceback__ is not None
                else traceback.format_exception_only(type(exc), exc)
            ),
            "worker_id": worker_id,
        }
    )

"""Which service the kernel talks to, and the clients behind it.

With an API key (``nbext.client.load_config``) the real service; without one the user's
shared local service (docs/behaviour.md#the-local-service); a notebook that hands in its
own ``EmulatorServer`` (a fake clock, a test) gets a *private* service in the kernel.
One ``Connection`` per kernel (``kernel.current()``) holds up to two ``Service``s (local
and cloud), so switching with ``%runpod connect`` keeps both sides' jobs reachable.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import httpx

from nbext.client import AsyncClient, Budget, Client, ClientConfig, Secret, load_config
from nbext.models import JobResult

from .credentials import config_path
from .errors import InvalidArgument, NotebookError
from .registry import JobRegistry
from .uipoll import running_loop

if TYPE_CHECKING:
    from nbext import service as local_service
    from nbext.emulator import EmulatorServer

    from .kernel_worker import KernelWorker

Mode = Literal["local", "cloud"]


def named(serverless_url: str) -> str:
    """``RunPod cloud at URL``; a loopback URL (a key with RUNPOD_ENDPOINT_BASE_URL at a
    standalone emulator) is ``a local emulator at URL``, never called the cloud."""
    host = httpx.URL(serverless_url).host
    with contextlib.suppress(ValueError):
        if host == "localhost" or ipaddress.ip_address(host).is_loopback:
            return f"a local emulator at {serverless_url}"
    return f"RunPod cloud at {serverless_url}"


class Service:
    """One service: its address, its key (masked in every text), its clients: the sync
    ``client`` for the cell's thread, and an ``AsyncClient`` per event loop (an httpx
    async pool belongs to the loop it was opened on)."""

    def __init__(
        self,
        mode: Mode,
        *,
        api_key: str,
        key_source: str,
        serverless_url: str,
        base_url: str,
        joined: local_service.Joined | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.mode = mode
        self.key_source = key_source
        self.key = Secret(api_key)
        self.joined = joined
        """The user's local service this kernel joined (``nbext.service``)."""
        self._control: httpx.Client | None = None
        self._kwargs = dict(client_kwargs or {})
        self.client = Client(
            api_key, serverless_url=serverless_url, base_url=base_url, **self._kwargs
        )
        self._async: tuple[asyncio.AbstractEventLoop, AsyncClient] | None = None

    @property
    def serverless_url(self) -> str:
        return self.client.serverless_url

    @property
    def base_url(self) -> str:
        return self.client.base_url

    @property
    def root_url(self) -> str:
        """The local service's address (``http://127.0.0.1:PORT``), above ``/v2``."""
        return self.serverless_url.removesuffix("/v2")

    def control(self, method: str, path: str, body: Any = None) -> Any:
        """A call to the local service's ``/_emulator`` controls, which the real service
        has no counterpart of (deploying a script, a scenario, the service's status): its
        answer's JSON, or ``InvalidArgument`` with the service's own one-line refusal."""
        if self.mode != "local":
            raise NotebookError("only the local service has emulator controls")
        if self._control is None:
            self._control = httpx.Client(
                base_url=self.root_url,
                headers={"Authorization": f"Bearer {self.key.reveal()}"},
                timeout=30.0,
                verify=False,  # plain HTTP on loopback: no certificate is ever read
            )
        try:
            answer = self._control.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise NotebookError(
                f"the local service at {self.root_url} did not answer: {exc}"
            ) from None
        data = answer.json() if answer.content else None
        if answer.is_error:
            error = data.get("error") if isinstance(data, dict) else None
            raise InvalidArgument(str(error or f"HTTP {answer.status_code}"))
        return data

    def replays(self, endpoint_id: str) -> bool:
        """Whether the endpoint answers with a recording: the service names it ``ID
        (replay)`` whoever loaded it, so it is asked, once per cell or map that submits."""
        if self.mode != "local":
            return False
        named = {e["id"]: e["name"] for e in self.control("GET", "/_emulator/endpoints")}
        return named.get(endpoint_id) == f"{endpoint_id} (replay)"

    def async_client(self) -> AsyncClient:
        """The async client of the running loop (made on first use on that loop)."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            client = AsyncClient(
                self.key.reveal(),
                serverless_url=self.serverless_url,
                base_url=self.base_url,
            )
            client.budget = self.client.budget  # one cap for the kernel's clients
            self._async = (loop, client)
        self._async[1].recording = self.client.recording  # one file for the kernel's jobs
        return self._async[1]

    def describe(self) -> str:
        if self.joined is not None:
            return self.joined.describe()
        if self.mode == "local":
            return f"private emulator at {self.root_url} (in this kernel)"
        return f"{named(self.serverless_url)} (key {self.key.masked} from {self.key_source})"

    async def aclose(self) -> None:
        """Close the async client of the running loop (tests end their loop after this)."""
        if self._async is not None and self._async[0] is asyncio.get_running_loop():
            client, self._async = self._async[1], None
            await client.aclose()

    def close(self) -> None:
        """Close the clients; the kernel leaves the local service (which runs on)."""
        if self.joined is not None:
            with contextlib.suppress(NotebookError):
                self.control("DELETE", f"/_emulator/service/kernels/{os.getpid()}")
        if self._control is not None:
            self._control.close()
        self.client.close()

    def __repr__(self) -> str:
        return f"Service({self.describe()})"


class Connection:
    """The kernel's link to a service: the cloud with a key, else the local service.

    ``server``: an emulator server of the notebook's own (started if needed, never
    stopped here); ``environ`` and ``config_file`` replace the environment and
    ``~/.runpod/config.toml`` when resolving the key.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        environ: Mapping[str, str] | None = None,
        config_file: str | os.PathLike[str] | None = None,
        server: EmulatorServer | None = None,
        mode: Mode | None = None,
        client_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self._settings: dict[str, Any] = {
            "api_key": api_key,
            "environ": environ,
            "config_file": config_file,
        }
        self._key_source: str | None = None
        """Where a key given after the start came from (``%runpod login``, a Colab secret)."""
        self.config: ClientConfig = self._load()
        self._server = server
        self._client_kwargs = dict(client_kwargs or {})
        self.registry = JobRegistry()
        self.budget = Budget()
        """What the jobs started from this kernel have cost, and ``RunpodMagics.budget_usd``."""
        self._services: dict[str, Service] = {}
        self.kernel_workers: dict[str, KernelWorker] = {}
        """The notebook functions this kernel serves, by endpoint id (``deploy``)."""
        if mode is None:
            mode = "cloud" if self.config.api_key is not None and server is None else "local"
        if mode == "cloud":
            self._require_key()
        self.mode: Mode = mode

    @property
    def private(self) -> bool:
        """Whether the local service is an emulator of this notebook's own (``server``)."""
        return self._server is not None

    # ---- what the user is told ---------------------------------------------------------

    def banner(self) -> str:
        """The one line ``%load_ext nbext`` prints."""
        if self.mode == "cloud":
            return (
                f"nbext: {named(self.config.serverless_url)}, "
                f"key {self.config.masked_key} from {self.config.key_source}"
            )
        started = self._services.get("local")
        if started is not None:
            return f"nbext: {started.describe()}"
        if self.private:
            return "nbext: a private emulator of this notebook, started on first use"
        return "nbext: local service, joined on first use (no API key configured)"

    def status_lines(self) -> list[str]:
        """``%runpod status``: service, addresses, masked key, the local service's state."""
        lines: list[str] = []
        if self.mode == "cloud":
            lines += [
                f"service: {named(self.config.serverless_url)}",
                f"jobs URL: {self.config.serverless_url}",
                f"management URL: {self.config.base_url}",
                f"API key: {self.config.masked_key} (from {self.config.key_source})",
            ]
        else:
            local = self._services.get("local")
            if local is None:
                lines.append("service: the local service; joined on the first command")
            else:
                info = local.control("GET", "/_emulator/service")
                if info["shared"]:
                    from nbext import service as local_service  # POSIX only: when used

                    lines += local_service.describe(info)
                else:
                    lines += [
                        "service: a private emulator, in this kernel",
                        f"address: {info['url']}",
                        f"clock: {info['clock']}",
                        f"endpoints: {', '.join(info['endpoints']) or 'none'}",
                    ]
                lines += [
                    f"jobs URL: {local.serverless_url}",
                    f"management URL: {local.base_url}",
                    f"API key: {local.key.masked} (generated by the local service)",
                ]
            if self.config.api_key is not None:
                lines.append(
                    f"cloud key available: {self.config.masked_key} from "
                    f"{self.config.key_source} (%runpod connect cloud)"
                )
        jobs = f"jobs submitted from this kernel: {len(self.registry)}"
        if batches := self.budget.batches:
            plural = "es" if len(batches) != 1 else ""
            jobs += f", and {sum(batches.values()):,} requests in {len(batches)} batch{plural}"
        lines.append(jobs)
        lines.append(f"spent by them: {self.budget.describe()}")
        return lines

    # ---- services ----------------------------------------------------------------------

    def connect(self, mode: Mode) -> Service:
        """Switch to ``mode`` (starting the emulator for ``local``); returns the service."""
        if mode not in ("local", "cloud"):
            raise NotebookError(f"connect to 'local' or 'cloud', not {mode!r}")
        if mode == "cloud" and "cloud" not in self._services:
            # a key set since the kernel started (os.environ, `runpod config`) counts
            self.config = self._load()
            self._require_key()
        self.mode = mode
        return self.service()

    def service(self) -> Service:
        """The current service, started on first use."""
        existing = self._services.get(self.mode)
        if existing is not None:
            return existing
        made = self._start_local() if self.mode == "local" else self._start_cloud()
        self._services[self.mode] = made
        made.client.budget = self.budget
        made.client.on_job_result(lambda result: self._seen(made, result))
        return made

    def rejoin(self) -> None:
        """Let go of the joined local service if it has gone: run before each cell, so its
        first command joins (or starts) the one running now, not a closed port."""
        local = self._services.get("local")
        if local is None or local.joined is None:
            return
        from nbext import service as local_service  # POSIX only: when used

        runtime = local_service.files.runtime_dir()
        now = local_service.files.read(runtime)
        if (
            now is not None
            and now.pid == local.joined.file.pid
            and local_service.files.alive(runtime)
        ):
            return
        del self._services["local"]  # the next command joins (or starts) the one running now
        local.close()

    def service_named(self, mode: str) -> Service | None:
        """An already started service by name (jobs remember where they were submitted)."""
        return self._services.get(mode)

    @property
    def client(self) -> Client:
        return self.service().client

    def _seen(self, service: Service, result: JobResult) -> None:
        """The kernel's client read a job's state: its record, and so its panels, follow.
        A job queued again from Python (``job.retry()``) is followed in the background
        unless a command started a follower of its own meanwhile."""
        record = self.registry.get(result.id)
        if record is None or record.service != service.mode:
            return
        queued_again = record.final and not result.status.is_final
        if queued_again:
            record.retries += 1
        self.registry.update(result.id, result)
        if not queued_again:
            return
        before = record.follower
        if (loop := running_loop()) is None or before is None:
            return  # no loop (a terminal IPython): the next status or wait call shows it

        def follow() -> None:
            if record.follower is before and not record.final:
                before.follow_again()

        loop.call_soon(follow)

    # ---- the key ------------------------------------------------------------------------

    @property
    def config_file(self) -> Path:
        """The config file this connection reads keys from (``%runpod login`` writes it)."""
        return config_path(self._settings["config_file"])

    def use_key(self, key: str, source: str) -> Service:
        """Talk to the cloud with ``key`` from now on (``source`` says where it came from:
        a login, a Colab secret); a cloud client made with an earlier key is closed."""
        self._set_key(key, source)
        return self.connect("cloud")

    def forget_key(self) -> None:
        """Stop using a key given with ``use_key``; back to the local emulator unless the
        environment or the config file still has one (``config`` says which)."""
        self._set_key(None, None)
        self.mode = "local"

    def _set_key(self, key: str | None, source: str | None) -> None:
        self._settings["api_key"], self._key_source = key, source
        self.config = self._load()
        if (stale := self._services.pop("cloud", None)) is not None:
            stale.close()

    def check_key(self, key: str) -> int:
        """How many endpoints the account of ``key`` has, asked of this connection's cloud;
        the client's errors propagate (``Unauthorized`` for a key the service refuses)."""
        with Client(
            api_key=key,
            base_url=self.config.base_url,
            serverless_url=self.config.serverless_url,
            config_file=self._settings["config_file"] or "/nonexistent",
            **self._client_kwargs,
        ) as client:
            return len(client.endpoints.list())

    def _load(self) -> ClientConfig:
        config = load_config(**self._settings, require_key=False)
        if self._key_source is not None and config.key_source == "argument":
            config = dataclasses.replace(config, key_source=self._key_source)
        return config

    def local(self, needs: str = "deploying a notebook function needs") -> Service:
        """The local service (joined if needed); connected to the cloud, a one-line error
        that says what ``needs`` it."""
        if self.mode != "local":
            raise NotebookError(
                f"this kernel is connected to the RunPod cloud; {needs} the local service: "
                "run `%runpod connect local` first"
            )
        return self.service()

    def redact(self, text: str) -> str:
        """``text`` with every key this connection holds replaced by its mask."""
        for service in self._services.values():
            text = service.key.redact(text)
        if self.config.api_key is not None:
            text = self.config.api_key.redact(text)
        return text

    def _require_key(self) -> None:
        if self.config.api_key is None:
            raise NotebookError(
                "no API key configured: run `%runpod login`, or set RUNPOD_API_KEY (or run "
                "the service's `runpod config`), then `%runpod connect cloud`"
            )

    def _start_cloud(self) -> Service:
        key = self.config.api_key
        assert key is not None
        return Service(
            "cloud",
            api_key=key.reveal(),
            key_source=self.config.key_source or "configuration",
            serverless_url=self.config.serverless_url,
            base_url=self.config.base_url,
            client_kwargs=self._client_kwargs,
        )

    def _start_local(self) -> Service:
        server = self._server
        if server is None:
            from nbext import service as local_service  # POSIX only: when used

            try:
                joined = local_service.join()
            except (local_service.ServiceError, local_service.ServiceFileError) as exc:
                raise NotebookError(str(exc)) from None
            made = Service(
                "local",
                api_key=joined.file.key,
                key_source="the local service",
                serverless_url=f"{joined.url}/v2",
                base_url=f"{joined.url}/v2",
                joined=joined,
                client_kwargs=self._client_kwargs,
            )
            made.control("PUT", f"/_emulator/service/kernels/{os.getpid()}")
            return made
        quiet_emulator_log()
        if not server.running:
            server.start()
        emulator = server.emulator
        emulator.deploy_demos()
        return Service(
            "local",
            api_key=emulator.api_key,
            key_source="the private emulator",
            serverless_url=server.serverless_url,
            base_url=f"{server.url}/v2",
            client_kwargs=self._client_kwargs,
        )

    # ---- lifetime ----------------------------------------------------------------------

    async def aclose(self) -> None:
        for service in self._services.values():
            await service.aclose()

    def close(self) -> None:
        """Close every client, after the kernel's functions told the emulator they stop."""
        while self.kernel_workers:
            self.kernel_workers.popitem()[1].stop()
        for service in self._services.values():
            service.close()
        self._services.clear()

    def __repr__(self) -> str:
        return f"Connection(mode={self.mode!r}, services={list(self._services)!r})"


def quiet_emulator_log() -> None:
    """Keep the embedded emulator's log out of cell outputs: unconfigured, Python prints a
    handler's logged traceback into whatever cell runs; the panel shows the error."""
    logger = logging.getLogger("nbext.emulator")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())

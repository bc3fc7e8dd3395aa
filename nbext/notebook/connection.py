"""Which service the kernel talks to, and the clients and emulator behind it.

With an API key configured (argument, ``RUNPOD_API_KEY``, or ``~/.runpod/config.toml``,
resolved by ``nbext.client.load_config``) the kernel talks to the real service. Without
one it talks to an emulator embedded in the kernel: started on first use (an
``EmulatorServer`` on 127.0.0.1, a free port), with the demo images deployed as
endpoints of the same names, so a notebook runs with no account, offline, in class.

One ``Connection`` per kernel (``kernel.current()``), holding up to two ``Service``s (local and
cloud) so switching with ``%runpod connect`` keeps both sides' jobs reachable. Tests hand
a connection their own ``EmulatorServer`` (on a fake clock) and environment.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from nbext.client import AsyncClient, Budget, Client, ClientConfig, Secret, load_config
from nbext.models import JobResult

from .credentials import config_path
from .errors import NotebookError
from .registry import JobRegistry
from .uipoll import running_loop

if TYPE_CHECKING:
    from nbext.emulator import Emulator, EmulatorServer

    from .kernel_worker import KernelWorker

Mode = Literal["local", "cloud"]
DEMO_ENDPOINTS = (
    "echo", "sleep", "fail", "stream-text", "image-gen", "text-to-speech", "llm", "llm-lb"
)  # fmt: skip
"""Demo images of the emulator, deployed as endpoints of the same names (``llm-lb``: the
load-balancing demo, an OpenAI-compatible server; its process starts at its first
request)."""


class Service:
    """One service: its address, its key (masked in every text), its clients.

    The sync ``client`` serves blocking commands from the cell's thread; an
    ``AsyncClient`` per event loop serves background panels (an httpx async pool belongs
    to the loop it was opened on, and a kernel has one loop for its whole life).
    """

    def __init__(
        self,
        mode: Mode,
        *,
        api_key: str,
        key_source: str,
        serverless_url: str,
        base_url: str,
        management_api: Literal["v1", "v2"] = "v2",
        server: EmulatorServer | None = None,
        owns_server: bool = False,
        client_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.mode = mode
        self.key_source = key_source
        self.key = Secret(api_key)
        self.server = server
        self._owns_server = owns_server
        self._kwargs = {"management_api": management_api, **(client_kwargs or {})}
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
    def emulator(self) -> Emulator | None:
        return self.server.emulator if self.server is not None else None

    def async_client(self) -> AsyncClient:
        """The async client of the running loop (made on first use on that loop)."""
        loop = asyncio.get_running_loop()
        if self._async is None or self._async[0] is not loop:
            client = AsyncClient(
                self.key.reveal(),
                serverless_url=self.serverless_url,
                base_url=self.base_url,
                management_api=self.client.config.management_api,
            )
            client.budget = self.client.budget  # one cap for the kernel's clients
            self._async = (loop, client)
        return self._async[1]

    def describe(self) -> str:
        if self.mode == "local":
            return f"local emulator at {self.serverless_url} (key {self.key.masked}, generated)"
        return f"cloud at {self.serverless_url} (key {self.key.masked} from {self.key_source})"

    def endpoints(self) -> list[str]:
        """Endpoint ids of the embedded emulator (empty for the cloud)."""
        emulator = self.emulator
        return sorted(emulator.jobs.endpoints) if emulator is not None else []

    async def aclose(self) -> None:
        """Close the async client of the running loop (tests end their loop after this)."""
        if self._async is not None and self._async[0] is asyncio.get_running_loop():
            client, self._async = self._async[1], None
            await client.aclose()

    def close(self) -> None:
        self.client.close()
        if self.server is not None and self._owns_server:
            server, self.server = self.server, None
            server.stop()
            server.emulator.close()

    def __repr__(self) -> str:
        return f"Service({self.describe()})"


class Connection:
    """The kernel's link to a service: the cloud with a key, else the embedded emulator.

    ``server`` hands in an emulator server (tests; a notebook sharing one); it is started
    if needed and never stopped by ``close``. ``environ`` and ``config_file`` replace
    the process environment and ``~/.runpod/config.toml`` when resolving the key.
    ``management_api`` chooses the emulator's management interface, REST v1 or v2.
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
        management_api: Literal["v1", "v2"] = "v2",
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
        self.management_api = management_api
        """The interface the local emulator is managed through (it serves both; v2, as
        the service today, unless v1 is chosen); the cloud's is its base URL's
        (``RUNPOD_REST_BASE_URL``)."""
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

    # ---- what the user is told ---------------------------------------------------------

    def banner(self) -> str:
        """The one line ``%load_ext nbext`` prints."""
        if self.mode == "cloud":
            return (
                f"nbext: RunPod cloud at {self.config.serverless_url}, "
                f"key {self.config.masked_key} from {self.config.key_source}"
            )
        started = self._services.get("local")
        if started is not None:
            return f"nbext: {started.describe()}"
        return "nbext: local emulator, starts on first use (no API key configured)"

    def status_lines(self) -> list[str]:
        """``%runpod status``: service, addresses, masked key, emulator endpoints."""
        lines: list[str] = []
        if self.mode == "cloud":
            lines += [
                "service: RunPod cloud",
                f"jobs URL: {self.config.serverless_url}",
                f"management URL: {self.config.base_url}",
                f"API key: {self.config.masked_key} (from {self.config.key_source})",
            ]
        else:
            local = self._services.get("local")
            lines.append("service: local emulator (embedded in this kernel)")
            if local is None:
                lines.append("state: not started yet; it starts on the first command")
            else:
                emulator = local.emulator
                clock = type(emulator.clock).__name__ if emulator is not None else "?"
                lines += [
                    f"jobs URL: {local.serverless_url}",
                    f"management URL: {local.base_url}",
                    f"API key: {local.key.masked} (generated by the emulator)",
                    f"clock: {clock}",
                    f"endpoints: {', '.join(local.endpoints()) or 'none'}",
                ]
            if self.config.api_key is not None:
                lines.append(
                    f"cloud key available: {self.config.masked_key} from "
                    f"{self.config.key_source} (%runpod connect cloud)"
                )
        lines.append(f"jobs submitted from this kernel: {len(self.registry)}")
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

    def service_named(self, mode: str) -> Service | None:
        """An already started service by name (jobs remember where they were submitted)."""
        return self._services.get(mode)

    @property
    def client(self) -> Client:
        return self.service().client

    def _seen(self, service: Service, result: JobResult) -> None:
        """The kernel's client read a job's state (a Python call in a cell, or a command):
        the job's record, and so every panel of it, follows.

        A job of this kernel's cells queued again from Python (``job.retry()``) is
        followed in the background by its follower, as ``%runpod retry`` follows it, so
        its panels reach its end without a further call; a command that queues it again
        starts its own follower meanwhile, and then this one is not needed. A job with
        no follower (a map's) shows its new run at its next read (``%runpod jobs``).
        """
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
        """Ask the cloud (this connection's URLs) with ``key``: one listing of the
        account's endpoints; returns how many there are. The client's errors propagate
        (``Unauthorized`` for a key the service refuses)."""
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
        """The embedded emulator's service, started if needed; connected to the cloud, a
        one-line error that says what ``needs`` the emulator."""
        if self.mode != "local":
            raise NotebookError(
                f"this kernel is connected to the RunPod cloud; {needs} the local emulator: "
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
            management_api=self.config.management_api,
            client_kwargs=self._client_kwargs,
        )

    def _start_local(self) -> Service:
        from nbext.emulator import EmulatorServer

        owns = self._server is None
        quiet_emulator_log()
        server = self._server or EmulatorServer()
        if not server.running:
            server.start()
        emulator = server.emulator
        for name in DEMO_ENDPOINTS:
            if name not in emulator.jobs.endpoints:
                emulator.deploy(image=name, endpoint_id=name)
        return Service(
            "local",
            api_key=emulator.api_key,
            key_source="the embedded emulator",
            serverless_url=server.serverless_url,
            base_url=f"{server.url}/{self.management_api}",
            management_api=self.management_api,
            server=server,
            owns_server=owns,
            client_kwargs=self._client_kwargs,
        )

    # ---- lifetime ----------------------------------------------------------------------

    async def aclose(self) -> None:
        for service in self._services.values():
            await service.aclose()

    def close(self) -> None:
        """Close every client; stop the emulator this connection started."""
        while self.kernel_workers:  # first: they tell the emulator they stop
            self.kernel_workers.popitem()[1].stop()
        for service in self._services.values():
            service.close()
        self._services.clear()

    def __repr__(self) -> str:
        return f"Connection(mode={self.mode!r}, services={list(self._services)!r})"


def quiet_emulator_log() -> None:
    """Keep the embedded emulator's log out of cell outputs.

    A handler's traceback is logged by the emulator; with no logging configured Python
    would print it to stderr, i.e. into whatever cell runs at that moment. The job's
    panel already shows the error; a configured root logger still gets the record.
    """
    logger = logging.getLogger("nbext.emulator")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())

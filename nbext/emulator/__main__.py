"""``python -m nbext.emulator``: serve the emulator standalone, for curl and other clients
(examples: README.md, "The emulator on its own"), or control the user's local service."""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import shlex
import signal
import sqlite3
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from nbext.models.enums import SCENARIOS

from . import replay
from .domain.errors import StoreFailed
from .domain.handlers import Handler
from .domain.images import DEMOS
from .domain.webhooks import CONCURRENCY as WEBHOOK_CONCURRENCY
from .emulator import Emulator, mask_key
from .protocol import MAX_CONNECTIONS, REQUEST_TIMEOUT
from .server import EmulatorServer
from .workers.environment import named_variables


def load_handler(spec: str) -> Handler:
    """``path/to/file.py:function`` -> the function, with errors that say what is wrong."""
    path_text, sep, name = spec.rpartition(":")
    if not sep or not path_text.endswith(".py") or not name:
        raise ValueError(f"{spec!r} is not of the form path/to/file.py:function")
    path = Path(path_text)
    if not path.is_file():
        raise ValueError(f"handler file {path} does not exist")
    module_spec = importlib.util.spec_from_file_location(f"nbext_handler_{path.stem}", path)
    if module_spec is None or module_spec.loader is None:
        raise ValueError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: say what broke instead of a traceback
        raise ValueError(f"cannot import {path}: {type(exc).__name__}: {exc}") from None
    handler = getattr(module, name, None)
    if not callable(handler):
        raise ValueError(f"{path} has no function named {name!r}")
    return handler  # type: ignore[no-any-return]


def _port(text: str) -> int:
    """A TCP port number, refused by argparse (usage and exit 2) when out of range."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not seconds >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"{text} must be >= 0 seconds")
    return seconds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m nbext.emulator",
        description="Serve a local emulator of the serverless job interface.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=_port, default=8000, help="port (default 8000; 0 = any free)"
    )
    keys = parser.add_mutually_exclusive_group()
    keys.add_argument(
        "--api-key",
        help="the key clients must send (visible in ps: prefer --api-key-file or "
        "RUNPOD_API_KEY; default: RUNPOD_API_KEY if set, else a new one, printed)",
    )
    keys.add_argument(
        "--api-key-file",
        metavar="PATH",
        help="read the key clients must send from this file (its only line)",
    )
    parser.add_argument(
        "--endpoint",
        action="append",
        default=[],
        metavar="ID=IMAGE",
        help=f"deploy IMAGE (a demo: {', '.join(DEMOS)}; or path/to/file.py:function) as "
        "endpoint ID; repeatable. Without any (nor --worker), every demo is deployed under "
        "its own name.",
    )
    parser.add_argument(
        "--worker",
        action="append",
        default=[],
        metavar="ID=PATH",
        help="deploy endpoint ID whose workers are processes running the worker script PATH "
        "(runpod.serverless.start(...)) unmodified; repeatable",
    )
    parser.add_argument(
        "--lb-worker",
        action="append",
        default=[],
        metavar="ID=PATH",
        help="deploy load-balancing endpoint ID whose workers run the HTTP server script PATH "
        "unmodified (it serves on $PORT, health on $PORT_HEALTH$HEALTH_CHECK_PATH); "
        "reached at http://HOST:PORT/lb/ID/<path>; repeatable",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="ID=NAME[:KEY=VALUE,...]",
        help=f"give endpoint ID a teaching scenario ({', '.join(SCENARIOS)}), "
        "e.g. cold=cold-start:seconds=20 (docs/behaviour.md); repeatable",
    )
    parser.add_argument(
        "--replay",
        metavar="PATH",
        help="serve a recording (Client.record, %%runpod record): its endpoints answer the "
        "recorded inputs with the recorded outputs and timing (docs/behaviour.md#recordings)",
    )
    replay_pace = parser.add_mutually_exclusive_group()
    replay_pace.add_argument(
        "--speed", type=float, default=1.0, metavar="N", help="replay N times faster"
    )
    replay_pace.add_argument("--instant", action="store_true", help="replay with no waits")
    parser.add_argument(
        "--worker-python",
        metavar="PYTHON",
        help="interpreter for --worker and --lb-worker scripts (default: this one), e.g. a "
        "worker's own venv",
    )
    parser.add_argument(
        "--worker-args",
        action="append",
        default=[],
        metavar="ID=ARGS",
        help="launch arguments for endpoint ID's --worker or --lb-worker script, as a "
        "container's command gives them (shell-quoted), e.g. gen='--generator --rate 5'; "
        "repeatable",
    )
    parser.add_argument(
        "--worker-env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="give --worker and --lb-worker scripts this variable: NAME alone copies it from "
        "this environment (workers get no other variable of it but PATH, HOME, locale, "
        "proxies, CA bundle); repeatable",
    )
    parser.add_argument(
        "--db",
        metavar="FILE",
        help="keep everything in this SQLite file, so a restart loses nothing (default: memory)",
    )
    parser.add_argument("--no-rate-limit", action="store_true", help="switch rate limits off")
    parser.add_argument(
        "--webhook-retry-delay",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="delay between webhook attempts (default 10)",
    )
    parser.add_argument(
        "--webhook-concurrency",
        type=int,
        default=WEBHOOK_CONCURRENCY,
        metavar="N",
        help=f"webhook attempts in flight per receiver (default {WEBHOOK_CONCURRENCY})",
    )
    parser.add_argument(
        "--webhook-guard",
        action="store_true",
        help="refuse webhooks to link-local and cloud metadata addresses (169.254.169.254)",
    )
    parser.add_argument(
        "--request-timeout",
        type=_seconds,
        default=REQUEST_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds a client has to send a whole request (default {REQUEST_TIMEOUT:g})",
    )
    parser.add_argument(
        "--max-connections",
        type=int,
        default=MAX_CONNECTIONS,
        metavar="N",
        help=f"connections served at once; more are refused with a 503 (default {MAX_CONNECTIONS})",
    )
    parser.add_argument(
        "--log-level",
        default="warning",
        choices=["critical", "error", "warning", "info", "debug", "trace"],
        help="uvicorn log level",
    )
    return parser.parse_args(argv)


def given_key(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[str, str] | None:
    """The key the user gave and where it came from, as the banner says it, or None: the
    emulator makes one (or keeps its ``--db``'s). ``RUNPOD_API_KEY`` is what the banner's
    ``export`` sets, so a shell that pasted it starts the emulator again with the same key.
    """
    if args.api_key is not None:
        if not args.api_key.strip():
            raise ValueError("--api-key is empty")
        return args.api_key.strip(), "given with --api-key"
    if args.api_key_file is not None:
        path = Path(args.api_key_file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise ValueError(f"--api-key-file {path}: cannot read it: {why}") from None
        key = text.strip()
        if not key:
            raise ValueError(f"--api-key-file {path} is empty: put the key in it, on one line")
        if len(key.split()) > 1:
            raise ValueError(f"--api-key-file {path} holds more than a key: only the key, please")
        return key, f"read from --api-key-file {path}"
    key = environ.get("RUNPOD_API_KEY", "").strip()
    return (key, "from RUNPOD_API_KEY") if key else None


def pairs(flag: str, specs: Sequence[str], form: str) -> list[tuple[str, str]]:
    """``flag``'s ``ID=VALUE`` arguments, each ID given once; ValueError names the bad one."""
    found: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not sep or not key or not value:
            raise ValueError(f"{flag} {spec!r} is not of the form {form}")
        if key in found:
            raise ValueError(f"{flag} {key} is given twice; give each ID once")
        found[key] = value
    return list(found.items())


def deployments(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    """``(flag, endpoint id, value)`` of every ``--endpoint ID=IMAGE``, ``--worker ID=PATH``
    and ``--lb-worker ID=PATH``, each ID once and each script there; without any, every
    demo under its own name."""
    given = [("--endpoint", "ID=IMAGE"), ("--worker", "ID=PATH"), ("--lb-worker", "ID=PATH")]
    found: list[tuple[str, str, str]] = []
    for flag, form in given:
        for endpoint_id, value in pairs(flag, getattr(args, flag[2:].replace("-", "_")), form):
            if flag != "--endpoint" and not Path(value).is_file():
                raise ValueError(f"{flag} '{endpoint_id}={value}': script {value} does not exist")
            if endpoint_id in {e for _, e, _ in found}:
                raise ValueError(f"endpoint {endpoint_id} is given twice; give each ID once")
            found.append((flag, endpoint_id, value))
    if found or args.replay:
        return found
    return [("--endpoint", name, name) for name in DEMOS]


def deploy(
    emulator: Emulator, args: argparse.Namespace, variables: dict[str, str], *, serving: bool
) -> None:
    """Deploy what the arguments name: images and handlers before the server starts, so
    a bad one is refused before anything listens; what runs processes (they need the
    server's loop) and the scenarios once it serves. An endpoint the database kept (a
    restart) keeps its queued jobs and runs what the argument names."""
    found = deployments(args)
    scripts = {e for flag, e, _ in found if flag != "--endpoint"}
    launch = {e: shlex.split(a) for e, a in pairs("--worker-args", args.worker_args, "ID=ARGS")}
    if extra := sorted(set(launch) - scripts):
        raise ValueError(f"--worker-args {extra[0]}: no --worker or --lb-worker {extra[0]}")
    for flag, endpoint_id, value in found:
        server = value in DEMOS and DEMOS[value].type == "LOAD_BALANCER"
        if serving != (flag != "--endpoint" or server):
            continue  # the other step's
        if flag != "--endpoint":
            emulator.deploy_worker(
                value,
                endpoint_id=endpoint_id,
                python=args.worker_python,
                env=variables,
                type="LOAD_BALANCER" if flag == "--lb-worker" else "QUEUE",
                args=launch.get(endpoint_id, []),
            )
        elif value.endswith(".py") or ".py:" in value:
            emulator.deploy(handler=load_handler(value), endpoint_id=endpoint_id)
        elif value not in DEMOS:
            raise ValueError(
                f"--endpoint '{endpoint_id}={value}': unknown image {value!r}; demo images "
                f"are {', '.join(DEMOS)}, or give path/to/file.py:function"
            )
        else:
            emulator.deploy(value, endpoint_id=endpoint_id)
    if not serving:
        return
    for endpoint_id, scenario in pairs("--scenario", args.scenario, "ID=NAME[:KEY=VALUE,...]"):
        spec = f"{endpoint_id}={scenario}"
        if endpoint_id not in emulator.jobs.endpoints:
            known = ", ".join(sorted(emulator.jobs.endpoints)) or "none"
            raise ValueError(f"--scenario {spec!r}: no endpoint {endpoint_id} (endpoints: {known})")
        try:
            emulator.set_scenario(endpoint_id, scenario)
        except ValueError as exc:
            raise ValueError(f"--scenario {spec!r}: {exc}") from None


def banner(server: EmulatorServer, *, key_source: str | None) -> str:
    """What the server prints once it serves: its addresses and the ``export`` lines
    (docs/behaviour.md#configuration). A key the user gave may be a secret that a CI log
    keeps: it is shown masked, and its export line asks for it rather than printing it."""
    emulator = server.emulator
    key = emulator.api_key
    management = f"{server.url}/v2"  # REST v2, as the service; /v1 is served too
    given = key_source is not None
    key_value = f"<the key {key_source}>" if given else shlex.quote(key)
    shown = f"{mask_key(key)} ({key_source})" if given else key
    endpoints = emulator.jobs.endpoints
    scenarios = [
        f"{endpoint_id}: {scenario.describe()}"
        for endpoint_id, scenario in sorted((i, e.scenario) for i, e in endpoints.items())
        if scenario is not None
    ]
    return "\n".join(
        [
            f"nbext emulator listening on {server.url}",
            f"  jobs:       {server.serverless_url}/{{endpoint_id}}/run ...",
            f"  load-balancing endpoints: {server.url}/lb/{{endpoint_id}}/<path> "
            "(or Host: {endpoint_id}.localhost)",
            f"  management: {management} (REST v2; REST v1 at {server.url}/v1)",
            f"  endpoints:  {', '.join(sorted(endpoints))}",
            *([f"  scenarios:  {'; '.join(scenarios)}"] if scenarios else []),
            f"  API key:    {shown}",
            "",
            "Point nbext.Client() and the runpod SDK here (paste into a shell):",
            f"  export RUNPOD_API_KEY={key_value}",
            f"  export RUNPOD_ENDPOINT_BASE_URL={shlex.quote(server.serverless_url)}",
            f"  export RUNPOD_REST_BASE_URL={shlex.quote(management)}",
            "Ctrl-C stops the emulator.",
        ]
    )


def worker_variables(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, str]:
    """``--worker-env`` arguments: the variables every ``--worker`` script gets besides
    the few it needs to run (docs/workers.md)."""
    variables = named_variables(args.worker_env, environ, "--worker-env")
    if variables and not args.worker and not args.lb_worker:
        raise ValueError(
            "--worker-env applies to --worker and --lb-worker scripts, and none is given"
        )
    return variables


SERVICE_COMMANDS = ("start", "stop", "status", "restart", "log")


def service_command(argv: Sequence[str]) -> int:
    """``python -m nbext.emulator start|stop|status|restart|log``: the user's local
    service (docs/behaviour.md#the-local-service), as ``%runpod local`` in a notebook."""
    from nbext import service

    from . import user_service

    parser = argparse.ArgumentParser(
        prog="python -m nbext.emulator",
        description="The user's local service: one emulator shared by every notebook.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("start", help="start it in the background (or join it)")
    start.add_argument(
        "--foreground", action="store_true", help="serve in this process; Ctrl-C stops it"
    )
    start.add_argument(
        "--idle-stop",
        type=_seconds,
        metavar="SECONDS",
        help="stop after this long with no call and nothing in flight (default "
        f"{user_service.IDLE_STOP_DEFAULT_S / 3600:g} h, or NBEXT_IDLE_STOP; 0: never)",
    )
    commands.add_parser("stop", help="stop it (its data is kept)")
    commands.add_parser("status", help="since when it runs, where its data is, who uses it")
    commands.add_parser("restart", help="stop it and start it again on the same data")
    log = commands.add_parser("log", help="the last lines of its log")
    log.add_argument("-n", type=int, default=50, metavar="LINES", help="how many (default 50)")
    args = parser.parse_args(argv)
    try:
        if args.command == "start" and args.foreground:
            return user_service.serve(idle_stop=user_service.idle_stop(args.idle_stop))
        if args.command == "start":
            print(service.join(idle_stop=args.idle_stop).describe())
        elif args.command == "restart":
            print(service.restart().describe())
        elif args.command == "stop":
            stopped = service.stop()
            print(
                f"stopped the local service (pid {stopped.pid})"
                if stopped
                else "no local service runs"
            )
        elif args.command == "log":
            print("\n".join(service.log_lines(args.n)))
        else:
            info = service.status()
            print("\n".join(service.describe(info)) if info else "no local service runs")
            return 0 if info else 3  # as `systemctl status` says "not running"
    except (service.ServiceError, service.ServiceFileError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    if given and given[0] in SERVICE_COMMANDS:
        return service_command(given)
    args = parse_args(argv)
    emulator: Emulator | None = None
    server: EmulatorServer | None = None
    try:
        deployments(args)  # scripts checked before anything is opened
        variables = worker_variables(args, os.environ)
        key = given_key(args, os.environ)
        emulator = Emulator(
            api_key=key[0] if key else None,
            rate_limit=not args.no_rate_limit,
            webhook_retry_delay=args.webhook_retry_delay,
            webhook_concurrency=args.webhook_concurrency,
            webhook_guard=args.webhook_guard,
            db=args.db,
        )
        deploy(emulator, args, variables, serving=False)
        server = EmulatorServer(
            emulator,
            host=args.host,
            port=args.port,
            log_level=args.log_level,
            request_timeout=args.request_timeout,  # ValueError when 0, as --max-connections
            max_connections=args.max_connections,
        )
        server.start()  # OSError: the port is taken
        deploy(emulator, args, variables, serving=True)
        if args.replay:  # after the start: a load-balancing endpoint's server runs on its loop
            replay.load(emulator, args.replay, speed=args.speed, instant=args.instant)
    except (ValueError, StoreFailed, sqlite3.Error, OSError) as exc:
        where = f"--db {args.db}: " if isinstance(exc, sqlite3.Error) else ""
        print(f"error: {where}{exc}", file=sys.stderr)
        if server is not None:
            server.stop()
        if emulator is not None:
            emulator.close()
        return 1 if isinstance(exc, OSError) else 2
    # What startup made lives as long as the process: frozen, a full collection skips it
    # (docs/performance.md#the-emulator-under-load). Here only: a kernel that hosts an
    # emulator holds the user's objects, which must stay collectable.
    gc.freeze()
    print(banner(server, key_source=key[1] if key else None), flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        emulator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

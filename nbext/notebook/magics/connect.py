"""``%runpod connect``, ``status`` and ``deploy``: which service, and notebook endpoints
(functions and worker scripts)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError

from ..deploy import START_TIMEOUT_S, WorkerStartFailed, deploy
from ..errors import a_kind
from ..ipython import argument, magic_arguments
from .commands import subcommand
from .common import Magics, usage_errors

if TYPE_CHECKING:
    import argparse


@subcommand("connect", "switch between the local emulator and the RunPod cloud")
@magic_arguments("runpod connect")
@argument("target", choices=["local", "cloud"], help="local: the embedded emulator; cloud: RunPod")
def connect(magics: Magics, args: argparse.Namespace) -> None:
    """Talk to the embedded emulator (``local``) or the real service (``cloud``).

    Jobs already submitted stay reachable from ``%runpod jobs`` whichever side is current.
    """
    with usage_errors("connect"):
        service = magics.connection.connect(args.target)
    print(f"nbext: {service.describe()}")


@subcommand("status", "which service this kernel talks to, its URLs, masked key, endpoints")
@magic_arguments("runpod status")
def status(magics: Magics, args: argparse.Namespace) -> None:
    """Which service, its addresses (the management one is REST v2's), the API key
    (masked) and the emulator's endpoints."""
    print("\n".join(magics.connection.status_lines()))


def worker_variables(specs: list[str]) -> dict[str, str]:
    """``--env NAME[=VALUE]`` options as the endpoint's ``env`` (one-line UsageError)."""
    from nbext.emulator.workers.environment import named_variables  # only when asked for

    try:
        return named_variables(specs, os.environ, "--env")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@subcommand(
    "deploy", "make a notebook function or a worker script an endpoint of the local emulator"
)
@magic_arguments("runpod deploy")
@argument(
    "function",
    help="the name of a function in the notebook, function(job) -> output; or the path of a "
    "worker script (.py) calling runpod.serverless.start",
)
@argument("--name", help="the endpoint id (default: the function's name, the script's stem)")
@argument("--workers-max", type=int, default=3, help="most workers (jobs at once); default 3")
@argument("--workers-min", type=int, default=0, help="workers kept running; default 0")
@argument("--idle-timeout", type=float, default=5.0, help="seconds an idle worker stays; default 5")
@argument(
    "--execution-timeout", type=float, default=None, help="seconds a job may run; default 600"
)
@argument("--python", help="a worker script's interpreter (default: the kernel's)")
@argument(
    "--env",
    action="append",
    default=[],
    metavar="NAME[=VALUE]",
    help="a variable for a worker script's processes; NAME alone copies the kernel's "
    "(they get no other of its variables but PATH, HOME, locale, proxies); repeatable",
)
@argument(
    "--load-balancer",
    action="store_true",
    help="the script is an HTTP server on $PORT (FastAPI, http.server...): a load-balancing "
    "endpoint, reached at its own paths",
)
@argument(
    "--start-timeout",
    type=float,
    default=START_TIMEOUT_S,
    help=f"seconds a worker script may take to serve; default {START_TIMEOUT_S:.0f}",
)
def deploy_command(magics: Magics, args: argparse.Namespace) -> None:
    """Deploy FUNCTION (a name in the notebook) as an endpoint, callable at once from
    ``%%runpod_job NAME``. Deploying again under the same name switches to the new code.

    A path ending in ``.py`` (or naming a file) deploys that worker script: its workers
    are processes running it unmodified, as on the service; the command returns when the
    first one serves, or shows the last lines of one that died at start.
    """
    target = args.function
    script = target.endswith(".py") or os.path.isfile(target)
    if script:
        what: Any = target
    else:
        if args.python is not None or args.env or args.load_balancer:
            option = "--python" if args.python is not None else "--env"
            option = "--load-balancer" if args.load_balancer else option
            raise UsageError(f"{option} applies to a worker script (a .py path), not {target!r}")
        what = magics.user_ns.get(target)
        if what is None:
            raise UsageError(f"no {target!r} in the notebook's namespace")
        if not callable(what):
            raise UsageError(f"{target!r} is {a_kind(what)}, not a function")
    env = worker_variables(args.env) if args.env else None
    with usage_errors("deploy"):
        try:
            endpoint_id = deploy(
                what,
                args.name or (None if script else target),
                # the flags' flat names, in REST v2's words from here on
                workers={
                    "min": args.workers_min,
                    "max": args.workers_max,
                    "idleTimeout": args.idle_timeout,
                },
                execution_timeout=args.execution_timeout,
                type="LOAD_BALANCER" if args.load_balancer else "QUEUE",
                python=args.python,
                env=env,
                start_timeout=args.start_timeout,
                connection=magics.connection,
            )
        except WorkerStartFailed as exc:  # its last lines: the traceback's end says why
            for line in exc.output:
                print(f"  {line}", file=sys.stderr)
            raise
    shown = os.path.basename(target) if script else target
    if args.load_balancer:
        print(
            f"deployed {shown} as load-balancing endpoint {endpoint_id!r}: "
            f"%%runpod_http {endpoint_id} GET /ping"
        )
    else:
        print(f"deployed {shown} as endpoint {endpoint_id!r}: %%runpod_job {endpoint_id}")

"""``RunpodMagics``: ``%%runpod_job``, ``%%runpod_chat``, ``%%runpod_http`` and ``%runpod``,
configured with ``%config RunpodMagics.<trait> = value``. The magics hold the kernel's
``Connection``; tests hand them one bound to their own emulator.
"""

from __future__ import annotations

from typing import Any

from IPython.core.magic import Magics, magics_class
from traitlets import Bool, Float, Int, TraitError, Unicode, observe, validate

from nbext import media
from nbext.client import Budget

from ..chat import Conversation
from ..connection import Connection
from ..ipython import argument, cell_magic, line_cell_magic, line_magic, magic_arguments
from ..kernel import MEDIA, current
from ..widgets.logs import DEFAULT_MAX_LINES

# isort: off
# The modules register their subcommands as they are imported, and help lists them in
# that order: a session's, from signing in to the account's records.
from . import login, connect, emulator, jobs, why, health, map, batch, chat  # noqa: F401
from . import recordings, listings, catalog, logs  # noqa: F401

# isort: on
from .chat import run_chat
from .commands import SUBCOMMANDS, dispatch, help_text
from .common import number_option, parse_line
from .http import METHODS, run_http
from .job import job_option_arguments, run_job


@magics_class
class RunpodMagics(Magics):
    """Run jobs on serverless endpoints and watch them, from cells."""

    display_limit = Int(
        20, help="Rows a listing shows (0: all); -o NAME always stores every row."
    ).tag(config=True)
    poll_interval = Float(
        0.5, help="Seconds between two state checks of a running job (streamed text is live)."
    ).tag(config=True)
    default_endpoint = Unicode(
        None, allow_none=True, help="The endpoint %%runpod_job uses when none is named."
    ).tag(config=True)
    raise_on_failure = Bool(
        True,
        help="A cell whose job ends FAILED, TIMED_OUT or CANCELLED raises (Run All stops "
        "there); False keeps it going, as --no-raise does for one cell.",
    ).tag(config=True)

    log_max_lines = Int(
        DEFAULT_MAX_LINES,
        min=1,
        help="Lines a log's panel keeps, followed or not (the oldest go first), and so at "
        "most what its cell keeps in the saved notebook.",
    ).tag(config=True)

    media_inline_bytes = Int(
        media.Limits.inline_bytes,
        help="An image or sound up to this size (bytes) is kept whole in the saved notebook; "
        "a larger one only as a thumbnail, with a way to show it in full.",
    ).tag(config=True)
    media_job_bytes = Int(
        media.Limits.job_bytes,
        help="At most this many bytes of media per job output are kept in the saved notebook.",
    ).tag(config=True)
    media_thumbnail_px = Int(
        media.Limits.thumbnail_px, help="The longer side of a thumbnail, in pixels."
    ).tag(config=True)
    media_full_size_dir = Unicode(
        MEDIA.full_size_dir,
        help="The folder, relative to the kernel's working directory (the notebook's in "
        "JupyterLab), where the full file of a medium the notebook keeps small is written, "
        "for its 'show full size' link; empty: write nothing, the output says how to get "
        "it from Python.",
    ).tag(config=True)

    budget_usd = Float(
        None,
        allow_none=True,
        help="Dollars the jobs started from this kernel may cost (None: no cap). Past it a "
        "submission is refused and a map stops, cancelling its jobs in flight.",
    ).tag(config=True)

    def __init__(self, shell: Any = None, connection: Connection | None = None, **kwargs: Any):
        self.connection = connection or current()
        super().__init__(shell=shell, **kwargs)
        self.conversations: dict[str, Conversation] = {}
        """``%%runpod_chat``'s conversations in this kernel, by endpoint."""
        self._apply_media()

    @validate("display_limit", "media_inline_bytes", "media_job_bytes", "media_thumbnail_px")
    def _check_not_negative(self, proposal: dict[str, Any]) -> int:
        value, name = int(proposal["value"]), proposal["trait"].name
        if value < 0:
            every = " (0 shows every row)" if name == "display_limit" else ""
            raise TraitError(f"{name} must be >= 0{every}, got {value}")
        return value

    @observe("media_inline_bytes", "media_job_bytes", "media_thumbnail_px", "media_full_size_dir")
    def _apply_media(self, change: Any = None) -> None:
        """The panels draw media within these limits (``kernel.MEDIA``)."""
        MEDIA.limits = media.Limits(
            inline_bytes=self.media_inline_bytes,
            job_bytes=self.media_job_bytes,
            thumbnail_px=self.media_thumbnail_px,
        )
        MEDIA.full_size_dir = self.media_full_size_dir or ""

    @validate("budget_usd")
    def _check_budget(self, proposal: dict[str, Any]) -> float | None:
        try:
            Budget(proposal["value"])
        except ValueError as exc:
            raise TraitError(str(exc)) from None
        return proposal["value"]  # type: ignore[no-any-return]

    @observe("budget_usd")
    def _apply_budget(self, change: Any) -> None:
        """One cap for the kernel: its clients share the connection's ``Budget``."""
        self.connection.budget.budget_usd = change["new"]

    @property
    def user_ns(self) -> dict[str, Any]:
        """The notebook's namespace (where ``-o NAME`` lands and ``--python`` reads)."""
        assert self.shell is not None, "the magics are not registered with a shell"
        namespace: dict[str, Any] = self.shell.user_ns
        return namespace

    @validate("poll_interval")
    def _check_poll(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not 0.05 <= value <= 60:
            raise TraitError(f"poll_interval must be between 0.05 and 60 seconds, got {value}")
        return value

    @magic_arguments("%runpod_job")  # the usage line adds one more "%"
    @argument("endpoint", nargs="?", help="the endpoint id (default: the default_endpoint trait)")
    @argument("--python", action="store_true", help="the body is a Python expression, not JSON")
    @argument("--sync", action="store_true", help="one /runsync call instead of /run and waiting")
    @argument("--stream", action="store_true", help="show the job's streamed text as it arrives")
    @argument(
        "--background",
        action="store_true",
        help="return at once; the panel keeps updating while other cells run",
    )
    @argument("--timeout", type=float, metavar="SECONDS", help="stop waiting after SECONDS")
    @job_option_arguments
    @argument(
        "-o",
        "--output",
        metavar="NAME",
        help="store the job's output in NAME (None if it did not complete; with "
        "--background, set when the job ends)",
    )
    @argument("-q", "--quiet", action="store_true", help="no panel (a failure is still said)")
    @argument(
        "--no-raise",
        action="store_true",
        help="a job that fails, times out or is cancelled does not stop the notebook here",
    )
    @cell_magic
    def runpod_job(self, line: str, cell: str) -> None:
        """Run the cell as a job of ENDPOINT and show it live.

        The body is the job's input: a JSON object, or with --python a Python
        expression (evaluated in the notebook) giving a dict. Blocking by default:
        Ctrl-C cancels the job. --background returns at once. Example::

            %%runpod_job echo -o out
            {"text": "hello"}
        """
        run_job(self, parse_line(self.runpod_job, line), cell)

    @magic_arguments("%runpod_chat")
    @argument("endpoint", help="the endpoint id (an LLM endpoint: docs/openai.md)")
    @argument("--new", action="store_true", help="start a new conversation with this endpoint")
    @argument("--system", metavar="TEXT", help="the system prompt (empty: none)")
    @argument("--model", help="the model to ask (default: the first the endpoint lists)")
    @argument("--temperature", type=float, help="sampling temperature, 0 to 2")
    @argument("--max-tokens", type=int, metavar="N", help="at most N tokens in the answer")
    @argument("-o", "--output", metavar="NAME", help="store the answer's text in NAME")
    @argument(
        "--no-raise",
        action="store_true",
        help="an answer that fails does not stop the notebook here",
    )
    @cell_magic
    def runpod_chat(self, line: str, cell: str) -> None:
        """Send the cell as a message to an LLM endpoint; the answer streams as Markdown.

        The conversation goes on across cells for that endpoint (--new starts over);
        %runpod chat history shows it. Ctrl-C (or, in a Jupyter kernel, the Cancel
        button under the answer) stops the answer and cancels its job.
        Example::

            %%runpod_chat llm --system "Answer briefly."
            What is a cold start?
        """
        run_chat(self, parse_line(self.runpod_chat, line), cell)

    @magic_arguments("%runpod_http")
    @argument("endpoint", help="the endpoint id (a load-balancing endpoint)")
    @argument("method", type=str.upper, choices=METHODS, help="the HTTP method")
    @argument("path", help="the worker's path, such as /generate")
    @argument("--python", action="store_true", help="the body is a Python expression, not JSON")
    @argument(
        "-H",
        "--header",
        action="append",
        metavar="'NAME: VALUE'",
        help="a request header (repeatable), e.g. 'X-Runpod-Worker-Id: strict ID'",
    )
    @argument(
        "--timeout",
        type=number_option("--timeout", float),
        metavar="SECONDS",
        help="give up when no answer came within SECONDS (default: the client's wait_timeout)",
    )
    @argument("-o", "--output", metavar="NAME", help="store the answer in NAME")
    @argument("--no-raise", action="store_true", help="a failed request does not stop the notebook")
    @line_cell_magic
    def runpod_http(self, line: str, cell: str | None = None) -> None:
        """Send the cell as a request to a load-balancing endpoint; show the answer.

        The body is JSON, or with --python a Python expression (a dict or list goes as
        JSON, a str as text, bytes as they are); as a line magic (one %), no body.
        -o NAME keeps the answer (JSON's value, text or bytes; an event stream's events'
        data, JSON-decoded where JSON). A worker's error status stops the notebook with
        the client's error for it (NotFound, APIError...). Example::

            %%runpod_http my-api POST /generate -o out
            {"prompt": "hello"}
        """
        __tracebackhide__ = True  # IPython shows an error raised here as the cell's own
        run_http(self, parse_line(self.runpod_http, line), cell or "")

    @line_magic
    def runpod(self, line: str) -> Any:
        """Talk to the service: %runpod SUBCOMMAND [arguments].

        %runpod help SUBCOMMAND shows a subcommand's options. As in IPython's own
        magics, $name and {expression} in the line take the notebook's values.
        """
        return dispatch(self, line)


RunpodMagics.runpod.__doc__ = f"{RunpodMagics.runpod.__doc__}\n\nSubcommands:\n\n{help_text()}\n"

__all__ = ["SUBCOMMANDS", "RunpodMagics"]

"""What every client-side command shares: the server argument, the connection, and output rules.

The server is always the last argument: an `http(s)://` URL, or `-- COMMAND ARGS` for stdio
(`skillwire ls -- python -m my_server`). `--header NAME:VALUE` adds HTTP headers. Output for people
follows one rule: colour, tables and progress bars only on a terminal; plain, stable text when piped;
`--json` for machines; `--quiet` for nothing but errors.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED, METHOD_NOT_FOUND
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from skillwire.client.limits import DEFAULT_TIMEOUT, ClientLimits
from skillwire.client.skills import SkillsClient
from skillwire.core.errors import SkillwireError
from skillwire.host.origins import server_origin

# The SDK logs a server's bad bytes (invalid JSON, a broken stream) at ERROR level; the commands report
# each such fault themselves, on one line, so while they talk to a server those records are not printed
# a second time (`connect` stops them propagating; the NullHandler keeps logging's last resort quiet).
_SDK_LOGGER = logging.getLogger("mcp")
_SDK_LOGGER.addHandler(logging.NullHandler())


class UsageError(Exception):
    """A command line that cannot work; printed as one line with a suggestion."""


@dataclass(frozen=True)
class ServerTarget:
    url: str | None
    command: tuple[str, ...] | None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float = DEFAULT_TIMEOUT  # seconds to wait for each answer (`--timeout`)

    @property
    def label(self) -> str:
        return self.url if self.url is not None else " ".join(self.command or ())


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str] | None]:
    """Split `... -- COMMAND ARGS` (the stdio server command) from the arguments argparse sees."""
    args = list(argv)
    if "--" in args:
        cut = args.index("--")
        return args[:cut], args[cut + 1 :]
    return args, None


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "server", nargs="?", metavar="URL", help="the server: an http(s):// URL, or `-- COMMAND ARGS` for stdio"
    )
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="HTTP header (repeatable)")
    add_timeout_argument(parser)


def add_timeout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds to wait for each answer from the server (default {DEFAULT_TIMEOUT:g})",
    )


def add_output_arguments(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    if json:
        parser.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only errors")


def server_target(args: argparse.Namespace) -> ServerTarget:
    timeout = getattr(args, "timeout", DEFAULT_TIMEOUT)
    if not timeout > 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {timeout:g}")
    headers: list[tuple[str, str]] = []
    for raw in args.header:
        name, sep, value = raw.partition(":")
        if not sep or not name.strip():
            raise UsageError(f"--header wants NAME:VALUE, got {raw!r}")
        headers.append((name.strip(), value.strip()))
    command = getattr(args, "stdio_command", None)
    if command:
        if args.server:
            raise UsageError(f"give either a URL or `-- COMMAND`, not both (got {args.server!r} and a command)")
        return ServerTarget(None, tuple(command), tuple(headers), timeout)
    if not args.server:
        raise UsageError("no server given: add an http(s):// URL, or `-- COMMAND ARGS` for a stdio server")
    if not args.server.startswith(("http://", "https://")):
        raise UsageError(
            f"{args.server!r} is not an http(s):// URL; for a stdio server write `-- {args.server} ...` at the end"
        )
    return ServerTarget(args.server, None, tuple(headers), timeout)


@asynccontextmanager
async def connect(
    target: ServerTarget, *, label: str = "server", http_statuses: list[int] | None = None
) -> AsyncIterator[SkillsClient]:
    """A connected `SkillsClient`. `http_statuses` collects every HTTP error status seen (the SDK reports
    a 401 only as a generic JSON-RPC error, so this is how a command can say "HTTP 401")."""
    origin = server_origin(
        label,
        target.url if target.url is not None else list(target.command or ()),
        headers=dict(target.headers),
        limits=ClientLimits(timeout=target.timeout),
    )
    record = None
    if http_statuses is not None:
        statuses = http_statuses

        async def record(response: Any) -> None:
            if response.status_code >= 400:
                statuses.append(response.status_code)

    propagated = _SDK_LOGGER.propagate
    _SDK_LOGGER.propagate = False
    try:
        async with origin.connect(on_http_response=record) as client:
            yield client
    finally:
        _SDK_LOGGER.propagate = propagated


class Output:
    """stdout for results, stderr for diagnostics; rich features only on a real terminal."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        json_mode: bool = False,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.quiet = quiet
        self.json_mode = json_mode
        self.is_terminal = self.stdout.isatty() and os.environ.get("TERM") != "dumb"
        no_color = "NO_COLOR" in os.environ
        self.console = Console(
            file=self.stdout,
            force_terminal=self.is_terminal,
            no_color=no_color or not self.is_terminal,
            highlight=False,
            soft_wrap=not self.is_terminal,
        )
        self.err_console = Console(
            file=self.stderr,
            force_terminal=self.stderr.isatty(),
            no_color=no_color or not self.stderr.isatty(),
            highlight=False,
            soft_wrap=True,  # a diagnostic stays one line; the terminal wraps it, rich does not break it
        )

    @property
    def width(self) -> int:
        return self.console.width if self.is_terminal else 100

    def print(self, text: str = "", **kwargs: Any) -> None:
        if not self.quiet:
            self.console.print(text, markup=False, **kwargs) if not kwargs.get("markup") else self.console.print(
                text, **kwargs
            )

    def write(self, text: str) -> None:
        """Raw text on stdout, exactly as given (for `--json` and piped output)."""
        self.stdout.write(text)
        self.stdout.flush()

    def warn(self, text: str) -> None:
        if not self.quiet:
            self.err_console.print(text, markup=False, style="yellow")

    def error(self, text: str) -> None:
        self.err_console.print(text, markup=False, style="bold red")

    def progress(self, description: str, total: int | None) -> Progress | None:
        """A progress bar on a terminal (stderr), None when piped, quiet or JSON."""
        if self.quiet or self.json_mode or not self.err_console.is_terminal:
            return None
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.err_console,
            transient=True,
        )
        progress.add_task(description, total=total)
        return progress


# -- shared by the client commands (ls, get, cat, pull) ------------------------------------------------------------

T = TypeVar("T")

# C0/C1 controls, DEL, zero-width and bidi controls: a server could use them to rewrite what a terminal shows.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


class ClientError(Exception):
    """Talking to the server failed; the message is one line that says what to try."""


# Server-supplied text longer than this is cut where it is printed: a 10 MB description is shown as 2,000
# characters and a count. (Agent Skills caps a description at 1,024 characters, so real ones print whole.)
PRINT_LIMIT = 2000


def printable(text: str, limit: int = PRINT_LIMIT) -> str:
    """Server-supplied text made safe for a terminal: control and bidi characters become visible escapes,
    and anything past `limit` characters is cut, with a note saying how much."""
    cut = ""
    if len(text) > limit:
        cut = f"… [{len(text) - limit:,} more characters]"
        text = text[:limit]
    return _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text) + cut


def human_size(size: int) -> str:
    """`379 B`, `1.4 KiB`, `2.0 MiB`: stable, so piped output does not change between runs."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def report_failure(out: Output, args: argparse.Namespace, exc: Exception, hint: str = "") -> int:
    """The one-line error every client command prints (the traceback only with --debug); returns 1."""
    if getattr(args, "debug", False):
        raise exc
    out.error(f"skillwire: error: {printable(str(exc))}{hint}")
    return 1


def add_debug_argument(parser: argparse.ArgumentParser) -> None:
    """`--debug` after the command too (`skillwire ls URL --debug`); SUPPRESS keeps a global --debug."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")


def run_client(target: ServerTarget, body: Callable[[SkillsClient], Awaitable[T]]) -> T:
    """Connect, run `body(client)`, disconnect; failures come out as one exception with a clear message.

    The SDK's task groups wrap every error in exception groups; the first real error is taken out.
    `UsageError` and `SkillwireError` pass through unchanged; anything else (network, HTTP status,
    a stdio command that does not start) becomes a `ClientError` that explains what to try.
    """

    statuses: list[int] = []

    async def session() -> T:
        async with connect(target, http_statuses=statuses) as client:
            return await body(client)

    try:
        return anyio.run(session)
    except BaseException as exc:
        leaf = _first_leaf(exc)
        if leaf is exc and not isinstance(exc, Exception):
            raise
        if isinstance(leaf, (UsageError, SkillwireError, KeyboardInterrupt)):
            raise leaf from None
        if not isinstance(leaf, Exception):
            raise
        raise ClientError(printable(explain_client_failure(leaf, target, statuses[-1] if statuses else None))) from leaf


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def explain_client_failure(exc: Exception, target: ServerTarget, http_status: int | None = None) -> str:
    """One line for a failure to talk to the server, saying what to try."""
    where = target.label
    kind = type(exc).__name__
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    status = status if isinstance(status, int) else http_status
    if status is not None:
        if status in (401, 403):
            return (
                f"{where} refused the request (HTTP {status}); an authenticated server needs a header, "
                "e.g. --header 'Authorization: Bearer TOKEN'"
            )
        if status == 404:
            return f"{where} answered HTTP 404; check the URL path (skillwire serve listens on /mcp)"
        return f"{where} answered HTTP {status}; check the URL and the server's log"
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"):
        if kind == "ConnectError":
            return f"cannot connect to {where} ({exc}); is the server running, and is the URL right?"
        if "Timeout" in kind:
            return f"{where} did not answer in time ({kind}); try again, or check the server"
        return f"cannot talk to {where} ({kind}: {exc}); check the URL"
    if isinstance(exc, MCPError):
        if target.command is not None and exc.code == CONNECTION_CLOSED:
            return f"the server command `{where}` closed the connection before answering; run it alone to see why"
        if exc.code == METHOD_NOT_FOUND:
            return (
                f"{where} does not know the method ({exc.message}); is it an MCP endpoint? "
                "(skillwire serve listens on /mcp)"
            )
        return f"{where} answered with an error: {exc.message} (JSON-RPC {exc.code})"
    if isinstance(exc, FileNotFoundError) and target.command is not None:
        return f"cannot start `{target.command[0]}`: command not found; check the command after `--`"
    if isinstance(exc, OSError):
        return f"{where}: {exc.strerror or exc}"
    return f"{where}: {kind}: {exc}"

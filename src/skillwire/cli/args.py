"""The command line every client command shares: the server argument, `-- COMMAND`, `--header`,
`--timeout` and the output flags, the two exits that are not a command's own result,
and `say_failure`, the one line a failed command ends with. Every option
more than one command takes is defined here once (`--quiet`, `--allow-host`, `--trust`/`--trust-file`, ...),
so its spelling, default and help cannot drift between commands.

The server is always the last argument: an `http(s)://` URL, or `-- COMMAND ARGS` for stdio
(`skillwire ls -- python -m my_server`). `--header NAME:VALUE` adds HTTP headers.

This module stays light (argparse and one constant): `main` and `serve` import it before anything
else, and a long-running `serve` should not pay for the inspection commands' imports (rich, the SDK).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillwire.client.limits import DEFAULT_TIMEOUT
from skillwire.core.address import address_as_url
from skillwire.core.errors import SkillwireError

if TYPE_CHECKING:
    from skillwire.catalog.listing import ListingRule
    from skillwire.host.trust import TrustPolicy

INTERRUPTED = 130  # the exit status after Ctrl-C: 128 + SIGINT, as shells report it


class UsageError(Exception):
    """A command line that cannot work; printed as one line with a suggestion (exit status 2)."""


class AtLeast(argparse.Action):
    """`action=AtLeast, minimum=N` on a numeric option: a value below N is the command line's one-line
    mistake (exit 2) naming the flag ("--page-size must be at least 1, got 0"), before anything runs."""

    def __init__(self, option_strings: Sequence[str], dest: str, minimum: float = 0, **kwargs: Any) -> None:
        self.minimum = minimum
        super().__init__(option_strings, dest, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values < self.minimum:
            raise UsageError(f"{option_string or self.dest} must be at least {self.minimum:g}, got {values:g}")
        setattr(namespace, self.dest, values)


def parse_host_port(value: str, flag: str = "--http") -> tuple[str, int]:
    """HOST:PORT of `--http` (serve, bridge); port 0 is allowed: the kernel picks a free one when binding,
    and "listening on" names it."""
    host, sep, port = value.rpartition(":")
    if sep and port.isdigit() and int(port) > 65535:
        raise UsageError(f"{flag}: port {port} is out of range (0-65535)")
    if not sep or not port.isdigit():
        hint = f"; for port {value} write {flag} 127.0.0.1:{value}" if value.isdigit() else ""
        raise UsageError(f"{flag} wants HOST:PORT, got {value!r}{hint}")
    return host.strip("[]") or "127.0.0.1", int(port)


def say_failure(exc: Exception) -> int:
    """Say why a command failed, in its one line, and return its exit code: 2 for a usage error, else 1.
    Also for a failure outside `main`'s own frame (a stdio server's first scan runs in a worker thread)."""
    if isinstance(exc, UsageError):
        _say_error(f"skillwire: {exc}", str(exc), "usage_error")
        return 2
    # The traceback hint only where one could help: not for what the user can fix from the message
    # (a refused connection, a 404, a missing file, a server's or our own refusal).
    ordinary = isinstance(exc, SkillwireError | OSError | ValueError) or type(exc).__module__.startswith(
        ("httpx", "skillwire.cli.")  # the command line's own errors (ClientError) already say what to do
    )
    hint = "" if ordinary else "  (run with --debug for the traceback)"
    _say_error(f"skillwire: error: {exc}{hint}", str(exc), "error")
    return 1


def _say_error(line: str, message: str, event: str) -> None:
    """The one line a failed command prints: as is, or a JSON event when JSON logs were asked for."""
    from skillwire.ops.logs import current_format, log_format

    if current_format() == "json" or log_format() == "json":
        logging.getLogger("skillwire").error(message, extra={"event": event})
        if logging.getLogger().handlers:
            return
    print(line, file=sys.stderr)


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
    add_header_argument(parser)
    add_timeout_argument(parser)


def add_origin_argument(parser: argparse.ArgumentParser) -> None:
    """`--origin LABEL` of `ls` and `get`: the label a host gives this server, so keys a trust file scopes
    to origins (`trust add ... --origin LABEL`) are judged as that host judges them."""
    from skillwire.host.identity import validate_origin_label

    def label(text: str) -> str:
        try:
            return validate_origin_label(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parser.add_argument(
        "--origin",
        metavar="LABEL",
        type=label,
        help="the label your host gives this server (as in `skillwire bridge --server LABEL=URL`): publisher keys "
        "trusted only for that origin (`skillwire trust add ... --origin LABEL`) count (default: no label, so "
        "only keys without an origin scope count)",
    )


def add_header_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="HTTP header (repeatable)")


def add_timeout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"seconds to wait for each answer from the server (default {DEFAULT_TIMEOUT:g})",
    )


def add_output_arguments(parser: argparse.ArgumentParser, *, json: bool = True, quiet: bool = True) -> None:
    if json:
        parser.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    if quiet:
        parser.add_argument("--quiet", "-q", action="store_true", help="print only errors")


def add_allow_host_argument(parser: argparse.ArgumentParser) -> None:
    """`--allow-host`, for the commands that serve HTTP (serve, bridge)."""
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME", help="extra Host header to accept")


def add_audience_argument(parser: argparse.ArgumentParser) -> None:
    """`--audience`, for the commands that decide who sees what (serve, and publish, whose index carries it)."""
    parser.add_argument(
        "--audience",
        action="append",
        default=[],
        metavar="PREFIX=AUD[,AUD]",
        help=(
            "only callers with one of these audiences see skills under PREFIX "
            "(repeatable; a caller's audiences come from serve --tokens)"
        ),
    )


def _listing_rule(listed: bool) -> Callable[[str], ListingRule]:
    def parse(glob: str) -> ListingRule:
        from skillwire.catalog.listing import ListingRule
        from skillwire.core.errors import InvalidListingRule

        try:
            return ListingRule(listed, glob)
        except InvalidListingRule as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def add_listing_arguments(parser: argparse.ArgumentParser) -> None:
    """`--list GLOB` / `--unlist GLOB`, for the commands that choose what `skills/list` lists (serve, and publish,
    whose index carries the choice): one list in command-line order, since the last matching rule decides."""
    group = parser.add_argument_group(
        "what skills/list lists (the last matching glob decides; unlisted skills stay loadable by address)"
    )
    for flag, listed, what in (("--list", True, "list"), ("--unlist", False, "do not list")):
        group.add_argument(
            flag,
            dest="listing",
            action="append",
            default=[],
            type=_listing_rule(listed),
            metavar="GLOB",
            help=f"{what} the skills matching GLOB: a skill path (team/**) or URI (skill://team/*); repeatable",
        )


def add_trust_arguments(parser: argparse.ArgumentParser, *, qualifier: str = "") -> None:
    """`--trust` and `--trust-file`: publisher signatures judged as the bridge judges them (bridge, approve,
    `pull --for`); `qualifier` starts each help text (`with --for: `). Read them with `trust_from_args`."""
    parser.add_argument(
        "--trust",
        choices=["off", "warn", "require"],
        default="off",
        help=f"{qualifier}publisher signatures: off (default), warn when missing or untrusted, "
        "or require a trusted one",
    )
    parser.add_argument(
        "--trust-file",
        type=Path,
        metavar="FILE",
        help=f"{qualifier}trusted publisher keys (default: `skillwire trust`'s)",
    )


def trust_from_args(args: argparse.Namespace) -> TrustPolicy:
    """The trust policy `--trust` and `--trust-file` ask for, with the keys of the trust file."""
    # Imported here: this module stays light for `serve`, which takes neither option.
    from skillwire.host.trust import TrustPolicy, TrustStore

    if args.trust == "off":
        return TrustPolicy()
    try:
        return TrustStore(args.trust_file).policy(args.trust)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def add_log_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--log-format` and `--log-requests`, for the long-running commands (serve, bridge)."""
    parser.add_argument(
        "--log-format",
        choices=["human", "json"],
        default=None,
        help="human lines (default) or JSON lines for a log collector (SKILLWIRE_LOG_FORMAT=json too)",
    )
    parser.add_argument(
        "--log-requests", action="store_true", help="log one line per request: method, outcome, duration"
    )


def add_debug_argument(parser: argparse.ArgumentParser) -> None:
    """`--debug` after the command too (`skillwire ls URL --debug`); SUPPRESS keeps a global --debug."""
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")


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
        url = address_as_url(args.server)
        if url is not None:
            raise UsageError(f"{args.server!r} has no scheme; did you mean {url}?")
        raise UsageError(
            f"{args.server!r} is not an http(s):// URL; for a stdio server write `-- {args.server} ...` at the end"
        )
    return ServerTarget(args.server, None, tuple(headers), timeout)

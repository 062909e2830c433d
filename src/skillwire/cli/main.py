"""`skillwire` command line: one subcommand per module in this package; errors are one line."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from skillwire._version import __version__
from skillwire.cli.args import INTERRUPTED, UsageError, say_failure, split_command

COMMANDS = (
    "serve",
    "publish",
    "sign",
    "ls",
    "get",
    "cat",
    "pull",
    "browse",
    "lint",
    "check",
    "bridge",
    "approve",
    "approvals",
    "trust",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or with `only` one command's: a long-running `serve` then never imports what
    the inspection commands need (about 4 MB and a tenth of a second of its start)."""
    parser = argparse.ArgumentParser(
        prog="skillwire", description="Serve and inspect Agent Skills over MCP (SEP-2640)."
    )
    parser.add_argument("--version", action="version", version=f"skillwire {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (only,) if only is not None else COMMANDS:
        importlib.import_module(f"skillwire.cli.{name}").add_parser(commands)
    return parser


def unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, words: list[str]) -> NoReturn:
    """Words no option of the command knows: the command's usage (not the top level's), and for a flag
    the closest one the command has ("did you mean --http?"). Exits 2, as argparse does."""
    command = getattr(args, "command", None)
    subparsers = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    target: argparse.ArgumentParser = (
        subparsers.choices.get(command, parser) if subparsers is not None and command else parser
    )
    known = [flag for action in target._actions for flag in action.option_strings if flag.startswith("--")]
    message = "unrecognized arguments: " + " ".join(words)
    flag = next((word.split("=", 1)[0] for word in words if word.startswith("--")), None)
    close = difflib.get_close_matches(flag, known, n=1, cutoff=0.6) if flag else []
    if close:
        message += f" (did you mean {close[0]}?)"
    target.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    before, command = split_command(sys.argv[1:] if argv is None else argv)
    # Global options take no values, so the first other word is the command.
    first = next((word for word in before if not word.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    try:
        args, unknown = parser.parse_known_args(before)
    except UsageError as exc:  # a value an option refuses (`AtLeast`): one line naming the flag
        return say_failure(exc)
    if unknown:
        unrecognized(parser, args, unknown)
    args.stdio_command = command
    from skillwire.ops import tracing  # the API only; the SDK is imported when OTEL_* asks for traces

    if (problem := tracing.configure_from_environment()) is not None:
        print(f"skillwire: warning: {problem}; no traces are exported", file=sys.stderr)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:
        if args.debug and not isinstance(exc, UsageError):
            raise
        return say_failure(exc)
    return code


def entry() -> None:
    """The `skillwire` console script (and `python -m skillwire`): `main`, then exit with its code.

    Two exits skip the interpreter's teardown (the streams and logs are flushed first; nothing
    registers an exit handler that writes: pull writes and fsyncs each skill and the lock as it goes,
    snapshot files are renamed into place whole):
    - after Ctrl-C, because tearing down the `mcp` and pydantic module graph takes 0.2-0.8 s here and
      an interrupted command has nothing left to finish;
    - after any command that used object storage: obstore's Rust runtime keeps worker threads that
      are not told about `Py_Finalize`, and one that wakes during it aborts the process (SIGABRT,
      exit 134) after the command succeeded. A two-line put/get script with obstore 0.12.1 aborted
      in 7 of 48 runs here; `tests/e2e/test_cli_exit.py` runs `publish` until it would have.
    """
    try:
        code = main()
    except KeyboardInterrupt:  # before a command's own handling (while parsing, importing)
        code = INTERRUPTED
    from skillwire.ops import tracing

    tracing.shutdown()  # spans an OTLP exporter still holds, before any exit that skips teardown
    if code == INTERRUPTED or "obstore" in sys.modules:
        _exit_without_teardown(code)
    sys.exit(code)


def _exit_without_teardown(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    logging.shutdown()
    os._exit(code)


if __name__ == "__main__":
    entry()

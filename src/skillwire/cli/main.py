"""`skillwire` command line: one subcommand per module in this package; errors are one line."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Sequence

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


def main(argv: Sequence[str] | None = None) -> int:
    before, command = split_command(sys.argv[1:] if argv is None else argv)
    # Global options take no values, so the first other word is the command.
    first = next((word for word in before if not word.startswith("-")), None)
    parser = build_parser(first if first in COMMANDS else None)
    args = parser.parse_args(before)
    args.stdio_command = command
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

"""`skillwire` command line: one subcommand per module in this package; errors are one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from skillwire import __version__
from skillwire.cli import cat, check, get, lint, ls, pull, serve
from skillwire.cli.common import UsageError, split_command


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skillwire", description="Serve and inspect Agent Skills over MCP (SEP-2640)."
    )
    parser.add_argument("--version", action="version", version=f"skillwire {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(commands)
    ls.add_parser(commands)
    get.add_parser(commands)
    cat.add_parser(commands)
    pull.add_parser(commands)
    lint.add_parser(commands)
    check.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    before, command = split_command(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(before)
    args.stdio_command = command
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except UsageError as exc:
        print(f"skillwire: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            raise
        print(f"skillwire: error: {exc}  (run with --debug for the traceback)", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())

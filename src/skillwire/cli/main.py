"""`skillwire` command line: one subcommand per module in this package; errors are one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from skillwire import __version__
from skillwire.cli import serve


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skillwire", description="Serve and inspect Agent Skills over MCP (SEP-2640)."
    )
    parser.add_argument("--version", action="version", version=f"skillwire {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if args.debug:
            raise
        print(f"skillwire: error: {exc}  (run with --debug for details)", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())

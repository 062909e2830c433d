"""The options that name a bridge's upstreams (`--server`, `--server-command`, `--header`, `--local`,
`--config`, `--approvals`, `--trust`): `bridge` takes them, and `approve` takes the same ones, so the
approval command a refusal prints can repeat them word for word."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from skillwire.bridge.config import BridgeConfig, CommandLineUpstreams, default_config_path, load_config
from skillwire.cli.args import UsageError, add_trust_arguments
from skillwire.core.errors import BridgeConfigError


def add_upstream_arguments(p: argparse.ArgumentParser) -> None:
    """The options naming upstreams, shared by `bridge` and `approve` (so an approval command can repeat them)."""
    p.add_argument(
        "--server",
        action="append",
        default=[],
        metavar="LABEL=URL",
        help="a Streamable HTTP upstream (repeatable); `--server LABEL -- COMMAND ARGS` for one stdio upstream",
    )
    p.add_argument(
        "--server-command",
        action="append",
        default=[],
        metavar="LABEL=COMMAND",
        help="a stdio upstream started with COMMAND (split like a shell; repeatable)",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="LABEL:NAME: VALUE",
        help="an HTTP header for one upstream (repeatable)",
    )
    p.add_argument("--local", action="append", default=[], metavar="DIR", help="a local skill folder (label 'local')")
    add_config_argument(p)
    p.add_argument(
        "--approvals", type=Path, metavar="FILE", help="the bridge's approval store (default beside the config file)"
    )
    add_trust_arguments(p)


def add_config_argument(p: argparse.ArgumentParser) -> None:
    """`--config FILE`, the bridge's TOML file (bridge, approve, approvals)."""
    p.add_argument("--config", type=Path, metavar="FILE", help=f"a bridge TOML file (default {default_config_path()})")


def config_from_args(args: argparse.Namespace) -> BridgeConfig:
    given = CommandLineUpstreams(
        servers=args.server,
        server_commands=args.server_command,
        headers=args.header,
        local=args.local,
        trailing_command=getattr(args, "stdio_command", None),
    )
    try:
        config = load_config(given, config_file=args.config, approvals=args.approvals)
    except (BridgeConfigError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    return replace(config, trust=args.trust, trust_file=args.trust_file)

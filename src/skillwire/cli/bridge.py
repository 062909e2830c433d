"""`skillwire bridge`: MCP-served skills as three tools (list_skills, read_skill, read_resource) for any host."""

from __future__ import annotations

import argparse
import logging
import sys
import textwrap
from typing import Any

import anyio

from skillwire.bridge.config import CONFIG_EXAMPLE, default_config_path
from skillwire.cli.args import (
    AtLeast,
    UsageError,
    add_allow_host_argument,
    add_log_arguments,
    add_output_arguments,
    parse_host_port,
    trust_from_args,
)
from skillwire.cli.upstreams import add_upstream_arguments, config_from_args
from skillwire.ops.logs import configure_logging, register_secret

EPILOG = """\
examples:
  skillwire bridge --server work=https://skills.example.com/mcp
  skillwire bridge --server work=https://skills.example.com/mcp --header 'work:Authorization: Bearer TOKEN'
  skillwire bridge --server-command tools='python -m my_skills_server' --local ~/my-skills
  skillwire bridge --server tools -- python -m my_skills_server
  skillwire bridge                      # reads {config}

{config} (or --config FILE), for example:
{example}
The bridge speaks MCP on stdin/stdout (add it to a host's MCP configuration) or, with --http, on
Streamable HTTP bound to 127.0.0.1. Labels name the servers for the model and in approval prompts.
"""


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "bridge",
        help="serve MCP skills to any host as three tools",
        description=(
            "An MCP server whose tools (list_skills, read_skill, read_resource) give a model the skills of "
            "every upstream, with every host-side rule of SEP-2640 applied and approval asked of the person."
        ),
        epilog=EPILOG.format(config=default_config_path(), example=textwrap.indent(CONFIG_EXAMPLE, "  ")),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_upstream_arguments(p)
    p.add_argument("--http", metavar="HOST:PORT", help="serve Streamable HTTP instead of stdio (e.g. 127.0.0.1:8766)")
    add_allow_host_argument(p)
    p.add_argument(
        "--page-size", type=int, action=AtLeast, minimum=1, default=50, help="skills per list_skills page (default 50)"
    )
    p.add_argument(
        "--upstream-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long an upstream may take to list or serve one tool call, and to connect (at least 15) (default 30)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="connect to and list every upstream once, print one line each, and exit (1 if any fails)",
    )
    add_output_arguments(p, json=False)
    add_log_arguments(p)
    p.set_defaults(run=run)


status = logging.getLogger("skillwire.bridge.status")  # the command's own lines, as JSON events


def run(args: argparse.Namespace) -> int:
    # The program's one log format (ops/logs.py). skillwire's loggers stay at warnings, as the bridge always
    # logged: over stdio its stderr is a host's MCP log. Its own lines and --log-requests' are the exception.
    shown = configure_logging(args.log_format, debug=args.debug, quiet=True, requests=args.log_requests)
    json_lines = shown == "json"
    status.setLevel(logging.DEBUG if args.debug else logging.INFO)
    config = config_from_args(args)
    for origin in config.servers:
        for _, value in origin.headers:  # an upstream's API key or token never reaches a log line
            register_secret(value)

    def say(event: str, message: str, **fields: str) -> None:
        if json_lines:
            status.log(
                logging.WARNING if event == "upstream_unavailable" else logging.INFO,
                message,
                extra={"event": event, **fields},
            )
        else:
            print(message, file=sys.stderr, flush=True)

    from skillwire.bridge.server import Bridge, serve_http, serve_stdio

    if not args.upstream_timeout > 0:
        raise UsageError(f"--upstream-timeout must be a positive number of seconds, got {args.upstream_timeout}")
    bridge = Bridge(
        config, page_size=args.page_size, upstream_timeout=args.upstream_timeout, trust=trust_from_args(args)
    )
    if args.check:
        return anyio.run(_check, bridge, args.quiet)
    if not args.quiet:
        say(
            "serving",
            f"skillwire bridge: {len(config.labels())} upstream(s): {', '.join(config.labels())}; "
            f"approvals in {config.approvals}",
        )

    def report(line: str) -> None:
        say("upstream_unavailable", line)

    if args.http is None:
        anyio.run(lambda: serve_stdio(bridge, report=report))
        return 0
    host, port = parse_host_port(args.http)

    def ready(url: str) -> None:
        if not args.quiet:
            say("listening", f"skillwire bridge: listening on {url}", url=url)

    anyio.run(
        lambda: serve_http(
            bridge,
            host=host,
            port=port,
            allowed_hosts=args.allow_host,
            on_ready=ready,
            report=report,
            log_requests=args.log_requests,
        )
    )
    return 0


async def _check(bridge: Any, quiet: bool) -> int:
    """`--check`: what a host's "Connected" does not say, from a terminal; exit 1 if any upstream fails."""
    from skillwire.bridge.server import check_upstreams, upstream_line

    async with bridge:
        failed = await check_upstreams(bridge)
        counts: dict[str, int] = {}
        if len(failed) < len(bridge.upstreams.labels()) or bridge.config.local:
            await bridge.host.list_skills()
            for skill in bridge.host.registry:
                counts[skill.ref.origin] = counts.get(skill.ref.origin, 0) + 1
        for label in bridge.config.labels():
            if label in failed:
                print(upstream_line(bridge, label, failed[label]), file=sys.stderr)
            elif not quiet:
                count = counts.get(label, 0)
                print(f"{label}: ok, {count} skill{'' if count == 1 else 's'}")
    return 1 if failed else 0

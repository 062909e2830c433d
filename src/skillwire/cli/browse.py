"""`skillwire browse URL`: the catalog page (`web/`) for any SEP-2640 server, served on 127.0.0.1.

The server is read through the host library (`host/page_view.py`): every file shown or downloaded is
verified against its digest first (one that fails is shown as refused, with the reason), through the
host's content cache, and only what a page shows is read. Publisher signatures are judged with the
person's trust file, as `ls` and `get` judge them. Nothing is loaded or approved.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request

from skillwire.cli.args import UsageError, add_debug_argument, add_server_arguments, server_target
from skillwire.cli.connect import run_session
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.signed import trusted_keys
from skillwire.core.errors import BindError, SkillwireError
from skillwire.host.host import SkillHost
from skillwire.host.identity import default_label
from skillwire.host.page_view import BrowsedCatalog
from skillwire.server.app import bind_http_socket, transport_security, uvicorn_config
from skillwire.web.app import PageSite, page_routes
from skillwire.web.view import CatalogView, InstallTarget

DEFAULT_PORT = 8767
LOOPBACK = "127.0.0.1"


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "browse",
        help="look at a skills server's catalog in your browser (verified, served on 127.0.0.1)",
        description=(
            "Serve a read-only web page of a skills server's catalog on 127.0.0.1: the skills, each SKILL.md "
            "rendered, every file with its size, type and digest, verified against its digest before it is shown "
            "(a file that fails is shown as refused), and how to add the server to your host. Only what a page "
            "shows is read. The server is the last argument: an http(s):// URL."
        ),
    )
    add_server_arguments(p)
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free one)"
    )
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_debug_argument(p)
    p.set_defaults(run=run, json=False)


def run(args: argparse.Namespace) -> int:
    target = server_target(args)
    if target.url is None:
        raise UsageError("browse reads a server by its http(s):// URL (a stdio server has no address to show)")
    out = Output(quiet=args.quiet, json_mode=False)
    try:
        sock = bind_http_socket(LOOPBACK, args.port)
    except BindError as exc:
        out.error(printable(str(exc.strerror)))
        return 1
    label = default_label(target.label)
    keys = trusted_keys(out)
    url = target.url

    async def session() -> None:
        async with SkillHost() as host:
            client = await host.add_server(label, url, headers=dict(target.headers), timeout=target.timeout)
            view = BrowsedCatalog(host, label, client, keys=keys)
            await view.listing()  # a server that cannot be listed is one error line now, not a broken page

            async def view_for(token: str | None) -> CatalogView:
                return view

            def install(request: Request) -> InstallTarget:
                return InstallTarget("skills", url)

            site = PageSite(view_for=view_for, target=install, security=transport_security(LOOPBACK))
            app = Starlette(routes=page_routes(site))
            port = sock.getsockname()[1]
            server = uvicorn.Server(uvicorn_config(app, host=LOOPBACK, port=port))
            async with anyio.create_task_group() as group:
                group.start_soon(lambda: server.serve(sockets=[sock]))
                while not server.started:  # noqa: ASYNC110 (uvicorn exposes readiness only as a flag)
                    await anyio.sleep(0.01)
                if not args.quiet:
                    print(f"browsing {printable(url)} at http://{LOOPBACK}:{port}/", flush=True)

    with sock:
        try:
            run_session(target, session)
        except SkillwireError as exc:
            return report_failure(out, args, exc)
        except KeyboardInterrupt:
            print(file=sys.stderr)
    return 0

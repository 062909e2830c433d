"""Running a skills server: an `MCPServer` carrying `SkillsExtension`, over stdio or Streamable HTTP.

HTTP binds to 127.0.0.1 by default with DNS-rebinding protection on (the Host and Origin headers must
name the bound host); binding elsewhere keeps the protection, allowing that host name only, unless
more names are given. The catalog watcher runs beside the transport in the same task group.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from skillwire import __version__
from skillwire.server.extension import SkillsExtension

logger = logging.getLogger("skillwire.server")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_server(skills: SkillsExtension, *, name: str = "skillwire") -> MCPServer:
    """An MCP server that publishes `skills` (and nothing else until you add tools or resources)."""
    server = MCPServer(name, version=__version__, instructions=None)
    skills.attach(server)
    return server


def transport_security(host: str, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"] if host in LOOPBACK else [f"{host}:*", host]
    hosts += [h if ":" in h else f"{h}:*" for h in extra_hosts]
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


async def serve_http(
    server: MCPServer,
    skills: SkillsExtension,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: Sequence[str] = (),
    watch: bool = True,
    on_ready: Callable[[str], Any] | None = None,
) -> None:
    app = server.streamable_http_app(host=host, transport_security=transport_security(host, allowed_hosts))
    # h11, never httptools even where it is installed (uvicorn[standard] picks it by default): httptools
    # keeps trailing whitespace in header values, so a conforming `Mcp-Name: "x "` no longer matches
    # its body and the request is refused (the conformance suite's SEP-2243 check), for about a
    # millisecond saved per request.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", http="h11")
    http = uvicorn.Server(config)

    async with anyio.create_task_group() as group:
        if watch:
            group.start_soon(skills.catalog.watch)

        async def run_http() -> None:
            await http.serve()
            group.cancel_scope.cancel()

        group.start_soon(run_http)
        if on_ready is not None:
            # uvicorn exposes readiness only as a flag, not an event.
            while not http.started:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            shown = f"[{host}]" if ":" in host else host
            on_ready(f"http://{shown}:{port}/mcp")


async def serve_stdio(server: MCPServer, skills: SkillsExtension, *, watch: bool = True) -> None:
    async with anyio.create_task_group() as group:
        if watch:
            group.start_soon(skills.catalog.watch)
        await server.run_stdio_async()
        group.cancel_scope.cancel()

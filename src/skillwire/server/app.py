"""Running a skills server: an `MCPServer` carrying `SkillsExtension`, over stdio or Streamable HTTP.

HTTP binds to 127.0.0.1 by default with DNS-rebinding protection on (the Host and Origin headers must
name the bound host); binding elsewhere keeps the protection, allowing that host name only, unless
more names are given. The catalog watcher runs beside the transport in the same task group.
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from skillwire._version import __version__
from skillwire.core.errors import SkillwireError
from skillwire.server.extension import SkillsExtension
from skillwire.server.health import health_route

__all__ = ["BindError", "bind_http_socket", "build_server", "serve_http", "serve_stdio"]

logger = logging.getLogger("skillwire.server")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_server(
    skills: SkillsExtension,
    *,
    name: str = "skillwire",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
) -> MCPServer:
    """An MCP server that publishes `skills` (and nothing else until you add tools or resources).

    With `token_verifier` and `auth` (the SDK's own bearer-token support) every request to `/mcp`
    must carry a valid token (401 otherwise); see `server.visibility` for per-caller catalogs."""
    return MCPServer(
        name,
        version=__version__,
        instructions=None,
        token_verifier=token_verifier,
        auth=auth,
        # The SDK's public extension points, as any user would write them (see SkillsExtension).
        extensions=[skills],
        middleware=skills.middleware(),
        subscriptions=skills.subscriptions,
    )


def transport_security(host: str, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"] if host in LOOPBACK else [f"{host}:*", host]
    hosts += [h if ":" in h else f"{h}:*" for h in extra_hosts]
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class BindError(SkillwireError, OSError):
    """The HTTP address cannot be bound (in use, not ours, not permitted); the message is one line."""


def bind_http_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (not yet listening), or `BindError` saying why and what to try.

    Bound here rather than by uvicorn, so a port in use is one clear error before anything is served
    (uvicorn logs it and raises `SystemExit` from inside the task group).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out, not 0: asyncio sets TCP_NODELAY only on sockets whose `proto` says TCP, and
    # accepted connections inherit it. With proto 0 every small response waited for the client's delayed
    # ACK (Nagle): skills/get took ~40-50 ms over loopback instead of ~2 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        # As uvicorn does: a restarted server may rebind while old connections sit in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            message = f"port {port} is already in use on {host}; pick another with --http {host}:PORT"
        elif exc.errno == errno.EACCES:
            message = f"not permitted to listen on {shown} (ports below 1024 need privileges); pick another port"
        elif exc.errno == errno.EADDRNOTAVAIL:
            message = f"{host} is not an address of this machine; try --http 127.0.0.1:{port}"
        else:
            message = f"cannot listen on {shown}: {exc.strerror or exc}"
        raise BindError(exc.errno, message) from exc
    except BaseException:
        sock.close()
        raise
    return sock


async def serve_http(
    server: MCPServer,
    skills: SkillsExtension,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    allowed_hosts: Sequence[str] = (),
    watch: bool = True,
    on_ready: Callable[[str], Any] | None = None,
    sock: socket.socket | None = None,
    legacy_sessions: bool = True,
) -> None:
    """Serve over Streamable HTTP until cancelled or interrupted. `sock` is a socket already bound to
    host:port (`bind_http_socket`); without one it is bound here, and a failure raises `BindError`.
    Without `legacy_sessions`, the 2025-11-25 wire is served statelessly: no `Mcp-Session-Id`, each
    request answered on its own, hence no server-to-client notifications on that wire (see
    `server.workers`). The 2026-07-28 wire is stateless either way."""
    if sock is None:
        sock = bind_http_socket(host, port)
    app = server.streamable_http_app(
        host=host,
        transport_security=transport_security(host, allowed_hosts),
        stateless_http=not legacy_sessions,
    )
    app.router.routes.append(health_route(skills.catalog))  # GET /healthz, for load balancers
    # h11, never httptools even where it is installed (uvicorn[standard] picks it by default): httptools
    # keeps trailing whitespace in header values, so a conforming `Mcp-Name: "x "` no longer matches
    # its body and the request is refused (the conformance suite's SEP-2243 check), for about a
    # millisecond saved per request.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on", http="h11")
    http = uvicorn.Server(config)

    # The watcher waits for changes in a worker thread that cancellation cannot interrupt; it returns
    # within one poll step (50 ms) once this event is set, instead of at its 5 s timeout. So the event
    # is set whenever serving ends, by shutdown, Ctrl-C or cancellation.
    stop_watching = anyio.Event()
    with sock:
        async with anyio.create_task_group() as group:
            try:
                if watch:
                    group.start_soon(lambda: skills.catalog.watch(stop_event=stop_watching))

                async def run_http() -> None:
                    try:
                        await http.serve(sockets=[sock])
                    finally:
                        stop_watching.set()
                    group.cancel_scope.cancel()

                group.start_soon(run_http)
                if on_ready is not None:
                    # uvicorn exposes readiness only as a flag, not an event.
                    while not http.started:  # noqa: ASYNC110
                        await anyio.sleep(0.01)
                    shown = f"[{host}]" if ":" in host else host
                    on_ready(f"http://{shown}:{port}/mcp")
            except BaseException:
                stop_watching.set()  # after start-up, run_http's `finally` sets it
                raise


async def serve_stdio(server: MCPServer, skills: SkillsExtension, *, watch: bool = True) -> None:
    """Serve over stdin/stdout until the client closes stdin, or until cancelled or interrupted."""
    stop_watching = anyio.Event()  # see serve_http
    async with anyio.create_task_group() as group:
        try:
            if watch:
                group.start_soon(lambda: skills.catalog.watch(stop_event=stop_watching))
            await server.run_stdio_async()
        finally:
            stop_watching.set()
        group.cancel_scope.cancel()

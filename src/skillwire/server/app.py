"""Running a skills server: an `MCPServer` carrying `SkillsExtension`, over stdio or Streamable HTTP.

HTTP binds to 127.0.0.1 by default with DNS-rebinding protection on (the Host and Origin headers must
name the bound host); binding elsewhere keeps the protection, allowing that host name only, unless
more names are given. The catalog watcher runs beside the transport in the same task group.

The HTTP stack is the SDK's Streamable HTTP app on uvicorn with httptools and (where it exists) uvloop,
answering requests with one JSON body instead of an SSE stream. `http_app` and `uvicorn_config` build it,
and `event_loop_options` picks the loop, so the benchmark's bare-SDK floor runs on exactly this stack.
"""

from __future__ import annotations

import errno
import logging
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from importlib.util import find_spec
from types import FrameType
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from skillwire._version import __version__
from skillwire.core.errors import BindError
from skillwire.server._sdk import use_one_pass_replies
from skillwire.server.extension import SkillsExtension
from skillwire.server.health import Readiness, health_route, liveness_route
from skillwire.server.observe import CountResponseBytes, RequestObserver, metrics_route, request_log
from skillwire.server.page_view import ServedPages

if TYPE_CHECKING:
    from skillwire.web.app import PageSite

__all__ = [
    "bind_http_socket",
    "build_server",
    "event_loop_options",
    "http_app",
    "serve_http",
    "serve_stdio",
    "uvicorn_config",
]

logger = logging.getLogger("skillwire.server")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def build_server(
    skills: SkillsExtension,
    *,
    name: str = "skillwire",
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    log_requests: bool = False,
    metrics: bool = True,
) -> MCPServer:
    """An MCP server that publishes `skills` (and nothing else until you add tools or resources).

    With `token_verifier` and `auth` (the SDK's own bearer-token support) every request to `/mcp`
    must carry a valid token (401 otherwise); see `server.visibility` for per-caller catalogs.
    Every request is counted and timed for `/metrics` (`server.observe`) unless `metrics` is False;
    `log_requests` logs one line per request (the observer then only logs)."""
    observe = metrics or log_requests or request_log.isEnabledFor(logging.DEBUG)
    observer = [RequestObserver(log_requests=log_requests, count=metrics)] if observe else []
    return MCPServer(
        name,
        version=__version__,
        instructions=None,
        token_verifier=token_verifier,
        auth=auth,
        # The SDK's public extension points, as any user would write them (see SkillsExtension).
        extensions=[skills],
        middleware=[*observer, *skills.middleware()],
        subscriptions=skills.subscriptions,
    )


def transport_security(host: str, extra_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"] if host in LOOPBACK else [f"{host}:*", host]
    hosts += [h if ":" in h else f"{h}:*" for h in extra_hosts]
    origins = [f"http://{h}" for h in hosts] + [f"https://{h}" for h in hosts]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


class TrimHeaderWhitespace:
    """ASGI middleware: header values without leading and trailing spaces or tabs (RFC 9110 section 5.5).

    httptools hands header values over with their surrounding whitespace, h11 strips it. The SDK compares
    `Mcp-Name` and `Mcp-Method` with the body byte for byte, so `Mcp-Name:   x  ` was refused under httptools
    (the conformance suite's SEP-2243 whitespace check). Trimming here gives every parser h11's answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope["headers"] = [(name, value.strip(b" \t")) for name, value in scope["headers"]]
        await self.app(scope, receive, send)


def http_app(
    server: MCPServer,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    json_response: bool = True,
    stateless: bool = False,
    routes: Sequence[BaseRoute] = (),
) -> ASGIApp:
    """The Streamable HTTP ASGI app `serve_http` runs, for `server` bound on `host`.

    `json_response`: answer each POST with one `application/json` body (the SDK's `json_response`). The
    default streams nothing a skills server needs: skills handlers send no progress or log notifications
    while answering, and list-changed notifications travel on the listen and GET streams, which stay SSE.
    Without an SSE stream per request the SDK skips a task group, a memory channel and a disconnect watcher
    for every request: about a quarter of a skills/get's server time. Pass False for a server whose
    tools report progress while they run. `stateless`: the SDK's `stateless_http` (see `serve_http`).
    `routes` are added beside `/mcp`.
    """
    app = server.streamable_http_app(
        host=host,
        transport_security=transport_security(host, allowed_hosts),
        json_response=json_response,
        stateless_http=stateless,
    )
    app.router.routes.extend(routes)
    return TrimHeaderWhitespace(app)


def page_site(ui: ServedPages, host: str, allowed_hosts: Sequence[str] = ()) -> PageSite:
    """The catalog page beside `/mcp`: the same Host/Origin rules (DNS rebinding protection), and install
    lines naming this server's own `/mcp` as the browser reached it (a Host header those rules accepted)."""
    from skillwire.web.app import PageSite
    from skillwire.web.view import InstallTarget

    def target(request: Request) -> InstallTarget:
        return InstallTarget("skills", f"{request.url.scheme}://{request.headers.get('host', host)}/mcp")

    return PageSite(
        view_for=ui.view_for,
        target=target,
        security=transport_security(host, allowed_hosts),
    )


def uvicorn_config(app: ASGIApp, *, host: str, port: int, grace_seconds: float | None = None) -> uvicorn.Config:
    """uvicorn on httptools (a C parser; h11 is pure Python): about a fifth of a skills/get's server time.
    Header whitespace is trimmed by `http_app`, as h11 would. httptools is a dependency; an environment
    installed before it was (an older virtualenv) still serves, on h11, instead of failing to start.
    `grace_seconds`: how long in-flight requests may run once shutting down (None: until they end)."""
    parser = "httptools" if find_spec("httptools") is not None else "h11"
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        log_config=None,  # uvicorn's lines go through the program's one handler (ops.logs), not its own
        lifespan="on",
        http=parser,
        # uvicorn passes it to asyncio.wait_for, which takes any number of seconds (its hint says int).
        timeout_graceful_shutdown=None if grace_seconds is None else max(0.1, grace_seconds),  # type: ignore[arg-type]
    )


class DrainingServer(uvicorn.Server):
    """uvicorn, stopping on SIGTERM the way a load balancer needs (see `serve_http`).

    The first SIGTERM turns `/healthz` not-ready and keeps serving for `drain_seconds`, so the balancer
    sees it and stops sending; then uvicorn stops accepting and finishes in-flight requests within its
    graceful-shutdown timeout, and `serve()` returns: the process exits 0, since it was asked to stop
    and did. uvicorn would re-raise the SIGTERM after shutting down (exit by the signal, status 143).
    SIGINT (Ctrl-C) and a second SIGTERM stop at once, as uvicorn does.
    """

    def __init__(self, config: uvicorn.Config, *, readiness: Readiness, drain_seconds: float) -> None:
        super().__init__(config)
        self.readiness = readiness
        self.drain_seconds = drain_seconds
        self._stop_at: float | None = None

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if sig == signal.SIGTERM and self._stop_at is None and not self.should_exit:
            self.readiness.drain()
            self._stop_at = time.monotonic() + max(0.0, self.drain_seconds)
            logger.info("draining: not ready; stopping in %.1f s", self.drain_seconds, extra={"event": "drain"})
            return
        if sig == signal.SIGTERM:
            self.should_exit = True  # a second SIGTERM: stop now, still exit 0
            return
        super().handle_exit(sig, frame)

    async def on_tick(self, counter: int) -> bool:
        if self._stop_at is not None and time.monotonic() >= self._stop_at:
            self.should_exit = True
        return await super().on_tick(counter)


def event_loop_options() -> dict[str, Any]:
    """`anyio.run` backend options: uvloop where it is installed (not on Windows), else asyncio's own loop."""
    return {"use_uvloop": True} if find_spec("uvloop") is not None else {}


def bind_http_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (not yet listening), or `BindError` saying why and what to try.

    Bound here rather than by uvicorn, so a port in use is one clear error before anything is served
    (uvicorn logs it and raises `SystemExit` from inside the task group).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP spelled out, not 0: asyncio sets TCP_NODELAY only on sockets whose `proto` says TCP, and
    # accepted connections inherit it. With proto 0 every small response waited for the client's delayed
    # ACK (Nagle), an order of magnitude on skills/get over loopback (docs/measurements.md, server/app.py).
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
    json_response: bool = True,
    drain_seconds: float = 0.0,
    grace_seconds: float | None = 30.0,
    metrics_token_check: Callable[[str], Awaitable[frozenset[str] | None]] | None = None,
    metrics: bool = True,
    ui: ServedPages | None = None,
) -> None:
    """Serve over Streamable HTTP until cancelled or interrupted. `sock` is a socket already bound to
    host:port (`bind_http_socket`); without one it is bound here, and a failure raises `BindError`.
    Without `legacy_sessions`, the 2025-11-25 wire is served statelessly: no `Mcp-Session-Id`, each
    request answered on its own, hence no server-to-client notifications on that wire (see
    `server.workers`). The 2026-07-28 wire is stateless either way. `json_response`: see `http_app`.
    Run it under `anyio.run(..., backend_options=event_loop_options())` for uvloop.

    SIGTERM drains (`DrainingServer`): `/healthz` turns not-ready at once, serving goes on for
    `drain_seconds` (set it above the load balancer's health-check interval), then no new connection
    is accepted and in-flight requests get `grace_seconds` to finish. `/metrics` is the Prometheus
    scrape; with per-caller views it needs a token with the `metrics` audience, checked by
    `metrics_token_check` (see `server.observe`); `metrics` False serves no `/metrics` and counts no
    response bytes (build the server with `metrics=False` too). `ui`: the read-only catalog page at `/`
    (`web/`), answered per caller as the wire is (`server/page_view.py`); None serves none."""
    if sock is None:
        sock = bind_http_socket(host, port)
    readiness = Readiness()
    # GET /healthz (readiness) and /livez (liveness) for load balancers and orchestrators; GET /metrics,
    # protected when callers are answered from views (server.observe).
    routes: list[BaseRoute] = [
        health_route(skills.catalog, per_caller=skills.per_caller, readiness=readiness),
        liveness_route(),
    ]
    if metrics:
        routes.append(
            metrics_route(
                audiences_of_token=metrics_token_check,
                protected=skills.per_caller,
                before_scrape=skills.catalog.observe_gauges,
            )
        )
    if ui is not None:
        from skillwire.web.app import page_routes  # the page's code loads only where it is served

        routes.extend(page_routes(page_site(ui, host, allowed_hosts)))
    # Successful replies encoded in one pass instead of the SDK's dump-then-dumps (`server._sdk`, guarded;
    # SKILLWIRE_SDK_ONE_PASS=0 keeps the SDK's writer): most of a listing page's server time.
    use_one_pass_replies()
    app = http_app(
        server,
        host=host,
        allowed_hosts=allowed_hosts,
        json_response=json_response,
        stateless=not legacy_sessions,
        routes=routes,
    )
    served = CountResponseBytes(app) if metrics else app
    config = uvicorn_config(served, host=host, port=port, grace_seconds=grace_seconds)
    http = DrainingServer(config, readiness=readiness, drain_seconds=drain_seconds)

    # The watcher waits for changes in a worker thread that cancellation cannot interrupt; it returns
    # within one poll step (50 ms) once this event is set, instead of at its 5 s timeout. So the event
    # is set whenever serving ends, by shutdown, Ctrl-C or cancellation.
    stop_watching = anyio.Event()
    # The port bound (port 0: the kernel's), read before serving: a Ctrl-C during start-up makes uvicorn
    # close the socket, and reading it only once `started` is set then failed with EBADF in a worker.
    shown = f"[{host}]" if ":" in host else host
    ready_url = f"http://{shown}:{sock.getsockname()[1]}/mcp"
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
                    on_ready(ready_url)
            except BaseException:
                stop_watching.set()  # after start-up, run_http's `finally` sets it
                raise


async def serve_stdio(
    server: MCPServer, skills: SkillsExtension, *, watch: bool = True, load: Callable[[], Any] | None = None
) -> None:
    """Serve over stdin/stdout until the client closes stdin, or until cancelled or interrupted.

    `load`, when given, runs in a worker thread while stdin is already answered (`skills.load_first`):
    the catalog's first scan, so that `initialize` and `server/discover` do not wait for it; requests
    that read the catalog do, and the watcher starts after it. What `load` raises is raised here once
    serving ends: the SDK's stdin reader is a thread no cancellation reaches, so that is at the client's
    next line or when it closes stdin; a program that must stop at once ends the process in `load`
    (`skillwire serve` does, with its one error line).
    """
    stop_watching = anyio.Event()  # see serve_http
    failed: list[BaseException] = []

    async def start_catalog() -> None:
        if load is not None:
            try:
                await skills.load_first(load)
            except Exception as exc:
                failed.append(exc)
                group.cancel_scope.cancel()
                return
        if watch:
            await skills.catalog.watch(stop_event=stop_watching)

    async with anyio.create_task_group() as group:
        try:
            if watch or load is not None:
                group.start_soon(start_catalog)
            await server.run_stdio_async()
        finally:
            stop_watching.set()
        group.cancel_scope.cancel()
    if failed:
        raise failed[0]

"""The only place skillwire touches private parts of the `mcp` SDK: three attributes, each checked here.

Everything else goes through public hooks: `MCPServer(extensions=[...], middleware=[...], subscriptions=...)`, the
low-level `Server`'s `add_request_handler` / `get_request_handler` / `extensions` / `middleware`, and
`ServerMiddleware` for `resources/read` and `resources/list` (`server/resources.py`). What remains, and why:

`MCPServer._lowlevel_server`
    `SkillsExtension.attach(server)` on an `MCPServer` someone already built binds `skills/*` and the extension's
    advertisement after construction. `MCPServer` applies extensions only in its constructor and has no public
    accessor for its low-level server. The constructor path (`MCPServer(extensions=[skills], ...)`) needs no
    private access. Would go away with: `MCPServer.add_extension(ext)`, or a public `lowlevel_server` property.

`MCPServer._subscriptions`
    A catalog change has to reach the 2026-07-28 `subscriptions/listen` streams, which read the server's
    `SubscriptionBus`. On an already-built `MCPServer` that bus has no public accessor (the constructor path passes
    its own bus with `subscriptions=`). Would go away with: a public `MCPServer.subscriptions` property.

`ServerSession._connection`
    Legacy 2025-11-25 clients hear `notifications/resources/list_changed` on their session. The `ServerSession` a
    request sees is a per-request wrapper; the `Connection` under it is what lives as long as the client, so the
    notifier holds connections (weakly). No public route leads from a request's context to its `Connection`.
    Would go away with: a public `ServerSession.connection` (or `ServerRequestContext.connection`) property.

Checked against mcp 2.3.0 (and only that: pyproject pins `mcp>=2.3,<2.4`). `check_sdk_shapes()` verifies all three
against the installed SDK and raises one `SdkShapeChanged` naming whatever moved; `tests/server/test_sdk_seam.py`
runs it, so a new mcp fails one test with one clear message instead of many tests with AttributeErrors.
Nothing outside this module may name a private SDK attribute (`tests/server/test_sdk_seam.py` enforces it over
`src/`).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast

from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.dispatcher import DispatchContext

from skillwire.core.errors import SdkShapeChanged

CHECKED_MCP_VERSIONS = ("2.3.0",)


def _installed_mcp() -> str:
    try:
        return version("mcp")
    except PackageNotFoundError:  # pragma: no cover - mcp is imported above, so it is installed
        return "unknown"


def _changed(what: str, found: Any) -> SdkShapeChanged:
    return SdkShapeChanged(
        f"skillwire relies on {what}, which mcp {_installed_mcp()} does not provide (found {found!r}); it was checked "
        f"against mcp {', '.join(CHECKED_MCP_VERSIONS)}: see skillwire/server/_sdk.py for the public API that "
        "would replace it"
    )


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """The low-level `Server` an `MCPServer` delegates to."""
    lowlevel = getattr(server, "_lowlevel_server", None)
    if not isinstance(lowlevel, Server):
        raise _changed("MCPServer._lowlevel_server (a low-level Server)", type(lowlevel))
    return lowlevel


def subscription_bus(server: MCPServer[Any]) -> SubscriptionBus:
    """The `SubscriptionBus` behind an `MCPServer`'s `subscriptions/listen`."""
    bus = getattr(server, "_subscriptions", None)
    # SubscriptionBus is a Protocol without runtime checking; `publish` is the one method the notifier calls.
    if bus is None or not callable(getattr(bus, "publish", None)):
        raise _changed("MCPServer._subscriptions (a SubscriptionBus with publish())", type(bus))
    return bus  # type: ignore[no-any-return]


def connection_of(session: ServerSession) -> Connection:
    """The per-client `Connection` under a request's `ServerSession`."""
    connection = getattr(session, "_connection", None)
    if not isinstance(connection, Connection) or not callable(getattr(connection, "send_resource_list_changed", None)):
        raise _changed("ServerSession._connection (a Connection with send_resource_list_changed())", type(connection))
    return connection


def check_sdk_shapes() -> None:
    """Raise `SdkShapeChanged` unless every private access above works on the installed SDK."""
    server: MCPServer[Any] = MCPServer("skillwire-sdk-check")
    lowlevel_server(server)
    subscription_bus(server)
    # A ServerSession needs a dispatch context and a Connection; building one the way the runner does is the
    # only way to see its real attribute layout without serving a request.
    connection = Connection.for_loop(_NoOutbound())
    session = ServerSession(cast("DispatchContext[Any]", _NoOutbound()), connection)
    if connection_of(session) is not connection:
        raise _changed("ServerSession._connection being the Connection it was built with", connection_of(session))


class _NoOutbound:
    """An `Outbound` that refuses to send: `check_sdk_shapes` only inspects objects, never talks."""

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raise RuntimeError("the SDK shape check sends nothing")

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        raise RuntimeError("the SDK shape check sends nothing")

"""The only place skillwire touches private parts of the `mcp` SDK: three attributes and one reply writer, each
checked here.

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

`mcp.server._streamable_http_modern._write` (the 2026-07-28 wire's JSON reply writer)
    It encodes every reply twice: `model_dump(mode="json")` copies the whole result into new dicts and lists,
    then `json.dumps` encodes the copy. A `skills/list` page of 100 entries with their manifests is most of a
    listing's server time there (docs/sdk-upstream.md, ask 1: the floor with a one-pass writer lists 10,000
    skills 1.9x faster than the floor without). `use_one_pass_replies()` replaces it, for `skillwire serve`'s
    HTTP app only, with a writer that encodes a successful reply in one pass (pydantic-core, bytes out) and
    hands everything else to the SDK's own: error replies (their `id: null` rule and status table), and any
    reply pydantic-core cannot encode as `json.dumps` would (a lone surrogate; NaN and infinities need no
    fallback: `model_dump(mode="json")` already turns them into null, as pydantic-core does). SSE frames
    (`_sse_event`) stay the SDK's: `skillwire serve` answers requests with one JSON body (`json_response`), so
    only notifications on a listen stream go out as SSE. It installs only over the
    function it was written against (the same name and parameters; otherwise the SDK is left alone and one
    debug line says why) and `SKILLWIRE_SDK_ONE_PASS=0` keeps the SDK's writer. Would go away with: ask 1.

Checked against mcp 2.3.0 (and only that: pyproject pins `mcp>=2.3,<2.4`). `check_sdk_shapes()` verifies all three
against the installed SDK and raises one `SdkShapeChanged` naming whatever moved; `tests/server/test_sdk_seam.py`
runs it, so a new mcp fails one test with one clear message instead of many tests with AttributeErrors.
Nothing outside this module may name a private SDK attribute (`tests/server/test_sdk_seam.py` enforces it over
`src/`).
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, cast

from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.dispatcher import DispatchContext
from mcp_types import JSONRPCError, JSONRPCResponse
from pydantic_core import PydanticSerializationError
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from skillwire.core.errors import SdkShapeChanged

CHECKED_MCP_VERSIONS = ("2.3.0",)
ONE_PASS_ENV = "SKILLWIRE_SDK_ONE_PASS"
logger = logging.getLogger(__name__)

ReplyWriter = Callable[[JSONRPCResponse | JSONRPCError, Scope, Receive, Send], Awaitable[None]]
# The SDK's writer, as found before any replacement (None until `use_one_pass_replies` first runs).
_sdk_write: ReplyWriter | None = None
_WRITER_PARAMETERS = ["msg", "scope", "receive", "send"]


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


def one_pass_writer(sdk_write: ReplyWriter) -> ReplyWriter:
    """A reply writer that encodes a successful reply in one pass and leaves every other to `sdk_write`."""

    async def write(msg: JSONRPCResponse | JSONRPCError, scope: Scope, receive: Receive, send: Send) -> None:
        if not isinstance(msg, JSONRPCResponse):
            await sdk_write(msg, scope, receive, send)
            return
        try:
            # The SDK's `model_dump(mode="json", by_alias=True, exclude_none=True)` and then `json.dumps`, in
            # one pass: the same keys and values (a result is a dict by then, dumped by the runner).
            body = msg.__pydantic_serializer__.to_json(msg, by_alias=True, exclude_none=True)
        except PydanticSerializationError:  # a lone surrogate: json.dumps escapes it, pydantic-core refuses
            await sdk_write(msg, scope, receive, send)
            return
        await Response(body, status_code=200, media_type="application/json")(scope, receive, send)

    return write


def use_one_pass_replies() -> bool:
    """Install `one_pass_writer` as the SDK's modern-HTTP reply writer (see the module docstring); True when
    it is installed. Idempotent; `SKILLWIRE_SDK_ONE_PASS=0` (or a changed SDK) leaves the SDK's writer."""
    global _sdk_write
    try:  # imported here: an SDK without this module must still import skillwire
        from mcp.server import _streamable_http_modern as modern_http
    except ImportError:
        logger.debug("mcp %s has no modern streamable-HTTP module: replies are the SDK's", _installed_mcp())
        return False
    current = getattr(modern_http, "_write", None)
    if _sdk_write is None:
        if not callable(current) or not inspect.iscoroutinefunction(current):
            logger.debug("mcp %s has no reply writer _write to replace: replies are the SDK's", _installed_mcp())
            return False
        if list(inspect.signature(current).parameters) != _WRITER_PARAMETERS:
            logger.debug("mcp %s changed the reply writer's parameters: replies are the SDK's", _installed_mcp())
            return False
        _sdk_write = cast("ReplyWriter", current)
    if os.environ.get(ONE_PASS_ENV, "1").strip() == "0":
        setattr(modern_http, "_write", _sdk_write)  # noqa: B010 - a private SDK attribute, set on purpose
        return False
    if getattr(current, "__wrapped_sdk_writer__", None) is not _sdk_write:
        replacement = one_pass_writer(_sdk_write)
        replacement.__wrapped_sdk_writer__ = _sdk_write  # type: ignore[attr-defined]
        setattr(modern_http, "_write", replacement)  # noqa: B010 - a private SDK attribute, set on purpose
    return True


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

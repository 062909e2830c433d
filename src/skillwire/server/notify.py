"""Telling connected clients that the skill list changed, wherever the protocol has a channel for it.

2026-07-28 clients hear it on their `subscriptions/listen` stream: the notifier publishes to every
`SubscriptionBus` it was given (the one passed to `MCPServer(subscriptions=...)`, or the bus of each
`MCPServer` the extension was attached to). Clients on the legacy `initialize` wire get
`notifications/resources/list_changed` on their session; this middleware remembers their connections (weakly:
a closed connection simply disappears; the `ServerSession` handed to a request is a per-request wrapper, the
connection is what lives on, and only `server/_sdk.py` may reach it). Stateless 2026 requests without a listen
stream have no channel, and `ttlMs` is what bounds their staleness.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire.core.errors import SdkShapeChanged
from skillwire.server._sdk import connection_of

logger = logging.getLogger("skillwire.server")


class ListChangedNotifier:
    def __init__(self, bus: SubscriptionBus | None = None) -> None:
        # A list, not a set: a bus need not be hashable. One bus per server the extension serves.
        self.buses: list[SubscriptionBus] = [bus] if bus is not None else []
        self._legacy_connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._sdk_unusable = False

    def add_bus(self, bus: SubscriptionBus) -> None:
        if not any(known is bus for known in self.buses):
            self.buses.append(bus)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if (
            ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
            and ctx.request_id is not None
            and not self._sdk_unusable
        ):
            try:
                self._legacy_connections.add(connection_of(ctx.session))
            except SdkShapeChanged:
                # Notifications are a courtesy (ttlMs bounds staleness anyway): an SDK that moved the connection
                # costs legacy clients their push, never their requests. Said once; the test suite says it loudly.
                self._sdk_unusable = True
                logger.error("legacy sessions will not hear list changes", exc_info=True)
        return await call_next(ctx)

    @property
    def legacy_sessions(self) -> int:
        return len(self._legacy_connections)

    async def notify(self) -> None:
        for bus in self.buses:
            await bus.publish(ResourcesListChanged())
        for connection in list(self._legacy_connections):
            try:
                await connection.send_resource_list_changed()
            except Exception:
                # A connection that went away between requests: forget it, keep notifying the rest.
                self._legacy_connections.discard(connection)
                logger.debug("dropped a closed session from list-changed notifications", exc_info=True)

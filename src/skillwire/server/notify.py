"""Telling connected clients that the skill list changed, wherever the protocol has a channel for it.

2026-07-28 clients hear it on their `subscriptions/listen` stream (the `MCPServer`'s subscription bus).
Clients on the legacy `initialize` wire get `notifications/resources/list_changed` on their session;
this middleware remembers their connections (weakly: a closed connection simply disappears; the
`ServerSession` handed to a request is a per-request wrapper, the connection is what lives on). Stateless
2026 requests without a listen stream have no channel, and `ttlMs` is what bounds their staleness.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import ResourcesListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

logger = logging.getLogger("skillwire.server")


class ListChangedNotifier:
    def __init__(self, bus: SubscriptionBus | None) -> None:
        self.bus = bus
        self._legacy_connections: weakref.WeakSet[Any] = weakref.WeakSet()

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and ctx.request_id is not None:
            connection = getattr(ctx.session, "_connection", None)
            if connection is not None and hasattr(connection, "send_resource_list_changed"):
                self._legacy_connections.add(connection)
        return await call_next(ctx)

    @property
    def legacy_sessions(self) -> int:
        return len(self._legacy_connections)

    async def notify(self) -> None:
        if self.bus is not None:
            await self.bus.publish(ResourcesListChanged())
        for connection in list(self._legacy_connections):
            try:
                await connection.send_resource_list_changed()
            except Exception:
                # A connection that went away between requests: forget it, keep notifying the rest.
                self._legacy_connections.discard(connection)
                logger.debug("dropped a closed session from list-changed notifications", exc_info=True)

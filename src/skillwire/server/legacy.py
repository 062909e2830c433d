"""The 2025-11-25 `initialize` result, made to say what the server serves.

The SDK serialises `initialize` through the 2025-11-25 `ServerCapabilities` model, which has no `extensions`
field, so an extension's advertisement silently vanishes there and no legacy client would ever learn that the
server serves skills. `LegacyInitializeAdvertiser` is a `ServerMiddleware` (public SDK hook) that puts it back.
Drop it once the SDK keeps the field (an ask in docs/sdk-upstream.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import Server


class LegacyInitializeAdvertiser:
    """Re-adds `capabilities.extensions` to the legacy `initialize` result.

    Give it a low-level `Server` to re-add everything that server advertises (all its extensions, read at each
    `initialize`), or `extensions={identifier: settings}` for a fixed advertisement: `SkillsExtension.middleware()`
    does that, because a middleware passed to `MCPServer(middleware=...)` is built before the server exists.
    """

    def __init__(
        self, server: Server[Any] | None = None, *, extensions: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        if (server is None) == (extensions is None):
            raise ValueError("LegacyInitializeAdvertiser takes a server or extensions={...}, not both")
        self.server = server
        self.extensions = dict(extensions or {})

    def advertised(self) -> Mapping[str, Mapping[str, Any]]:
        return self.server.extensions if self.server is not None else self.extensions

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "initialize" or not isinstance(result, dict):
            return result
        advertised = self.advertised()
        capabilities = result.get("capabilities")
        if advertised and isinstance(capabilities, dict):
            present = dict(capabilities.get("extensions") or {})
            for identifier, settings in advertised.items():
                present.setdefault(identifier, dict(settings))
            capabilities["extensions"] = present
            resources = capabilities.get("resources")
            if isinstance(resources, dict):
                # We send notifications/resources/list_changed to legacy sessions (server/notify.py).
                resources["listChanged"] = True
        return result

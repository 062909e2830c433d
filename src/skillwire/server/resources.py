"""Skill files through `resources/read` and `resources/list`, beside the server's own resources, via public hooks.

Both are spec methods: an `Extension` may not bind them (`MethodBinding` refuses), and the SDK's advice is to wrap
core behaviour with `Server.middleware`. `SkillResources` is that `ServerMiddleware`:

- `resources/read` of a URI the catalog serves (a listed file, a file of a dynamic skill, or a malformed URI in
  one of the catalog's schemes, which gets a specific error) is answered from the catalog; any other URI goes on
  down the chain, untouched, to the server's own resources.
- `resources/list` is the server's own listing first (its cursor carried inside ours), then every listed
  SKILL.md. Both halves are keyset-paged, so no page costs more than a page.

A middleware that answered by itself would skip everything the SDK does between middleware and handler: the
pre-`initialize` gate on legacy sessions, params validation, the per-version result sieve and the 2026 serverInfo
stamp. So it answers through the SDK: it passes `call_next` a context whose method is one of two internal methods
the extension binds (a rewrite the `ServerMiddleware` contract documents), which the SDK then gates, validates and
stamps like any request, and whose handlers shape their result through the spec method's own surface
(`mcp_types.methods.serialize_server_result`): a legacy client gets exactly the `resources/read` it would get from
a handler. The internal methods answer only what this middleware routed (a context variable); called directly
they are "Method not found", as if they did not exist.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Protocol, cast

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import MethodBinding
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, ReadResourceRequestParams
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_types.methods import serialize_server_result
from pydantic import BaseModel, ValidationError

from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.core.cursor import decode_cursor_value, encode_cursor
from skillwire.core.errors import InvalidCursor
from skillwire.core.protocol import METHOD_RESOURCES_LIST, METHOD_RESOURCES_READ

logger = logging.getLogger("skillwire.server")

# Internal method names: never sent by a client (and refused if one tries), so they only need to be unlike any
# real method.
ROUTED_READ = "skillwire.internal/resources/read"
ROUTED_LIST = "skillwire.internal/resources/list"

# The middleware that routed the request in progress; the internal handlers serve only while it is set.
_routed_by: ContextVar[SkillResources | None] = ContextVar("skillwire_routed_by", default=None)


class SkillFiles(Protocol):
    """What `SkillResources` needs from the extension (a Protocol, so this module does not import it)."""

    page_size: int

    async def request_snapshot(self, ctx: ServerRequestContext[Any, Any]) -> CatalogSnapshot: ...

    def serves_resource(self, snapshot: CatalogSnapshot, uri: str) -> bool: ...

    def cache_fields(self) -> dict[str, Any]: ...

    async def handle_read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> HandlerResult: ...


def wire_dict(result: HandlerResult) -> dict[str, Any]:
    if result is None:
        return {}
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result)


def spec_shaped(method: str, version: str, result: HandlerResult) -> dict[str, Any]:
    """`result` as the SDK would send it for the spec `method` at `version` (fields of other versions dropped)."""
    try:
        return serialize_server_result(method, version, wire_dict(result))
    except ValidationError:
        # As the SDK does for a spec handler: a server bug; the detail (which echoes the body) stays in the log.
        logger.exception("skills handler for %r returned an invalid result", method)
        raise MCPError(INTERNAL_ERROR, "Handler returned an invalid result") from None


def _invalid_cursor(reason: object) -> MCPError:
    return MCPError(INVALID_PARAMS, f"invalid cursor for resources/list: {reason}")


def _listing_state(cursor: object, snapshot: CatalogSnapshot) -> tuple[str, Any]:
    """The (phase, key) a `resources/list` cursor of ours continues from; INVALID_PARAMS for anything else."""
    try:
        state = decode_cursor_value(cursor, METHOD_RESOURCES_LIST, secret=snapshot.cursor_secret)
        # Replicas before the structured key wrote the state as JSON text inside the key: still continued,
        # so a rolling upgrade breaks no client walking `resources/list`.
        phase, key = json.loads(state) if isinstance(state, str) else cast(list[Any], state)
    except (InvalidCursor, ValueError, TypeError) as exc:
        raise _invalid_cursor(exc) from None
    if phase not in ("own", "skills"):
        raise _invalid_cursor(f"unknown listing phase {phase!r}")
    return phase, key


class SkillResources:
    """The `resources/read` + `resources/list` middleware of one `SkillsExtension` (see the module docstring)."""

    def __init__(self, skills: SkillFiles) -> None:
        self.skills = skills
        self.seen_request = False  # set on the first request: tells the extension its middleware is installed

    def methods(self) -> list[MethodBinding]:
        """The internal methods this middleware routes to; the extension binds them with its own."""
        return [
            MethodBinding(ROUTED_READ, ReadResourceRequestParams, self._serve_read),
            MethodBinding(ROUTED_LIST, PaginatedRequestParams, self._serve_list),
        ]

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        self.seen_request = True
        if ctx.method == METHOD_RESOURCES_READ:
            return await self._read(ctx, call_next)
        if ctx.method == METHOD_RESOURCES_LIST:
            return await self._list(ctx, call_next)
        return await call_next(ctx)

    async def _route(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext, method: str) -> HandlerResult:
        token = _routed_by.set(self)
        try:
            return await call_next(replace(ctx, method=method))
        finally:
            _routed_by.reset(token)

    def _require_routed(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if _routed_by.get() is not self:
            raise MCPError(METHOD_NOT_FOUND, "Method not found", ctx.method)

    # -- resources/read ------------------------------------------------------------------------------------------

    async def _read(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        uri = params.get("uri") if isinstance(params, Mapping) else None
        # Anything that is not plainly ours (including malformed params) goes on, for the SDK to judge as ever.
        if isinstance(uri, str) and self.skills.serves_resource(await self.skills.request_snapshot(ctx), uri):
            return await self._route(ctx, call_next, ROUTED_READ)
        return await call_next(ctx)

    async def _serve_read(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> HandlerResult:
        self._require_routed(ctx)
        return spec_shaped(
            METHOD_RESOURCES_READ, ctx.protocol_version, await self.skills.handle_read_resource(ctx, params)
        )

    # -- resources/list ------------------------------------------------------------------------------------------

    async def _list(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = dict(ctx.params or {})
        cursor = params.get("cursor")
        snapshot = await self.skills.request_snapshot(ctx)
        if cursor is None:
            own_ctx = ctx
        else:
            try:
                phase, key = _listing_state(cursor, snapshot)
            except MCPError:
                phase, key = "skills", None  # the internal handler raises it again, past the SDK's gates
            if phase != "own":
                return await self._route(ctx, call_next, ROUTED_LIST)
            own_ctx = replace(ctx, params={**params, "cursor": key})
        # The server's own page, exactly as the SDK shaped it; skill pages follow once it has no more.
        result = wire_dict(await call_next(own_ctx))
        own_next = result.get("nextCursor")
        resources = list(result.get("resources") or [])
        room = self.skills.page_size - len(resources)
        next_state: list[Any] | None = None
        added: list[dict[str, Any]] = []
        if own_next:
            next_state = ["own", own_next]
        elif snapshot.listed and room > 0:
            # The own listing ended on this page: fill the rest with SKILL.md resources, so a server without
            # resources of its own does not answer with an empty first page.
            added, after = snapshot.skill_md_page(None, room)
            if after is not None:
                next_state = ["skills", after]
        elif snapshot.listed:
            next_state = ["skills", None]
        if added:
            result["resources"] = resources + added
            # The page keeps the server's own cache hints when it has them; ours fill what it left unset.
            for hint, value in self.skills.cache_fields().items():
                result.setdefault(hint, value)
            result = spec_shaped(METHOD_RESOURCES_LIST, ctx.protocol_version, result)
        if next_state is not None:
            result["nextCursor"] = encode_cursor(METHOD_RESOURCES_LIST, next_state, secret=snapshot.cursor_secret)
        else:
            result.pop("nextCursor", None)
        return result

    async def _serve_list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        """A `resources/list` page past the server's own listing (or the error for a cursor we did not issue)."""
        self._require_routed(ctx)
        snapshot = await self.skills.request_snapshot(ctx)
        key = None
        if params.cursor is not None:
            phase, key = _listing_state(params.cursor, snapshot)
            if phase != "skills":  # an own-phase cursor is routed to the server's listing, never here
                raise _invalid_cursor("not a skills page")
        items, after = snapshot.skill_md_page(key, self.skills.page_size)
        result: dict[str, Any] = {"resultType": "complete", "resources": items, **self.skills.cache_fields()}
        if after is not None:
            result["nextCursor"] = encode_cursor(
                METHOD_RESOURCES_LIST, ["skills", after], secret=snapshot.cursor_secret
            )
        return spec_shaped(METHOD_RESOURCES_LIST, ctx.protocol_version, result)


def install_resource_handlers(server: Server[Any], skills: SkillFiles) -> None:
    """Give a low-level `Server` without resources of its own `resources/list` and `resources/read` handlers.

    The SDK declares the `resources` capability only for a server with a `resources/list` handler, and answers
    `resources/read` with "Method not found" without one; skill files need both. These handlers stand for the
    absent own resources: an empty listing (our cache hints: the page is all skills), and "not found"
    (`SkillResources` answers every skill URI before it gets here). Handlers the server has are left alone.
    """
    if server.get_request_handler(METHOD_RESOURCES_LIST) is None:

        async def no_own_resources(
            ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
        ) -> HandlerResult:
            return {"resultType": "complete", "resources": [], **skills.cache_fields()}

        server.add_request_handler(METHOD_RESOURCES_LIST, PaginatedRequestParams, no_own_resources)
    if server.get_request_handler(METHOD_RESOURCES_READ) is None:

        async def no_own_resource(
            ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
        ) -> HandlerResult:
            raw = str(params.uri)
            raise MCPError(INVALID_PARAMS, f"Resource not found: {raw}", {"uri": raw})

        server.add_request_handler(METHOD_RESOURCES_READ, ReadResourceRequestParams, no_own_resource)

"""`SkillsExtension`: SEP-2640 on the official `mcp` SDK, added to any server in one line.

    skills = SkillsExtension(SkillCatalog(["./skills"]))
    skills.attach(mcp)          # an MCPServer or a low-level Server

`attach` binds `skills/list`, `skills/get` and `resources/directory/read`, advertises the extension
(also in the legacy 2025-11-25 `initialize` result, which the SDK would otherwise strip), and wraps
the server's own `resources/read` and `resources/list` so skill URIs are served here and every other
URI falls through to the handlers the server already had. Each request reads the current snapshot
once and costs O(log n + page).
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, ReadResourceRequestParams, RequestParams
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.snapshot import CatalogSnapshot, FileChanged
from skillwire.catalog.store import BlobUnavailable, StoredFile
from skillwire.core.cursor import decode_cursor, encode_cursor
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidCursor, InvalidSkillURI
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import SKILL_MD, canonical_uri, parse_uri
from skillwire.core.verify import skill_md_mismatch
from skillwire.server.content import dynamic_contents, file_contents
from skillwire.server.notify import ListChangedNotifier

__all__ = ["EXTENSION_ID", "SkillsExtension"]

logger = logging.getLogger("skillwire.server")

EXTENSION_ID = "io.modelcontextprotocol/skills"
_ATTACHED = "_skillwire_extension"  # marks the resources/* handlers `attach` installed
CacheScope = Literal["public", "private"]
_BIG_FILE = 256 * 1024  # read files above this size in a worker thread

# Skills per `skills/list` page. Clients walk pages under a cap of their own: the TypeScript SDK 2.4.0's
# `SkillsClient.list()` stops at `listMaxPages` = 64 pages and then fails the whole listing, so a page of
# 100 made any catalog over 6,400 skills unlistable from a TypeScript host on its defaults. 2,000 lists
# 128,000 skills within 64 pages (the Go SDK serves 1,000 per page); a page of 2,000 generated entries with
# 10 files each is about 3.4 MB of JSON. See docs/architecture.md, "Page size".
DEFAULT_PAGE_SIZE = 2000


class GetSkillParams(RequestParams):
    uri: str


class ReadDirectoryParams(PaginatedRequestParams):
    uri: str


def invalid_params(message: str, uri: str | None = None) -> MCPError:
    return MCPError(INVALID_PARAMS, message, {"uri": uri} if uri is not None else None)


class SkillsExtension(Extension):
    """The MCP Skills extension (`io.modelcontextprotocol/skills`) for an `mcp` server: `skills/list`,
    `skills/get`, `resources/directory/read`, and `skill://` files through `resources/read` and
    `resources/list`. `attach(server)` installs it on an `MCPServer` or a low-level `Server`; the
    server's own resources keep working (non-skill URIs fall through to its handlers).

    Parameters
    ----------
    catalog:
        The skills to publish (`SkillCatalog`); an empty one by default.
    directory_read:
        Offer `resources/directory/read` (declared as `directoryRead: true`).
    page_size:
        Skills per `skills/list` page.
    directory_page_size:
        Children per `resources/directory/read` page.
    ttl_ms:
        `ttlMs` on listings and entries: how long a client may reuse them.
    cache_scope:
        `"private"` (default: skill content is often organisation-specific) or `"public"`.
    signatures:
        Publisher signatures to add to the entries' `_meta` (a `SignatureBook`, read from a signed
        catalog's signatures file), or None.
    """

    identifier = EXTENSION_ID

    def __init__(
        self,
        catalog: SkillCatalog | None = None,
        *,
        directory_read: bool = True,
        page_size: int = DEFAULT_PAGE_SIZE,
        directory_page_size: int = 500,
        ttl_ms: int = 60_000,
        cache_scope: CacheScope = "private",
        signatures: SignatureBook | None = None,
    ) -> None:
        if page_size < 1 or directory_page_size < 1:
            raise ValueError("page sizes must be at least 1")
        if ttl_ms < 0:
            raise ValueError("ttl_ms must be >= 0")
        if cache_scope not in ("public", "private"):
            raise ValueError("cache_scope is 'public' or 'private'")
        self.catalog = catalog if catalog is not None else SkillCatalog()
        self.directory_read = directory_read
        self.page_size = page_size
        self.directory_page_size = directory_page_size
        self.ttl_ms = ttl_ms
        self.cache_scope: CacheScope = cache_scope
        # Publisher signatures added to entries' `_meta` (core/signing.py); matched once per entry object:
        # an entry never changes, and a refresh that changes a skill makes a new one.
        self.signatures = signatures
        self._signature_meta: dict[int, tuple[weakref.ref[SkillEntry], dict[str, Any] | None]] = {}

    # -- Extension contract ----------------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True} if self.directory_read else {}

    def methods(self) -> Sequence[MethodBinding]:
        bindings = [
            MethodBinding("skills/list", PaginatedRequestParams, self.handle_list),
            MethodBinding("skills/get", GetSkillParams, self.handle_get),
        ]
        if self.directory_read:
            bindings.append(MethodBinding("resources/directory/read", ReadDirectoryParams, self.handle_directory_read))
        return bindings

    def attach(self, server: MCPServer | Server[Any]) -> None:
        """Install everything on `server` (idempotent for the methods `MCPServer(extensions=[...])` bound)."""
        lowlevel: Server[Any] = server._lowlevel_server if isinstance(server, MCPServer) else server
        for binding in self.methods():
            if lowlevel.get_request_handler(binding.method) is None:
                lowlevel.add_request_handler(binding.method, binding.params_type, binding.handler)
        lowlevel.extensions[self.identifier] = self.settings()
        # The handlers the server already had are captured per server (one extension may serve several
        # servers), and attaching twice does not wrap our own handler around itself.
        read_entry = lowlevel.get_request_handler("resources/read")
        list_entry = lowlevel.get_request_handler("resources/list")
        previous_read = read_entry.handler if read_entry is not None else None
        previous_list = list_entry.handler if list_entry is not None else None
        if getattr(previous_read, _ATTACHED, None) is not self:

            async def read_resource(
                ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
            ) -> HandlerResult:
                return await self.handle_read_resource(ctx, params, previous=previous_read)

            setattr(read_resource, _ATTACHED, self)
            lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, read_resource)
        if getattr(previous_list, _ATTACHED, None) is not self:

            async def list_resources(
                ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
            ) -> HandlerResult:
                return await self.handle_list_resources(ctx, params, previous=previous_list)

            setattr(list_resources, _ATTACHED, self)
            lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
        if not any(isinstance(m, LegacyInitializeAdvertiser) for m in lowlevel.middleware):
            lowlevel.middleware.append(LegacyInitializeAdvertiser(lowlevel))
        if self.notifier is None:
            bus = server._subscriptions if isinstance(server, MCPServer) else None
            self.notifier = ListChangedNotifier(bus)
            lowlevel.middleware.append(self.notifier)
            self.catalog.on_change_async(self.notifier.notify)

    notifier: ListChangedNotifier | None = None

    def _wire(self, skill: Any) -> dict[str, Any]:
        """A catalog skill's entry as sent, with its publisher signature when one matches it."""
        wire: dict[str, Any] = skill.wire
        if self.signatures:
            meta = self._signature_for(skill.entry)
            if meta is not None:
                wire["_meta"] = {**(wire.get("_meta") or {}), SIGNATURE_META_KEY: meta}
        return wire

    def _signature_for(self, entry: SkillEntry) -> dict[str, Any] | None:
        key = id(entry)
        hit = self._signature_meta.get(key)
        if hit is not None and hit[0]() is entry:
            return hit[1]
        assert self.signatures is not None
        signature = self.signatures.signature_for(entry)
        meta = signature.to_meta() if signature is not None else None
        cache = self._signature_meta

        def forget(_: weakref.ref[SkillEntry]) -> None:
            # Runs when the entry is collected, before its id can be reused.
            cache.pop(key, None)

        cache[key] = (weakref.ref(entry, forget), meta)
        return meta

    def snapshot_for(self, ctx: ServerRequestContext[Any, Any]) -> CatalogSnapshot:
        """The snapshot this request is answered from: the catalog's, or a caller's view of it
        (`server.visibility.PerCallerSkills`), so every method sees one and the same catalog."""
        return self.catalog.snapshot

    def _cache_fields(self) -> dict[str, Any]:
        return {"ttlMs": self.ttl_ms, "cacheScope": self.cache_scope}

    # -- skills/list, skills/get -------------------------------------------------------------------------

    async def handle_list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        snapshot = self.snapshot_for(ctx)
        try:
            page, next_cursor = snapshot.list_page(params.cursor, self.page_size)
        except InvalidCursor as exc:
            raise invalid_params(str(exc)) from None
        result: dict[str, Any] = {"resultType": "complete", "skills": [self._wire(s) for s in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        result.update(self._cache_fields())
        return result

    async def handle_get(self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams) -> HandlerResult:
        skills = self.snapshot_for(ctx).skill_by_uri
        # Published URIs are canonical, so a URI sent exactly as listed is found without parsing it (parsing
        # was most of this handler's time); any other spelling is parsed, to resolve or to say what is wrong.
        skill = skills.get(params.uri)
        uri = params.uri
        if skill is None:
            try:
                uri = canonical_uri(params.uri)
            except InvalidSkillURI as exc:
                raise invalid_params(f"Unknown skill: {exc}", params.uri) from None
            skill = skills.get(uri)
        if skill is None:
            hint = "" if uri.endswith("/" + SKILL_MD) else f" (a skill is named by its {SKILL_MD} URI)"
            raise invalid_params(f"Unknown skill: this server serves no skill at {params.uri}{hint}", params.uri)
        return {"resultType": "complete", "skill": self._wire(skill), **self._cache_fields()}

    # -- resources/directory/read ----------------------------------------------------------------------------

    async def handle_directory_read(
        self, ctx: ServerRequestContext[Any, Any], params: ReadDirectoryParams
    ) -> HandlerResult:
        try:
            uri = canonical_uri(params.uri)
        except InvalidSkillURI as exc:
            raise invalid_params(str(exc), params.uri) from None
        snapshot = self.snapshot_for(ctx)
        try:
            page = snapshot.directory_page(uri, params.cursor, self.directory_page_size)
        except InvalidCursor as exc:
            raise invalid_params(str(exc), params.uri) from None
        if page is None:
            if uri in snapshot.files:
                raise invalid_params(
                    f"Not a directory: {params.uri} is a file; read it with resources/read", params.uri
                )
            raise invalid_params(f"No such directory: {params.uri}", params.uri)
        result: dict[str, Any] = {"resultType": "complete", "resources": page.items}
        if page.next_cursor is not None:
            result["nextCursor"] = page.next_cursor
        return result

    # -- resources/read, resources/list: skill URIs here, the rest to the server's own handlers --------

    async def handle_read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams, *, previous: Any = None
    ) -> HandlerResult:
        """Serve a skill file; any other URI goes to `previous`, the server's own handler (if any)."""
        raw = str(params.uri)
        snapshot = self.snapshot_for(ctx)
        # As in handle_get: a file URI exactly as published needs no parsing.
        uri: str | None = raw if raw in snapshot.files else None
        if uri is None:
            try:
                uri = str(parse_uri(raw))
            except InvalidSkillURI as exc:
                if raw.partition("://")[0].lower() in snapshot.schemes | {"skill"}:
                    raise invalid_params(f"Resource not found: {exc}", raw) from None
        if uri is not None:
            file = snapshot.files.get(uri)
            if isinstance(file, StoredFile):
                try:
                    data = await file.read_async()
                except BlobUnavailable as exc:
                    logger.warning("refusing to serve %s: %s", uri, exc)
                    raise MCPError(INTERNAL_ERROR, str(exc), {"uri": raw}) from None
                return {"resultType": "complete", "contents": [file_contents(file, data)], **self._cache_fields()}
            if file is not None:
                try:
                    data = file.read() if file.size <= _BIG_FILE else await anyio.to_thread.run_sync(file.read)
                except (FileChanged, OSError) as exc:
                    # Serving new bytes under the old digest would make every host reject the skill; the
                    # honest answer is an error and a fresh snapshot for the next request.
                    logger.warning("refusing to serve %s: %s", uri, exc)
                    await anyio.to_thread.run_sync(self.catalog.refresh)
                    raise MCPError(
                        INTERNAL_ERROR, f"{uri} changed on the server; fetch its entry again", {"uri": raw}
                    ) from None
                return {
                    "resultType": "complete",
                    "contents": [file_contents(file, data)],
                    **self._cache_fields(),
                }
            owner = snapshot.dynamic_skill_for(uri)
            if owner is not None:
                return await self._read_dynamic(raw, uri, *owner)
        if previous is not None:
            return await previous(ctx, params)  # type: ignore[no-any-return]
        raise invalid_params(f"Resource not found: {raw}", raw)

    async def _read_dynamic(self, raw: str, uri: str, skill: Any, file_path: str) -> HandlerResult:
        reader = skill.dynamic_reader
        try:
            produced = await anyio.to_thread.run_sync(reader, file_path)
        except Exception as exc:
            logger.exception("dynamic skill reader failed for %s", uri)
            raise MCPError(INTERNAL_ERROR, f"generating {uri} failed: {exc!r}", {"uri": raw}) from None
        if produced is None:
            raise invalid_params(f"Resource not found: {raw}", raw)
        data = produced.encode("utf-8") if isinstance(produced, str) else bytes(produced)
        if file_path == SKILL_MD:
            _, mismatch = skill_md_mismatch(skill.entry.frontmatter, data)
            if mismatch is not None and mismatch.parse_error is not None:
                raise MCPError(
                    INTERNAL_ERROR, f"generated {uri} is not a valid SKILL.md: {mismatch.parse_error}", {"uri": raw}
                )
            if mismatch is not None:
                raise MCPError(
                    INTERNAL_ERROR,
                    f"generated {uri} does not carry the frontmatter its entry declares",
                    {"uri": raw},
                )
        return {
            "resultType": "complete",
            "contents": [dynamic_contents(uri, file_path, data)],
            **self._cache_fields(),
        }

    async def handle_list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams, *, previous: Any = None
    ) -> HandlerResult:
        # Phase-tagged cursor: the server's own resources first (its cursor carried inside ours), then
        # every listed SKILL.md. Both halves are keyset-paged, so no phase costs more than a page.
        snapshot = self.snapshot_for(ctx)
        phase, key = ("own", None) if previous is not None else ("skills", None)
        if params.cursor is not None:
            try:
                phase, key = json.loads(decode_cursor(params.cursor, "resources/list", secret=snapshot.cursor_secret))
            except (InvalidCursor, ValueError, TypeError) as exc:
                raise invalid_params(f"invalid cursor for resources/list: {exc}") from None
            if phase == "own" and previous is None:  # issued by another server sharing the secret
                raise invalid_params("invalid cursor for resources/list: this server has no own resources")
        result: dict[str, Any] = {"resultType": "complete", "resources": [], **self._cache_fields()}
        next_state: list[Any] | None = None
        if phase == "own":
            own = await previous(ctx, params.model_copy(update={"cursor": key}))
            own_dict = own if isinstance(own, dict) else own.model_dump(by_alias=True, mode="json", exclude_none=True)
            result["resources"] = list(own_dict.get("resources", []))
            # The server's own pages keep the server's own cache hints; ours apply to skill pages only.
            for hint in ("ttlMs", "cacheScope"):
                if hint in own_dict:
                    result[hint] = own_dict[hint]
            own_next = own_dict.get("nextCursor")
            room = self.page_size - len(result["resources"])
            if own_next:
                next_state = ["own", own_next]
            elif snapshot.listed and room > 0:
                # The server's own listing ended on this page: fill the rest with SKILL.md resources,
                # so a server without resources of its own does not answer with an empty first page.
                items, after = snapshot.skill_md_page(None, room)
                result["resources"] += items
                if after is not None:
                    next_state = ["skills", after]
            elif snapshot.listed:
                next_state = ["skills", None]
        else:
            items, after = snapshot.skill_md_page(key, self.page_size)
            result["resources"] = items
            if after is not None:
                next_state = ["skills", after]
        if next_state is not None:
            result["nextCursor"] = encode_cursor(
                "resources/list", json.dumps(next_state), secret=snapshot.cursor_secret
            )
        return result


class LegacyInitializeAdvertiser:
    """Puts `capabilities.extensions` back into the 2025-11-25 `initialize` result.

    The SDK serialises `initialize` through the 2025-11-25 `ServerCapabilities` model, which has no
    `extensions` field, so the advertisement would silently vanish and no legacy client would ever
    learn that this server serves skills. Drop this once the SDK keeps the field.
    """

    def __init__(self, server: Server[Any]) -> None:
        self.server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict) and self.server.extensions:
            capabilities = result.get("capabilities")
            if isinstance(capabilities, dict):
                advertised = dict(capabilities.get("extensions") or {})
                for identifier, settings in self.server.extensions.items():
                    advertised.setdefault(identifier, settings)
                capabilities["extensions"] = advertised
                resources = capabilities.get("resources")
                if isinstance(resources, dict):
                    # We send notifications/resources/list_changed to legacy sessions (server.notify).
                    resources["listChanged"] = True
        return result

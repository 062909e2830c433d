"""`SkillsExtension`: SEP-2640 on the official `mcp` SDK, through the SDK's public extension points.

    skills = SkillsExtension(SkillCatalog(["./skills"]))
    mcp = MCPServer("docs", extensions=[skills], middleware=skills.middleware(), subscriptions=skills.subscriptions)

`extensions=` binds `skills/list`, `skills/get` and `resources/directory/read` and advertises the extension;
`middleware=` serves skill files through the server's `resources/read` and `resources/list` beside its own
resources (`server/resources.py`), re-adds the advertisement to the legacy 2025-11-25 `initialize` result
(`server/legacy.py`) and remembers legacy sessions for change notifications (`server/notify.py`);
`subscriptions=` is the bus a catalog change is published on for 2026 `subscriptions/listen` streams.
`skills.attach(server)` does all of it to a server already built (an `MCPServer` or a low-level `Server`);
on an `MCPServer` that needs two private attributes, which only `server/_sdk.py` touches.
Each request reads the current snapshot once and costs O(log n + page).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.context import HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, ToolBinding
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, ReadResourceRequestParams
from mcp_types.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.snapshot import CatalogSkill, CatalogSnapshot
from skillwire.catalog.store import StoredFile
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import BlobUnavailable, InvalidCursor, InvalidSkillURI, ServedFileChanged
from skillwire.core.host_limits import CLAUDE_CODE, HostCut, HostLimits, entry_size, host_cut
from skillwire.core.params import GetSkillParams, ReadDirectoryParams
from skillwire.core.protocol import (
    DIRECTORY_READ_SETTING,
    EXTENSION_ID,
    INDEX_META_KEY,
    METHOD_GET,
    METHOD_LIST,
    METHOD_READ_DIRECTORY,
)
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import SKILL_MD, canonical_uri, parse_uri, scheme_of
from skillwire.core.verify import skill_md_mismatch
from skillwire.server import _sdk
from skillwire.server.content import dynamic_contents, file_contents
from skillwire.server.legacy import LegacyInitializeAdvertiser
from skillwire.server.notify import ListChangedNotifier
from skillwire.server.pages import PageCache
from skillwire.server.resources import SkillResources, install_resource_handlers

if TYPE_CHECKING:
    from skillwire.server.search_tool import SkillFinder

__all__ = ["SkillsExtension"]

logger = logging.getLogger("skillwire.server")

CacheScope = Literal["public", "private"]
_BIG_FILE = 256 * 1024  # read files above this size in a worker thread

# Skills per `skills/list` page. Clients walk pages under a cap of their own: the TypeScript SDK 2.4.0's
# `SkillsClient.list()` stops at `listMaxPages` = 64 pages and then fails the whole listing, so a page of
# 100 made any catalog over 6,400 skills unlistable from a TypeScript host on its defaults. 2,000 lists
# 128,000 skills within 64 pages (the Go SDK serves 1,000 per page); a page of 2,000 generated entries with
# 10 files each is about 3.4 MB of JSON. See docs/architecture.md, "Page size".
DEFAULT_PAGE_SIZE = 2000
_T = TypeVar("_T")


def invalid_params(message: str, uri: str | None = None) -> MCPError:
    return MCPError(INVALID_PARAMS, message, {"uri": uri} if uri is not None else None)


class SkillsExtension(Extension):
    """The MCP Skills extension (`io.modelcontextprotocol/skills`) for an `mcp` server: `skills/list`,
    `skills/get`, `resources/directory/read`, and `skill://` files through `resources/read` and
    `resources/list`, beside the server's own resources (any URI the catalog does not serve reaches them).

    Install it with `MCPServer(extensions=[skills], middleware=skills.middleware(),
    subscriptions=skills.subscriptions)`, or with `skills.attach(server)` on a server already built (an
    `MCPServer` or a low-level `Server`; idempotent, and one extension may serve several servers).

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
    subscriptions:
        The `SubscriptionBus` catalog changes are published on (pass the same one to
        `MCPServer(subscriptions=...)`); a new in-memory bus by default, available as `.subscriptions`.
    page_cache_items:
        How many skills and files the built `skills/list` pages kept for reuse may list in all
        (`server.pages`; about 200 bytes each); None (default) keeps one whole walk of the catalog
        (at least 22,000), 0 builds every page per request.
    search_tool:
        Offer the `find_skills` tool (`server/search_tool.py`): a model finds skills for a task, listed
        or not, and loads them by address. Off by default, so it never clashes with a server's own
        tools; `skillwire serve` turns it on (`--no-search-tool` off). On an `MCPServer` only.
    search_index:
        The tool's search index file (or a callable giving it at the first call), so a restart
        re-indexes nothing; None keeps it in memory.
    """

    identifier = EXTENSION_ID
    # Whether answers depend on who asks (`server.visibility.PerCallerSkills`); then nothing that
    # describes the whole catalog (as `/healthz` would) may be shown to an anonymous caller.
    per_caller = False

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
        subscriptions: SubscriptionBus | None = None,
        page_cache_items: int | None = None,
        search_tool: bool = False,
        search_index: Path | Callable[[], Path | None] | None = None,
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
        self.pages = PageCache(page_cache_items)
        self._signature_meta: dict[int, tuple[weakref.ref[SkillEntry], dict[str, Any] | None]] = {}
        # The middleware is built here, once, because `MCPServer(middleware=...)` takes it before the server
        # exists; the same objects then serve every server the extension is installed on.
        self.subscriptions: SubscriptionBus = subscriptions if subscriptions is not None else InMemorySubscriptionBus()
        self.notifier = ListChangedNotifier(self.subscriptions)
        self.file_router = SkillResources(self)
        self.legacy_advertiser = LegacyInitializeAdvertiser(extensions={self.identifier: self.settings()})
        self.catalog.on_change_async(self.notifier.notify)
        self._warned_no_middleware = False
        # Set while `load_first` runs the catalog's first scan beside a transport that already answers:
        # requests that read the catalog wait on it; `_load_failed` is what that scan raised, if it did.
        self._loading: anyio.Event | None = None
        self._load_failed: BaseException | None = None
        self.finder: SkillFinder | None = None
        if search_tool:
            # Imported here: a server without the tool never loads the search engine (SQLite FTS5, its text rules).
            from skillwire.server.search_tool import SkillFinder

            self.finder = SkillFinder(lambda: self.catalog.snapshot, self.request_snapshot, index_path=search_index)

    # -- Extension contract ----------------------------------------------------------------------------

    def settings(self) -> dict[str, Any]:
        return {DIRECTORY_READ_SETTING: True} if self.directory_read else {}

    def tools(self) -> Sequence[ToolBinding]:
        """`find_skills`, when `search_tool` is on (`MCPServer` registers it with `add_tool`)."""
        return [self.finder.binding()] if self.finder is not None else []

    def methods(self) -> Sequence[MethodBinding]:
        bindings = [
            MethodBinding(METHOD_LIST, PaginatedRequestParams, self.handle_list),
            MethodBinding(METHOD_GET, GetSkillParams, self.handle_get),
        ]
        if self.directory_read:
            bindings.append(MethodBinding(METHOD_READ_DIRECTORY, ReadDirectoryParams, self.handle_directory_read))
        # The internal methods `resources/read` and `resources/list` of skill files are routed to.
        return [*bindings, *self.file_router.methods()]

    def middleware(self) -> list[ServerMiddleware[Any]]:
        """What `MCPServer(middleware=...)` needs for the rest: skill files in `resources/read` and
        `resources/list`, the legacy `initialize` advertisement, and legacy sessions' change notifications."""
        return [self.legacy_advertiser, self.notifier, self.file_router]

    def attach(self, server: MCPServer | Server[Any]) -> None:
        """Install everything on a server already built; what is already installed is left as it is."""
        bus: SubscriptionBus | None = None
        if isinstance(server, MCPServer):
            # `MCPServer` applies extensions only in its constructor, and its bus has no public accessor.
            lowlevel = _sdk.lowlevel_server(server)
            bus = _sdk.subscription_bus(server)
        else:
            lowlevel = server
        bindings = self.methods()
        for binding in bindings:
            entry = lowlevel.get_request_handler(binding.method)
            if entry is not None and entry.handler != binding.handler:
                # Another skills extension (mcp's own `Skills`, or a second SkillsExtension) answers skills/*
                # here: wrapping or replacing it would leave one advertisement over two implementations.
                raise ValueError(
                    f"{binding.method} is already served on this server by {entry.handler!r}; "
                    f"install one {self.identifier} extension per server"
                )
        if bus is not None:
            self.notifier.add_bus(bus)
        if isinstance(server, MCPServer):
            for tool in self.tools():
                server.add_tool(tool.fn, meta=tool.meta, **tool.kwargs)  # the SDK keeps a tool already there
        for binding in bindings:
            if lowlevel.get_request_handler(binding.method) is None:
                lowlevel.add_request_handler(binding.method, binding.params_type, binding.handler)
        lowlevel.extensions[self.identifier] = self.settings()
        install_resource_handlers(lowlevel, self)
        installed = lowlevel.middleware
        for middleware in self.middleware():
            if not any(present is middleware for present in installed):
                installed.append(middleware)

    def _wire(self, skill: Any) -> dict[str, Any]:
        """A catalog skill's entry as sent, with its publisher signature when one matches it."""
        wire: dict[str, Any] = skill.wire
        if self.signatures:
            meta = self._signature_for(skill.entry)
            if meta is not None:
                wire["_meta"] = {**(wire.get("_meta") or {}), SIGNATURE_META_KEY: meta}
        return wire

    def host_cut(self, limits: HostLimits = CLAUDE_CODE, snapshot: CatalogSnapshot | None = None) -> HostCut:
        """What a host with `limits` keeps of this server's `skills/list` (the catalog's snapshot, or `snapshot`),
        walked page by page at this extension's page size with the entries as sent. Lazy: entries past the cut
        are never built, so it costs at most about `limits.skills` entries on any catalog."""
        listed = (snapshot if snapshot is not None else self.catalog.snapshot).listed
        size = self.page_size

        def page(start: int) -> Iterator[int]:
            for position in range(start, min(start + size, len(listed))):
                yield entry_size(self._wire(listed[position]))

        return host_cut(limits, (page(start) for start in range(0, len(listed), size)))

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

    def snapshot_for_token(self, token: AccessToken | None) -> CatalogSnapshot:
        """The snapshot a caller holding `token` (None: no token) is answered from, on the wire or on the
        catalog page (`web/`): the one place that decides, overridden by `PerCallerSkills`."""
        return self.catalog.snapshot

    async def _loaded(self) -> None:
        loading = self._loading
        if loading is not None:
            await loading.wait()
        if self._load_failed is not None:
            raise MCPError(INTERNAL_ERROR, f"the server could not load its skills: {self._load_failed}")

    async def request_snapshot(self, ctx: ServerRequestContext[Any, Any]) -> CatalogSnapshot:
        """`snapshot_for`, once the first scan `load_first` runs has ended: what every handler reads."""
        await self._loaded()
        return self.snapshot_for(ctx)

    async def caller_snapshot(self, token: AccessToken | None) -> CatalogSnapshot:
        """`snapshot_for_token`, once the first scan has ended: what the catalog page reads."""
        await self._loaded()
        return self.snapshot_for_token(token)

    def entry_as_served(self, skill: CatalogSkill) -> SkillEntry:
        """A catalog skill's entry with the publisher signature `skills/*` would add to its `_meta`."""
        if not self.signatures:
            return skill.entry
        meta = self._signature_for(skill.entry)
        if meta is None:
            return skill.entry
        return replace(skill.entry, meta={**(skill.entry.meta or {}), SIGNATURE_META_KEY: meta})

    async def load_first(self, load: Callable[[], _T]) -> _T:
        """Run `load` (the catalog's first scan, and whatever must follow it) in a worker thread while the
        transport already answers: every request that reads the catalog (`skills/*`, directory and
        `resources/*` reads) waits until it returns; `initialize`, `server/discover` and `ping` are answered
        meanwhile, since nothing in them depends on the catalog. A cold scan of thousands of skills takes
        seconds, and hosts give up on a server that does not answer its handshake (the SDK's discover probe
        after 10 s). When `load` raises, the waiting requests and every later one get an internal error."""
        loading = anyio.Event()
        self._loading = loading
        try:
            return await anyio.to_thread.run_sync(load)
        except BaseException as exc:
            self._load_failed = exc
            raise
        finally:
            self._loading = None
            loading.set()

    def cache_fields(self) -> dict[str, Any]:
        return {"ttlMs": self.ttl_ms, "cacheScope": self.cache_scope}

    # -- skills/list, skills/get -------------------------------------------------------------------------

    async def handle_list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        if not self.file_router.seen_request and not self._warned_no_middleware:
            # The middleware wraps every request, this one included, so it has run by now if it is installed.
            self._warned_no_middleware = True
            logger.warning(
                "SkillsExtension is bound without its middleware: skill files are not served by resources/read; "
                "pass middleware=skills.middleware() to MCPServer, or call skills.attach(server)"
            )
        snapshot = await self.request_snapshot(ctx)
        # A page of a snapshot is the same for every request (server/pages.py); the SDK copies the result
        # before shaping it for the wire, so the dict handed back is never changed.
        built = self.pages.get(snapshot, params.cursor)
        if built is not None:
            return built
        try:
            page, next_cursor = snapshot.list_page(params.cursor, self.page_size)
        except InvalidCursor as exc:
            raise invalid_params(str(exc)) from None
        result: dict[str, Any] = {"resultType": "complete", "skills": [self._wire(s) for s in page]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        result.update(self.cache_fields())
        published = snapshot.published_index
        if published is not None:
            # Which index this page lists, on every page (behind a load balancer, pages may come from
            # different replicas), so a client can refuse an index older than one it took before.
            result["_meta"] = {INDEX_META_KEY: published.to_json()}
        self.pages.put(snapshot, params.cursor, result, len(page) + sum(len(s.entry.files) for s in page))
        return result

    async def handle_get(self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams) -> HandlerResult:
        skills = (await self.request_snapshot(ctx)).skill_by_uri
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
        return {"resultType": "complete", "skill": self._wire(skill), **self.cache_fields()}

    # -- resources/directory/read ----------------------------------------------------------------------------

    async def handle_directory_read(
        self, ctx: ServerRequestContext[Any, Any], params: ReadDirectoryParams
    ) -> HandlerResult:
        try:
            uri = canonical_uri(params.uri)
        except InvalidSkillURI as exc:
            raise invalid_params(str(exc), params.uri) from None
        snapshot = await self.request_snapshot(ctx)
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

    # -- resources/read of skill files (routed here by `server.resources.SkillResources`) -------------------

    def serves_resource(self, snapshot: CatalogSnapshot, uri: str) -> bool:
        """Whether `resources/read` of `uri` is answered from the catalog (else the server's own resources are):
        a file it lists, a file of one of its dynamic skills, or a malformed URI in one of its schemes (which
        gets a specific error rather than the server's generic "not found")."""
        if uri in snapshot.files:  # as published: no parsing (the common case, and parsing costs)
            return True
        try:
            canonical = str(parse_uri(uri))
        except InvalidSkillURI:
            return scheme_of(uri).lower() in snapshot.schemes | {"skill"}
        return canonical in snapshot.files or snapshot.dynamic_skill_for(canonical) is not None

    async def handle_read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> HandlerResult:
        """Serve a skill file (a URI `serves_resource` accepted)."""
        raw = str(params.uri)
        snapshot = await self.request_snapshot(ctx)
        # As in handle_get: a file URI exactly as published needs no parsing.
        uri: str | None = raw if raw in snapshot.files else None
        if uri is None:
            try:
                uri = str(parse_uri(raw))
            except InvalidSkillURI as exc:
                raise invalid_params(f"Resource not found: {exc}", raw) from None
        file = snapshot.files.get(uri)
        if isinstance(file, StoredFile):
            try:
                data = await file.read_async()
            except BlobUnavailable as exc:
                logger.warning("refusing to serve %s: %s", uri, exc)
                raise MCPError(INTERNAL_ERROR, str(exc), {"uri": raw}) from None
            return {"resultType": "complete", "contents": [file_contents(file, data)], **self.cache_fields()}
        if file is not None:
            try:
                data = file.read() if file.size <= _BIG_FILE else await anyio.to_thread.run_sync(file.read)
            except (ServedFileChanged, OSError) as exc:
                # Serving new bytes under the old digest would make every host reject the skill; the
                # honest answer is an error and a fresh snapshot for the next request.
                logger.warning("refusing to serve %s: %s", uri, exc)
                await anyio.to_thread.run_sync(self.catalog.refresh)
                raise MCPError(
                    INTERNAL_ERROR, f"{uri} changed on the server; fetch its entry again", {"uri": raw}
                ) from None
            return {"resultType": "complete", "contents": [file_contents(file, data)], **self.cache_fields()}
        owner = snapshot.dynamic_skill_for(uri)
        if owner is not None:
            return await self._read_dynamic(raw, uri, *owner)
        # The snapshot changed since `serves_resource` looked (a refresh in between): the file is gone.
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
            **self.cache_fields(),
        }

"""`SkillsClient`: the SEP's client wrappers over a connected `mcp.client.Client`, one call each.

Nothing `skills/*` is sent unless the server declared the extension, and no directory read unless it
declared `directoryRead: true` (`ExtensionNotDeclared` otherwise). `list_skills` pages to the end with
a guard against repeated cursors and the caps of `ClientLimits` (pages, entries per page and in all,
seconds); an entry that fails validation is reported in `Listing.problems` and skipped, never fatal to
the rest, and a cap that stops the listing is reported in `Listing.stopped_early`. List and get results
are reused for their `ttlMs`. Reads return raw bytes: verification is the host's job (`skillwire.host`).

Every request has a deadline (`ClientLimits.timeout`), and whatever goes wrong comes out as a
`ServerError` subclass with a one-line message: `RequestTimeout`, `ResponseTooLarge` (refused on the
wire by the guarded transports of `skillwire.client.transport`, when the client was opened with
`skillwire.client.connection`), `ConnectionLost`, `InvalidResponse` (an answer the SDK's result
models refuse; never a raw pydantic error), `SkillNotFound`, or `ServerError` itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar, cast

import anyio
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult
from mcp_types.jsonrpc import CONNECTION_CLOSED, INVALID_PARAMS, PARSE_ERROR, REQUEST_TIMEOUT
from pydantic import BaseModel, ValidationError

from skillwire.client.limits import ClientLimits, ResponseBudget
from skillwire.client.paging import PageWalk, pages
from skillwire.client.requests import (
    RAW_RESULT,
    get_skill_request,
    list_skills_request,
    read_directory_request,
)
from skillwire.core.content import BadBlock, block_body
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    ConnectionLost,
    ExtensionNotDeclared,
    InvalidEntry,
    InvalidResponse,
    InvalidServerEntry,
    RequestTimeout,
    ResponseTooLarge,
    ServerError,
    SkillNotFound,
    SkillwireError,
)
from skillwire.core.protocol import (
    DIRECTORY_MIME_TYPE,
    DIRECTORY_READ_SETTING,
    EXTENSION_ID,
    INDEX_META_KEY,
    METHOD_GET,
    METHOD_LIST,
    METHOD_READ_DIRECTORY,
    METHOD_RESOURCES_READ,
)
from skillwire.core.published_index import PublishedIndex, goes_back, read_published_index
from skillwire.core.uri import child_name

__all__ = ["DirectoryItem", "EntryProblem", "Listing", "ResourceContent", "SkillsClient"]

DEFAULT_MAX_PAGES = ClientLimits.max_pages
DEFAULT_MAX_DIRECTORY_PAGES = 100
MESSAGE_CHARS = 300  # a server's own error text is cut to this many characters before it reaches anyone

ResultT = TypeVar("ResultT", bound=BaseModel)


def _short(text: str) -> str:
    """A server-supplied message on one line, cut to `MESSAGE_CHARS`."""
    line = " ".join(str(text).split())
    return line if len(line) <= MESSAGE_CHARS else line[: MESSAGE_CHARS - 1] + "…"


def _validation_summary(exc: ValidationError) -> str:
    """Where the answer breaks the protocol's result model, without quoting the server's values."""
    parts = []
    for error in exc.errors()[:3]:
        where = ".".join(str(part) for part in error.get("loc", ())) or "result"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


def _is_block_without_body(exc: ValidationError, uri: str) -> bool:
    """Whether the only fault is a content block for `uri` that carries neither `text` nor `blob`."""
    errors = exc.errors()
    for error in errors:
        loc = error.get("loc", ())
        if error.get("type") != "missing" or not loc or loc[0] != "contents" or loc[-1] not in ("text", "blob"):
            return False
        block = error.get("input")
        if not isinstance(block, dict) or block.get("uri") != uri or "text" in block or "blob" in block:
            return False
    return bool(errors)


@dataclass(frozen=True)
class EntryProblem:
    """An entry of a listing that was skipped, and why."""

    page: int
    index: int
    uri: str | None
    reason: str


@dataclass(frozen=True)
class Listing:
    entries: tuple[SkillEntry, ...]
    problems: tuple[EntryProblem, ...] = ()
    pages: int = 0
    stopped_early: str | None = None  # why paging stopped before the server said it was done
    ttl_ms: int = 0
    # The published index the pages came from (`_meta[INDEX_META_KEY]`; the oldest when pages name
    # different ones), None when no page named one (a folder server, another implementation) ...
    index: PublishedIndex | None = None
    # ... and why a page's claim was not one (garbage from the server), for a caller that relies on it.
    index_problem: str | None = None


@dataclass(frozen=True)
class ResourceContent:
    """Bytes of one `resources/read`, exactly as received (unverified)."""

    uri: str
    mime_type: str | None
    data: bytes
    is_text: bool
    meta: dict[str, Any] | None = None


@dataclass(frozen=True)
class DirectoryItem:
    uri: str
    name: str
    mime_type: str | None
    is_directory: bool
    size: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


class DirectoryListing(list[DirectoryItem]):
    """A directory's items, all pages; `stopped` is why the walk ended early (None: the whole listing)."""

    stopped: str | None = None


def _cache_ttl(result: dict[str, Any]) -> int:
    ttl = result.get("ttlMs")
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else 0


class SkillsClient:
    """The skills calls over one connected `mcp.client.Client`, one protocol call per method:
    `list_skills()` (every page, bad entries reported in `Listing.problems` instead of failing),
    `get_skill(uri)`, `read_skill_uri(uri)`, `read_directory(uri)`. Nothing `skills/*` is sent
    unless the server declared the extension (`ExtensionNotDeclared`), and no directory read without
    `directoryRead: true`. It does not verify bytes: `SkillHost` does that.

    Parameters
    ----------
    client:
        A connected `mcp` client (`SkillHost.add_server` makes one for you).
    origin:
        The host's label for the server, used in error messages.
    max_pages:
        The most `skills/list` pages one listing follows (a guard against endless cursors); overrides
        `limits.max_pages`.
    limits:
        Timeouts and caps on what the server may send (`ClientLimits`); the defaults otherwise.
    budget:
        The connection's response budget, when `skillwire.client.connection` opened it (its guarded
        transports enforce the byte bounds); without it only the timeouts and entry caps apply.
    clock:
        The time source for `ttlMs` caching (tests pass a fake one).
    """

    def __init__(
        self,
        client: Client,
        *,
        origin: str | None = None,
        max_pages: int | None = None,
        limits: ClientLimits | None = None,
        budget: ResponseBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`budget` is the connection's, when it was opened by `skillwire.client.connection` (whose guarded
        transports enforce the byte bounds); without it only the timeouts and entry caps apply."""
        chosen = limits if limits is not None else (budget.limits if budget is not None else ClientLimits())
        self.limits = chosen if max_pages is None else replace(chosen, max_pages=max_pages)
        self.client = client
        self.origin = origin
        self.budget = budget
        self._clock = clock
        self._listing: tuple[float, Listing] | None = None
        self._entries: dict[str, tuple[float, SkillEntry]] = {}
        self.requests: list[tuple[str, str | None]] = []  # (method, uri): what this client sent, in order

    # -- what the server declared -------------------------------------------------------------------

    @property
    def settings(self) -> dict[str, Any] | None:
        """The extension's settings object, or None when the server did not declare the extension."""
        capabilities = self.client.server_capabilities
        extensions = getattr(capabilities, "extensions", None) or {}
        value = extensions.get(EXTENSION_ID)
        return cast(dict[str, Any], value) if isinstance(value, dict) else None

    @property
    def declared(self) -> bool:
        return self.settings is not None

    @property
    def directory_read(self) -> bool:
        settings = self.settings
        return bool(settings and settings.get(DIRECTORY_READ_SETTING) is True)

    def _require(self, what: str) -> None:
        if not self.declared:
            raise ExtensionNotDeclared(
                f"the server did not declare {EXTENSION_ID}; not sending {what}", origin=self.origin
            )

    @property
    def max_pages(self) -> int:
        return self.limits.max_pages

    def _server_error(self, exc: MCPError, method: str, uri: str | None) -> ServerError:
        """The skillwire exception for an error answer (or one the transport or the SDK made up)."""
        what = f"{method} of {uri}" if uri is not None else method
        refusal = self.budget.take_refusal(method, uri) if self.budget is not None else None
        if refusal is not None:
            kind = {"too-large": ResponseTooLarge, "invalid": InvalidResponse}.get(refusal.kind, ConnectionLost)
            return kind(refusal.message, origin=self.origin)
        message = _short(exc.message)
        if exc.code == REQUEST_TIMEOUT:
            return RequestTimeout(f"no answer to {what} within {self.limits.timeout:g} s", origin=self.origin)
        if exc.code == CONNECTION_CLOSED:
            return ConnectionLost(f"the connection closed before {what} was answered ({message})", origin=self.origin)
        if exc.code == PARSE_ERROR:
            # The SDK's text quotes the server's bytes; keep only what kind of fault it was.
            reason = message.partition("Invalid JSON:")[2].partition(" [")[0].strip()
            return InvalidResponse(
                f"the answer to {what} is not a JSON-RPC message" + (f" (invalid JSON: {reason})" if reason else ""),
                origin=self.origin,
            )
        if exc.code == INVALID_PARAMS and uri is not None:
            return SkillNotFound(message, code=exc.code, origin=self.origin)
        return ServerError(message, code=exc.code, origin=self.origin)

    async def _send(self, request: Any, result_type: type[ResultT], method: str, uri: str | None) -> ResultT:
        """One request with its deadline; every failure becomes a `ServerError` subclass (see the module)."""
        self.requests.append((method, uri))
        what = f"{method} of {uri}" if uri is not None else method
        try:
            return await self.client.session.send_request(
                request, result_type, request_read_timeout_seconds=self.limits.timeout
            )
        except MCPError as exc:
            raise self._server_error(exc, method, uri) from None
        except ValidationError as exc:
            raise InvalidResponse(
                f"the answer to {what} is not a valid MCP result ({_validation_summary(exc)})", origin=self.origin
            ) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise ConnectionLost(f"the connection is closed; {what} was not sent", origin=self.origin) from None
        except SkillwireError:
            raise
        except Exception as exc:  # anything else the SDK or a transport lets out: one line, our type
            text = _short(str(exc))
            raise ConnectionLost(
                f"{what} failed: {type(exc).__name__}" + (f": {text}" if text else ""), origin=self.origin
            ) from exc

    async def _call(self, request: Any, method: str, uri: str | None) -> dict[str, Any]:
        return (await self._send(request, RAW_RESULT, method, uri)).fields()

    # -- skills/list ----------------------------------------------------------------------------------

    async def list_skills(self, *, use_cache: bool = True) -> Listing:
        """Every page of `skills/list`; may legitimately be empty or partial (never proof of absence).

        Paging stops early, with the reason in `stopped_early`, at a repeated cursor or at a cap of
        `self.limits`: pages, entries on one page, entries in all, or seconds for the whole listing.
        """
        now = self._clock()
        if use_cache and self._listing is not None and self._listing[0] > now:
            return self._listing[1]
        self._require(METHOD_LIST)
        limits = self.limits
        entries: list[SkillEntry] = []
        problems: list[EntryProblem] = []
        seen_uris: set[str] = set()
        counted = 0  # entries seen, valid or not: the entry cap bounds the work, not only the result
        ttl = 0
        served_from: PublishedIndex | None = None
        index_problem: str | None = None
        walk = PageWalk(limits.max_pages)

        async def fetch(cursor: str | None) -> dict[str, Any]:
            return await self._call(list_skills_request(cursor), METHOD_LIST, None)

        with anyio.move_on_after(limits.listing_seconds) as deadline:
            listing_pages = pages(fetch, walk)
            while True:
                try:
                    result = await anext(listing_pages)
                except StopAsyncIteration:
                    break
                except ServerError as exc:
                    if walk.pages == 0:
                        raise
                    # A later page that fails (too large, no answer, ...) ends the listing, not what it had.
                    walk.stop(f"page {walk.pages + 1} failed: {exc}")
                    break
                page = walk.pages
                if page == 1:
                    ttl = _cache_ttl(result)
                meta = result.get("_meta")
                if isinstance(meta, dict) and INDEX_META_KEY in meta:
                    claimed = read_published_index(meta[INDEX_META_KEY], now=time.time())
                    if isinstance(claimed, str):
                        index_problem = index_problem or f"page {page}'s _meta {INDEX_META_KEY} is {claimed}"
                    elif served_from is None or goes_back(claimed.sequence, served_from.sequence):
                        served_from = claimed  # the oldest: what any entry of this listing may come from
                raw_entries = result.get("skills")
                if not isinstance(raw_entries, list):
                    raise InvalidResponse("skills/list result has no 'skills' array", origin=self.origin)
                if len(raw_entries) > limits.max_page_entries:
                    walk.stop(
                        f"page {page} has {len(raw_entries):,} entries, over the cap of {limits.max_page_entries:,} "
                        "per page; not read"
                    )
                    break
                room = limits.max_entries - counted
                for index, raw in enumerate(raw_entries[:room]):
                    uri = raw.get("uri") if isinstance(raw, dict) else None
                    try:
                        entry = SkillEntry.from_wire(raw)
                    except InvalidEntry as exc:
                        problems.append(EntryProblem(page, index, uri if isinstance(uri, str) else None, str(exc)))
                        continue
                    if entry.uri in seen_uris:
                        problems.append(
                            EntryProblem(page, index, entry.uri, "listed twice (an entry split or repeated)")
                        )
                        continue
                    seen_uris.add(entry.uri)
                    entries.append(entry)
                counted += min(len(raw_entries), room)
                if len(raw_entries) > room:
                    walk.stop(f"stopped at the cap of {limits.max_entries:,} entries in one listing")
                    break
        pages_read, stopped = walk.pages, walk.stopped
        if deadline.cancelled_caught:
            stopped = f"stopped after {limits.listing_seconds:g} s ({pages_read} pages read)"
        listing = Listing(tuple(entries), tuple(problems), pages_read, stopped, ttl, served_from, index_problem)
        if ttl and stopped is None:  # a listing cut short is not reused as if it were the server's answer
            self._listing = (now + ttl / 1000, listing)
            for entry in entries:
                self._entries[entry.uri] = (now + ttl / 1000, entry)
        return listing

    # -- skills/get -----------------------------------------------------------------------------------

    async def get_skill(self, uri: str, *, use_cache: bool = True) -> SkillEntry:
        """One entry by its SKILL.md URI (listed or not). `SkillNotFound` for -32602."""
        now = self._clock()
        cached = self._entries.get(uri)
        if use_cache and cached is not None and cached[0] > now:
            return cached[1]
        self._require(METHOD_GET)
        result = await self._call(get_skill_request(uri), METHOD_GET, uri)
        try:
            entry = SkillEntry.from_wire(result.get("skill"))
        except InvalidEntry as exc:
            raise InvalidServerEntry(f"skills/get returned an invalid entry: {exc}", origin=self.origin) from None
        if entry.uri != uri:
            raise ServerError(f"skills/get for {uri} answered with the entry of {entry.uri}", origin=self.origin)
        ttl = _cache_ttl(result)
        if ttl:
            self._entries[uri] = (now + ttl / 1000, entry)
        return entry

    def forget(self, uri: str | None = None) -> None:
        """Drop cached list/get results (all, or one skill's), e.g. after a verification failure."""
        self._listing = None
        if uri is None:
            self._entries.clear()
        else:
            self._entries.pop(uri, None)

    # -- resources/read ---------------------------------------------------------------------------------

    async def read_skill_uri(self, uri: str, *, size: int | None = None) -> ResourceContent:
        """`resources/read` of one URI; exactly one content block for that URI is accepted.

        `size` is the file's size in the manifest when it is listed: its answer may then be no larger
        than that allows (`ClientLimits.read_allowance`), checked on the wire before parsing. Only for
        a file listed as 0 bytes is a block with neither `text` nor `blob` read as empty (the Go SDK's
        skills server sends an empty file that way): the empty bytes still have to match the
        manifest's digest, so nothing unverified gets through; anywhere else it is an `InvalidResponse`.
        """
        request = ReadResourceRequest(params=ReadResourceRequestParams(uri=uri))
        expecting = self.budget.expect_read(uri, size) if self.budget is not None else nullcontext()
        try:
            with expecting:
                result = await self._send(request, ReadResourceResult, METHOD_RESOURCES_READ, uri)
        except InvalidResponse as exc:
            cause = exc.__cause__
            if size == 0 and isinstance(cause, ValidationError) and _is_block_without_body(cause, uri):
                return ResourceContent(uri, None, b"", True, None)
            raise
        blocks = [c for c in result.contents if str(c.uri) == uri]
        if len(blocks) != 1:
            raise InvalidResponse(
                f"resources/read of {uri} returned {len(blocks)} content blocks for that URI (expected 1)",
                origin=self.origin,
            )
        block = blocks[0]
        mime = getattr(block, "mime_type", None)
        meta = getattr(block, "meta", None)
        body = block_body(getattr(block, "text", None), getattr(block, "blob", None))
        if isinstance(body, BadBlock):
            raise InvalidResponse(f"resources/read of {uri} returned {body.value}", origin=self.origin)
        return ResourceContent(uri, mime, body.data, body.is_text, meta)

    # -- resources/directory/read -------------------------------------------------------------------------

    async def read_directory(self, uri: str, *, max_pages: int = DEFAULT_MAX_DIRECTORY_PAGES) -> DirectoryListing:
        """Every page of `resources/directory/read` of `uri`; `.stopped` says why the listing is partial, if it is."""
        if not self.directory_read:
            raise ExtensionNotDeclared(
                "the server did not declare directoryRead: true; not sending resources/directory/read",
                origin=self.origin,
            )
        items = DirectoryListing()
        walk = PageWalk(max_pages)

        async def fetch(cursor: str | None) -> dict[str, Any]:
            return await self._call(read_directory_request(uri, cursor), METHOD_READ_DIRECTORY, uri)

        async for result in pages(fetch, walk):
            raw_items = result.get("resources")
            if not isinstance(raw_items, list):
                raise InvalidResponse(f"directory read of {uri} has no 'resources' array", origin=self.origin)
            if len(raw_items) > self.limits.max_page_entries or len(items) + len(raw_items) > self.limits.max_entries:
                raise ResponseTooLarge(
                    f"directory read of {uri} passed its cap ({self.limits.max_page_entries:,} items a page, "
                    f"{self.limits.max_entries:,} in all)",
                    origin=self.origin,
                )
            for raw in raw_items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    raise InvalidResponse(f"directory read of {uri} returned an item without a uri", origin=self.origin)
                mime = raw.get("mimeType")
                size = raw.get("size")
                items.append(
                    DirectoryItem(
                        raw["uri"],
                        str(raw.get("name") or child_name(raw["uri"])),
                        mime if isinstance(mime, str) else None,
                        mime == DIRECTORY_MIME_TYPE,
                        size if isinstance(size, int) and not isinstance(size, bool) else None,
                        raw,
                    )
                )
        # Said, never silent: a walk cut short (a repeated cursor, the page cap) is a partial listing.
        items.stopped = walk.stopped
        return items

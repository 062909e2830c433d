"""`SkillsClient`: the SEP's client wrappers over a connected `mcp.client.Client`, one call each.

Nothing `skills/*` is sent unless the server declared the extension, and no directory read unless it
declared `directoryRead: true` (`ExtensionNotDeclared` otherwise). `list_skills` pages to the end with
a guard against repeated cursors and a page cap; an entry that fails validation is reported in
`Listing.problems` and skipped, never fatal to the rest. List and get results are reused for their
`ttlMs`. Reads return raw bytes: verification is the host's job (`skillwire.host`).
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.client.requests import (
    RAW_RESULT,
    get_skill_request,
    list_skills_request,
    read_directory_request,
)
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ExtensionNotDeclared, InvalidEntry, InvalidServerEntry, ServerError, SkillNotFound

EXTENSION_ID = "io.modelcontextprotocol/skills"
DEFAULT_MAX_PAGES = 100
DEFAULT_MAX_DIRECTORY_PAGES = 100


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


def _cache_ttl(result: dict[str, Any]) -> int:
    ttl = result.get("ttlMs")
    return ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else 0


class SkillsClient:
    def __init__(
        self,
        client: Client,
        *,
        origin: str | None = None,
        max_pages: int = DEFAULT_MAX_PAGES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.origin = origin
        self.max_pages = max_pages
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
        return bool(settings and settings.get("directoryRead") is True)

    def _require(self, what: str) -> None:
        if not self.declared:
            raise ExtensionNotDeclared(
                f"the server did not declare {EXTENSION_ID}; not sending {what}", origin=self.origin
            )

    async def _call(self, request: Any, method: str, uri: str | None) -> dict[str, Any]:
        self.requests.append((method, uri))
        try:
            return (await self.client.session.send_request(request, RAW_RESULT)).fields()
        except MCPError as exc:
            if exc.code == INVALID_PARAMS and uri is not None:
                raise SkillNotFound(exc.message, code=exc.code, origin=self.origin) from None
            raise ServerError(exc.message, code=exc.code, origin=self.origin) from None

    # -- skills/list ----------------------------------------------------------------------------------

    async def list_skills(self, *, use_cache: bool = True) -> Listing:
        """Every page of `skills/list`; may legitimately be empty or partial (never proof of absence)."""
        now = self._clock()
        if use_cache and self._listing is not None and self._listing[0] > now:
            return self._listing[1]
        self._require("skills/list")
        entries: list[SkillEntry] = []
        problems: list[EntryProblem] = []
        seen_cursors: set[str] = set()
        seen_uris: set[str] = set()
        cursor: str | None = None
        pages = 0
        stopped: str | None = None
        ttl = 0
        while True:
            result = await self._call(list_skills_request(cursor), "skills/list", None)
            pages += 1
            if pages == 1:
                ttl = _cache_ttl(result)
            raw_entries = result.get("skills")
            if not isinstance(raw_entries, list):
                raise ServerError("skills/list result has no 'skills' array", origin=self.origin)
            for index, raw in enumerate(raw_entries):
                uri = raw.get("uri") if isinstance(raw, dict) else None
                try:
                    entry = SkillEntry.from_wire(raw)
                except InvalidEntry as exc:
                    problems.append(EntryProblem(pages, index, uri if isinstance(uri, str) else None, str(exc)))
                    continue
                if entry.uri in seen_uris:
                    problems.append(EntryProblem(pages, index, entry.uri, "listed twice (an entry split or repeated)"))
                    continue
                seen_uris.add(entry.uri)
                entries.append(entry)
            next_cursor = result.get("nextCursor")
            if next_cursor is None or next_cursor == "":
                break
            if not isinstance(next_cursor, str):
                stopped = f"nextCursor is not a string: {next_cursor!r:.60}"
                break
            if next_cursor in seen_cursors:
                stopped = "the server repeated a cursor (a pagination loop)"
                break
            if pages >= self.max_pages:
                stopped = f"stopped after {self.max_pages} pages"
                break
            seen_cursors.add(next_cursor)
            cursor = next_cursor
        listing = Listing(tuple(entries), tuple(problems), pages, stopped, ttl)
        if ttl:
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
        self._require("skills/get")
        result = await self._call(get_skill_request(uri), "skills/get", uri)
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

    async def read_skill_uri(self, uri: str) -> ResourceContent:
        """`resources/read` of one URI; exactly one content block for that URI is accepted."""
        self.requests.append(("resources/read", uri))
        try:
            result = await self.client.session.read_resource(uri)
        except MCPError as exc:
            if exc.code == INVALID_PARAMS:
                raise SkillNotFound(exc.message, code=exc.code, origin=self.origin) from None
            raise ServerError(exc.message, code=exc.code, origin=self.origin) from None
        blocks = [c for c in getattr(result, "contents", []) if str(getattr(c, "uri", "")) == uri]
        if len(blocks) != 1:
            raise ServerError(
                f"resources/read of {uri} returned {len(blocks)} content blocks for that URI (expected 1)",
                origin=self.origin,
            )
        block = blocks[0]
        mime = getattr(block, "mime_type", None)
        meta = getattr(block, "meta", None)
        text = getattr(block, "text", None)
        if isinstance(text, str):
            return ResourceContent(uri, mime, text.encode("utf-8"), True, meta)
        blob = getattr(block, "blob", None)
        if isinstance(blob, str):
            try:
                data = base64.b64decode(blob, validate=True)
            except (binascii.Error, ValueError):
                raise ServerError(
                    f"resources/read of {uri} returned a blob that is not base64", origin=self.origin
                ) from None
            return ResourceContent(uri, mime, data, False, meta)
        raise ServerError(f"resources/read of {uri} returned neither text nor blob", origin=self.origin)

    # -- resources/directory/read -------------------------------------------------------------------------

    async def read_directory(self, uri: str, *, max_pages: int = DEFAULT_MAX_DIRECTORY_PAGES) -> list[DirectoryItem]:
        if not self.directory_read:
            raise ExtensionNotDeclared(
                "the server did not declare directoryRead: true; not sending resources/directory/read",
                origin=self.origin,
            )
        items: list[DirectoryItem] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(max_pages):
            result = await self._call(read_directory_request(uri, cursor), "resources/directory/read", uri)
            raw_items = result.get("resources")
            if not isinstance(raw_items, list):
                raise ServerError(f"directory read of {uri} has no 'resources' array", origin=self.origin)
            for raw in raw_items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    raise ServerError(f"directory read of {uri} returned an item without a uri", origin=self.origin)
                mime = raw.get("mimeType")
                size = raw.get("size")
                items.append(
                    DirectoryItem(
                        raw["uri"],
                        str(raw.get("name") or raw["uri"].rsplit("/", 1)[-1]),
                        mime if isinstance(mime, str) else None,
                        mime == "inode/directory",
                        size if isinstance(size, int) and not isinstance(size, bool) else None,
                        raw,
                    )
                )
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return items
            seen.add(next_cursor)
            cursor = next_cursor
        return items

"""A skills client that behaves as Claude Code 2.1.337's native SEP-2640 client does (issue 20 item 10, issue 36).

What it does, from the landscape update (`../shared/spec/landscape-2026-12-update.md`):

- connects with the official `mcp` SDK's `Client` and sends `server/discover` (falling back to `initialize` only
  when the server refuses it), declaring `io.modelcontextprotocol/skills: {}`
  among its client capabilities, which a 2026-07-28 connection carries in every request's `_meta`;
- refuses a connection below protocol 2026-07-28: no `skills/*` request is sent at all (`NativeRefused`), as
  "skills/list not sent: this connection is not known to use MCP protocol version 2026-07-28 or later";
- sends nothing `skills/*` unless the server declared the extension;
- walks `skills/list` with `{cursor}` until there is no `nextCursor`, `skills/get` by address,
  `resources/read` for files, and `resources/directory/read` only when the server declared
  `directoryRead: true`;
- verifies each file it reads against the entry's `digest` and `size`, and keys its approval on one
  `sha256:` value over the whole manifest, which changes when any file of the skill changes;
- since 2.1.337 (`../shared/spec/landscape-2026-12-07.md` section 3), as a host it lists under its limits
  (`list_as_host`: at most 100 skills, 20 pages and 512 KiB of entries per server and connection, then it stops
  with the rest pending) and adopts at most 100 more skills by address (`load_by_address`: `skills/get`) per
  server and session. The arithmetic is skillwire's own `core/host_limits.py`, the one `serve`'s warning and
  `check` use, so the three cannot disagree; what it is applied to (the wire, the entries' validity) is this
  client's own;
- refuses a 2026-07-28 result without `resultType`, and loads no skills from a server whose configured name
  (`native_client(name=)`, the host's own name for the server) holds `$`.

It deliberately does not use skillwire's own client (`skillwire.client`): it is a second, independent peer, so a
bug shared by skillwire's server and client cannot hide. Every JSON-RPC message it writes is recorded in `sent`
(from a wrapper around the SDK transport's write stream), so a test can hold the wire to the above.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import mcp_types
from mcp.client import Client, advertise
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import BaseModel, ConfigDict

from skillwire.core.host_limits import CLAUDE_CODE, HostLimits, ListingBudget, entry_size

EXTENSION = "io.modelcontextprotocol/skills"
NATIVE_VERSION = "2026-07-28"  # the oldest protocol the native client sends skills/* on
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
VERSION_META = "io.modelcontextprotocol/protocolVersion"
DISCOVER_SECONDS = 60
MAX_PAGES = 10_000  # a bound against a server whose cursors never end; far above any test catalog


class NativeRefused(Exception):
    """The native client will not use this server's skills (and sent no `skills/*` request)."""


class VerificationFailed(Exception):
    """Bytes read do not match the entry's digest or size."""


@dataclass
class HostListing:
    """What the host keeps of one server's listing: the entries (in order), the pages read, and, when it stopped
    with entries pending, by which limit (`ListingBudget.stopped`) and its words."""

    entries: list[dict[str, Any]]
    pages: int
    stopped: str | None
    why: str
    invalid: int = 0  # entries the host skipped as unusable (not counted against its limits)

    @property
    def uris(self) -> list[str]:
        return [entry["uri"] for entry in self.entries]


def usable_entry(entry: object) -> bool:
    """The host's own shape check of a listed entry (what it counts as a "valid entry"): a string `uri`, a
    frontmatter object with string `name` and `description`, and `resources` an array or `"dynamic"`."""
    if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
        return False
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, dict):
        return False
    if not (isinstance(frontmatter.get("name"), str) and isinstance(frontmatter.get("description"), str)):
        return False
    resources = entry.get("resources")
    return resources == "dynamic" or isinstance(resources, list)


class _Raw(mcp_types.Request[dict[str, Any] | None, str]):
    """A request sent as written: the SDK has no typed `skills/*` requests."""


class _RawResult(BaseModel):
    model_config = ConfigDict(extra="allow")


class _RecordingWrite:
    """The SDK transport's write stream, recording every JSON-RPC message written to the server."""

    def __init__(self, inner: Any, sent: list[dict[str, Any]]) -> None:
        self.inner = inner
        self.sent = sent

    async def send(self, item: SessionMessage, /) -> None:
        self.sent.append(item.message.model_dump(by_alias=True, mode="json", exclude_none=True))
        await self.inner.send(item)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _RecordingWrite:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class _RecordingTransport:
    """Wraps an SDK transport (stdio or Streamable HTTP) so that what the client writes is recorded."""

    def __init__(self, inner: Any, sent: list[dict[str, Any]]) -> None:
        self.inner = inner
        self.sent = sent

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self.inner.__aenter__()
        return read, _RecordingWrite(write, self.sent)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return bool(await self.inner.__aexit__(exc_type, exc, tb))


def manifest_key(entry: dict[str, Any]) -> str:
    """The `sha256:` approval key over the whole manifest: changes when any file (uri, digest or size) does."""
    files = sorted((r["uri"], r["digest"], r["size"]) for r in entry["resources"])
    return "sha256:" + hashlib.sha256(json.dumps([entry["uri"], files]).encode()).hexdigest()


@dataclass
class NativeClient:
    """One connected native client (see the module docstring); made by `native_client`."""

    client: Client
    sent: list[dict[str, Any]] = field(default_factory=list)
    name: str = "sw"  # the host's configured name for this server
    limits: HostLimits = CLAUDE_CODE
    kept: set[str] = field(default_factory=set)  # the URIs list_as_host kept
    by_address: set[str] = field(default_factory=set)  # skills adopted by address this session

    @property
    def protocol_version(self) -> str:
        return self.client.protocol_version

    @property
    def settings(self) -> dict[str, Any] | None:
        value = (self.client.server_capabilities.extensions or {}).get(EXTENSION)
        return value if isinstance(value, dict) else None

    @property
    def directory_read(self) -> bool:
        return bool(self.settings and self.settings.get("directoryRead") is True)

    def methods_sent(self) -> list[str]:
        return [str(message["method"]) for message in self.sent if "method" in message]

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.client.session.send_request(_Raw(method=method, params=params), _RawResult)
        return result.model_dump()

    def _require_skills(self, method: str) -> None:
        if "$" in self.name:
            raise NativeRefused(f"{method} not sent: no skills are loaded from a server whose name holds '$'")
        if self.protocol_version < NATIVE_VERSION:  # ISO dates compare as text
            raise NativeRefused(
                f"{method} not sent: this connection is not known to use MCP protocol version "
                f"{NATIVE_VERSION} or later (it uses {self.protocol_version})"
            )
        if self.settings is None:
            raise NativeRefused(f"{method} not sent: the server did not declare {EXTENSION}")

    async def list_skills(self) -> tuple[list[dict[str, Any]], int]:
        """Every `skills/list` entry, walking `{cursor}` to the end, and the number of pages."""
        self._require_skills("skills/list")
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, MAX_PAGES + 1):
            result = self._complete("skills/list", await self.request("skills/list", _cursor(cursor)))
            assert isinstance(result.get("ttlMs"), int)
            assert result.get("cacheScope") in ("public", "private")
            entries += result["skills"]
            cursor = result.get("nextCursor")
            if not cursor:
                return entries, page
            assert cursor not in seen, f"cursor repeated on page {page}"
            seen.add(cursor)
        raise AssertionError(f"skills/list did not end within {MAX_PAGES} pages")

    async def get_skill(self, uri: str) -> dict[str, Any]:
        """`skills/get` by address: the entry of one SKILL.md URI."""
        self._require_skills("skills/get")
        result = self._complete("skills/get", await self.request("skills/get", {"uri": uri}))
        assert "nextCursor" not in result
        skill = result["skill"]
        assert isinstance(skill, dict)
        return skill

    def _complete(self, method: str, result: dict[str, Any]) -> dict[str, Any]:
        """A 2026-07-28 result, refused (`NativeRefused`) without `resultType`, as the host refuses it."""
        if "resultType" not in result:
            raise NativeRefused(f"{method}: the 2026-07-28 result has no resultType; refused")
        assert result["resultType"] == "complete", result["resultType"]
        return result

    async def list_as_host(self) -> HostListing:
        """`skills/list` as the host walks it: page by page under `limits`, through `core/host_limits`'
        `ListingBudget` (a page only while it may keep more, each usable entry measured by `entry_size`), stopping
        with the rest pending. The kept URIs are remembered: loading one of them is not a load by address."""
        self._require_skills("skills/list")
        budget = ListingBudget(self.limits)
        kept: list[dict[str, Any]] = []
        invalid = 0
        cursor: str | None = None
        seen: set[str] = set()
        while budget.page():
            result = self._complete("skills/list", await self.request("skills/list", _cursor(cursor)))
            for entry in result["skills"]:
                if not usable_entry(entry):
                    invalid += 1
                elif budget.admit(entry_size(entry)):
                    kept.append(entry)
                else:
                    break
            cursor = result.get("nextCursor")
            if not cursor or budget.stopped is not None:
                break
            assert cursor not in seen, "cursor repeated"
            seen.add(cursor)
        self.kept.update(entry["uri"] for entry in kept)
        return HostListing(kept, budget.pages, budget.stopped, budget.why(), invalid)

    async def load_by_address(self, uri: str) -> tuple[dict[str, Any], bytes]:
        """The host's Skill tool given an address: a skill it did not list is adopted with `skills/get` (at most
        `limits.by_address` per server and session, then refused in the host's words), and its SKILL.md is read
        and verified against the entry. Returns the entry and the SKILL.md's bytes."""
        self._require_skills("skills/get")
        if uri not in self.kept and uri not in self.by_address and len(self.by_address) >= self.limits.by_address:
            raise NativeRefused(
                f"this session already found {self.limits.by_address} skills on that server by address, "
                "the most it keeps"
            )
        entry = await self.get_skill(uri)
        if uri not in self.kept:
            self.by_address.add(uri)
        return entry, await self.read_verified(uri, entry)

    async def read(self, uri: str) -> tuple[bytes, dict[str, Any]]:
        """One `resources/read`: the bytes of its one content block for `uri`, and the block."""
        result = await self.client.read_resource(uri)
        blocks = [block for block in result.contents if str(block.uri) == uri]
        assert len(blocks) == 1, f"{len(blocks)} content blocks for {uri}"
        block = blocks[0]
        if isinstance(block, mcp_types.TextResourceContents):
            return block.text.encode(), block.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert isinstance(block, mcp_types.BlobResourceContents)
        return base64.b64decode(block.blob), block.model_dump(by_alias=True, mode="json", exclude_none=True)

    async def read_verified(self, uri: str, entry: dict[str, Any]) -> bytes:
        """A file of `entry`, refused unless listed, and checked against its size and digest."""
        listed = {r["uri"]: r for r in entry["resources"]}
        if uri not in listed:
            raise VerificationFailed(f"{uri} is not in the manifest of {entry['uri']}")
        data, _ = await self.read(uri)
        want = listed[uri]
        if len(data) != want["size"]:
            raise VerificationFailed(f"{uri}: {len(data)} bytes read, {want['size']} listed")
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if digest != want["digest"]:
            raise VerificationFailed(f"{uri}: read {digest}, listed {want['digest']}")
        return data

    async def read_directory(self, uri: str) -> list[dict[str, Any]]:
        """Every child of a directory, all pages; refused unless the server declared `directoryRead: true`."""
        self._require_skills("resources/directory/read")
        if not self.directory_read:
            raise NativeRefused("resources/directory/read not sent: the server did not declare directoryRead: true")
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"uri": uri}
            if cursor is not None:
                params["cursor"] = cursor
            result = await self.request("resources/directory/read", params)
            assert result.get("resultType") == "complete", result.get("resultType")
            items += result["resources"]
            cursor = result.get("nextCursor")
            if not cursor:
                return items
        raise AssertionError(f"resources/directory/read of {uri} did not end")

    async def resource_uris(self) -> list[str]:
        """Every URI of `resources/list`, all pages: what Claude Code's generic resource tool offers a model."""
        uris: list[str] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self.client.list_resources(cursor=cursor)
            uris += [str(resource.uri) for resource in page.resources]
            cursor = page.next_cursor
            if not cursor:
                return uris
        raise AssertionError("resources/list did not end")


def _cursor(cursor: str | None) -> dict[str, Any]:
    return {"cursor": cursor} if cursor is not None else {}


@asynccontextmanager
async def native_client(
    *,
    url: str | None = None,
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
    name: str = "sw",
    limits: HostLimits = CLAUDE_CODE,
    token: str | None = None,
) -> AsyncIterator[NativeClient]:
    """A connected native client over Streamable HTTP (`url`) or stdio (`command`): give exactly one. `name` is
    the host's configured name for the server (a `$` in it: no skills); `limits` its listing limits; `token` a
    bearer token sent with every HTTP request (the host's configured header)."""
    assert (url is None) != (command is None)
    sent: list[dict[str, Any]] = []
    stack = AsyncExitStack()
    if url is not None:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else None
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        inner: Any = streamable_http_client(url, http_client=http)
    else:
        assert command is not None
        from mcp.client.stdio import stdio_client

        inner = stdio_client(StdioServerParameters(command=command[0], args=list(command[1:]), env=env))
    # Pinned to 2026-07-28 so that entering sends nothing; the `server/discover` is ours, with a deadline of
    # DISCOVER_SECONDS: the SDK's own probe gives up after 10 s, which a spawned stdio server can take just to
    # start on a loaded machine, and its fallback (`initialize`) is not what a native host sends.
    client = Client(
        _RecordingTransport(inner, sent),
        mode=NATIVE_VERSION,
        extensions=[advertise(EXTENSION, {})],
        client_info=mcp_types.Implementation(name="native-test-client", version="2.1.337"),
        cache=None,  # every call reaches the server: the test holds the server's answers, not a cache's
        read_timeout_seconds=60,
    )
    async with stack, client:
        session = client.session
        try:
            discovered = await session.send_request(
                mcp_types.DiscoverRequest(params=mcp_types.RequestParams()),
                mcp_types.DiscoverResult,
                request_read_timeout_seconds=DISCOVER_SECONDS,
            )
        except MCPError:
            # A server of an older era: the connection is made the old way (a native host still uses its
            # tools and resources), and `skills/*` is never sent on it.
            await session.initialize()
        else:
            session.adopt(discovered)
        yield NativeClient(client, sent, name=name, limits=limits)

"""Step 3 of the audit: `skills/get` of every listed skill, every listed file read once and verified,
`resources/list` against the manifests, and the error codes for what cannot exist.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, cast

import anyio
from mcp_types import (
    ListResourcesRequest,
    PaginatedRequestParams,
    ReadResourceRequest,
    ReadResourceRequestParams,
)
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

from skillwire.checks.audit.listing import ListingChecks
from skillwire.checks.audit.records import (
    FileRead,
    Item,
    Reply,
    SkillRecord,
    _cache_problems,
    _canon,
    _examples,
    _result_type_problem,
    _show,
)
from skillwire.checks.audit.rules import _GET_NOT_IMPLEMENTED, NONEXISTENT, SERVER
from skillwire.checks.audit.state import AuditState
from skillwire.client.requests import get_skill_request
from skillwire.core.content import BadBlock, block_body
from skillwire.core.errors import InvalidSkillURI, SizeMismatch
from skillwire.core.json import JSONValue, js_equal
from skillwire.core.protocol import DIRECTORY_MIME_TYPE
from skillwire.core.uri import SKILL_MD, format_uri, parse_uri
from skillwire.core.verify import file_mismatches, skill_md_mismatch


class ReadChecks:
    """Step 3: `skills/get` of every skill, one `resources/read` of every file, `resources/list`, error codes.
    A `skills/get` result's entry is checked as the listing checks one (`listing.check_entry`)."""

    def __init__(self, state: AuditState, listing: ListingChecks) -> None:
        self.state = state
        self.listing = listing

    def check_gets(self, skills: list[SkillRecord], replies: Mapping[str, Reply]) -> None:
        envelope: dict[tuple[str, str], list[str]] = defaultdict(list)
        for skill in skills:
            reply = replies[skill.canon]
            if reply.result is None:
                if reply.code == METHOD_NOT_FOUND:
                    self.state.add("cap.get-not-implemented", SERVER, _GET_NOT_IMPLEMENTED)
                else:
                    self.state.add(
                        "get.error",
                        skill.label,
                        f"skills/get of this listed skill answered {reply.describe_error()}; it must answer for "
                        "every served skill",
                    )
                continue
            result = reply.result
            problem = _result_type_problem(result)
            if problem:
                envelope[("get.result-type", problem)].append(skill.label)
            for suffix, detail in _cache_problems(result):
                envelope[(f"get.{suffix}", detail)].append(skill.label)
            if "nextCursor" in result:
                envelope[("get.cursor-present", f"the result has nextCursor {_show(result['nextCursor'])}")].append(
                    skill.label
                )
            entry = result.get("skill")
            if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
                self.state.add(
                    "get.entry-invalid",
                    skill.label,
                    f"skills/get result has no 'skill' entry with a uri (got {_show(entry)})",
                )
                continue
            got = cast(dict[str, Any], entry)
            if _canon(got["uri"]) != skill.canon:
                self.state.add(
                    "get.uri-mismatch",
                    skill.label,
                    f"skills/get of {skill.label} answered with the entry of {got['uri']}",
                )
                continue
            difference = _entry_difference(skill.raw, got)
            if difference:
                self.state.add(
                    "get.entry-differs",
                    skill.label,
                    f"skills/get returned a different entry than skills/list: {difference}",
                )
                self.listing.check_entry(got, skill.label, context="skills/get: ")
        for (rule, detail), labels in envelope.items():
            if len(labels) == 1:
                self.state.add(rule, labels[0], f"skills/get: {detail}")
            else:
                self.state.add(
                    rule, SERVER, f"skills/get of {len(labels)} skills: {detail} (e.g. {_examples(sorted(labels), 2)})"
                )

    async def probe_unknown_skill(self) -> None:
        uri = f"skill://{NONEXISTENT}-{self.state.nonce}/{SKILL_MD}"
        reply = await self.state.request(get_skill_request(uri))
        if reply.code == INVALID_PARAMS:
            return
        if reply.code == METHOD_NOT_FOUND:
            self.state.add("cap.get-not-implemented", SERVER, _GET_NOT_IMPLEMENTED)
            return
        got = "an entry" if reply.result is not None else reply.describe_error()
        self.state.add(
            "get.unknown-uri-error-code",
            SERVER,
            f"skills/get of a skill URI that cannot exist answered {got}; it must be error -32602",
            uri,
        )

    async def probe_unknown_files(self, first: SkillRecord | None) -> None:
        missing = f"skill://{NONEXISTENT}-{self.state.nonce}/{SKILL_MD}"
        targets = [(missing, "a SKILL.md URI of a skill that cannot exist")]
        if first is not None and first.path is not None:
            name = f"{NONEXISTENT}-{self.state.nonce}.md"
            targets.append(
                (format_uri(first.path.scheme, (*first.path.segments, name)), f"a missing file in {first.label}")
            )

        async def probe(uri: str, what: str) -> None:
            reply = await self.state.request(_read_request(uri))
            if reply.code == INVALID_PARAMS:
                return
            if reply.result is not None:
                contents = reply.result.get("contents")
                got = "with empty contents" if not contents else "with content"
            else:
                got = reply.describe_error()
            self.state.add(
                "read.unknown-uri-error-code",
                SERVER,
                f"resources/read of {what} answered {got}; an unserved URI must get error -32602",
                uri,
            )

        async with anyio.create_task_group() as group:
            for uri, what in targets:
                group.start_soon(probe, uri, what)

    # resources/read ------------------------------------------------------------------------------------------

    def check_file(self, uri: str, reply: Reply, owners: list[tuple[SkillRecord, Item | None]]) -> None:
        read = _decode_read(uri, reply)
        if read.data is None:
            rule, detail = read.failure or ("file.read-error", "no content")
            for skill, _ in owners:
                self.state.add(rule, skill.label, f"{uri}: {detail}", uri)
            return
        data = read.data
        for skill, item in owners:
            mismatches = file_mismatches(uri, item.size, item.digest, data) if item is not None else []
            for mismatch in mismatches:
                if isinstance(mismatch, SizeMismatch):
                    message = f"{uri}: the manifest says {mismatch.expected} bytes, {mismatch.actual} bytes were served"
                    self.state.add("file.size-mismatch", skill.label, message, uri)
                else:
                    message = (
                        f"{uri}: the manifest says {mismatch.expected}, the bytes served hash to {mismatch.actual}"
                    )
                    self.state.add("file.digest-mismatch", skill.label, message, uri)
            if _canon(uri) == skill.canon:
                self._check_skill_md(skill, uri, read)

    def _check_skill_md(self, skill: SkillRecord, uri: str, read: FileRead) -> None:
        assert read.data is not None
        if not read.is_text:
            self.state.add("file.skill-md-not-text", skill.label, f"{uri} is served as a base64 blob, not text", uri)
        if read.mime_type != "text/markdown":
            self.state.add(
                "file.skill-md-mime-type",
                skill.label,
                f"{uri} is served with mimeType {_show(read.mime_type)}; SKILL.md should be text/markdown",
                uri,
            )
        _, mismatch = skill_md_mismatch(cast(dict[str, JSONValue], skill.frontmatter or {}), read.data)
        if mismatch is not None and mismatch.parse_error is not None:
            self.state.add("file.frontmatter-invalid", skill.label, f"{uri}: {mismatch.parse_error}", uri)
        elif mismatch is not None and skill.frontmatter is not None:
            self.state.add(
                "file.frontmatter-mismatch",
                skill.label,
                f"the entry's frontmatter differs from {uri} (read as YAML 1.2): " + "; ".join(mismatch.details),
                uri,
            )

    # resources/list ------------------------------------------------------------------------------------------

    async def check_resources_list(self) -> None:
        if not isinstance(self.state.capabilities.get("resources"), dict):
            return
        roots = self.state.roots()
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, self.state.max_pages + 1):
            self.state.expect(1)
            reply = await self.state.request(ListResourcesRequest(params=PaginatedRequestParams(cursor=cursor)))
            if reply.result is None:
                self.state.add(
                    "resources.list-error",
                    SERVER,
                    f"resources/list page {page} answered {reply.describe_error()}; manifests were not compared "
                    "with it",
                )
                return
            items = reply.result.get("resources")
            if not isinstance(items, list):
                self.state.add("resources.list-error", SERVER, f"resources/list page {page} has no 'resources' array")
                return
            for raw in items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    continue
                if raw.get("mimeType") == DIRECTORY_MIME_TYPE:
                    continue
                uri = cast(str, raw["uri"])
                try:
                    parsed = parse_uri(uri)
                except InvalidSkillURI:
                    continue
                canon = str(parsed)
                for skill in self.state.ancestors(parsed, roots):
                    if (
                        skill.items is not None
                        and canon not in skill.item_canons()
                        and canon != skill.canon
                        and not self.state.reported(skill.label, canon)
                    ):
                        self.state.add(
                            "resources.unlisted-file",
                            skill.label,
                            f"resources/list advertises {uri}, inside this skill's root, but the manifest does not "
                            "list it; a manifest must list every file served under the skill (a host holding the "
                            "entry must treat reading it as an unlisted-file verification failure)",
                            uri,
                        )
            next_cursor = reply.result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return
            seen.add(next_cursor)
            cursor = next_cursor

    # resources/directory/read ----------------------------------------------------------------------------------


def _read_request(uri: str) -> ReadResourceRequest:
    return ReadResourceRequest(params=ReadResourceRequestParams(uri=uri))


def _decode_read(uri: str, reply: Reply) -> FileRead:
    if reply.result is None:
        return FileRead(failure=("file.read-error", f"resources/read answered {reply.describe_error()}"))
    contents = reply.result.get("contents")
    if not isinstance(contents, list):
        return FileRead(failure=("file.contents-invalid", "the resources/read result has no 'contents' array"))
    canon = _canon(uri)
    blocks = [
        b for b in contents if isinstance(b, dict) and isinstance(b.get("uri"), str) and _canon(b["uri"]) == canon
    ]
    if len(blocks) != 1:
        others = [str(b.get("uri")) for b in contents if isinstance(b, dict)]
        detail = (
            f"resources/read returned {len(blocks)} content blocks for this URI (expected 1)"
            if blocks
            else "resources/read returned no content block for this URI"
            + (f" (blocks for {_examples(others, 2)})" if others else "")
        )
        return FileRead(failure=("file.contents-invalid", detail))
    block = cast(dict[str, Any], blocks[0])
    mime = block.get("mimeType")
    mime_type = mime if isinstance(mime, str) else None
    body = block_body(block.get("text"), block.get("blob"))
    if isinstance(body, BadBlock):
        return FileRead(failure=("file.contents-invalid", f"the content block has {body.value}"))
    return FileRead(body.data, body.is_text, mime_type)


def _entry_difference(listed: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    """How `got` (skills/get) differs from `listed` (skills/list), or "" when they are the same entry."""

    def resources(entry: Mapping[str, Any]) -> object:
        value = entry.get("resources", "<missing>")
        if isinstance(value, list):
            return sorted(json.dumps(v, sort_keys=True) for v in value)
        return value

    parts: list[str] = []
    fm_a, fm_b = listed.get("frontmatter"), got.get("frontmatter")
    if not js_equal(fm_a, fm_b):
        if isinstance(fm_a, dict) and isinstance(fm_b, dict):
            # JavaScript's JSON equality (core/json), as everywhere frontmatter is compared: `1` is not `true`.
            keys = sorted(
                k for k in {*fm_a, *fm_b} if (k in fm_a) != (k in fm_b) or not js_equal(fm_a.get(k), fm_b.get(k))
            )
            parts.append("frontmatter field(s) " + ", ".join(keys) + " differ")
        else:
            parts.append("the frontmatter differs")
    ra, rb = listed.get("resources", "<missing>"), got.get("resources", "<missing>")
    if resources(listed) != resources(got):
        if isinstance(ra, list) and isinstance(rb, list):

            def index(items: list[object]) -> dict[str, str]:
                return {str(i.get("uri")): json.dumps(i, sort_keys=True) for i in items if isinstance(i, dict)}

            a, b = index(cast(list[object], ra)), index(cast(list[object], rb))
            added = sorted(b.keys() - a.keys())
            removed = sorted(a.keys() - b.keys())
            changed = sorted(u for u in a.keys() & b.keys() if a[u] != b[u])
            for word, uris in (("added", added), ("removed", removed), ("changed", changed)):
                if uris:
                    parts.append(f"{word} {_examples(uris)}")
            if not parts:
                parts.append("the resources arrays differ")
        else:
            parts.append(f"resources is {_show(rb, 30)} instead of {_show(ra, 30)}")
    other = sorted(k for k in {*listed, *got} - {"frontmatter", "resources"} if listed.get(k) != got.get(k))
    if other:
        parts.append("field(s) " + ", ".join(other) + " differ")
    return "; ".join(parts)

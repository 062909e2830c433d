"""Step 4 of the audit (with `directoryRead: true`): every skill root and every directory the manifest
implies read with `resources/directory/read` and compared child by child with the manifest.
"""

from __future__ import annotations

from collections import defaultdict

import anyio
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

from skillwire.checks.audit.records import DirRead, SkillRecord, _canon, _examples, _plural, _result_type_problem, _show
from skillwire.checks.audit.rules import _DIRECTORY_READ_NOT_IMPLEMENTED, NONEXISTENT, SERVER
from skillwire.checks.audit.state import AuditState
from skillwire.client.requests import read_directory_request
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.protocol import DIRECTORY_MIME_TYPE
from skillwire.core.uri import format_uri, parse_uri


class DirectoryChecks:
    """Step 4: `resources/directory/read` of every directory the manifests imply, child by child."""

    def __init__(self, state: AuditState) -> None:
        self.state = state

    async def _read_directory(self, uri: str) -> DirRead:
        out = DirRead(children={})
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, self.state.max_pages + 1):
            if page > 1:
                self.state.expect(1)
            reply = await self.state.request(read_directory_request(uri, cursor))
            if reply.result is None:
                return DirRead(reply=reply)
            result = reply.result
            out.result_type = out.result_type or _result_type_problem(result)
            items = result.get("resources")
            if not isinstance(items, list):
                out.invalid = f"the result has no 'resources' array (got {_show(items)})"
                return out
            assert out.children is not None
            for raw in items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    out.invalid = f"an item has no uri string (got {_show(raw)})"
                    continue
                mime = raw.get("mimeType")
                out.children[_canon(raw["uri"])] = (raw["uri"], mime if isinstance(mime, str) else None)
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                return out
            if next_cursor in seen:
                out.repeated_cursor = True
                return out
            seen.add(next_cursor)
            cursor = next_cursor
        return out

    async def check_directories(self, first: SkillRecord | None) -> None:
        # What each skill's manifest implies: directory -> {child: is_directory}.
        expected: dict[str, dict[str, dict[str, bool]]] = {}
        for skill in self.state.skills.values():
            if skill.path is None or skill.items is None:
                continue
            root = skill.path.root
            dirs: dict[str, dict[str, bool]] = {str(root): {}}
            for item in skill.items:
                try:
                    rel = parse_uri(item.canon).relative_to(root)
                except InvalidSkillURI:
                    continue
                if not rel:
                    continue
                for depth in range(len(rel)):
                    parent = format_uri(root.scheme, root.segments + rel[:depth])
                    child = format_uri(root.scheme, root.segments + rel[: depth + 1])
                    dirs.setdefault(parent, {})[child] = depth < len(rel) - 1
            expected[skill.canon] = dirs
        cache: dict[str, DirRead] = {}
        todo: dict[str, set[str]] = {canon: set(dirs) for canon, dirs in expected.items()}
        extra_budget = self.state.max_extra_directories
        async with anyio.create_task_group() as group:
            group.start_soon(self._probe_directory_errors, first)
            while todo:
                wanted = sorted({d for dirs in todo.values() for d in dirs} - cache.keys())
                self.state.expect(len(wanted))
                results: dict[str, DirRead] = {}

                async def read(uri: str, into: dict[str, DirRead] = results) -> None:
                    into[uri] = await self._read_directory(uri)

                async with anyio.create_task_group() as reads:
                    for uri in wanted:
                        reads.start_soon(read, uri)
                cache.update(results)
                self.state.stats.directories_read = len(cache)
                if any(r.reply is not None and r.reply.code == METHOD_NOT_FOUND for r in cache.values()):
                    self.state.add("cap.directory-read-not-implemented", SERVER, _DIRECTORY_READ_NOT_IMPLEMENTED)
                    return
                follow: dict[str, set[str]] = {}
                for canon in sorted(todo):
                    skill = self.state.skills[canon]
                    for directory in sorted(todo[canon]):
                        implied = expected[canon].get(directory)
                        for child in self._compare_directory(skill, directory, implied, cache[directory]):
                            if extra_budget > 0 and child not in expected[canon]:
                                extra_budget -= 1
                                expected[canon][child] = {}
                                follow.setdefault(canon, set()).add(child)
                todo = follow
        result_types: dict[str, list[str]] = defaultdict(list)
        for uri, outcome in cache.items():
            if outcome.result_type:
                result_types[outcome.result_type].append(uri)
        for detail, uris in result_types.items():
            self.state.add(
                "dir.result-type",
                SERVER,
                f"resources/directory/read of {_plural(len(uris), 'directory')}: {detail} "
                f"(e.g. {_examples(sorted(uris), 2)})",
            )

    def _compare_directory(
        self, skill: SkillRecord, directory: str, implied: dict[str, bool] | None, outcome: DirRead
    ) -> list[str]:
        """Findings for one directory of one skill; returns unexpected subdirectories to look into."""
        label = skill.label
        if outcome.reply is not None:
            self.state.add(
                "dir.error",
                label,
                f"resources/directory/read of {directory} answered {outcome.reply.describe_error()}",
                directory,
            )
            return []
        if outcome.invalid:
            self.state.add(
                "dir.result-invalid", label, f"resources/directory/read of {directory}: {outcome.invalid}", directory
            )
        if outcome.repeated_cursor:
            self.state.add(
                "dir.cursor-repeated",
                label,
                f"resources/directory/read of {directory} repeated a nextCursor; paging stopped",
                directory,
            )
        children = outcome.children or {}
        implied = implied or {}
        parent = parse_uri(directory)
        follow: list[str] = []
        for child, is_dir in sorted(implied.items()):
            if child not in children:
                kind = "directory" if is_dir else "file"
                self.state.add(
                    "dir.missing-child",
                    label,
                    f"resources/directory/read of {directory} does not list {child}, a {kind} in the manifest",
                    child,
                )
                continue
            mime = children[child][1]
            if is_dir and mime != DIRECTORY_MIME_TYPE:
                self.state.add(
                    "dir.mime-type",
                    label,
                    f"resources/directory/read of {directory} lists {child} with mimeType {_show(mime)}; the "
                    f"manifest has files below it, so it is a directory ({DIRECTORY_MIME_TYPE})",
                    child,
                )
            elif not is_dir and mime == DIRECTORY_MIME_TYPE:
                self.state.add(
                    "dir.mime-type",
                    label,
                    f"resources/directory/read of {directory} lists {child} as a directory; the manifest lists it "
                    "as a file",
                    child,
                )
        for child, (raw_uri, mime) in sorted(children.items()):
            if child in implied:
                continue
            try:
                parsed = parse_uri(child)
            except InvalidSkillURI:
                parsed = None
            if parsed is None or parsed.relative_to(parent) is None or len(parsed.segments) != len(parent.segments) + 1:
                self.state.add(
                    "dir.not-direct-child",
                    label,
                    f"resources/directory/read of {directory} lists {raw_uri}, which is not a direct child",
                    raw_uri,
                )
            elif mime == DIRECTORY_MIME_TYPE:
                follow.append(child)
            elif not self.state.reported(label, child):
                self.state.add(
                    "dir.unlisted-child",
                    label,
                    f"resources/directory/read of {directory} lists {raw_uri}, which the manifest does not list "
                    "(a manifest must list every file of the skill)",
                    raw_uri,
                )
        return follow

    async def _probe_directory_errors(self, first: SkillRecord | None) -> None:
        missing = f"skill://{NONEXISTENT}-{self.state.nonce}"
        targets = [(missing, "dir.unknown-uri-error-code", "a directory URI that cannot exist")]
        if first is not None:
            targets.append((first.label, "dir.file-uri-error-code", f"the file {first.label}"))
        self.state.expect(len(targets))

        async def probe(uri: str, rule: str, what: str) -> None:
            reply = await self.state.request(read_directory_request(uri))
            if reply.code == INVALID_PARAMS:
                return
            if reply.code == METHOD_NOT_FOUND:
                self.state.add("cap.directory-read-not-implemented", SERVER, _DIRECTORY_READ_NOT_IMPLEMENTED)
                return
            got = "with a listing" if reply.result is not None else reply.describe_error()
            self.state.add(
                rule,
                SERVER,
                f"resources/directory/read of {what} answered {got}; it must be error -32602",
                uri,
            )

        async with anyio.create_task_group() as group:
            for uri, rule, what in targets:
                group.start_soon(probe, uri, rule, what)

"""Steps 1 and 2 of the audit: capabilities, the `skills/list` walk, each entry's shape, nesting and
names.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, cast

from mcp_types.jsonrpc import METHOD_NOT_FOUND

from skillwire.checks.audit.records import (
    Item,
    SkillRecord,
    _cache_problems,
    _canon,
    _examples,
    _ignored_segment,
    _pages,
    _result_type_problem,
    _show,
)
from skillwire.checks.audit.rules import _ITEM_DROPPED, ENTRY_RULES, ENVELOPE_KEYS, SERVER, _problem_uri
from skillwire.checks.audit.state import AuditState
from skillwire.client.requests import list_skills_request
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.fields import Problem, entry_problems
from skillwire.core.fields import Rule as FieldRule
from skillwire.core.names import REG_NAME_RE
from skillwire.core.protocol import DIRECTORY_READ_SETTING, EXTENSION_ID
from skillwire.core.uri import SkillPath, authority_of, parse_uri


class ListingChecks:
    """Steps 1 and 2: the capability declaration, then every `skills/list` page and every entry on it."""

    def __init__(self, state: AuditState) -> None:
        self.state = state

    # -- 1. capabilities ---------------------------------------------------------------------------------------

    def check_capabilities(self) -> dict[str, Any] | None:
        extensions = self.state.capabilities.get("extensions")
        settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
        if not isinstance(settings, dict):
            declared = "" if settings is None else f" (it is {_show(settings)}, not a settings object)"
            self.state.add(
                "cap.extension-missing",
                SERVER,
                f"capabilities.extensions has no {EXTENSION_ID} settings object{declared}; nothing else can be checked",
            )
            return None
        envelope = [k for k in ENVELOPE_KEYS if k in settings]
        if envelope:
            self.state.add(
                "cap.settings-envelope",
                SERVER,
                f"the {EXTENSION_ID} settings carry envelope key(s) {', '.join(envelope)}; "
                'settings are declared inline ({} or {"directoryRead": true})',
            )
        if DIRECTORY_READ_SETTING in settings and not isinstance(settings[DIRECTORY_READ_SETTING], bool):
            self.state.add(
                "cap.directory-read-invalid",
                SERVER,
                f"directoryRead is {_show(settings[DIRECTORY_READ_SETTING])}, not a boolean; treated as not declared",
            )
        self.state.stats.directory_read = settings.get(DIRECTORY_READ_SETTING) is True
        if not isinstance(self.state.capabilities.get("resources"), dict):
            self.state.add(
                "cap.resources-missing",
                SERVER,
                "the server declares the skills extension but not the resources capability",
            )
        return cast(dict[str, Any], settings)

    # -- 2. skills/list ------------------------------------------------------------------------------------------

    async def walk_list(self) -> list[tuple[int, int, object]] | None:
        entries: list[tuple[int, int, object]] = []
        envelope: dict[tuple[str, str], list[int]] = defaultdict(list)
        cursor: str | None = None
        seen_cursors: set[str] = set()
        page = 0
        while True:
            page += 1
            self.state.expect(1)
            reply = await self.state.request(list_skills_request(cursor))
            if reply.result is None:
                if page == 1 and reply.code == METHOD_NOT_FOUND:
                    self.state.add(
                        "cap.list-not-implemented",
                        SERVER,
                        f"skills/list answered {reply.describe_error()}; declaring the extension means "
                        "skills/list and skills/get must be implemented",
                    )
                    return None
                self.state.add("list.error", SERVER, f"skills/list page {page} answered {reply.describe_error()}")
                if page == 1:
                    return None
                break
            result = reply.result
            self.state.stats.pages = page
            problem = _result_type_problem(result)
            if problem:
                envelope[("list.result-type", problem)].append(page)
            for suffix, detail in _cache_problems(result):
                envelope[(f"list.{suffix}", detail)].append(page)
            skills = result.get("skills")
            if not isinstance(skills, list):
                self.state.add(
                    "list.result-invalid",
                    SERVER,
                    f"skills/list page {page} has no 'skills' array (got {_show(skills)})",
                )
                if page == 1:
                    return None
                break
            entries.extend((page, index, raw) for index, raw in enumerate(cast(list[object], skills)))
            next_cursor = result.get("nextCursor")
            if next_cursor is None or next_cursor == "":
                break
            if not isinstance(next_cursor, str):
                self.state.add(
                    "list.cursor-invalid",
                    SERVER,
                    f"skills/list page {page} has nextCursor {_show(next_cursor)}, not a string; paging stopped",
                )
                break
            if next_cursor in seen_cursors:
                self.state.add(
                    "list.cursor-repeated",
                    SERVER,
                    f"skills/list page {page} returned a nextCursor it had already returned; paging stopped",
                )
                break
            if page >= self.state.max_pages:
                self.state.add(
                    "list.page-limit",
                    SERVER,
                    f"skills/list still had a nextCursor after {page} pages; only those were checked",
                )
                break
            seen_cursors.add(next_cursor)
            cursor = next_cursor
        for (rule, detail), pages in envelope.items():
            self.state.add(rule, SERVER, f"skills/list {_pages(pages)}: {detail}")
        return entries

    def check_listing(self, entries: list[tuple[int, int, object]]) -> None:
        fragments: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        for page, index, raw in entries:
            where = f"skills/list page {page} entry {index}"
            if not isinstance(raw, dict):
                self.state.add("list.entry-not-object", SERVER, f"{where} is {_show(raw)}, not an object")
                continue
            entry = cast(dict[str, Any], raw)
            uri = entry.get("uri")
            if not isinstance(uri, str) or not uri:
                self.state.add("entry.uri-missing", SERVER, f"{where} has no 'uri' string (got {_show(uri)})")
                continue
            fragments.setdefault(_canon(uri), []).append((page, index, entry))
        for parts in fragments.values():
            first = parts[0][2]
            label = cast(str, first["uri"])
            merged = dict(first)
            if len(parts) > 1:
                pages = [p for p, _, _ in parts]
                counts = [len(e["resources"]) if isinstance(e.get("resources"), list) else 0 for _, _, e in parts]
                if len(set(pages)) > 1:
                    self.state.add(
                        "list.split-entry",
                        label,
                        f"the entry appears {len(parts)} times, on {_pages(pages)} (with "
                        f"{' + '.join(map(str, counts))} resources items): an entry must never be split across "
                        "pages; the fragments were merged for the other checks",
                    )
                else:
                    self.state.add(
                        "list.duplicate-entry",
                        label,
                        f"the entry appears {len(parts)} times on {_pages(pages)}; the fragments were merged "
                        "for the other checks",
                    )
                if all(isinstance(e.get("resources"), list) for _, _, e in parts):
                    combined: list[object] = []
                    taken: set[str] = set()
                    for _, _, e in parts:
                        for item in e["resources"]:
                            key = json.dumps(item, sort_keys=True)
                            if key not in taken:
                                taken.add(key)
                                combined.append(item)
                    merged["resources"] = combined
            self.state.skills[_canon(label)] = self.check_entry(merged, label)
        self._check_nesting()
        self._check_names()

    def check_entry(self, entry: Mapping[str, Any], label: str, context: str = "") -> SkillRecord:
        """Validate one entry's shape; findings go on `label`; `context` prefixes messages (e.g. skills/get).

        The entry and field rules are `core.fields.entry_problems` (what a host refuses and a server
        does not publish); what is added here is advice about the URI and what the files are named.
        """
        record = SkillRecord(label, dict(entry))
        uri = cast(str, entry["uri"])
        problems = list(entry_problems(entry))
        resources = entry.get("resources")
        for problem in problems:
            rule = ENTRY_RULES[problem.rule]
            if rule is not None:
                self.state.add(rule, label, f"{context}{problem.message}", _problem_uri(problem, resources))
        try:
            path: SkillPath | None = SkillPath.from_skill_md_uri(uri)
        except InvalidSkillURI:
            path = None
        record.path = path
        if path is not None:
            if path.scheme != "skill":
                self.state.add(
                    "entry.scheme-not-skill", label, f"{context}uri uses {path.scheme}://; skill:// is recommended"
                )
            authority = authority_of(uri)
            if not REG_NAME_RE.match(authority):
                self.state.add(
                    "entry.authority-invalid",
                    label,
                    f"{context}uri authority {authority!r} is not an RFC 3986 reg-name",
                )
        frontmatter = entry.get("frontmatter")
        if isinstance(frontmatter, dict):
            record.frontmatter = cast(dict[str, Any], frontmatter)
        if resources == "dynamic":
            record.dynamic = True
        elif isinstance(resources, list):
            record.items = self._items(cast(list[object], resources), problems, label, path, context)
        return record

    def _items(
        self, resources: list[object], problems: list[Problem], label: str, path: SkillPath | None, context: str
    ) -> list[Item]:
        """The listed files the other checks compare against; an invalid digest or size is None."""
        dropped = {p.path[1] for p in problems if p.rule in _ITEM_DROPPED and len(p.path) > 1}
        bad_digest = {p.path[1] for p in problems if p.rule is FieldRule.DIGEST_INVALID}
        bad_size = {p.path[1] for p in problems if p.rule is FieldRule.SIZE_INVALID}
        items: list[Item] = []
        for index, raw in enumerate(resources):
            if index in dropped or not isinstance(raw, dict):
                continue
            obj = cast(dict[str, Any], raw)
            file_uri = cast(str, obj["uri"])
            hidden = _ignored_segment(path, file_uri)
            if hidden is not None:
                self.state.add(
                    "entry.dotfile",
                    label,
                    f"{context}resources[{index}] {file_uri} publishes {hidden!r}, a name skillwire serve never "
                    "publishes (secrets, repository or editor state); take it out of the skill",
                    file_uri,
                )
            digest = None if index in bad_digest else cast(str, obj["digest"])
            size = None if index in bad_size else cast(int, obj["size"])
            items.append(Item(file_uri, _canon(file_uri), digest, size))
        return items

    def _check_nesting(self) -> None:
        roots = self.state.roots()
        for inner in self.state.skills.values():
            if inner.path is None or inner.items is None:
                continue
            for outer in self.state.ancestors(inner.path.root, roots):
                if outer.items is None:
                    continue
                outer_files = outer.item_canons()
                inner_files = inner.item_canons()
                for item in inner.items:
                    if item.canon not in outer_files:
                        self.state.add(
                            "entry.nested-file-missing",
                            outer.label,
                            f"{item.uri} belongs to the nested skill {inner.label} but is missing from this "
                            "skill's resources (nested skills' files are listed in the enclosing skill too)",
                            item.uri,
                        )
                for item in outer.items:
                    try:
                        inside = parse_uri(item.canon).relative_to(inner.path.root)
                    except InvalidSkillURI:
                        inside = None
                    if inside and item.canon not in inner_files:
                        self.state.add(
                            "entry.inner-file-missing",
                            inner.label,
                            f"the enclosing skill {outer.label} lists {item.uri}, inside this skill, but this "
                            "skill's resources do not",
                            item.uri,
                        )

    def _check_names(self) -> None:
        by_name: dict[str, list[SkillRecord]] = defaultdict(list)
        for skill in self.state.skills.values():
            if skill.path is not None:
                by_name[skill.path.name].append(skill)
        for name, skills in by_name.items():
            if len(skills) > 1:
                for skill in skills:
                    others = [s.label for s in skills if s is not skill]
                    self.state.add(
                        "names.duplicate",
                        skill.label,
                        f"the name {name!r} is also used by {_examples(others)}; names should be unique",
                    )

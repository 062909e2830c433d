"""What the audit keeps while it runs: the stats and the result, one reply, one listed skill and
its items, one file read and one directory read, and the small formatting helpers every step uses.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from skillwire.catalog.filesystem import is_ignored_name
from skillwire.checks.findings import Finding, blocking
from skillwire.core.errors import InvalidSkillURI
from skillwire.core.host_limits import HostCut
from skillwire.core.uri import SkillPath, canonical_uri, parse_uri


@dataclass
class AuditStats:
    protocol_version: str | None = None
    directory_read: bool = False
    skills: int = 0
    pages: int = 0
    files_read: int = 0
    directories_read: int = 0
    requests: int = 0
    skill_uris: list[str] = field(default_factory=list)
    host: HostKeeps | None = None  # what a host with Claude Code's listing limits keeps of the listing


@dataclass(frozen=True)
class HostKeeps:
    """What a host with `cut.limits` keeps of the listing: `cut` (`core/host_limits.host_cut` over the valid
    entries, page by page), the valid entries' count and bytes in all, and the URIs of those it drops, in order
    (a host keeps a prefix of the listing)."""

    cut: HostCut
    listed: int
    listed_bytes: int
    dropped: list[str]


@dataclass
class AuditResult:
    findings: list[Finding]
    stats: AuditStats

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if blocking(f.severity)]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


# -- small helpers --------------------------------------------------------------------------------------------


def _canon(uri: str) -> str:
    try:
        return canonical_uri(uri)
    except InvalidSkillURI:
        return uri


def _show(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ignored_segment(path: SkillPath | None, file_uri: str) -> str | None:
    """The first segment of a listed file's path that is on serve's ignore list (`.env`, `.git`, ...)."""
    if path is None:
        return None
    try:
        relative = parse_uri(file_uri).relative_to(path.root) or ()
    except InvalidSkillURI:
        return None
    return next((part for part in relative if is_ignored_name(part)), None)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cache_problems(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(`ttl-invalid` | `cache-scope-invalid`, detail) for a result's cache attributes."""
    out: list[tuple[str, str]] = []
    if "ttlMs" not in result:
        out.append(("ttl-invalid", "ttlMs is missing"))
    elif not _is_int(result["ttlMs"]) or result["ttlMs"] < 0:
        out.append(("ttl-invalid", f"ttlMs is {_show(result['ttlMs'])}, not an integer >= 0"))
    if "cacheScope" not in result:
        out.append(("cache-scope-invalid", "cacheScope is missing"))
    elif result["cacheScope"] not in ("public", "private"):
        out.append(("cache-scope-invalid", f"cacheScope is {_show(result['cacheScope'])}, not 'public' or 'private'"))
    return out


def _result_type_problem(result: Mapping[str, Any]) -> str | None:
    if result.get("resultType") == "complete":
        return None
    if "resultType" not in result:
        return 'resultType is missing (must be "complete")'
    return f'resultType is {_show(result["resultType"])}, not "complete"'


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


def _examples(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _pages(numbers: Iterable[int]) -> str:
    ordered = [str(n) for n in sorted(set(numbers))]
    if len(ordered) == 1:
        return f"page {ordered[0]}"
    return "pages " + ", ".join(ordered[:-1]) + " and " + ordered[-1]


@dataclass(frozen=True)
class Reply:
    """What one request got: a result object, or a JSON-RPC error (or no answer)."""

    result: dict[str, Any] | None
    code: int | None = None
    error: str | None = None

    def describe_error(self) -> str:
        if self.code is None:
            return self.error or "no answer"
        return f"error {self.code} ({self.error})" if self.error else f"error {self.code}"


@dataclass(frozen=True)
class Item:
    """One `resources[]` item as listed; `digest`/`size` are None when the listed value is invalid."""

    uri: str
    canon: str
    digest: str | None
    size: int | None


@dataclass
class SkillRecord:
    label: str  # the entry's uri as listed: what findings name
    raw: dict[str, Any]  # the entry (fragments of a split entry merged)
    path: SkillPath | None = None
    frontmatter: dict[str, Any] | None = None
    items: list[Item] | None = None  # None: dynamic, or resources missing/invalid
    dynamic: bool = False

    @property
    def canon(self) -> str:
        return _canon(self.label)

    def item_canons(self) -> set[str]:
        return {i.canon for i in self.items or ()}


@dataclass
class FileRead:
    data: bytes | None = None
    is_text: bool = False
    mime_type: str | None = None
    failure: tuple[str, str] | None = None  # (rule, detail) when no bytes could be taken from the answer


@dataclass
class DirRead:
    children: dict[str, tuple[str, str | None]] | None = None  # canon -> (uri as sent, mimeType)
    reply: Reply | None = None  # the failing reply, when the read failed
    invalid: str | None = None  # why the result is not a valid directory listing
    result_type: str | None = None
    repeated_cursor: bool = False

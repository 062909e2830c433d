"""An immutable view of everything a server publishes, built once per scan and swapped atomically.

Every question a request can ask is answered here in O(log n + page): entries are kept sorted by URI
with a parallel key list for `bisect`, files are indexed by URI, and every directory (skill roots,
subdirectories, and the prefix directories above skills such as `skill://acme`) has its sorted
children precomputed. Nothing here touches the disk except `CatalogFile.read()`, which re-checks the
bytes against the digest that was published, so the bytes served are always the bytes hashed.
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import unquote

from skillwire.core.cursor import DEFAULT_CURSOR_SECRET, decode_cursor, encode_cursor
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SkillwireError
from skillwire.core.frontmatter import JSONValue
from skillwire.core.manifest import sha256_digest
from skillwire.core.uri import SKILL_MD, ParsedURI, SkillPath, parse_uri

META_PREFIX = "io.modelcontextprotocol.skills/"
DIRECTORY_MIME_TYPE = "inode/directory"


class FileChanged(SkillwireError):
    """A file's bytes on disk no longer match the digest this snapshot published."""


@dataclass(frozen=True, slots=True)
class DiskContent:
    """Bytes that live in a regular file (path is the resolved path inside a catalog root)."""

    path: str

    def read(self, expected_size: int) -> bytes:
        # O_NOFOLLOW: a file swapped for a symlink after the scan is refused, not followed.
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            with os.fdopen(fd, "rb", closefd=False) as handle:
                # One byte more than expected tells growth apart without reading a runaway file.
                return handle.read(expected_size + 1)
        finally:
            os.close(fd)


@dataclass(frozen=True, slots=True)
class MemoryContent:
    data: bytes

    def read(self, expected_size: int) -> bytes:
        return self.data


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """One served file: what the manifest says about it and where its bytes come from."""

    uri: str
    size: int
    digest: str
    mime_type: str
    is_text: bool
    content: DiskContent | MemoryContent

    def read(self) -> bytes:
        data = self.content.read(self.size)
        if len(data) != self.size or sha256_digest(data) != self.digest:
            raise FileChanged(f"{self.uri} changed since it was published; fetch the entry again")
        return data


DynamicReader = Callable[[str], "bytes | str | None"]


@dataclass(frozen=True)
class CatalogSkill:
    """A published skill: its entry and where it came from."""

    entry: SkillEntry
    source: str
    listed: bool = True
    dynamic_reader: DynamicReader | None = None

    @cached_property
    def wire(self) -> dict[str, Any]:
        # Built on first request, then kept: building it per request cost 0.6-0.9 ms a page (most of
        # a skills/list page), and skills never asked for cost no memory.
        return self.entry.to_wire()

    @property
    def uri(self) -> str:
        return self.entry.uri


@dataclass(frozen=True)
class SkippedSkill:
    """A folder that looked like a skill but is not served, and exactly why."""

    location: str
    reason: str


@dataclass(frozen=True, slots=True)
class DirectoryChild:
    name: str
    uri: str
    file: CatalogFile | None  # None for a subdirectory


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    next_cursor: str | None


def skill_md_resource(skill: CatalogSkill, file: CatalogFile | None) -> dict[str, Any]:
    """The `Resource` for a SKILL.md: name/description from the frontmatter, the rest in `_meta`."""
    fm = skill.entry.frontmatter
    resource: dict[str, Any] = {
        "uri": skill.uri,
        "name": skill.entry.name,
        "description": skill.entry.description,
        "mimeType": "text/markdown",
    }
    if file is not None:
        resource["size"] = file.size
    extra = {k: v for k, v in fm.items() if k not in ("name", "description")}
    if extra:
        resource["_meta"] = {META_PREFIX + "frontmatter": extra}
    return resource


def file_resource(name: str, file: CatalogFile) -> dict[str, Any]:
    return {"uri": file.uri, "name": name, "mimeType": file.mime_type, "size": file.size}


class CatalogSnapshot:
    """Immutable once built; share freely between concurrent requests."""

    def __init__(
        self,
        skills: Iterable[CatalogSkill],
        files: Iterable[CatalogFile],
        skipped: Sequence[SkippedSkill] = (),
        *,
        ignored: Sequence[tuple[str, str]] = (),
        cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
    ) -> None:
        self.cursor_secret = cursor_secret
        self.skipped: tuple[SkippedSkill, ...] = tuple(skipped)
        self.ignored: tuple[tuple[str, str], ...] = tuple(ignored)
        self.skill_by_uri: dict[str, CatalogSkill] = {}
        for skill in skills:
            self.skill_by_uri[skill.uri] = skill
        self.listed: list[CatalogSkill] = sorted(
            (s for s in self.skill_by_uri.values() if s.listed), key=lambda s: s.uri
        )
        self._listed_keys = [s.uri for s in self.listed]
        self.files: dict[str, CatalogFile] = {f.uri: f for f in files}
        self.dynamic_roots: dict[ParsedURI, CatalogSkill] = {
            s.entry.path.root: s for s in self.skill_by_uri.values() if s.entry.is_dynamic
        }
        self.schemes: frozenset[str] = frozenset(s.entry.path.scheme for s in self.skill_by_uri.values())
        self.directories: dict[str, list[DirectoryChild]] = self._build_directories()
        self._directory_keys = {uri: [c.name for c in kids] for uri, kids in self.directories.items()}

    # -- construction ---------------------------------------------------------------------------

    def _build_directories(self) -> dict[str, list[DirectoryChild]]:
        # Published URIs are canonical already, so directories are built from their text: splitting
        # on "/" gives encoded segments whose prefixes are the directory URIs (no re-encoding).
        children: dict[str, dict[str, DirectoryChild]] = {}

        def add_path(uri: str, file: CatalogFile | None) -> None:
            scheme_sep = uri.index("://") + 3
            cut = len(uri)
            is_leaf = True
            while True:
                slash = uri.rfind("/", scheme_sep, cut)
                if slash < 0:
                    return  # reached the authority: it has no parent directory
                parent, child_uri = uri[:slash], uri[:cut]
                name = unquote(child_uri[slash + 1 :])
                kids = children.setdefault(parent, {})
                if name in kids:
                    if is_leaf and file is not None:
                        kids[name] = DirectoryChild(name, child_uri, file)
                    return
                kids[name] = DirectoryChild(name, child_uri, file if is_leaf else None)
                cut, is_leaf = slash, False

        for file in self.files.values():
            add_path(file.uri, file)
        for skill in self.dynamic_roots.values():
            # A generated skill's root is browsable: it holds at least its SKILL.md.
            add_path(skill.uri, CatalogFile(skill.uri, 0, "", "text/markdown", True, MemoryContent(b"")))
        return {parent: sorted(kids.values(), key=lambda c: c.name) for parent, kids in children.items()}

    # -- queries ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.skill_by_uri)

    def list_page(self, cursor: str | None, limit: int) -> tuple[list[CatalogSkill], str | None]:
        """One `skills/list` page: keyset pagination over the sorted URIs."""
        start = 0
        if cursor is not None:
            after = decode_cursor(cursor, "skills/list", secret=self.cursor_secret)
            start = bisect.bisect_right(self._listed_keys, after)
        page = self.listed[start : start + limit]
        more = start + limit < len(self.listed)
        next_cursor = encode_cursor("skills/list", page[-1].uri, secret=self.cursor_secret) if more else None
        return page, next_cursor

    def skill_md_page(self, after: str | None, limit: int) -> tuple[list[dict[str, Any]], str | None]:
        """SKILL.md resources for `resources/list`; the caller wraps the returned key in its cursor."""
        start = 0 if after is None else bisect.bisect_right(self._listed_keys, after)
        page = self.listed[start : start + limit]
        items = [skill_md_resource(s, self.files.get(s.uri)) for s in page]
        more = start + limit < len(self.listed)
        return items, (page[-1].uri if more else None)

    def is_directory(self, uri: str) -> bool:
        return uri in self.directories

    def directory_page(self, uri: str, cursor: str | None, limit: int) -> Page | None:
        """Direct children of a directory URI, or None when `uri` is not a served directory."""
        kids = self.directories.get(uri)
        if kids is None:
            return None
        kind = "resources/directory/read " + uri
        start = 0
        if cursor is not None:
            after = decode_cursor(cursor, kind, secret=self.cursor_secret)
            start = bisect.bisect_right(self._directory_keys[uri], after)
        page = kids[start : start + limit]
        items: list[dict[str, Any]] = []
        for child in page:
            if child.file is None:
                items.append({"uri": child.uri, "name": child.name, "mimeType": DIRECTORY_MIME_TYPE})
            elif child.name == SKILL_MD and child.uri in self.skill_by_uri:
                items.append(skill_md_resource(self.skill_by_uri[child.uri], self.files.get(child.uri)))
            else:
                items.append(file_resource(child.name, child.file))
        more = start + limit < len(kids)
        next_cursor = encode_cursor(kind, page[-1].name, secret=self.cursor_secret) if more else None
        return Page(items, next_cursor)

    def dynamic_skill_for(self, uri: str) -> tuple[CatalogSkill, str] | None:
        """The generated skill that owns `uri`, with the file path inside it (O(depth))."""
        if not self.dynamic_roots:
            return None
        parsed = parse_uri(uri)
        for depth in range(len(parsed.segments) - 1, 0, -1):
            skill = self.dynamic_roots.get(ParsedURI(parsed.scheme, parsed.segments[:depth]))
            if skill is not None:
                return skill, "/".join(parsed.segments[depth:])
        return None

    def frontmatter_of(self, uri: str) -> dict[str, JSONValue] | None:
        skill = self.skill_by_uri.get(uri)
        return None if skill is None else skill.entry.frontmatter

    def skill_path(self, uri: str) -> SkillPath | None:
        skill = self.skill_by_uri.get(uri)
        return None if skill is None else skill.entry.path

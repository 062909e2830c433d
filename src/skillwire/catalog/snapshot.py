"""An immutable view of everything a server publishes, built once per scan and swapped atomically.

Every question a request can ask is answered here in O(log n + page): entries are kept sorted by URI
with a parallel key list for `bisect` and files are indexed by URI. Directories (skill roots, their
subdirectories, and the prefix directories above skills such as `skill://acme`) are indexed on first
use instead: a snapshot is rebuilt on every watcher refresh while directory reads are rare, and
building sorted children for every published file up front cost 0.5-0.8 s per snapshot on 100,000
files. A skill's listings are kept on its `CatalogSkill`, which incremental refreshes reuse; the
prefix directories are laid out once per snapshot, on its first directory read, from the skill roots
alone (O(skills)). Nothing here touches the disk except `CatalogFile.read()`, which re-checks the
bytes against the digest that was published, so the bytes served are always the bytes hashed.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from skillwire._deprecation import renamed_attributes
from skillwire.catalog.safe_open import read_regular
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET, paginate, paginate_cursor
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ServedFileChanged
from skillwire.core.json import JSONValue
from skillwire.core.manifest import ManifestFile
from skillwire.core.protocol import DIRECTORY_MIME_TYPE, METHOD_LIST, SPEC_META_PREFIX
from skillwire.core.published_index import PublishedIndex
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import (
    SKILL_MD,
    ParsedURI,
    SkillPath,
    ancestors,
    child_name,
    in_scope,
    lineage,
    parent_of,
    parse_uri,
    scheme_of,
)
from skillwire.core.verify import file_matches

# `FileChanged` was this module's own exception; it is `ServedFileChanged` in the one hierarchy now.
__getattr__ = renamed_attributes(__name__, {"FileChanged": ("skillwire.ServedFileChanged", ServedFileChanged)})


def read_disk(path: str, expected_size: int) -> bytes:
    """The bytes of a served regular file, and one more if it grew: a runaway file is never read to its end.

    Opened a component at a time without following symlinks (`safe_open`): a file or folder swapped
    after the scan for a symlink, a FIFO or a directory is refused, never followed or waited on.
    """
    return read_regular(path, expected_size)


@dataclass(frozen=True, slots=True)
class MemoryContent:
    data: bytes


@dataclass(frozen=True, slots=True)
class CatalogFile(ManifestFile):
    """One served file: its manifest item (`uri`, `digest`, `size`) and where its bytes come from.

    A manifest item itself, so a skill's entry lists the very objects the snapshot serves: one object
    per file instead of two (5.5 MB less on 100,000 files).
    """

    mime_type: str
    is_text: bool
    # A file on disk is its resolved path inside a catalog root: a plain string, because a server
    # keeps one per published file, and an object around each is memory nobody reads (docs/measurements.md).
    content: str | MemoryContent

    @classmethod
    def from_columns(
        cls, uris: Sequence[str], digests: Sequence[str], sizes: Sequence[int], mime_types: Sequence[str],
        is_text: Sequence[bool], contents: Sequence[str | MemoryContent],
    ) -> list[CatalogFile]:  # fmt: skip
        """`[CatalogFile(*row) for row in zip(uris, digests, ...)]`, for columns of one length.

        Built a field at a time, each column stored by its slot's descriptor in one C-level `map`: the
        frozen dataclass's `__init__` is a Python call per file with an `object.__setattr__` per field:
        0.16 s of CPU for the 100,000 files of a warm restart's snapshot, 0.07 s this way (issue 25).
        The objects are the ones `__init__` makes; a class with a `__post_init__` gets its `__init__`.
        """
        columns = (uris, digests, sizes, mime_types, is_text, contents)
        if any(len(column) != len(uris) for column in columns):
            raise ValueError("columns of different lengths")
        if hasattr(cls, "__post_init__"):
            return list(map(cls, *columns))
        files: list[CatalogFile] = list(map(object.__new__, itertools.repeat(cls, len(uris))))
        for field, column in zip(fields(cls), columns, strict=True):
            deque(map(getattr(cls, field.name).__set__, files, column), maxlen=0)
        return files

    @property
    def path(self) -> str | None:
        """Where the bytes live on disk, or None for a file defined in code."""
        return self.content if isinstance(self.content, str) else None

    def read(self) -> bytes:
        content = self.content
        data = read_disk(content, self.size) if isinstance(content, str) else content.data
        if not file_matches(self, data):
            raise ServedFileChanged(f"{self.uri} changed since it was published; fetch the entry again")
        return data


DynamicReader = Callable[[str], "bytes | str | None"]


@dataclass(frozen=True)
class CatalogSkill:
    """A published skill: its entry and where it came from."""

    entry: SkillEntry
    source: str
    listed: bool = True
    dynamic_reader: DynamicReader | None = None

    @property
    def wire(self) -> dict[str, Any]:
        # Built per request, not kept: cheap beside a page over HTTP, while keeping every entry's wire
        # form is memory proportional to the catalog (docs/measurements.md, catalog/snapshot.py).
        return self.entry.to_wire()

    @property
    def uri(self) -> str:
        return self.entry.uri

    @property
    def root_uri(self) -> str:
        # From the URI text, like every directory URI: published URIs are canonical, and this avoids
        # re-encoding the path for every skill when a snapshot lays out its prefix directories.
        return parent_of(self.uri) or self.uri

    def without_files_under(self, roots: Sequence[str]) -> CatalogSkill:
        """This skill as shown to a caller who may not see the skills at `roots`, nested inside it: its
        manifest without any file at or below those roots, and without its publisher signature, whose
        statement covers the files left out (it would not verify, and it would let the caller confirm
        guesses of the hidden files' paths and digests). The rest of `_meta` is kept."""
        files = tuple(f for f in self.entry.files if not any(in_scope(f.uri, root) for root in roots))
        meta = self.entry.meta
        if meta is not None and SIGNATURE_META_KEY in meta:
            meta = {key: value for key, value in meta.items() if key != SIGNATURE_META_KEY} or None
        return CatalogSkill(
            replace(self.entry, resources=files, meta=meta), self.source, self.listed, self.dynamic_reader
        )

    def published_paths(self) -> tuple[str, ...]:
        """The file URIs this skill's directories are made of: its manifest, or just the SKILL.md of a
        generated skill (whose root is browsable and holds only that)."""
        return (self.uri,) if self.entry.is_dynamic else tuple(f.uri for f in self.entry.files)

    def directory_index(self) -> Mapping[str, DirectoryListing]:
        """Every directory of this skill (its root and each folder below it) with sorted children.

        Derived from the entry alone, which never changes, so it is built on first use and kept for
        as long as the skill object lives, across snapshots. Not `cached_property`: on Python 3.11 that
        holds one lock for all instances while computing. Two threads may both build it; either
        result is complete and equal, and only a finished dict is ever stored.
        """
        index: Mapping[str, DirectoryListing] | None = self.__dict__.get("_directory_index")
        if index is None:
            index = build_directory_index(self.published_paths(), self.root_uri)
            self.__dict__["_directory_index"] = index
        return index


@dataclass(frozen=True)
class SkippedSkill:
    """A folder that looked like a skill but is not served, and exactly why."""

    location: str
    reason: str


@dataclass(frozen=True, slots=True)
class DirectoryListing:
    """A directory's direct children sorted by name, as parallel tuples (`names` is the cursor keyset).

    Files are named by URI only, and looked up in the serving snapshot's `files` when a page is
    built: a listing kept on a skill outlives the snapshot it was first built for.
    """

    names: tuple[str, ...]
    uris: tuple[str, ...]
    is_file: tuple[bool, ...]


_Children = dict[str, dict[str, tuple[str, bool]]]  # directory URI -> child name -> (child URI, is a file)


def _add_path(children: _Children, uri: str, is_file: bool, top: str | None) -> None:
    """Record `uri` under its parent and each ancestor under its own, stopping after `top` (or at the
    authority, which has no parent directory)."""
    # Published URIs are canonical already, so directories are built from their text: splitting on
    # "/" gives encoded segments whose prefixes are the directory URIs (no re-encoding).
    child, is_leaf = uri, True
    for parent in ancestors(uri):
        name = child_name(child)
        kids = children.setdefault(parent, {})
        if name in kids:
            # The ancestors are recorded already. A name that is both a file and a folder (only
            # possible in a hand-made snapshot) stays a file, whichever came first.
            if is_leaf and is_file:
                kids[name] = (child, True)
            return
        kids[name] = (child, is_leaf and is_file)
        if parent == top:
            return
        child, is_leaf = parent, False


def _listings(children: _Children) -> dict[str, DirectoryListing]:
    listings: dict[str, DirectoryListing] = {}
    for parent, kids in children.items():
        names = sorted(kids)
        listings[parent] = DirectoryListing(
            tuple(names), tuple(kids[n][0] for n in names), tuple(kids[n][1] for n in names)
        )
    return listings


def build_directory_index(file_uris: Iterable[str], root_uri: str) -> dict[str, DirectoryListing]:
    """The directories at and below `root_uri` that hold `file_uris` (URIs outside it are ignored)."""
    children: _Children = {}
    for uri in file_uris:
        if uri != root_uri and in_scope(uri, root_uri):
            _add_path(children, uri, True, root_uri)
    return _listings(children)


@dataclass(frozen=True)
class _Layout:
    """Where a snapshot's directories come from, computed from the skill roots alone."""

    # Outermost skill root -> its skill. Only outermost roots are keys, so the first key met walking
    # up from a URI is its outermost enclosing skill.
    outermost: dict[str, CatalogSkill]
    nested: dict[str, tuple[CatalogSkill, ...]]  # outermost root -> the skills inside it, if any
    prefixes: dict[str, DirectoryListing]  # the directories above skill roots: subdirectories only
    longest_root: int = 0  # no outermost root is longer: a walk up from a request URI starts there


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
        resource["_meta"] = {SPEC_META_PREFIX + "frontmatter": extra}
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
        # Read-only Mapping/Sequence types: a published snapshot (catalog.indexed) answers them from
        # its index's lines instead of holding an object per skill and file.
        by_uri: dict[str, CatalogSkill] = {}
        for skill in skills:
            by_uri[skill.uri] = skill
        self.skill_by_uri: Mapping[str, CatalogSkill] = by_uri
        self.listed: Sequence[CatalogSkill] = sorted((s for s in by_uri.values() if s.listed), key=lambda s: s.uri)
        self._listed_keys: Sequence[str] = [s.uri for s in self.listed]
        self.files: Mapping[str, CatalogFile] = {f.uri: f for f in files}
        self.dynamic_roots: dict[ParsedURI, CatalogSkill] = {
            s.entry.path.root: s for s in self.skill_by_uri.values() if s.entry.is_dynamic
        }
        # From the URI text: parsing every entry's path here would cache SkillPath objects that no
        # request asks for (docs/measurements.md).
        self.schemes: frozenset[str] = frozenset(scheme_of(uri) for uri in self.skill_by_uri)
        self._layout: _Layout | None = None
        self._layout_lock = threading.Lock()
        # Outermost skill root -> the listings served for it. Usually the skill's own index (shared,
        # not copied); see `_build_skill_index` for when it is not.
        self._skill_indexes: dict[str, Mapping[str, DirectoryListing]] = {}

    @property
    def published_index(self) -> PublishedIndex | None:
        """The published index this snapshot is (id and sequence): only a snapshot loaded from one has it
        (`catalog.indexed.PublishedSnapshot`); `skills/list` tells clients in its `_meta`."""
        return None

    # -- directories ----------------------------------------------------------------------------------

    def _get_layout(self) -> _Layout:
        layout = self._layout
        if layout is None:
            with self._layout_lock:  # one build per snapshot; nobody sees a partial layout
                layout = self._layout
                if layout is None:
                    layout = self._layout = self._build_layout()
        return layout

    def _build_layout(self) -> _Layout:
        # O(skills x depth), run on the first directory read of each snapshot: it looks at no file
        # of a skill beyond finding one that is served, and allocates nothing per un-nested skill.
        roots = {skill.root_uri: skill for skill in self.skill_by_uri.values()}
        outermost: dict[str, CatalogSkill] = {}
        nested: dict[str, list[CatalogSkill]] = {}
        for root, skill in roots.items():
            outer = root
            for above in ancestors(root):
                if above in roots:
                    outer = above
            if outer == root:
                outermost[root] = skill
            else:
                nested.setdefault(outer, []).append(skill)
        served: dict[str, CatalogSkill] = {}
        children: _Children = {}
        for root, skill in outermost.items():
            # A skill none of whose files this snapshot serves is no directory, as when directories
            # were derived from the served files; a SkillCatalog snapshot serves every SKILL.md.
            if (
                skill.entry.uri in self.files
                or self._serves_any(skill)
                or any(self._serves_any(s) for s in nested.get(root, ()))
            ):
                served[root] = skill
                _add_path(children, root, False, None)
        nested_by_root = {root: tuple(inside) for root, inside in nested.items()}
        longest = max(map(len, served), default=0)
        return _Layout(served, nested_by_root, _listings(children), longest)

    def _serves_any(self, skill: CatalogSkill) -> bool:
        return skill.entry.is_dynamic or any(f.uri in self.files for f in skill.entry.files)

    def _skill_index(self, root: str, layout: _Layout) -> Mapping[str, DirectoryListing]:
        """The listings of every directory at and below outermost skill root `root`."""
        index = self._skill_indexes.get(root)
        if index is None:
            index = self._build_skill_index(root, layout.outermost[root], layout.nested.get(root, ()))
            self._skill_indexes[root] = index  # a race builds it twice; either result is whole
        return index

    def _build_skill_index(
        self, root: str, head: CatalogSkill, nested: tuple[CatalogSkill, ...]
    ) -> Mapping[str, DirectoryListing]:
        # A folder skill's manifest lists its nested skills' files too, and SkillCatalog serves every
        # manifest file, so the outermost skill's own (kept) index is the answer: O(its files) to check.
        if head.entry.is_dynamic:
            usable = not nested
        else:
            own = head.published_paths()
            usable = all(u in self.files for u in own)
            if usable and nested:
                listed = frozenset(own)
                usable = all(not s.entry.is_dynamic and all(f.uri in listed for f in s.entry.files) for s in nested)
        if usable:
            return head.directory_index()
        # A hand-made snapshot (a file missing from `files`, skills nested across sources): build
        # from what is served, for this snapshot only, since it depends on more than one entry.
        served = {
            uri for s in (head, *nested) for uri in s.published_paths() if s.entry.is_dynamic or uri in self.files
        }
        return build_directory_index(served, root)

    def _listing(self, uri: str) -> DirectoryListing | None:
        """The listing of directory `uri`, found in O(depth): its outermost enclosing skill, if any,
        answers; otherwise it can only be a prefix directory."""
        layout = self._get_layout()
        for candidate in lineage(uri, longest=layout.longest_root):  # linear in a hostile URI
            if candidate in layout.outermost:
                return self._skill_index(candidate, layout).get(uri)
        return layout.prefixes.get(uri) if scheme_of(uri) else None

    def directory_uris(self) -> list[str]:
        """Every directory URI served, sorted. Builds every skill's listings, so O(files) time and
        memory: for tests and tools, never on a request path."""
        layout = self._get_layout()
        uris = set(layout.prefixes)
        for root in layout.outermost:
            uris.update(self._skill_index(root, layout))
        return sorted(uris)

    # -- queries ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.skill_by_uri)

    def list_page(self, cursor: str | None, limit: int) -> tuple[list[CatalogSkill], str | None]:
        """One `skills/list` page: keyset pagination over the sorted URIs."""
        at, next_cursor = paginate_cursor(self._listed_keys, cursor, limit, METHOD_LIST, secret=self.cursor_secret)
        return list(self.listed[at.start : at.stop]), next_cursor

    def skill_md_page(self, after: str | None, limit: int) -> tuple[list[dict[str, Any]], str | None]:
        """SKILL.md resources for `resources/list`; the caller wraps the returned key in its cursor."""
        at, last = paginate(self._listed_keys, after, limit)
        return [skill_md_resource(s, self.files.get(s.uri)) for s in self.listed[at.start : at.stop]], last

    def is_directory(self, uri: str) -> bool:
        return self._listing(uri) is not None

    def directory_page(self, uri: str, cursor: str | None, limit: int) -> Page | None:
        """Direct children of a directory URI, or None when `uri` is not a served directory."""
        listing = self._listing(uri)
        if listing is None:
            return None
        kind = "resources/directory/read " + uri
        at, next_cursor = paginate_cursor(listing.names, cursor, limit, kind, secret=self.cursor_secret)
        items: list[dict[str, Any]] = []
        for i in at:
            name, child_uri = listing.names[i], listing.uris[i]
            if not listing.is_file[i]:
                items.append({"uri": child_uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE})
            elif name == SKILL_MD and child_uri in self.skill_by_uri:
                items.append(skill_md_resource(self.skill_by_uri[child_uri], self.files.get(child_uri)))
            else:
                items.append(file_resource(name, self.files[child_uri]))
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

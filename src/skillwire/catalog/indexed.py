"""Reading a published index: the snapshot a replica serves, built from each skill's index line on demand.

This module is the snapshot (`IndexedSnapshot`: skills, files, directories and per-caller views answered
from the lines) and the format's description. The other jobs of reading an index have their own modules:
the bytes arriving and hashed (`catalog/index_receive.py`), the buffer of lines with its LRU of built skills
(`catalog/index_records.py`), and one record's checks and building (`catalog/index_fields.py`).

An index in format `skillwire-index/2` (written by `catalog.published.encode_index`) is JSON Lines:
a header, then one line per skill sorted by URI, each line starting with its URI:

    {"audiences": [...], "digests": "<64 hex per distinct digest>", "files": F, "format": "skillwire-index/2",
     "ignored": [...], "mimeTypes": ["text/markdown", ...], "skills": N, "skipped": [...]}
    {"uri":"skill://acme/x/SKILL.md","listed":false,"files":[["SKILL.md",0,1234,0,true],...],
     "frontmatter":{...},"source":"...","_meta":{...}}

A file is `[path inside the skill, index into the digest table, size, index into mimeTypes, is UTF-8
text]`; `"listed":false` is present only for an unlisted skill, right after the URI; `_meta` only
when the skill carries a publisher signature.

Loading such an index does not parse its skills. `load_index` streams the index into one buffer
(hashing it on the way, no second copy), then walks its lines once reading only each URI (it is
first, so no JSON parse) and the listed flag after it. A replica then holds, per skill, its URI and
where its line starts; per distinct file content, 32 bytes of digest. A skill's `CatalogSkill` and
`StoredFile`s are built from its line when a request needs them and kept in a small LRU bounded by
file count, so memory is the index's size plus a constant, and a page builds its own records only.

Measured on 100,000 skills x 10 files (1,000,000 file records): building every record at load (format
1) took 5.4 s and 420 MB; this load takes 0.4 s and holds 80 MB: the 58 MB buffer of skill lines,
each URI and where its line starts, 32 bytes per distinct digest.

What is checked when: the index's bytes hash to the id its pointer names (so they are what the
publisher wrote, or a bucket writer), every line's URI (canonical, sorted, each once) and count, then
every line's record (`IndexRecords.check_every_line`: the checks format 1 ran at load, paths canonical
and each listed once), all before the index is served; a record is checked again when it is built. A
bad line refuses the whole index, so a replica keeps its last good snapshot and `/healthz` says stale
with the reason (issue 19: swapped in, one bad line failed every page that held it). The cost is one
JSON parse per line: on 20,000 skills x 10 files, 1.7-3 s on a 2-core machine at load 7-8 (against
0.24 s for the load without it); memory stays the buffer plus one line's objects.
"""

from __future__ import annotations

import bisect
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, overload
from urllib.parse import unquote

from skillwire.catalog.audiences import AudienceRules
from skillwire.catalog.index_fields import SKILL_MD_TAIL, BuiltSkill, field_error
from skillwire.catalog.index_records import IndexRecords, parse_records
from skillwire.catalog.snapshot import (
    CatalogFile,
    CatalogSkill,
    CatalogSnapshot,
    DirectoryListing,
    SkippedSkill,
    build_directory_index,
)
from skillwire.catalog.store import BlobReader, StoredFile
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.published_index import PublishedIndex
from skillwire.core.uri import ancestors, lineage, scheme_of

INDEX_FORMAT_1 = "skillwire-index/1"
INDEX_FORMAT_2 = "skillwire-index/2"
_PREFIX_LISTINGS_KEPT = 64


class PublishedSnapshot(CatalogSnapshot):
    """A snapshot loaded from an index: also which index (its id and sequence), and the audience rules it
    declares."""

    def __init__(
        self,
        *args: Any,
        index_id: str = "",
        sequence: int | None = None,
        rules: AudienceRules = (),
        **options: Any,
    ) -> None:
        super().__init__(*args, **options)
        self.index_id = index_id
        self.sequence = sequence  # the header's number (None: a snapshot not loaded through `load_index`)
        self.audience_rules = rules

    @property
    def published_index(self) -> PublishedIndex | None:
        """Which index this is, as `skills/list` tells clients (server/extension.py), when both are known."""
        if self.sequence is None or not self.index_id:
            return None
        return PublishedIndex(self.index_id, self.sequence)


class _Skills(Mapping[str, CatalogSkill]):
    """`skill_by_uri` of an indexed snapshot: URI -> skill, by bisection over the sorted URIs."""

    def __init__(self, keys: Sequence[str], positions: Sequence[int], records: IndexRecords) -> None:
        self._keys = keys
        self._positions = positions
        self._records = records

    def position(self, uri: str) -> int | None:
        keys = self._keys
        at = bisect.bisect_left(keys, uri)
        if at < len(keys) and keys[at] == uri:
            return self._positions[at]
        return None

    def __getitem__(self, uri: str) -> CatalogSkill:
        position = self.position(uri)
        if position is None:
            raise KeyError(uri)
        return self._records.skill(position)

    def get(self, uri: str, default: Any = None) -> Any:
        position = self.position(uri)
        return default if position is None else self._records.skill(position)

    def __contains__(self, uri: object) -> bool:
        return isinstance(uri, str) and self.position(uri) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class _Files(Mapping[str, CatalogFile]):
    """`files` of an indexed snapshot: a file is found in the manifest of a skill whose root is above it."""

    def __init__(self, skills: _Skills, records: IndexRecords, positions: Sequence[int], count: int | None) -> None:
        # Not the snapshot itself: a reference cycle through a snapshot that `gc.freeze()` froze at load
        # would keep it, and its index buffer, alive after a swap (frozen objects are never collected).
        self._skills = skills
        self._records = records
        self._positions = positions
        self._count = count

    def find(self, uri: str) -> StoredFile | None:
        # The innermost skill whose root is above `uri` and whose manifest lists it: a nested skill's
        # files are in its enclosing skill's manifest too, with the same digest. No root is longer than
        # the longest skill root, so those directories are not looked up.
        for root in ancestors(uri, longest=self._records.max_root):
            position = self._skills.position(root + SKILL_MD_TAIL)
            if position is not None:
                found = self._records.stored(position).get(uri)
                if found is not None:
                    return found
        return None

    def __getitem__(self, uri: str) -> CatalogFile:
        found = self.find(uri)
        if found is None:
            raise KeyError(uri)
        return found

    def get(self, uri: str, default: Any = None) -> Any:
        found = self.find(uri) if isinstance(uri, str) else None
        return default if found is None else found

    def __contains__(self, uri: object) -> bool:
        return isinstance(uri, str) and self.find(uri) is not None

    def __iter__(self) -> Iterator[str]:
        # Every file once, in skill order: O(files), for tools and tests, never a request path.
        seen: set[str] = set()
        records = self._records
        for position in self._positions:
            for item in records.build(position).skill.entry.files:
                uri = item.uri
                if uri not in seen:
                    seen.add(uri)
                    yield uri

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)  # a view: counted once, on first ask
        return self._count


class _Listed(Sequence[CatalogSkill]):
    """`listed` of an indexed snapshot: the listed skills in URI order, built as a page asks for them."""

    def __init__(self, records: IndexRecords, positions: Sequence[int]) -> None:
        self._records = records
        self._positions = positions

    @overload
    def __getitem__(self, index: int) -> CatalogSkill: ...
    @overload
    def __getitem__(self, index: slice) -> list[CatalogSkill]: ...
    def __getitem__(self, index: int | slice) -> CatalogSkill | list[CatalogSkill]:
        skill = self._records.skill
        if isinstance(index, slice):
            return [skill(position) for position in self._positions[index]]
        return skill(self._positions[index])

    def __len__(self) -> int:
        return len(self._positions)


class IndexedSnapshot(PublishedSnapshot):
    """A published snapshot answering from its index's lines (see the module docstring).

    Every query of `CatalogSnapshot` answers as there, in O(log n + page): skills by bisection over
    the URIs, files through the skill above them, directories from the URIs (prefix directories) or
    the skill's own listings. `view()` is the per-caller subset, sharing the records.
    """

    def __init__(
        self,
        records: IndexRecords,
        positions: Sequence[int] | None = None,
        *,
        files: int | None = None,
        skipped: Sequence[SkippedSkill] = (),
        ignored: Sequence[tuple[str, str]] = (),
        cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
        index_id: str = "",
        sequence: int | None = None,
        rules: AudienceRules = (),
    ) -> None:
        super().__init__(
            (),
            (),
            skipped,
            ignored=ignored,
            cursor_secret=cursor_secret,
            index_id=index_id,
            sequence=sequence,
            rules=rules,
        )
        self.records = records
        if positions is None:  # the whole index
            self.positions: Sequence[int] = range(len(records))
            self.keys: Sequence[str] = records.keys
        else:
            self.positions = positions
            self.keys = [records.keys[p] for p in positions]
        if all(records.listed[p] for p in self.positions):
            listed_positions, listed_keys = self.positions, self.keys
        else:
            listed_positions = array("I", (p for p in self.positions if records.listed[p]))
            listed_keys = [records.keys[p] for p in listed_positions]
        self.skills = _Skills(self.keys, self.positions, records)
        self.skill_by_uri = self.skills
        self.files = _Files(self.skills, records, self.positions, files)
        self.listed = _Listed(records, listed_positions)
        self._listed_keys = listed_keys
        self.schemes = frozenset(scheme_of(uri) for uri in _scheme_samples(self.keys))
        self._prefix_listings: OrderedDict[str, DirectoryListing | None] = OrderedDict()
        self._nested_listings: OrderedDict[str, Mapping[str, DirectoryListing]] = OrderedDict()

    def view(self, keep_uri: Callable[[str], bool], keep: Callable[[CatalogSkill], bool] | None) -> IndexedSnapshot:
        """The skills whose URI `keep_uri` accepts (and, when given, whose built skill `keep` accepts),
        sharing this snapshot's records. No skip report, as in `server.visibility.view_of`."""
        records = self.records
        kept = array("I")
        for position, uri in zip(self.positions, self.keys, strict=True):
            if keep_uri(uri) and (keep is None or keep(records.build(position).skill)):
                kept.append(position)
        nesting = records.nesting()
        if nesting and len(kept) < len(self.positions):
            # A visible skill with a hidden one nested inside: its manifest lists the hidden skill's
            # files, which this caller must not see (server/visibility.py, view_of).
            visible = bytearray(len(records))
            for position in kept:
                visible[position] = 1
            overrides: dict[int, BuiltSkill] = {}
            for head, below in nesting.items():
                if visible[head]:
                    hidden = [records.keys[p][: -len(SKILL_MD_TAIL)] for p in below if not visible[p]]
                    if hidden:
                        overrides[head] = records.built(head).without_files_under(hidden)
            if overrides:
                records = records.showing(overrides)
        return IndexedSnapshot(
            records,
            kept,
            cursor_secret=self.cursor_secret,
            index_id=self.index_id,
            sequence=self.sequence,
            rules=self.audience_rules,
        )

    # -- directories: from the URIs, never a layout of every skill ------------------------------------

    def _listing(self, uri: str) -> DirectoryListing | None:
        if not scheme_of(uri):
            return None
        # The outermost skill root at or above `uri` answers for it; none: a directory above skills.
        outer: str | None = None
        for candidate in lineage(uri, longest=self.records.max_root):
            if self.skills.position(candidate + SKILL_MD_TAIL) is not None:
                outer = candidate
        if outer is not None:
            return self._skill_listings(outer).get(uri)
        return self._prefix_listing(uri)

    def _skill_listings(self, root: str) -> Mapping[str, DirectoryListing]:
        head_position = self.skills.position(root + SKILL_MD_TAIL)
        assert head_position is not None
        head = self.records.skill(head_position)
        low = bisect.bisect_left(self.keys, root + "/")
        high = bisect.bisect_left(self.keys, root + "0", low)  # "0" follows "/": the keys under root
        if high - low == 1:
            return head.directory_index()  # the skill's own listings, kept on the built skill
        with self._layout_lock:
            known = self._nested_listings.get(root)
            if known is not None:
                self._nested_listings.move_to_end(root)
                return known
        # Nested skills: a published manifest lists their files too, so the head's listings are whole
        # (as in CatalogSnapshot._build_skill_index); otherwise build from every manifest below. Either
        # way it took building every skill below, so the answer is kept (a few roots, LRU).
        own = frozenset(head.published_paths())
        nested = [self.records.skill(self.positions[i]) for i in range(low, high) if self.keys[i] != head.uri]
        listings: Mapping[str, DirectoryListing]
        if all(uri in own for skill in nested for uri in skill.published_paths()):
            listings = head.directory_index()
        else:
            listings = build_directory_index(set(own).union(*(skill.published_paths() for skill in nested)), root)
        with self._layout_lock:
            self._nested_listings[root] = listings
            while len(self._nested_listings) > _PREFIX_LISTINGS_KEPT:
                self._nested_listings.popitem(last=False)
        return listings

    def _prefix_listing(self, uri: str) -> DirectoryListing | None:
        with self._layout_lock:
            if uri in self._prefix_listings:
                self._prefix_listings.move_to_end(uri)
                return self._prefix_listings[uri]
        listing = self._build_prefix_listing(uri)
        with self._layout_lock:
            self._prefix_listings[uri] = listing
            while len(self._prefix_listings) > _PREFIX_LISTINGS_KEPT:
                self._prefix_listings.popitem(last=False)
        return listing

    def _build_prefix_listing(self, uri: str) -> DirectoryListing | None:
        """The children of a directory above skill roots: the next segment of every URI below it,
        each found once by bisection past the previous child (O(children x log n), not O(skills))."""
        keys = self.keys
        inside = uri + "/"
        at = bisect.bisect_left(keys, inside)
        end = bisect.bisect_left(keys, uri + "0", at)
        children: dict[str, str] = {}
        while at < end:
            key = keys[at]
            child = key[: key.index("/", len(inside))]
            children[unquote(child[len(inside) :])] = child
            at = bisect.bisect_left(keys, child + "0", at + 1)
        if not children:
            return None
        names = sorted(children)
        return DirectoryListing(tuple(names), tuple(children[n] for n in names), (False,) * len(names))

    def directory_uris(self) -> list[str]:
        """Every directory URI served, sorted: O(files), for tests and tools."""
        uris: set[str] = set()
        for key in self.keys:
            root = key[: -len(SKILL_MD_TAIL)]
            outermost = True
            for parent in ancestors(root):
                if self.skills.position(parent + SKILL_MD_TAIL) is not None:
                    outermost = False
                uris.add(parent)
            if outermost:
                uris.update(self._skill_listings(root))
        # Directories above skills were added on the way up; those inside a skill are its listings'.
        return sorted(u for u in uris if self._listing(u) is not None)


def _scheme_samples(keys: Sequence[str]) -> Iterator[str]:
    """One URI per scheme: keys are sorted, so each scheme's URIs are contiguous; bisect past each."""
    at = 0
    while at < len(keys):
        key = keys[at]
        yield key
        scheme = scheme_of(key)
        at = bisect.bisect_left(keys, scheme + ":/\U0010ffff", at + 1)


def indexed_snapshot(
    header: Mapping[str, Any],
    rest: bytearray,
    index_id: str,
    blobs: BlobReader,
    *,
    skipped: Sequence[SkippedSkill],
    ignored: Sequence[tuple[str, str]],
    rules: AudienceRules,
    cursor_secret: bytes,
    sequence: int | None = None,
) -> IndexedSnapshot:
    """The snapshot of a format-2 index whose header is parsed and whose bytes hashed to `index_id`."""
    count, files = header.get("skills"), header.get("files")
    if type(count) is not int or count < 0:
        raise field_error("skills", "the header must give the number of skill lines")
    if type(files) is not int or files < 0:
        raise field_error("files", "the header must give the number of files")
    table = header.get("digests")
    if type(table) is not str or len(table) % 64:
        raise field_error("digests", "must be a string of 64 hex digits per digest")
    try:
        digests = bytes.fromhex(table)
    except ValueError:
        raise field_error("digests", "must be a string of 64 hex digits per digest") from None
    mimes = header.get("mimeTypes")
    if type(mimes) is not list or not all(type(m) is str for m in mimes):
        raise field_error("mimeTypes", "must be an array of strings")
    records = parse_records(rest, count, digests, tuple(mimes), blobs)
    records.check_every_line()
    return IndexedSnapshot(
        records,
        files=files,
        skipped=skipped,
        ignored=ignored,
        cursor_secret=cursor_secret,
        index_id=index_id,
        sequence=sequence,
        rules=rules,
    )

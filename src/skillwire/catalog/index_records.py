"""The skill lines of a format-2 index, in one buffer, and the skills built from them.

`parse_records` finds each line's start, URI and listed flag without parsing the line (the URIs checked
canonical, sorted and each once); `IndexRecords` builds a line's skill on demand (`catalog/index_fields.py`
checks it) and keeps built skills in an LRU bounded by file count, shared by an index and its per-caller
views; `check_every_line` checks every record before an index is served.
"""

from __future__ import annotations

import bisect
import json
import threading
from array import array
from collections import OrderedDict
from collections.abc import Mapping

from skillwire.catalog.index_fields import (
    SKILL_MD_TAIL,
    BuiltSkill,
    build_record,
    check_line_key,
    check_record,
    field_error,
)
from skillwire.catalog.snapshot import CatalogSkill
from skillwire.catalog.store import BlobReader, StoredFile
from skillwire.core.uri import SKILL_MD, is_absolute

_URI_OPEN = b'{"uri":"'
_UNLISTED = b',"listed":false'
# Built skills kept, counted in file records (about 300 bytes each built): a page of the default 2,000
# entries of 10 files fits, and a skill of 100,000 files (publish --no-limits) still cannot pin more.
_BUILT_FILES_KEPT = 32_768


class _BuiltCache:
    """The LRU of built skills, bounded by file count; shared by an index's records and their views'."""

    __slots__ = ("built", "files", "lock")

    def __init__(self) -> None:
        self.built: OrderedDict[int, BuiltSkill] = OrderedDict()
        self.files = 0
        self.lock = threading.Lock()


class IndexRecords:
    """A format-2 index's skill lines, in one buffer, and the skills built from them (a bounded LRU).

    Shared by the snapshot of an index and every per-caller view of it: a view is a subset of
    positions, never a copy of records.
    """

    def __init__(
        self,
        buffer: bytearray,
        starts: array[int],
        keys: list[str],
        listed: bytearray,
        digests: bytes,
        mimes: tuple[str, ...],
        blobs: BlobReader,
    ) -> None:
        self.buffer = buffer
        self.starts = starts  # where line i starts; one more entry: one past the last line's end + 1
        self.keys = keys  # the skills' URIs, strictly increasing
        self.listed = listed  # 1 for a listed skill
        self.digests = digests  # 32 bytes per distinct digest
        self.mimes = mimes
        self._kinds = tuple(((mime, False), (mime, True)) for mime in mimes)  # one pair per kind, shared
        self.blobs = blobs
        # Root URIs are at most this long: walking up a requested URI stops looking for a skill root
        # beyond it, so a 100 KB URI costs one pass over it, not one per slash.
        self.max_root = max((len(k) - len(SKILL_MD_TAIL) for k in keys), default=0)
        self._cache = _BuiltCache()
        # Skills shown otherwise than their line says, by position: a per-caller view's skills with a
        # hidden skill nested inside them (`showing`). Empty for the records of a whole index.
        self._overrides: Mapping[int, BuiltSkill] = {}
        self._nesting: dict[int, range] | None = None

    @property
    def _built(self) -> OrderedDict[int, BuiltSkill]:
        return self._cache.built

    @property
    def _built_files(self) -> int:
        return self._cache.files

    def __len__(self) -> int:
        return len(self.keys)

    def showing(self, overrides: Mapping[int, BuiltSkill]) -> IndexRecords:
        """These records with the skills at `overrides`' positions shown as given: the same buffer,
        tables and LRU (a per-caller view costs its overrides, never a copy of the index)."""
        derived = object.__new__(IndexRecords)
        derived.__dict__.update(self.__dict__)
        derived._overrides = overrides
        return derived

    def nesting(self) -> Mapping[int, range]:
        """Each skill with skills nested below it: its position -> the positions of every key under its
        root (itself included). Found once per index, in O(n): the keys under a root are contiguous in
        URI order and include the skill's own, so a skill has nested ones only if a neighbour is one."""
        found = self._nesting
        if found is None:
            found = {}
            keys = self.keys
            last = len(keys) - 1
            for position, key in enumerate(keys):
                below = key[: -len(SKILL_MD)]  # the root and its "/"
                if (position > 0 and keys[position - 1].startswith(below)) or (
                    position < last and keys[position + 1].startswith(below)
                ):
                    low = bisect.bisect_left(keys, below)
                    found[position] = range(low, bisect.bisect_left(keys, below[:-1] + "0", low))
            self._nesting = found
        return found

    def built(self, position: int) -> BuiltSkill:
        """The skill at `position`, from the LRU or built from its line."""
        override = self._overrides.get(position)
        if override is not None:
            return override
        cache = self._cache
        with cache.lock:
            hit = cache.built.get(position)
            if hit is not None:
                cache.built.move_to_end(position)
                return hit
        made = self.build(position)
        with cache.lock:
            if position not in cache.built:
                cache.built[position] = made
                cache.files += len(made.kinds)
                while cache.files > _BUILT_FILES_KEPT and len(cache.built) > 1:
                    _, evicted = cache.built.popitem(last=False)
                    cache.files -= len(evicted.kinds)
        return made

    def skill(self, position: int) -> CatalogSkill:
        return self.built(position).skill

    def stored(self, position: int) -> dict[str, StoredFile]:
        """The files of the skill at `position` as served, by URI."""
        return self.built(position).stored(self.blobs)

    def build(self, position: int) -> BuiltSkill:
        """Parse and check the line at `position` (not kept: `built` keeps), or its override."""
        override = self._overrides.get(position)
        if override is not None:
            return override
        line = self.buffer[self.starts[position] : self.starts[position + 1] - 1]
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise field_error(f"skills[{position}]", f"line is not JSON: {exc}") from None
        key = self.keys[position]
        if type(raw) is not dict or raw.get("uri") != key:
            raise field_error(f"skills[{position}] ({key})", "the line's uri is not the one it starts with")
        if (raw.get("listed", True) is not False) != bool(self.listed[position]):
            raise field_error(f"skills[{position}] ({key})", '"listed" must follow the uri, and only as false')
        return build_record(position, raw, self.digests, self._kinds)

    def check_every_line(self) -> None:
        """Every line checked as `build` checks it, one line's objects at a time (memory stays the index's
        buffer): run before an index is served, so a bad line refuses the index and the replica keeps
        its last good snapshot, instead of failing every page that holds the skill after the swap."""
        buffer, starts, keys, listed = self.buffer, self.starts, self.keys, self.listed
        table_size, mime_count = len(self.digests) >> 5, len(self.mimes)
        loads = json.loads
        for position in range(len(keys)):
            try:
                raw = loads(buffer[starts[position] : starts[position + 1] - 1])
            except ValueError as exc:
                raise field_error(f"skills[{position}]", f"line is not JSON: {exc}") from None
            key = keys[position]
            if type(raw) is not dict or raw.get("uri") != key:
                raise field_error(f"skills[{position}] ({key})", "the line's uri is not the one it starts with")
            if (raw.get("listed", True) is not False) != bool(listed[position]):
                raise field_error(f"skills[{position}] ({key})", '"listed" must follow the uri, and only as false')
            check_record(position, raw, table_size, mime_count)

    def same_content(self, other: IndexRecords) -> bool:
        """Whether two indexes hold the same skill lines over the same tables (a byte comparison)."""
        return self.digests == other.digests and self.mimes == other.mimes and self.buffer == other.buffer


def parse_records(
    buffer: bytearray, count: int, digests: bytes, mimes: tuple[str, ...], blobs: BlobReader
) -> IndexRecords:
    """Find every skill line's start, URI and listed flag; nothing else of a line is read."""
    starts: array[int] = array("Q")
    keys: list[str] = []
    listed = bytearray()
    size = len(buffer)
    start = 0
    previous = ""
    find, startswith = buffer.find, buffer.startswith
    while start < size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        position = len(keys)
        if not startswith(_URI_OPEN, start, end):
            raise field_error(f"skills[{position}]", 'a line must start with {"uri":"')
        quote = find(b'"', start + len(_URI_OPEN), end)
        if quote < 0:
            raise field_error(f"skills[{position}]", "line is not JSON: the uri string does not end")
        raw_key = buffer[start + len(_URI_OPEN) : quote]
        if b"\\" in raw_key:
            # An escape in the URI (never in a canonical one): let the JSON parser read the line.
            try:
                parsed = json.loads(buffer[start:end])
                key, unlisted = parsed["uri"], parsed.get("listed", True) is False
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                raise field_error(f"skills[{position}]", f"line is not JSON: {exc}") from None
        else:
            try:
                key = raw_key.decode()
            except UnicodeDecodeError:
                raise field_error(f"skills[{position}]", "the uri is not UTF-8") from None
            unlisted = startswith(_UNLISTED, quote + 1, end)
        if type(key) is not str or not key.endswith(SKILL_MD_TAIL) or not is_absolute(key):
            raise field_error(f"skills[{position}]", f"uri {key!r} is not a SKILL.md URI")
        check_line_key(position, key, previous)
        starts.append(start)
        keys.append(key)
        listed.append(0 if unlisted else 1)
        previous = key
        start = end + 1
    if len(keys) != count:
        raise field_error("skills", f"the header announces {count} skill lines, the index holds {len(keys)}")
    starts.append(size + 1)
    return IndexRecords(buffer, starts, keys, listed, digests, mimes, blobs)

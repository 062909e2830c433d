"""Reading a published index: the snapshot a replica serves, built from each skill's index line on demand.

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
import hashlib
import json
import re
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, cast, overload
from urllib.parse import unquote

from skillwire.catalog.audiences import AudienceRules
from skillwire.catalog.snapshot import (
    CatalogFile,
    CatalogSkill,
    CatalogSnapshot,
    DirectoryListing,
    SkippedSkill,
    build_directory_index,
)
from skillwire.catalog.store import IN_STORE, BlobReader, StoredFile
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidIndex, InvalidSkillURI
from skillwire.core.json import JSONValue
from skillwire.core.manifest import DIGEST_PREFIX, ManifestFile
from skillwire.core.uri import SKILL_MD, ancestors, canonical_uri, lineage, parse_uri, scheme_of

INDEX_FORMAT_1 = "skillwire-index/1"
INDEX_FORMAT_2 = "skillwire-index/2"

_URI_OPEN = b'{"uri":"'
# A relative path (or URI) of characters the canonical encoder leaves as they are (RFC 3986 pchar, no
# `%`): canonical as written, but for dot segments. Anything else is parsed to decide.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*\Z")
_PLAIN_URI = re.compile(r"[a-z][a-z0-9+.\-]*://[A-Za-z0-9\-._~!$&'()*+,;=]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*\Z")
_UNLISTED = b',"listed":false'
_SKILL_MD_TAIL = "/" + SKILL_MD
# Built skills kept, counted in file records (about 300 bytes each built): a page of the default 2,000
# entries of 10 files fits, and a skill of 100,000 files (publish --no-limits) still cannot pin more.
_BUILT_FILES_KEPT = 32_768
_PREFIX_LISTINGS_KEPT = 64


def field_error(where: str, what: str) -> InvalidIndex:
    return InvalidIndex(f"index: {where}: {what}")


class PublishedSnapshot(CatalogSnapshot):
    """A snapshot loaded from an index: also which index, and the audience rules it declares."""

    def __init__(self, *args: Any, index_id: str = "", rules: AudienceRules = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.index_id = index_id
        self.audience_rules = rules


class RecordLoader:
    """Checks skill records (the parsed line of one skill) and builds their `CatalogSkill`s.

    Written for a million file records: the checks are plain type tests, error messages are built
    only on failure, and the strings a catalog repeats (MIME types, digests of files that share
    content) are kept once. `files` collects every file built, by URI, across the skills it loads.
    """

    def __init__(self, blobs: BlobReader) -> None:
        self.blobs = blobs
        self.files: dict[str, StoredFile] = {}
        self.strings: dict[str, str] = {}

    def skill(self, position: int, raw: object) -> CatalogSkill:
        uri, frontmatter, raw_files = _skill_fields(position, raw)
        root = uri[: -len(SKILL_MD)]
        manifest = [self.file(position, number, uri, root, item) for number, item in enumerate(raw_files)]
        if not any(f.uri == uri for f in manifest):
            raise field_error(f"skills[{position}] ({uri})", "files do not include the skill's SKILL.md")
        return _catalog_skill(uri, frontmatter, tuple(manifest), cast(dict[str, Any], raw))

    def file(self, position: int, number: int, skill_uri: str, root: str, item: object) -> StoredFile:
        if type(item) is not list or len(item) != 5:
            raise self._bad(position, number, skill_uri, "must be [path, digest, size, mimeType, isText]")
        path, digest, size, mime, is_text = item
        if type(path) is not str or not path or path[0] == "/" or (".." in path and ".." in path.split("/")):
            raise self._bad(position, number, skill_uri, f"path {path!r} is not a relative path inside the skill")
        # Length and prefix only, for the same reason as URIs; a wrong digest fails every read of its file.
        if type(digest) is not str or len(digest) != 71 or not digest.startswith(DIGEST_PREFIX):
            raise self._bad(position, number, skill_uri, f"digest {digest!r} is not sha256:<64 hex>")
        if type(size) is not int or size < 0:
            raise self._bad(position, number, skill_uri, f"size {size!r} is not a non-negative integer")
        if type(mime) is not str or type(is_text) is not bool:
            raise self._bad(position, number, skill_uri, "mimeType must be a string and isText a boolean")
        file_uri = root + path
        known = self.files.get(file_uri)
        if known is not None:  # a nested skill's file, also in its enclosing skill's manifest
            if known.digest != digest:
                raise self._bad(position, number, skill_uri, f"{file_uri} is listed twice with different digests")
            return known
        strings = self.strings
        made = self.files[file_uri] = StoredFile(
            file_uri,
            strings.setdefault(digest, digest),
            size,
            strings.setdefault(mime, mime),
            is_text,
            IN_STORE,
            self.blobs,
        )
        return made

    @staticmethod
    def _bad(position: int, number: int, skill_uri: str, what: str) -> InvalidIndex:
        return field_error(f"skills[{position}].files[{number}] ({skill_uri})", what)


def _skill_fields(position: int, raw: object) -> tuple[str, dict[str, JSONValue], list[object]]:
    """A record's URI, frontmatter and files, checked (both formats)."""
    if type(raw) is not dict:
        raise field_error(f"skills[{position}]", "must be an object")
    uri, frontmatter, raw_files = raw.get("uri"), raw.get("frontmatter"), raw.get("files")
    # The index hashed to the id its pointer names, so its URIs are what `publish` wrote (canonical,
    # from a scan); a full parse of each (a fifth of a format-1 load) would only catch a foreign writer's bug.
    if type(uri) is not str or not uri.endswith(_SKILL_MD_TAIL) or "://" not in uri or "/../" in uri:
        raise field_error(f"skills[{position}]", f"uri {uri!r} is not a SKILL.md URI")
    if type(frontmatter) is not dict or type(frontmatter.get("name")) is not str:
        raise field_error(f"skills[{position}] ({uri})", "frontmatter must be an object with a name")
    if type(raw_files) is not list or not raw_files:
        raise field_error(f"skills[{position}] ({uri})", "files must be a non-empty array")
    return uri, frontmatter, raw_files


def _catalog_skill(
    uri: str, frontmatter: dict[str, JSONValue], manifest: tuple[ManifestFile, ...], raw: dict[str, Any]
) -> CatalogSkill:
    meta = raw.get("_meta")  # a publisher signature travels with the entry (core/signing.py)
    source = raw.get("source")
    entry = SkillEntry(
        uri, frontmatter, manifest, meta=cast(dict[str, JSONValue], meta) if type(meta) is dict else None
    )
    return CatalogSkill(entry, source if type(source) is str else uri, listed=raw.get("listed", True) is not False)


class _Built:
    """A skill built from its format-2 line, and what its files are served as.

    The entry's manifest is plain `ManifestFile`s: a page of `skills/list` or a `skills/get` needs
    only URI, digest and size, and a `StoredFile` costs twice as much to make. The `StoredFile`s
    (MIME type, text flag, blob reader) are made from `kinds` the first time a file of the skill is
    looked up, and kept with it.
    """

    __slots__ = ("files", "kinds", "skill")

    def __init__(self, skill: CatalogSkill, kinds: list[tuple[str, bool]]) -> None:
        self.skill = skill
        self.kinds = kinds  # (mimeType, isText) of each manifest item, in manifest order
        self.files: dict[str, StoredFile] | None = None

    def without_files_under(self, roots: Sequence[str]) -> _Built:
        """This skill as shown to a caller who cannot see the nested skills at `roots`
        (`CatalogSkill.without_files_under`), its files' kinds kept in step with its manifest."""
        shown = self.skill.without_files_under(roots)
        kept = {item.uri for item in shown.entry.files}
        kinds = [kind for item, kind in zip(self.skill.entry.files, self.kinds, strict=True) if item.uri in kept]
        return _Built(shown, kinds)

    def stored(self, blobs: BlobReader) -> dict[str, StoredFile]:
        files = self.files
        if files is None:
            # Two threads may both make it; either result is whole, and only a whole dict is stored.
            files = {}
            for item, (mime, is_text) in zip(self.skill.entry.files, self.kinds, strict=True):
                files.setdefault(item.uri, StoredFile(item.uri, item.digest, item.size, mime, is_text, IN_STORE, blobs))
            self.files = files
        return files


def _bad_file(position: int, number: int, skill_uri: str, what: str) -> InvalidIndex:
    return field_error(f"skills[{position}].files[{number}] ({skill_uri})", what)


def _canonical_path(root: str, path: str) -> bool:
    """Whether `path` is a canonical relative file path below skill `root` (so `root + path` is the one
    spelling of that file: no dot or empty segments, nothing a parser would read as another file)."""
    if _PLAIN_PATH.match(path):  # the common case: no escape, no character the encoder would change
        segments = path.split("/")
        return "." not in segments and ".." not in segments
    try:
        parsed = parse_uri(root + path)
    except InvalidSkillURI:
        return False
    return str(parsed) == root + path


def _canonical_key(uri: str) -> bool:
    if _PLAIN_URI.match(uri):
        return "/./" not in uri and "/../" not in uri
    try:
        return canonical_uri(uri) == uri
    except InvalidSkillURI:
        return False


_SEGMENT = r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+"
_PLAIN_PATHS = re.compile(rf"(?:{_SEGMENT}(?:/{_SEGMENT})*\n)*{_SEGMENT}(?:/{_SEGMENT})*\Z")
_DOT_SEGMENT = re.compile(r"(?:^|/|\n)\.\.?(?:/|\n|\Z)")


def _files_fine(raw_files: list[object], table_size: int, mime_count: int) -> bool:
    """The checks of `check_record`'s loop over a record's files, column by column in C (set, min, max,
    one regex over all paths): a million file records are checked before a 100,000-skill index is
    served. False means look again, file by file, for the precise reason."""
    if {type(item) for item in raw_files} != {list}:
        return False
    rows = cast(list[list[Any]], raw_files)
    if set(map(len, rows)) != {5}:
        return False
    paths, digests, sizes, mimes, texts = zip(*rows, strict=True)
    if set(map(type, paths)) != {str} or set(map(type, texts)) != {bool}:
        return False
    if set(map(type, digests)) != {int} or set(map(type, sizes)) != {int} or set(map(type, mimes)) != {int}:
        return False
    if min(digests) < 0 or max(digests) >= table_size or min(sizes) < 0 or min(mimes) < 0 or max(mimes) >= mime_count:
        return False
    joined = "\n".join(paths)
    if not _PLAIN_PATHS.match(joined) or _DOT_SEGMENT.search(joined):
        return False
    unique = set(paths)
    return len(unique) == len(paths) and SKILL_MD in unique


def check_record(
    position: int, raw: object, table_size: int, mime_count: int
) -> tuple[str, dict[str, JSONValue], list[object]]:
    """Every check of a format-2 record (format 1's, and the paths canonical, each listed once); its URI,
    frontmatter and files. Run on every line before an index is served, and again when a record is built."""
    uri, frontmatter, raw_files = _skill_fields(position, raw)
    if _files_fine(raw_files, table_size, mime_count):
        return uri, frontmatter, raw_files
    root = uri[: -len(SKILL_MD)]
    seen: set[str] = set()
    for number, item in enumerate(raw_files):
        if type(item) is not list or len(item) != 5:
            raise _bad_file(position, number, uri, "must be [path, digest, size, mimeType, isText]")
        path, digest, size, mime, is_text = item
        if type(path) is not str or not path or not _canonical_path(root, path):
            raise _bad_file(position, number, uri, f"path {path!r} is not a canonical relative path inside the skill")
        if type(digest) is not int or not 0 <= digest < table_size:
            raise _bad_file(position, number, uri, f"digest {digest!r} is not an index of the digest table")
        if type(size) is not int or size < 0:
            raise _bad_file(position, number, uri, f"size {size!r} is not a non-negative integer")
        if type(mime) is not int or not 0 <= mime < mime_count or type(is_text) is not bool:
            raise _bad_file(position, number, uri, "mimeType must index mimeTypes and isText be a boolean")
        if path in seen:
            raise _bad_file(position, number, uri, f"{root + path} is listed twice")
        seen.add(path)
    if SKILL_MD not in seen:
        raise field_error(f"skills[{position}] ({uri})", "files do not include the skill's SKILL.md")
    return uri, frontmatter, raw_files


def build_record(
    position: int, raw: object, digests: bytes, kinds_table: Sequence[tuple[tuple[str, bool], tuple[str, bool]]]
) -> _Built:
    """A format-2 record, checked (`check_record`) and built in one tight loop: this runs for every skill
    of every page that is not in the LRU. `kinds_table[mime index][is_text]` is the shared
    `(mimeType, isText)` pair."""
    uri, frontmatter, raw_files = check_record(position, raw, len(digests) >> 5, len(kinds_table))
    root = uri[: -len(SKILL_MD)]
    manifest: list[ManifestFile] = []
    kinds: list[tuple[str, bool]] = []
    for path, digest, size, mime, is_text in cast(list[list[Any]], raw_files):
        manifest.append(ManifestFile(root + path, DIGEST_PREFIX + digests[digest << 5 : (digest + 1) << 5].hex(), size))
        kinds.append(kinds_table[mime][is_text])
    return _Built(_catalog_skill(uri, frontmatter, tuple(manifest), cast(dict[str, Any], raw)), kinds)


# -- receiving -----------------------------------------------------------------------------------------


class ReceivedIndex:
    """An index as it arrived: its header line, the rest in one buffer, and the SHA-256 of the whole."""

    def __init__(self, header: bytes, rest: bytearray, sha256: str) -> None:
        self.header = header
        self.rest = rest
        self.sha256 = sha256


def receive(chunks: Iterable[bytes | memoryview], size: int) -> ReceivedIndex:
    """Hash and keep an index streamed in `chunks` (its `size` bytes announced by the store).

    The header line is collected on its own; everything after it goes into one buffer allocated once
    at its final size, so the index is held exactly once: reading it whole and then slicing it was
    two copies of 140 MB at the peak.
    """
    hasher = hashlib.sha256()
    head = bytearray()
    rest: bytearray | None = None
    filled = 0
    for chunk in chunks:
        data = chunk if isinstance(chunk, bytes) else bytes(chunk)
        hasher.update(data)
        view = memoryview(data)
        if rest is None:
            newline = data.find(b"\n")
            if newline < 0:
                head += data
                continue
            head += view[:newline]
            rest = bytearray(max(size - len(head) - 1, 0))
            view = view[newline + 1 :]
        if filled + len(view) > len(rest):
            raise InvalidIndex(f"the index is longer than the {size} bytes the store announced")
        rest[filled : filled + len(view)] = view
        filled += len(view)
    if rest is None:
        rest = bytearray()
    elif filled != len(rest):
        raise InvalidIndex(f"the index ended after {len(head) + 1 + filled} of the {size} bytes the store announced")
    return ReceivedIndex(bytes(head), rest, hasher.hexdigest())


# -- the records ---------------------------------------------------------------------------------------


class _BuiltCache:
    """The LRU of built skills, bounded by file count; shared by an index's records and their views'."""

    __slots__ = ("built", "files", "lock")

    def __init__(self) -> None:
        self.built: OrderedDict[int, _Built] = OrderedDict()
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
        self.max_root = max((len(k) - len(_SKILL_MD_TAIL) for k in keys), default=0)
        self._cache = _BuiltCache()
        # Skills shown otherwise than their line says, by position: a per-caller view's skills with a
        # hidden skill nested inside them (`showing`). Empty for the records of a whole index.
        self._overrides: Mapping[int, _Built] = {}
        self._nesting: dict[int, range] | None = None

    @property
    def _built(self) -> OrderedDict[int, _Built]:
        return self._cache.built

    @property
    def _built_files(self) -> int:
        return self._cache.files

    def __len__(self) -> int:
        return len(self.keys)

    def showing(self, overrides: Mapping[int, _Built]) -> IndexRecords:
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

    def built(self, position: int) -> _Built:
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

    def build(self, position: int) -> _Built:
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
        if type(key) is not str or not key.endswith(_SKILL_MD_TAIL) or "://" not in key:
            raise field_error(f"skills[{position}]", f"uri {key!r} is not a SKILL.md URI")
        if not _canonical_key(key):
            # Two spellings of one skill (`skill://a/%62`, `SKILL://a/b`) would be two lines, both served.
            raise field_error(f"skills[{position}] ({key})", "the uri is not canonical")
        if key <= previous:
            raise field_error(f"skills[{position}] ({key})", "lines must be sorted by URI, each URI once")
        starts.append(start)
        keys.append(key)
        listed.append(0 if unlisted else 1)
        previous = key
        start = end + 1
    if len(keys) != count:
        raise field_error("skills", f"the header announces {count} skill lines, the index holds {len(keys)}")
    starts.append(size + 1)
    return IndexRecords(buffer, starts, keys, listed, digests, mimes, blobs)


# -- the snapshot --------------------------------------------------------------------------------------


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
            position = self._skills.position(root + _SKILL_MD_TAIL)
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
        rules: AudienceRules = (),
    ) -> None:
        super().__init__((), (), skipped, ignored=ignored, cursor_secret=cursor_secret, index_id=index_id, rules=rules)
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
            overrides: dict[int, _Built] = {}
            for head, below in nesting.items():
                if visible[head]:
                    hidden = [records.keys[p][: -len(_SKILL_MD_TAIL)] for p in below if not visible[p]]
                    if hidden:
                        overrides[head] = records.built(head).without_files_under(hidden)
            if overrides:
                records = records.showing(overrides)
        return IndexedSnapshot(
            records,
            kept,
            cursor_secret=self.cursor_secret,
            index_id=self.index_id,
            rules=self.audience_rules,
        )

    # -- directories: from the URIs, never a layout of every skill ------------------------------------

    def _listing(self, uri: str) -> DirectoryListing | None:
        if not scheme_of(uri):
            return None
        # The outermost skill root at or above `uri` answers for it; none: a directory above skills.
        outer: str | None = None
        for candidate in lineage(uri, longest=self.records.max_root):
            if self.skills.position(candidate + _SKILL_MD_TAIL) is not None:
                outer = candidate
        if outer is not None:
            return self._skill_listings(outer).get(uri)
        return self._prefix_listing(uri)

    def _skill_listings(self, root: str) -> Mapping[str, DirectoryListing]:
        head_position = self.skills.position(root + _SKILL_MD_TAIL)
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
            root = key[: -len(_SKILL_MD_TAIL)]
            outermost = True
            for parent in ancestors(root):
                if self.skills.position(parent + _SKILL_MD_TAIL) is not None:
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
        rules=rules,
    )

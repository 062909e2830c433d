"""One skill record of a published index: what each field may hold, and the skill built from it.

The owner of "is this index line a skill record we serve": format 1's records (`RecordLoader`, a parsed
list of skills) and format 2's lines (`check_record`, run on every line before an index is served and
again when a record is built; `build_record`, the tight loop that makes a `BuiltSkill`). Every refusal is
an `InvalidIndex` naming the record (`field_error`). The buffer of lines these records come from is
`catalog/index_records.py`; the snapshot answering from them, `catalog/indexed.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, cast

from skillwire.catalog.snapshot import CatalogSkill
from skillwire.catalog.store import IN_STORE, BlobReader, StoredFile
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidIndex, InvalidSkillURI
from skillwire.core.json import JSONValue
from skillwire.core.manifest import DIGEST_PREFIX, ManifestFile
from skillwire.core.uri import SKILL_MD, canonical_uri, is_absolute, parse_uri

# A relative path (or URI) of characters the canonical encoder leaves as they are (RFC 3986 pchar, no
# `%`): canonical as written, but for dot segments. Anything else is parsed to decide.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*\Z")
_PLAIN_URI = re.compile(r"[a-z][a-z0-9+.\-]*://[A-Za-z0-9\-._~!$&'()*+,;=]+(?:/[A-Za-z0-9\-._~!$&'()*+,;=:@]+)*\Z")
SKILL_MD_TAIL = "/" + SKILL_MD


def field_error(where: str, what: str) -> InvalidIndex:
    return InvalidIndex(f"index: {where}: {what}")


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
    if type(uri) is not str or not uri.endswith(SKILL_MD_TAIL) or not is_absolute(uri) or "/../" in uri:
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


class BuiltSkill:
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

    def without_files_under(self, roots: Sequence[str]) -> BuiltSkill:
        """This skill as shown to a caller who cannot see the nested skills at `roots`
        (`CatalogSkill.without_files_under`), its files' kinds kept in step with its manifest."""
        shown = self.skill.without_files_under(roots)
        kept = {item.uri for item in shown.entry.files}
        kinds = [kind for item, kind in zip(self.skill.entry.files, self.kinds, strict=True) if item.uri in kept]
        return BuiltSkill(shown, kinds)

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


def check_line_key(position: int, key: str, previous: str) -> None:
    """The one rule for a skill line's URI in either index format: canonical, and after the line before
    it (so each skill once). Two spellings of one skill (`skill://a/%62`, `SKILL://a/b`) would be two
    lines, both served and listed; the same URI twice would be one skill listed twice."""
    if not canonical_key(key):
        raise field_error(f"skills[{position}] ({key})", "the uri is not canonical")
    if key <= previous:
        raise field_error(f"skills[{position}] ({key})", "lines must be sorted by URI, each URI once")


def canonical_key(uri: str) -> bool:
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
) -> BuiltSkill:
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
    return BuiltSkill(_catalog_skill(uri, frontmatter, tuple(manifest), cast(dict[str, Any], raw)), kinds)

"""The catalog snapshot a server saves after a full scan, so the next start can answer at once.

A restart used to walk every folder, stat every file and rebuild every entry before its first answer
(at 10,000 skills × 10 files, about 60% of a cold start even with every digest cached). Instead,
`SkillCatalog` loads what the previous run published under the same roots, skillwire version and
limits, serves it, and validates it in the background (`Persisted.unchanged`): every folder the
walk entered, every `.skillignore` it read and every file it found is stat-ed again and compared
with what that walk saw (device, inode, size, mtime_ns, ctime_ns). A folder's mtime moves when an
entry is added, removed or renamed in it, so equal stats mean the walk would find the same files
with the same bytes; anything else is a full rescan (only changed files are rehashed, by the digest
cache), swapped in like a watcher refresh, with the same list-changed notification.

Until then the persisted listing is served, and a read still hashes the bytes it serves against the
listed digest (`CatalogFile.read`), so a file changed while the server was down is refused, never
served under a stale digest.

The file is data, never code: JSON (not pickle, which runs code while loading; not marshal, whose
documentation disclaims malformed input, for a 13 ms gain at 10,000 skills: 49 vs 62 ms to decode). Layout:
a magic line, a JSON header line (format, the key it was saved for, the byte length and SHA-256 of both
sections), the snapshot section, then the zlib-compressed section of walk records only validation reads
(binary: a packed stat, a length and a path's bytes per record). A truncated, corrupt, foreign or unreadable
file is one log line and a cold start. Written to a temporary file in the same folder, a slice at a time
(never the whole file in memory), header last, then renamed: two servers on one root each write a whole
file, and the last rename wins.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import logging
import os
import stat as stat_module
import struct
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from skillwire._version import __version__
from skillwire.catalog.digests import RACY_SECONDS, STAT_BYTES, pack_stat
from skillwire.catalog.filesystem import ScanResult, SkillRoot, WalkRecords
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, SkippedSkill
from skillwire.core.entry import SkillEntry
from skillwire.core.json import from_json, to_json

__all__ = ["SnapshotStore"]

logger = logging.getLogger("skillwire.catalog")

FORMAT = 2  # 2: the walk section is length-prefixed records (`_write_walk`), not one JSON object
_MAGIC = b"skillwire-snapshot\n"
_MAX_HEADER_BYTES = 1 << 20  # the key names the roots: a few hundred bytes each


class _Unusable(Exception):
    """The file cannot be used; the message says why, in a few words."""


def snapshot_key(roots: Sequence[SkillRoot], enforce_limits: bool) -> dict[str, Any]:
    """What a saved snapshot must have been made for to be served again."""
    return {
        "format": FORMAT,
        "skillwire": __version__,
        "enforce_limits": enforce_limits,
        "roots": [[os.path.realpath(r.path), r.scheme, list(r.prefix)] for r in roots],
    }


def snapshot_file_name(stem: str, roots: Sequence[SkillRoot], enforce_limits: bool) -> str:
    """`<stem>.snapshot-<hash>`, one name per set of roots and settings: catalogs never overwrite each other's."""
    key = json.dumps(snapshot_key(roots, enforce_limits), sort_keys=True).encode()
    return f"{stem}.snapshot-{hashlib.sha256(key).hexdigest()[:16]}"


@dataclass
class RecordedWalk:
    """What one full scan's walk saw (every folder it entered, `.skillignore` it read and file it found,
    with their stats), compressed as the snapshot file's walk section: the one check, by stat, of
    whether the disk still is what that scan published. A warm start validates the persisted snapshot
    with it; a cold start checks its own scan with it once the watcher is armed (`SkillCatalog.watch`)."""

    scan_started_ns: int
    records: bytes  # the compressed walk section, decoded only by `unchanged`

    def unchanged(self) -> bool:
        """Whether every folder, `.skillignore` and file the walk saw still has the same stat,
        and none was modified so close to that walk that an equal stat proves nothing.

        The records are decompressed and checked a piece at a time (`_write_walk`): decoded whole, the
        130,000 paths of a 10,000-skill catalog and their text were a 30 MB peak while the watcher armed
        or a warm start validated (issue 25)."""
        # A change in the same clock tick as the walk leaves the stat equal (the racy-git problem):
        # anything modified shortly before the walk started is not trusted.
        racy = self.scan_started_ns - int(RACY_SECONDS * 1e9)
        stat_call = os.lstat
        unpack_length = _PATH_LENGTH.unpack_from
        head = STAT_BYTES + _PATH_LENGTH.size
        decompressor = zlib.decompressobj()
        compressed = self.records
        pending = b""
        while True:
            try:
                # At most a piece of output at a time: a walk of similar paths compresses a thousandfold.
                piece = decompressor.decompress(compressed, _WALK_PIECE)
            except zlib.error:
                return False
            left = decompressor.unconsumed_tail
            if not piece:
                if not left or len(left) == len(compressed):
                    break  # all read (or, never seen, no progress)
                compressed = left
                continue
            compressed = left
            pending = pending + piece if pending else piece
            offset = 0
            while len(pending) - offset >= head:
                (length,) = unpack_length(pending, offset + STAT_BYTES)
                if length > _MAX_PATH_BYTES:
                    return False  # not a path: a section this version did not write
                end = offset + head + length
                if end > len(pending):
                    break  # the rest of this record is in the next piece
                try:
                    st = stat_call(pending[offset + head : end])  # the path as bytes: no decoding
                except (OSError, ValueError):  # ValueError: a NUL byte, which no path this version wrote holds
                    return False
                if pack_stat(st) != pending[offset : offset + STAT_BYTES]:
                    return False
                if st.st_mtime_ns >= racy or st.st_ctime_ns >= racy:
                    return False
                if stat_module.S_ISLNK(st.st_mode):
                    return False  # the walk records resolved paths only; a symlink here is new
                offset = end
            pending = pending[offset:]
        # Every record whole, and the stream ended where the section does: a cut or padded one is not ours.
        return decompressor.eof and not pending and not decompressor.unused_data


def record_walk(records: Sequence[WalkRecords], scan_started_ns: int) -> RecordedWalk:
    """`records` compressed as a snapshot file's walk section (for a scan whose snapshot is not saved)."""
    buffer = io.BytesIO()
    walk = _Section(buffer, compress=True)
    _write_walk(walk, records)
    walk.close()
    return RecordedWalk(scan_started_ns, buffer.getvalue())


@dataclass
class Persisted:
    """A loaded snapshot: each root's scan result, and the walk that validates it."""

    results: list[ScanResult]
    walk: RecordedWalk

    def unchanged(self) -> bool:
        """Whether the disk still is what the saved walk saw (`RecordedWalk.unchanged`)."""
        return self.walk.unchanged()


class SnapshotStore:
    """Where one catalog's snapshot is saved and loaded (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._save_lock = threading.Lock()  # one save at a time from this process

    def load(self, roots: Sequence[SkillRoot], enforce_limits: bool) -> Persisted | None:
        """The snapshot saved for these roots and settings, or None (logged in one line when a file
        was there but cannot be used; a missing file is an ordinary first start)."""
        try:
            with open(self.path, "rb") as handle:
                return _read(handle, snapshot_key(roots, enforce_limits))
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._unusable(exc.strerror or type(exc).__name__)
        except _Unusable as exc:
            self._unusable(str(exc))
        return None

    def _unusable(self, why: str) -> None:
        logger.warning("catalog snapshot %s not used (%s); scanning the folders instead", self.path, why)

    def save(self, roots: Sequence[SkillRoot], enforce_limits: bool, results: Sequence[ScanResult],
             records: Sequence[WalkRecords], scan_started_ns: int) -> RecordedWalk | None:  # fmt: skip
        """Write the snapshot atomically; the walk it saved (None when a failure was logged, in one line:
        it costs the next start a scan)."""
        with self._save_lock:
            temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(temporary, "wb") as handle:
                    walk = _write(handle, snapshot_key(roots, enforce_limits), results, records, scan_started_ns)
                os.replace(temporary, self.path)
                return RecordedWalk(scan_started_ns, walk)
            except (ValueError, TypeError) as exc:  # frontmatter that JSON cannot carry: nothing to save
                logger.warning("catalog snapshot not saved (%s)", exc)
                with contextlib.suppress(OSError):
                    temporary.unlink(missing_ok=True)
            except OSError as exc:
                logger.warning("catalog snapshot %s not saved (%s)", self.path, exc.strerror or exc)
                with contextlib.suppress(OSError):
                    temporary.unlink(missing_ok=True)
            return None


# Streamed a slice at a time: encoding the whole snapshot first held it two or three times over (the
# str, its UTF-8 bytes, the compressed walk records) at the peak of a cold start. A slice is encoded in
# one call (`core.json.to_json`, pydantic-core), not item by item. How much each saves: docs/measurements.md.
_SLICE = 1024
# The header is written first as a placeholder of the final header's length (sizes 0, checksums of
# zeros) and overwritten once the sections are written: a file whose write stopped anywhere before
# that never matches its checksums, so it never loads. Room for two sizes of up to 20 digits.
_HEADER_ROOM = 40
# The walk section's records (`_write_walk`): a path's byte length after its packed stat. A path longer
# than any file system allows (PATH_MAX is 4,096) means the bytes are not such a record.
_PATH_LENGTH = struct.Struct("<I")
_MAX_PATH_BYTES = 1 << 16
_WALK_PIECE = 1 << 16


class _Section:
    """A section being written: its bytes go to the file as they come, counted and hashed."""

    def __init__(self, handle: BinaryIO, compress: bool = False, *, keep: bool = False) -> None:
        self.handle = handle
        self.length = 0
        self.sha = hashlib.sha256()
        self.compressor = zlib.compressobj(1) if compress else None
        self.kept: list[bytes] | None = [] if keep else None  # a copy of what was written, when kept

    def _out(self, data: bytes) -> None:
        if data:
            self.handle.write(data)
            if self.kept is not None:
                self.kept.append(data)
            self.length += len(data)
            self.sha.update(data)

    def write(self, data: bytes) -> None:
        self._out(self.compressor.compress(data) if self.compressor is not None else data)

    def write_list(self, parts: Iterable[Sequence[Any]]) -> None:
        """The JSON of the concatenation of `parts` (one list), a slice at a time; `parts` may be a
        generator, each part made only when its turn comes."""
        self.write(b"[")
        first = True
        for items in parts:
            for start in range(0, len(items), _SLICE):
                part = to_json(items[start : start + _SLICE])
                self.write((b"" if first else b",") + part[1:-1])
                first = False
        self.write(b"]")

    def close(self) -> list[Any]:
        if self.compressor is not None:
            self._out(self.compressor.flush())
        return [self.length, self.sha.hexdigest()]


def _header(key: dict[str, Any], scan_started_ns: int, saved: float, snapshot: list[Any], walk: list[Any]) -> bytes:
    header = {"key": key, "scan_started_ns": scan_started_ns, "snapshot": snapshot, "walk": walk, "saved": saved}
    return json.dumps(header, ensure_ascii=False).encode()


def _write(
    handle: BinaryIO, key: dict[str, Any], results: Sequence[ScanResult], records: Sequence[WalkRecords],
    scan_started_ns: int, *, finish: bool = True,
) -> bytes:  # fmt: skip
    """Stream the snapshot file into `handle`; its walk section is returned (kept as the catalog's
    `RecordedWalk`: compressed once, not again). `finish=False` leaves the placeholder header (tests: a
    write cut short at its very end)."""
    saved = time.time()
    placeholder = _header(key, scan_started_ns, saved, [0, "0" * 64], [0, "0" * 64])
    width = len(placeholder) + _HEADER_ROOM
    handle.write(_MAGIC + placeholder.ljust(width) + b"\n")
    snapshot = _Section(handle)
    snapshot.write(b"[")
    for n, result in enumerate(results):
        snapshot.write(b"," if n else b"")
        _write_result(snapshot, result)
    snapshot.write(b"]")
    snapshot_table = snapshot.close()
    walk = _Section(handle, compress=True, keep=True)
    _write_walk(walk, records)
    walk_table = walk.close()
    kept = b"".join(walk.kept or ())
    if not finish:
        return kept
    header = _header(key, scan_started_ns, saved, snapshot_table, walk_table)
    if len(header) > width:
        raise ValueError("snapshot header larger than its room")  # sizes past 20 digits: not reachable
    handle.flush()
    handle.seek(len(_MAGIC))
    handle.write(header.ljust(width))
    return kept


def _write_walk(walk: _Section, records: Sequence[WalkRecords]) -> None:
    """One record after another, each its packed stat, its path's length and the path's bytes
    (`os.fsencode`: a name that is not UTF-8 is written as it is on disk), so `RecordedWalk.unchanged`
    checks them as it decompresses, never holding them all; written `_WALK_RECORDS` records at a time.

    Built a batch at a time in C (`str.encode`, `map`, one `join`): three appends and an `os.fsencode`
    call per record were 0.3% of a cold scan's instructions (callgrind).
    """
    # What `os.fsencode` does for a `str`, without its call and type checks per path.
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    pack_length = _PATH_LENGTH.pack
    for one in records:
        stats, paths = one.stats, one.paths
        for start in range(0, len(paths), _WALK_RECORDS):
            raws = [path.encode(encoding, errors) for path in paths[start : start + _WALK_RECORDS]]
            first = start * STAT_BYTES
            heads = [stats[at : at + STAT_BYTES] for at in range(first, first + len(raws) * STAT_BYTES, STAT_BYTES)]
            walk.write(
                b"".join(itertools.chain.from_iterable(zip(heads, map(pack_length, map(len, raws)), raws, strict=True)))
            )


_WALK_RECORDS = 1024  # about 100 KB of a walk section per write


def _in_manifest_order(result: ScanResult) -> list[CatalogFile] | None:
    """The result's files as its skills' manifests list them, one after the other, when that lists each
    file exactly once (no skill nested in another, whose files are in both manifests); else None.

    Written in that order, a skill's members are a run of consecutive indexes: no table from each file
    to its index is needed, which for 90,000 files was 10 MB at the peak of a cold start (issue 25).
    """
    # The roots with a prefix of a root sort right after it: a nested skill has one right before it.
    previous = None
    for root in sorted(skill.root_uri + "/" for skill in result.skills):
        if previous is not None and root.startswith(previous):
            return None
        previous = root
    # A scan's (and a loaded snapshot's) manifests are made of its `CatalogFile`s.
    ordered = cast(list[CatalogFile], [file for skill in result.skills for file in skill.entry.files])
    return ordered if len(ordered) == len(result.files) else None


def _skill_rows(skills: list[CatalogSkill], index: dict[int, int] | None) -> Iterator[list[list[Any]]]:
    """The "skills" column a slice at a time; members by `index`, or (None) as consecutive runs."""
    end = 0
    for start in range(0, len(skills), _SLICE):
        rows: list[list[Any]] = []
        for skill in skills[start : start + _SLICE]:
            manifest = skill.entry.files
            if index is None:
                members = list(range(end, end + len(manifest)))
                end += len(manifest)
            else:
                members = [index[id(m)] for m in manifest]
            rows.append([skill.entry.uri, skill.entry.frontmatter, members, skill.source, skill.listed])
        yield rows


def _write_result(section: _Section, result: ScanResult) -> None:
    # Columns rather than an object per file: one list per field decodes faster and is smaller.
    ordered = _in_manifest_order(result)
    files = result.files if ordered is None else ordered
    index = {id(f): i for i, f in enumerate(files)} if ordered is None else None
    mimes: dict[str, int] = {}
    for f in files:
        mimes.setdefault(f.mime_type, len(mimes))
    # Built one column at a time, each freed once written (lambdas: nothing is built before its turn).
    columns: list[tuple[str, Callable[[], Iterable[Sequence[Any]]]]] = [
        ("uris", lambda: [[f.uri for f in files]]),
        ("digests", lambda: [[f.digest for f in files]]),
        ("sizes", lambda: [[f.size for f in files]]),
        ("mimes", lambda: [list(mimes)]),
        ("mime", lambda: [[mimes[f.mime_type] for f in files]]),
        ("text", lambda: [[f.is_text for f in files]]),
        ("paths", lambda: [[f.content for f in files]]),  # scans make disk files only: a path, never bytes
        ("skills", lambda: _skill_rows(result.skills, index)),
        ("skipped", lambda: [[[s.location, s.reason] for s in result.skipped]]),
        ("ignored", lambda: [[list(item) for item in result.ignored]]),
    ]
    for n, (name, build) in enumerate(columns):
        section.write((b"{" if n == 0 else b",") + json.dumps(name).encode() + b":")
        section.write_list(build())
    section.write(b"}")


def _read(handle: BinaryIO, key: dict[str, Any]) -> Persisted:
    # Section by section into their own `bytes`: reading the whole file and slicing it held each
    # section twice at the peak (docs/measurements.md).
    magic = handle.read(len(_MAGIC))
    if magic != _MAGIC:
        raise _Unusable("not a skillwire snapshot file" if magic else "empty file")
    line = handle.readline(_MAX_HEADER_BYTES)
    if not line.endswith(b"\n"):
        raise _Unusable("truncated header")
    try:
        header = json.loads(line)
        saved_key = header["key"]
        started = header["scan_started_ns"]
        (snapshot_len, snapshot_sha), (walk_len, walk_sha) = header["snapshot"], header["walk"]
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise _Unusable(f"unreadable header: {exc}") from None
    if not isinstance(saved_key, dict) or saved_key.get("format") != FORMAT:
        raise _Unusable(f"format {saved_key.get('format') if isinstance(saved_key, dict) else '?'}, not {FORMAT}")
    if saved_key != key:
        raise _Unusable("saved for other folders, settings or skillwire version")
    if not (isinstance(started, int) and isinstance(snapshot_len, int) and isinstance(walk_len, int)):
        raise _Unusable("unreadable header")
    if snapshot_len < 0 or walk_len < 0:
        raise _Unusable("unreadable header")
    snapshot, walk, rest = handle.read(snapshot_len), handle.read(walk_len), handle.read(1)
    if len(snapshot) != snapshot_len or len(walk) != walk_len or rest:
        raise _Unusable(f"sections of {len(snapshot) + len(walk):,}+ bytes, {snapshot_len + walk_len:,} expected")
    # Checked before anything is decoded: a corrupt file never reaches the decoder's object graph.
    if hashlib.sha256(snapshot).hexdigest() != snapshot_sha or hashlib.sha256(walk).hexdigest() != walk_sha:
        raise _Unusable("checksum mismatch (corrupt)")
    try:
        roots = from_json(snapshot)  # pydantic-core, json for what it refuses
        del snapshot
        if not isinstance(roots, list) or len(roots) != len(key["roots"]):
            raise _Unusable("wrong number of roots")
        results = [_decode_result(root, base) for root, (base, _, _) in zip(roots, key["roots"], strict=True)]
    # RecursionError: JSON nested deeper than the interpreter's limit (a forged or damaged file), which `json`
    # refuses by raising that, not a ValueError: it went up out of the server's start instead of a warning.
    except (ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        raise _Unusable(f"malformed content: {type(exc).__name__}") from None
    return Persisted(results, RecordedWalk(started, walk))


def _only(values: list[Any], *kinds: type) -> bool:
    # `map(type, ...)` into a set runs in C: a few ms for 100,000 values.
    return set(map(type, values)) <= set(kinds)


def _decode_result(root: dict[str, Any], base: str) -> ScanResult:
    uris, digests, sizes, mimes, mime, text, paths = (
        root[k] for k in ("uris", "digests", "sizes", "mimes", "mime", "text", "paths")
    )
    columns = (uris, digests, sizes, mime, text, paths)
    if not all(isinstance(c, list) and len(c) == len(uris) for c in columns) or not isinstance(mimes, list):
        raise _Unusable("columns of different lengths")
    if not (_only(uris, str) and _only(digests, str) and _only(sizes, int) and _only(mime, int)):
        raise _Unusable("a column of the wrong type")
    if not (_only(text, bool) and _only(paths, str) and _only(mimes, str)):
        raise _Unusable("a column of the wrong type")
    if min(mime, default=0) < 0:
        raise _Unusable("a negative index")
    # Data, not trust: a file never names a path outside its root (`startswith` stays in C).
    inside = base.rstrip(os.sep) + os.sep
    if not all(map(str.startswith, paths, itertools.repeat(inside))):
        raise _Unusable("a file outside its root")
    mime_types = [mimes[i] for i in mime]  # an index out of range is an IndexError: malformed
    # One int object per distinct size, as a scan shares them (see filesystem's `_Walker.sizes`).
    shared: dict[int, int] = {}
    sizes = list(map(shared.setdefault, sizes, sizes))
    files = CatalogFile.from_columns(uris, digests, sizes, mime_types, text, paths)
    skills: list[CatalogSkill] = []
    for uri, frontmatter, members, source, listed in root["skills"]:
        if not (isinstance(uri, str) and isinstance(frontmatter, dict) and isinstance(source, str)):
            raise _Unusable("a skill of the wrong shape")
        if not (isinstance(members, list) and _only(members, int) and isinstance(listed, bool)):
            raise _Unusable("a skill of the wrong shape")
        if min(members, default=0) < 0:
            raise _Unusable("a negative index")
        entry = SkillEntry(uri, frontmatter, tuple([files[i] for i in members]))
        skills.append(CatalogSkill(entry, source, listed))
    skipped = [SkippedSkill(str(location), str(reason)) for location, reason in root["skipped"]]
    ignored = [(str(path), str(why)) for path, why in root["ignored"]]
    return ScanResult(skills=skills, files=files, skipped=skipped, ignored=ignored)

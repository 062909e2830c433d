"""Digests of files on disk, cached by what `stat` says so unchanged files are never hashed twice.

The key is (path, device, inode, size, mtime_ns, ctime_ns): `ctime` cannot be set back by a user, so an
edit that restores size and mtime is still caught. A file modified in the last two seconds is hashed
but not persisted (the "racy" window in which a write may still be under way), and the server
re-hashes bytes as it serves them anyway. The persistent layer is one SQLite file, written in a
single transaction per scan, so a restart hashes only what changed while it was down.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
import os
import sqlite3
import struct
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillwire.catalog.mime import is_utf8_text
from skillwire.catalog.safe_open import open_regular, read_fd
from skillwire.core.json import JSONValue, to_json
from skillwire.core.manifest import DIGEST_PREFIX

__all__ = ["DigestCache"]

logger = logging.getLogger("skillwire.catalog")
StatKey = tuple[str, int, int, int, int, int]
RACY_SECONDS = 2.0
# Files up to this size are read in one call, larger ones in pieces of it. Below glibc's mmap threshold,
# which `serve` fixes at 128 KiB (cli/serve.py): a whole-file buffer above it is a fresh mmap whose every
# page faults in, and a cold scan of 10,000 skills with 1,700 files of 64-500 KB spent 1.0 s of CPU
# reading them whole against 0.6 s in 64 KiB pieces (the heap reuses those).
_CHUNK = 1 << 16
_STAT = struct.Struct("<QQQqq")  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns
STAT_BYTES = _STAT.size
_DIGEST_END = STAT_BYTES + 32


@dataclass(frozen=True, slots=True)
class FileDigest:
    digest: str
    is_text: bool


def pack_stat(st: os.stat_result) -> bytes:
    """The stat fields a cached digest is valid for, packed: what the scan keeps per file instead of
    the `os.stat_result` (which holds a dozen Python objects)."""
    return _STAT.pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def stat_identity(packed: bytes) -> tuple[int, int]:
    """The (`st_dev`, `st_ino`) of a `pack_stat` record: which file a walk saw."""
    dev, ino = struct.unpack_from("<QQ", packed)
    return dev, ino


def hash_file(path: str, expected_size: int, identity: tuple[int, int] | None = None) -> tuple[FileDigest, int]:
    """Hash a regular file without following a symlink; returns the digest and the bytes read.

    `identity` is the (`st_dev`, `st_ino`) the scan's walk saw: the opened file must be that file
    (see `safe_open`), so a FIFO, a directory or a symlink swapped in since is refused, not waited on.
    """
    # Plain `os.read` on the descriptor: wrapping it in a buffered file object cost more than hashing
    # a typical few-KB file (measured: a fifth of a 100,000-file cold scan). Never more than one byte
    # past the size `stat` reported: a file that grows while it is hashed (a log being appended to)
    # is detected by the caller, not read without end.
    fd = open_regular(path, identity=identity)
    if expected_size <= _CHUNK:
        try:
            data = read_fd(fd, expected_size)
        finally:
            os.close(fd)
        return FileDigest(DIGEST_PREFIX + hashlib.sha256(data).hexdigest(), is_utf8_text(data)), len(data)
    try:
        hasher = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")()
        decoder_ok = True
        saw_nul = False
        total = 0
        while total <= expected_size and (chunk := os.read(fd, min(_CHUNK, expected_size + 1 - total))):
            hasher.update(chunk)
            total += len(chunk)
            saw_nul = saw_nul or b"\0" in chunk
            # An ASCII piece with no partial character pending cannot break UTF-8: not decoded.
            if decoder_ok and not (chunk.isascii() and not decoder.getstate()[0]):
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    decoder_ok = False
        if decoder_ok:
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                decoder_ok = False
        return FileDigest(DIGEST_PREFIX + hasher.hexdigest(), decoder_ok and not saw_nul), total
    finally:
        os.close(fd)


class DigestCache:
    """In-memory digest cache with an optional SQLite file behind it. Thread-safe.

    Kept compact because a server holds one record per published file for its whole life: each path
    maps to one `bytes` record (the stat fields that must match, the raw 32-byte digest, a text flag)
    instead of a tuple of Python ints and a hex string (measured on 100,000 files: 61 MB -> 14 MB).
    A path has one record; a file whose stat changed is hashed again and replaces it.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: dict[str, bytes] = {}
        self._loaded_keys = False  # keys read from the SQLite file, not yet replaced by a scan's
        # Path -> record hashed since the last flush: the very `bytes` `_memory` holds (kept here too, so a
        # file `retain` drops, such as a skipped skill's SKILL.md, is still stored), its row made at the
        # flush. A (stat tuple, FileDigest) per file was about 440 bytes, 44 MB of a 100,000-file cold
        # start's peak (issue 25).
        self._pending: dict[str, bytes] = {}
        self._frontmatter: dict[str, dict[str, JSONValue]] = {}
        # Git blob id -> the 32-byte digest and a flags byte (1: UTF-8 text, 2: a Git LFS pointer): a
        # blob's bytes never change, so no stat is needed and any commit holding it reuses the record
        # (catalog/git_tree.py). Pending: the records not yet written to the SQLite file.
        self._blobs: dict[str, bytes] = {}
        self._pending_blobs: dict[str, bytes] = {}
        # Digest -> frontmatter parsed since the last flush, encoded as JSON only when it is flushed: a
        # cache without a file never encodes it (json.dumps per SKILL.md was 2.6% of a cold scan).
        self._pending_frontmatter: dict[str, dict[str, JSONValue]] = {}
        self._lock = threading.Lock()
        self.hashed = 0  # files hashed since creation: what tests and benchmarks watch
        self.hits = 0
        self._warned = False
        # The SQLite file is read on first use, not here: a start that serves a persisted snapshot
        # (catalog.persist) may never need it, and reading 100,000 rows was 0.3 s of that start.
        self._unloaded = path is not None
        self._load_lock = threading.Lock()
        # Whether the SQLite file may hold a row, in either table (then a flushed path's older rows are
        # deleted first, and frontmatter is pruned in SQL). A cold start's file is empty: 100,000
        # DELETEs that find nothing were a tenth of the flush.
        self._rows_stored = True

    def _ensure_loaded(self) -> None:
        with self._load_lock:
            if self._unloaded and self.path is not None:
                self._load(self.path)
            self._unloaded = False

    def _connect(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path)
        # WITHOUT ROWID: the rows live in their key's b-tree, so each path is stored once, not in the table
        # and again in the key's index (100,000 files: 26 -> 17 MB, and a third off a cold start's flush).
        # A file made by an earlier version keeps its rowid table and is read and written the same way.
        db.execute(
            "CREATE TABLE IF NOT EXISTS digests (path TEXT, dev INTEGER, ino INTEGER, size INTEGER, "
            "mtime_ns INTEGER, ctime_ns INTEGER, digest TEXT NOT NULL, is_text INTEGER NOT NULL, "
            "PRIMARY KEY (path, dev, ino, size, mtime_ns, ctime_ns)) WITHOUT ROWID"
        )
        db.execute("CREATE TABLE IF NOT EXISTS frontmatter (digest TEXT PRIMARY KEY, json TEXT NOT NULL)")
        db.execute(
            "CREATE TABLE IF NOT EXISTS blobs (oid TEXT PRIMARY KEY, digest BLOB NOT NULL, flags INTEGER NOT NULL) "
            "WITHOUT ROWID"
        )
        return db

    def _unusable(self, action: str, error: Exception) -> None:
        """Say once, in one line, that the cache file cannot be used: serving goes on without it."""
        if not self._warned:
            self._warned = True
            logger.warning(
                "digest cache %s cannot be %s (%s); serving anyway, but files hashed now are not remembered",
                self.path,
                action,
                str(error).splitlines()[0] if str(error) else type(error).__name__,
            )

    def _load(self, path: Path) -> None:
        try:
            db = self._connect(path)
            try:
                rows = db.execute("SELECT path, dev, ino, size, mtime_ns, ctime_ns, digest, is_text FROM digests")
                self._rows_stored = False
                for file_path, dev, ino, size, mtime_ns, ctime_ns, digest, is_text in rows:
                    self._rows_stored = True  # any row, even one this version cannot use
                    record = _record(dev, ino, size, mtime_ns, ctime_ns, digest, bool(is_text))
                    if record is not None and isinstance(file_path, str):
                        self._memory[file_path] = record
                        self._loaded_keys = True
                for digest, text in db.execute("SELECT digest, json FROM frontmatter"):
                    self._rows_stored = True
                    self._frontmatter[digest] = json.loads(text)
                for oid, raw, flags in db.execute("SELECT oid, digest, flags FROM blobs"):
                    if isinstance(oid, str) and isinstance(raw, bytes) and len(raw) == 32 and isinstance(flags, int):
                        self._blobs[oid] = raw + bytes([flags & 3])
            finally:
                db.close()
        except (sqlite3.Error, OSError) as error:
            # A corrupt, foreign or unreachable cache file costs a rehash, never a start-up failure.
            self._rows_stored = True  # not known: delete before inserting, as always
            self._memory.clear()
            self._unusable("read", error)

    def _lookup(self, path: str, stat: bytes) -> FileDigest | None:
        record = self._memory.get(path)
        if record is None or record[:STAT_BYTES] != stat:
            return None
        return FileDigest(DIGEST_PREFIX + record[STAT_BYTES:_DIGEST_END].hex(), record[_DIGEST_END] == 1)

    def _cached_locked(self, path: str, stat: bytes) -> FileDigest | None:
        """`cached` under the lock: what `digest` and `digest_and_bytes` look up before they hash."""
        if self._unloaded:
            self._ensure_loaded()
        with self._lock:
            found = self._lookup(path, stat)
            if found is not None:
                self.hits += 1
            return found

    def cached(self, path: str, stat: bytes) -> FileDigest | None:
        """The digest if this exact (path, `pack_stat`) was hashed before; never hashes."""
        if self._unloaded:
            self._ensure_loaded()
        found = self._lookup(path, stat)
        if found is not None:
            self.hits += 1
        return found

    def digest(self, path: str, stat: bytes) -> FileDigest:
        """The digest of the file at `path` whose `pack_stat` is `stat`, hashed unless cached."""
        cached = self._cached_locked(path, stat)
        if cached is not None:
            return cached
        return self.hash(path, stat)

    def hash(self, path: str, stat: bytes) -> FileDigest:
        """`digest` without looking the file up first: for a caller that has just found it missing
        (`cached`; a scan hashes its misses with `hash_many`). Raises what hashing the file raised."""
        [outcome] = self.hash_many([(path, stat)])
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def hash_many(self, found: Iterable[tuple[str, bytes]]) -> list[FileDigest | Exception]:
        """`hash` for each (path, `pack_stat`) of `found`, in order, the records stored under one lock.

        What a scan hashes its misses with. A file that cannot be hashed is its exception in the list,
        so only that file's skill is skipped: an `OSError`, or a bug, which must not stop the scan.
        A lock, a clock read and two calls per file were 2% of a cold scan's instructions (callgrind).
        """
        unpack = _STAT.unpack
        # Before the first file is read: each file's racy window is then measured from no later than
        # its hashing (conservative), with one clock read for the batch.
        started_ns = time.time_ns()
        outcomes: list[FileDigest | Exception] = []
        hashed: list[tuple[str, bytes, int, FileDigest]] = []
        for path, stat in found:
            try:
                dev, ino, size, mtime_ns, _ = unpack(stat)
                result, read = hash_file(path, size, (dev, ino))
                if read != size:
                    raise OSError(f"{path} changed size while it was being hashed")
            except Exception as exc:
                outcomes.append(exc)
                continue
            outcomes.append(result)
            hashed.append((path, stat, mtime_ns, result))
        self._store_all(hashed, started_ns)
        return outcomes

    def digest_and_bytes(self, path: str, stat: bytes, max_bytes: int) -> tuple[FileDigest, bytes | None]:
        """`digest`, and when the file had to be hashed (and is at most `max_bytes`), the very bytes
        hashed: a SKILL.md whose frontmatter is not cached is then parsed from them, not opened, read and
        hashed a second time (10,000 of each on a 10,000-skill cold start)."""
        cached = self._cached_locked(path, stat)
        if cached is not None:
            return cached, None
        dev, ino, size, mtime_ns, _ = _STAT.unpack(stat)
        if size > max_bytes:
            return self.digest(path, stat), None
        fd = open_regular(path, identity=(dev, ino))
        try:
            data = read_fd(fd, size)
        finally:
            os.close(fd)
        if len(data) != size:
            raise OSError(f"{path} changed size while it was being hashed")
        result = FileDigest(DIGEST_PREFIX + hashlib.sha256(data).hexdigest(), is_utf8_text(data))
        self._store(path, stat, mtime_ns, result)
        return result, data

    def _store(self, path: str, stat: bytes, mtime_ns: int, result: FileDigest) -> None:
        self._store_all([(path, stat, mtime_ns, result)], time.time_ns())

    def _store_all(self, hashed: list[tuple[str, bytes, int, FileDigest]], hashed_ns: int) -> None:
        """Keep the records of files hashed at `hashed_ns` or later; persist the ones not racy then."""
        skip = len(DIGEST_PREFIX)
        # Only a cache with a file behind it has anything to flush; without one, pending rows would
        # pile up for the life of the process.
        settled_ns = hashed_ns - int(RACY_SECONDS * 1e9) if self.path is not None else None
        memory, pending = self._memory, self._pending
        with self._lock:
            self.hashed += len(hashed)
            for path, stat, mtime_ns, result in hashed:
                record = stat + bytes.fromhex(result.digest[skip:]) + (b"\1" if result.is_text else b"\0")
                memory[path] = record
                if settled_ns is not None and mtime_ns < settled_ns:
                    pending[path] = record
                else:
                    pending.pop(path, None)  # its record is racy now: an earlier one pending must not store it

    def cached_blob(self, oid: str) -> tuple[FileDigest, bool] | None:
        """The digest of the git blob `oid` and whether it is a Git LFS pointer, if it was hashed before."""
        if self._unloaded:
            self._ensure_loaded()
        record = self._blobs.get(oid)
        if record is None:
            return None
        self.hits += 1
        return FileDigest(DIGEST_PREFIX + record[:32].hex(), bool(record[32] & 1)), bool(record[32] & 2)

    def remember_blob(self, oid: str, found: FileDigest, *, lfs: bool) -> None:
        if self._unloaded:
            self._ensure_loaded()
        record = bytes.fromhex(found.digest[len(DIGEST_PREFIX) :]) + bytes(
            [(1 if found.is_text else 0) | (2 if lfs else 0)]
        )
        with self._lock:
            self.hashed += 1
            self._blobs[oid] = record
            if self.path is not None:
                self._pending_blobs[oid] = record

    def retain_blobs(self, live: set[str]) -> None:
        """Keep in memory only the blob records of the commits served (the SQLite file keeps every one)."""
        with self._lock:
            if not live.issuperset(self._blobs):
                self._blobs = {oid: record for oid, record in self._blobs.items() if oid in live}

    def frontmatter(self, digest: str) -> dict[str, JSONValue] | None:
        """The decoded frontmatter of a SKILL.md with this digest, if it was parsed before."""
        if self._unloaded:
            self._ensure_loaded()
        with self._lock:
            cached = self._frontmatter.get(digest)
        # Shared, not copied: entries and snapshots are immutable by contract, and a deep copy per
        # skill per scan was a measurable part of a restart.
        return cached

    def remember_frontmatter(self, digest: str, frontmatter: dict[str, JSONValue]) -> None:
        if self._unloaded:
            self._ensure_loaded()
        with self._lock:
            self._frontmatter[digest] = frontmatter
            if self.path is not None:
                self._pending_frontmatter[digest] = frontmatter

    def flush(self, *, prune: bool = True) -> None:
        """Persist what was hashed since the last flush; a path's older rows are replaced, not kept.

        With `prune`, parsed frontmatter no stored digest refers to any more is deleted too.
        """
        if self._unloaded:
            self._ensure_loaded()
        if self.path is None:
            return
        with self._lock:
            pending, self._pending = self._pending, {}
            pending_fm, self._pending_frontmatter = self._pending_frontmatter, {}
            pending_blobs, self._pending_blobs = self._pending_blobs, {}
        if not pending and not pending_fm and not pending_blobs:
            return
        # Into an empty file, the digests stored are the ones flushed now: the frontmatter a prune would
        # delete (of a racy SKILL.md, of skills in code) is left out here instead, where the prune's
        # `NOT IN` over 90,000 rows was 0.4 s of a 10,000-skill cold start's CPU. Marked in a table of the
        # frontmatter's digests, not gathered in a set of every row's: 90,000 strings were 15 MB more at
        # the cold start's peak RSS.
        referenced = dict.fromkeys(pending_fm, False) if prune and not self._rows_stored else None
        if referenced is not None:
            for record in pending_blobs.values():
                digest = DIGEST_PREFIX + record[:32].hex()
                if digest in referenced:
                    referenced[digest] = True
        try:
            db = self._connect(self.path)
            try:
                with db:
                    # A rehashed path's earlier versions can never match again (ctime moved on): drop them,
                    # so the file holds one row per path instead of one per edit.
                    # Generators, not lists: the rows are made one at a time as SQLite takes them.
                    if self._rows_stored:
                        db.executemany("DELETE FROM digests WHERE path = ?", ((path,) for path in pending))
                    insert = "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                    db.executemany(insert, _rows(pending, referenced))
                    db.executemany(
                        "INSERT OR REPLACE INTO frontmatter VALUES (?, ?)",
                        # A generator too: a list held every SKILL.md's JSON at once, at the cold start's peak.
                        (
                            (d, to_json(fm).decode())
                            for d, fm in pending_fm.items()
                            if referenced is None or referenced[d]
                        ),
                    )
                    db.executemany(
                        "INSERT OR REPLACE INTO blobs VALUES (?, ?, ?)",
                        ((oid, record[:32], record[32]) for oid, record in pending_blobs.items()),
                    )
                    if prune and referenced is None:
                        # Parsed frontmatter is only worth keeping for a SKILL.md some catalog still has.
                        db.execute(
                            "DELETE FROM frontmatter WHERE digest NOT IN (SELECT digest FROM digests) "
                            "AND digest NOT IN (SELECT ? || lower(hex(digest)) FROM blobs)",
                            (DIGEST_PREFIX,),
                        )
                self._rows_stored = True
            finally:
                db.close()
        except (sqlite3.Error, OSError, UnicodeEncodeError) as error:
            # A full or read-only disk, or a path that is not UTF-8 (under a root named so: a lone
            # surrogate cannot be a TEXT key): what was stored before stays valid, the rest is hashed again.
            self._unusable("written", error)

    def retain(self, live: set[str], skill_md_digests: set[str]) -> None:
        """Keep only the files still served and the frontmatter of their SKILL.md files.

        Memory stays bounded across reloads; the SQLite file keeps its rows (see `flush`).
        """
        if self._unloaded:
            self._ensure_loaded()
        with self._lock:
            memory = self._memory
            if self._loaded_keys:
                # Re-keyed by the scan's own path strings, which the snapshot holds anyway: the
                # strings read from the SQLite file are then freed instead of kept as a second copy.
                self._memory = {path: record for path in live if (record := memory.get(path)) is not None}
                self._loaded_keys = False
            else:
                # Keys are the scans' own strings already: drop the stale ones in place rather than
                # build a second 100,000-entry table next to the first.
                for path in [p for p in memory if p not in live]:
                    del memory[path]
            if not skill_md_digests.issuperset(self._frontmatter):
                self._frontmatter = {d: fm for d, fm in self._frontmatter.items() if d in skill_md_digests}

    def forget(self, prefixes: tuple[str, ...], *, keep: set[str | None]) -> None:
        """Drop the records under `prefixes` (folder paths ending in a separator) not in `keep`."""
        if self._unloaded:
            self._ensure_loaded()
        with self._lock:
            for path in [p for p in self._memory if p.startswith(prefixes) and p not in keep]:
                del self._memory[path]


def _rows(pending: dict[str, bytes], referenced: dict[str, bool] | None) -> Iterator[tuple[Any, ...]]:
    """The stored rows of in-memory records, one at a time as SQLite takes them (a list held them all at
    the cold start's peak); a row's digest that is a key of `referenced` is marked True there. One
    generator, not a call per row: a function call per row was 0.11 s of CPU for 90,000 files, this loop 0.08."""
    unpack = _STAT.unpack_from
    for path, record in pending.items():
        digest = DIGEST_PREFIX + record[STAT_BYTES:_DIGEST_END].hex()
        if referenced is not None and digest in referenced:
            referenced[digest] = True
        yield (path, *unpack(record), digest, record[_DIGEST_END])


def _record(
    dev: object, ino: object, size: object, mtime_ns: object, ctime_ns: object, digest: object, is_text: bool
) -> bytes | None:
    """The in-memory record of one stored row, or None for a row this version cannot use."""
    if not isinstance(digest, str) or not digest.startswith(DIGEST_PREFIX) or len(digest) != len(DIGEST_PREFIX) + 64:
        return None
    try:
        return (
            _STAT.pack(dev, ino, size, mtime_ns, ctime_ns)
            + bytes.fromhex(digest[len(DIGEST_PREFIX) :])
            + (b"\1" if is_text else b"\0")
        )
    except (struct.error, ValueError):
        return None

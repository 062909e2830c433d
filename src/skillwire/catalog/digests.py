"""Digests of files on disk, cached by what `stat` says so unchanged files are never hashed twice.

The key is (path, device, inode, size, mtime_ns, ctime_ns): `ctime` cannot be set back by a user, so an
edit that restores size and mtime is still caught. A file modified in the last two seconds is hashed
but not persisted (the "racy" window in which a write may still be under way), and the server
re-hashes bytes as it serves them anyway. The persistent layer is one SQLite file, written in a
single transaction per scan, so a restart hashes only what changed while it was down.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from skillwire.catalog.mime import is_utf8_text
from skillwire.core.frontmatter import JSONValue
from skillwire.core.manifest import DIGEST_PREFIX

StatKey = tuple[str, int, int, int, int, int]
_RACY_SECONDS = 2.0
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileDigest:
    digest: str
    is_text: bool


def stat_key(path: str, st: os.stat_result) -> StatKey:
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def hash_file(path: str, expected_size: int) -> tuple[FileDigest, int]:
    """Hash a regular file without following a symlink; returns the digest and the bytes read."""
    hasher = hashlib.sha256()
    decoder_ok = True
    saw_nul = False
    total = 0
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        # Never read more than one byte past the size `stat` reported: a file that grows while it is
        # hashed (a log being appended to) is detected by the caller, not read without end.
        if expected_size <= _CHUNK:
            data = handle.read(expected_size + 1)
            hasher.update(data)
            return FileDigest(DIGEST_PREFIX + hasher.hexdigest(), is_utf8_text(data)), len(data)
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")()
        while total <= expected_size and (chunk := handle.read(min(_CHUNK, expected_size + 1 - total))):
            hasher.update(chunk)
            total += len(chunk)
            saw_nul = saw_nul or b"\0" in chunk
            if decoder_ok:
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


class DigestCache:
    """In-memory digest cache with an optional SQLite file behind it. Thread-safe."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._memory: dict[StatKey, FileDigest] = {}
        self._pending: dict[StatKey, FileDigest] = {}
        self._frontmatter: dict[str, dict[str, JSONValue]] = {}
        self._pending_frontmatter: dict[str, str] = {}
        self._lock = threading.Lock()
        self.hashed = 0  # files hashed since creation: what tests and benchmarks watch
        self.hits = 0
        if path is not None:
            self._load(path)

    def _connect(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path)
        db.execute(
            "CREATE TABLE IF NOT EXISTS digests (path TEXT, dev INTEGER, ino INTEGER, size INTEGER, "
            "mtime_ns INTEGER, ctime_ns INTEGER, digest TEXT NOT NULL, is_text INTEGER NOT NULL, "
            "PRIMARY KEY (path, dev, ino, size, mtime_ns, ctime_ns))"
        )
        db.execute("CREATE TABLE IF NOT EXISTS frontmatter (digest TEXT PRIMARY KEY, json TEXT NOT NULL)")
        return db

    def _load(self, path: Path) -> None:
        try:
            db = self._connect(path)
            try:
                for row in db.execute("SELECT path, dev, ino, size, mtime_ns, ctime_ns, digest, is_text FROM digests"):
                    key: StatKey = (row[0], row[1], row[2], row[3], row[4], row[5])
                    self._memory[key] = FileDigest(row[6], bool(row[7]))
                for digest, text in db.execute("SELECT digest, json FROM frontmatter"):
                    self._frontmatter[digest] = json.loads(text)
            finally:
                db.close()
        except sqlite3.Error:
            # A corrupt or foreign cache file costs a rehash, never a start-up failure.
            self._memory.clear()

    def has(self, path: str, st: os.stat_result) -> bool:
        return stat_key(path, st) in self._memory

    def cached(self, path: str, st: os.stat_result) -> FileDigest | None:
        """The digest if this exact (path, stat) was hashed before; never hashes."""
        found = self._memory.get(stat_key(path, st))
        if found is not None:
            self.hits += 1
        return found

    def digest(self, path: str, st: os.stat_result) -> FileDigest:
        key = stat_key(path, st)
        with self._lock:
            cached = self._memory.get(key)
            if cached is not None:
                self.hits += 1
                return cached
        result, read = hash_file(path, st.st_size)
        if read != st.st_size:
            raise OSError(f"{path} changed size while it was being hashed")
        with self._lock:
            self.hashed += 1
            self._memory[key] = result
            if time.time() - st.st_mtime_ns / 1e9 > _RACY_SECONDS:
                self._pending[key] = result
        return result

    def frontmatter(self, digest: str) -> dict[str, JSONValue] | None:
        """The decoded frontmatter of a SKILL.md with this digest, if it was parsed before."""
        with self._lock:
            cached = self._frontmatter.get(digest)
        # Shared, not copied: entries and snapshots are immutable by contract, and a deep copy per
        # skill per scan was a measurable part of a restart.
        return cached

    def remember_frontmatter(self, digest: str, frontmatter: dict[str, JSONValue]) -> None:
        encoded = json.dumps(frontmatter, ensure_ascii=False, allow_nan=False)
        with self._lock:
            self._frontmatter[digest] = frontmatter
            self._pending_frontmatter[digest] = encoded

    def flush(self) -> None:
        """Persist what was hashed since the last flush; a path's older rows are replaced, not kept."""
        if self.path is None:
            return
        with self._lock:
            pending, self._pending = self._pending, {}
            pending_fm, self._pending_frontmatter = self._pending_frontmatter, {}
        if not pending and not pending_fm:
            return
        try:
            db = self._connect(self.path)
            try:
                with db:
                    # A rehashed path's earlier versions can never match again (ctime moved on): drop them,
                    # so the file holds one row per path instead of one per edit.
                    db.executemany("DELETE FROM digests WHERE path = ?", [(key[0],) for key in pending])
                    db.executemany(
                        "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [(*key, value.digest, int(value.is_text)) for key, value in pending.items()],
                    )
                    db.executemany("INSERT OR REPLACE INTO frontmatter VALUES (?, ?)", list(pending_fm.items()))
                    # Parsed frontmatter is only worth keeping for a SKILL.md some catalog still has.
                    db.execute("DELETE FROM frontmatter WHERE digest NOT IN (SELECT digest FROM digests)")
            finally:
                db.close()
        except sqlite3.Error:
            pass

    def retain(self, live: set[StatKey]) -> None:
        """Drop in-memory entries for files no longer served (keeps memory bounded across reloads)."""
        with self._lock:
            self._memory = {k: v for k, v in self._memory.items() if k in live}
            digests = {v.digest for v in self._memory.values()}
            self._frontmatter = {d: fm for d, fm in self._frontmatter.items() if d in digests}

"""Persisted approvals, each bound to the exact file set the person saw when approving.

Requirement 21 ("Approval binding"): a persisted approval MUST bind to the `{uri, digest}` set seen at
approval; a later entry with a different set (a file changed, added or removed) MUST revoke it and
re-prompt, and a persisted approval MUST NOT cover `"dynamic"` content. Requirement 6: approvals are keyed
by (origin label, uri), never the uri alone. So a row holds the `SkillRef`, the `manifest_hash` of the
(uri, digest, size) set, the set itself as JSON (to show *what* changed on re-prompt), the `allowed-tools`
grant the person approved (requirement 21: that frontmatter is ignored unless approved for that skill),
and when it was approved.

Storage is one SQLite file in WAL mode, so several host processes share approvals safely: every
read-compare-revoke runs in one `BEGIN IMMEDIATE` transaction, and each statement sees what other
processes committed. The file is created readable by its owner only: whoever can write it can grant
approvals.

Which store is used is the embedding application's choice, never implied: `SkillHost` without one
keeps approvals in memory (`ApprovalStore.in_memory()`, gone when the host is), so a test, a script or
an agent loop never writes the user-wide file by accident. An application that asks a person and wants
the answer remembered passes `ApprovalStore(path)` (its own file, or `default_approvals_path()`), and
only decisions of a policy with `asks_a_person` are written to it (see host/policy.py).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType

import platformdirs

from skillwire.core.errors import ApprovalStoreError
from skillwire.core.manifest import DIGEST_RE, ManifestDiff, ManifestFile, diff_manifests, manifest_hash
from skillwire.host.identity import SkillRef, validate_origin_label

__all__ = ["ApprovalStore"]

SCHEMA_VERSION = 1
APPROVALS_FILE_NAME = "approvals.sqlite"
_BUSY_TIMEOUT_SECONDS = 10.0

_SCHEMA = """
CREATE TABLE approvals (
    origin        TEXT NOT NULL,
    uri           TEXT NOT NULL,
    manifest_hash TEXT NOT NULL,
    files_json    TEXT NOT NULL,
    allowed_tools TEXT,
    approved_at   REAL NOT NULL,
    PRIMARY KEY (origin, uri)
)
"""
_COLUMNS = "origin, uri, manifest_hash, files_json, allowed_tools, approved_at"


def default_approvals_path() -> Path:
    """`<user config dir>/skillwire/approvals.sqlite`: configuration the person made, not a cache."""
    return platformdirs.user_config_path("skillwire") / APPROVALS_FILE_NAME


@dataclass(frozen=True)
class Approval:
    """One persisted approval: the skill, the file set it covers, and the grant that came with it."""

    ref: SkillRef
    manifest_hash: str
    files: tuple[ManifestFile, ...]
    allowed_tools: str | None
    approved_at: datetime  # timezone-aware, UTC


class ApprovalStatus(StrEnum):
    APPROVED = "approved"  # approved, and the file set is the one that was approved
    MISSING = "missing"  # never approved (or revoked earlier)
    CHANGED = "changed"  # was approved for a different file set; the approval has now been revoked


@dataclass(frozen=True)
class ApprovalCheck:
    """The answer of `ApprovalStore.check`.

    `approval` is the current approval when `APPROVED`, the one just revoked when `CHANGED`, else None.
    `diff` (old approved set -> set presented) is set only when `CHANGED`.
    """

    status: ApprovalStatus
    approval: Approval | None = None
    diff: ManifestDiff | None = None

    @property
    def approved(self) -> bool:
        return self.status is ApprovalStatus.APPROVED


def _refuse_unapprovable(files: Sequence[ManifestFile], dynamic: bool) -> None:
    if dynamic or not files:
        raise ValueError("a persisted approval must not cover dynamic content (the skill has no fixed file manifest)")
    seen: set[str] = set()
    for file in files:
        if file.uri in seen:
            raise ValueError(f"the manifest lists {file.uri} twice; an approval needs a set of distinct files")
        seen.add(file.uri)
        if not isinstance(file.digest, str) or not DIGEST_RE.match(file.digest):
            raise ValueError(f"{file.uri}: digest {file.digest!r} is not 'sha256:' and 64 lowercase hex characters")
        if not isinstance(file.size, int) or isinstance(file.size, bool) or file.size < 0:
            raise ValueError(f"{file.uri}: size {file.size!r} is not a non-negative integer")


def _files_to_json(files: Sequence[ManifestFile]) -> str:
    return json.dumps([f.to_wire() for f in sorted(files)], separators=(",", ":"), ensure_ascii=False)


class ApprovalStore:
    """Approvals in one SQLite file, shared safely between threads and processes.

    Use as a context manager or call `close()`. Every method raises `ApprovalStoreError` when the file
    is corrupt, not a database, or written by a newer schema.
    """

    def __init__(self, path: Path | None = None, *, _in_memory: bool = False) -> None:
        """The store in the file `path`; `None` names the user-wide `default_approvals_path()` explicitly."""
        self.persistent = not _in_memory  # False: approvals vanish with this object, no file is written
        self.path = Path(":memory:") if _in_memory else default_approvals_path() if path is None else Path(path)
        self._lock = threading.Lock()
        self._connection = self._open()

    @classmethod
    def in_memory(cls) -> ApprovalStore:
        """A store that lives as long as this object and is seen by no other process (SkillHost's default)."""
        return cls(_in_memory=True)

    # -- opening ----------------------------------------------------------------------------------------

    def _fail(self, reason: str, error: BaseException | None = None) -> ApprovalStoreError:
        detail = f"{reason}: {error}" if error is not None else reason
        return ApprovalStoreError(str(self.path), detail)

    def _open(self) -> sqlite3.Connection:
        if not self.persistent:
            memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self._ensure_schema(memory)
            return memory
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Create the file owner-only before SQLite does (SQLite would honour the umask, often 0o644);
            # the -wal and -shm files copy the database file's permissions.
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
        except OSError as error:
            raise self._fail("cannot create the database file", error) from error
        connection: sqlite3.Connection | None = None
        try:
            # Autocommit mode (isolation_level=None): transactions are explicit, so each statement outside
            # one sees what other processes committed.
            connection = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")  # an approval or revocation must survive a crash
            problems = [row[0] for row in connection.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise self._fail("the database is corrupt; delete it to start over: " + "; ".join(map(str, problems)))
            self._ensure_schema(connection)
        except sqlite3.OperationalError as error:  # "database is locked", "unable to open database file"
            if connection is not None:
                connection.close()
            raise self._fail("cannot open or lock the database", error) from error
        except sqlite3.DatabaseError as error:  # "file is not a database", "database disk image is malformed"
            if connection is not None:
                connection.close()
            raise self._fail(
                "cannot use the database (corrupt or not SQLite; delete it to start over)", error
            ) from error
        except BaseException:
            if connection is not None:
                connection.close()
            raise
        return connection

    def _ensure_schema(self, connection: sqlite3.Connection) -> None:
        # IMMEDIATE: two processes opening a fresh file at once must not both create the table.
        connection.execute("BEGIN IMMEDIATE")
        try:
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
                if tables:
                    raise self._fail("the file is an SQLite database, but not a skillwire approval store")
                connection.execute(_SCHEMA)
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            elif version != SCHEMA_VERSION:
                raise self._fail(f"schema version {version} is not {SCHEMA_VERSION} (written by another skillwire)")
            else:
                columns = [row[1] for row in connection.execute("PRAGMA table_info(approvals)")]
                if columns != [c.strip() for c in _COLUMNS.split(",")]:
                    raise self._fail("the approvals table does not have the expected columns")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    # -- lifecycle ----------------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> ApprovalStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, serialised against other threads (lock) and processes (IMMEDIATE)."""
        with self._lock:
            try:
                self._connection.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise self._fail("cannot start a transaction", error) from error
            try:
                yield self._connection
            except sqlite3.Error as error:
                self._connection.execute("ROLLBACK")
                raise self._fail("database error", error) from error
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            try:
                self._connection.execute("COMMIT")
            except sqlite3.Error as error:
                raise self._fail("cannot commit", error) from error

    @contextlib.contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """Plain reads: one statement in autocommit mode is its own snapshot; no write lock needed."""
        with self._lock:
            try:
                yield self._connection
            except sqlite3.Error as error:
                raise self._fail("database error", error) from error

    # -- rows ----------------------------------------------------------------------------------------------

    def _row_to_approval(self, row: tuple[object, ...]) -> Approval:
        origin, uri, stored_hash, files_json, allowed_tools, approved_at = row
        try:
            ref = SkillRef(str(origin), str(uri))
            raw_files = json.loads(str(files_json))
            files = tuple(ManifestFile(str(f["uri"]), str(f["digest"]), int(f["size"])) for f in raw_files)
            if not isinstance(approved_at, int | float):
                raise TypeError(f"approved_at is {approved_at!r}, not a timestamp")
            when = datetime.fromtimestamp(approved_at, tz=UTC)
        except (ValueError, TypeError, KeyError) as error:
            raise self._fail(f"the approval row for {origin} {uri} is unreadable; revoke it", error) from error
        # The stored hash must be the hash of the stored set; otherwise the row was edited behind our back
        # and the file list shown in a diff would not be what the approval covers. Fail closed.
        if manifest_hash(files) != stored_hash:
            raise self._fail(f"the approval row for {ref} does not hash to its own file list; revoke it")
        if allowed_tools is not None and not isinstance(allowed_tools, str):
            raise self._fail(f"the approval row for {ref} has a non-text allowed_tools; revoke it")
        return Approval(ref, manifest_hash(files), files, allowed_tools, when)

    # -- API ---------------------------------------------------------------------------------------------

    def approve(
        self,
        ref: SkillRef,
        files: Sequence[ManifestFile],
        *,
        allowed_tools: str | None = None,
        dynamic: bool = False,
    ) -> Approval:
        """Record that the person approved `ref` with exactly this file set (replacing any earlier approval).

        `allowed_tools` is the frontmatter `allowed-tools` value the person granted, if they granted it.
        Raises `ValueError` for a dynamic skill (`dynamic=True` or no files), duplicate URIs or a malformed
        digest or size.
        """
        _refuse_unapprovable(files, dynamic)
        if allowed_tools is not None and not isinstance(allowed_tools, str):
            raise ValueError("allowed_tools is the approved frontmatter `allowed-tools` string, or None")
        approval = Approval(
            ref=ref,
            manifest_hash=manifest_hash(files),
            files=tuple(sorted(files)),
            allowed_tools=allowed_tools,
            approved_at=datetime.fromtimestamp(time.time(), tz=UTC),
        )
        with self._transaction() as connection:
            connection.execute(
                f"INSERT OR REPLACE INTO approvals ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    ref.origin,
                    ref.uri,
                    approval.manifest_hash,
                    _files_to_json(files),
                    allowed_tools,
                    approval.approved_at.timestamp(),
                ),
            )
        return approval

    def check(self, ref: SkillRef, files: Sequence[ManifestFile], *, dynamic: bool = False) -> ApprovalCheck:
        """Is `ref` approved for exactly this file set?

        A stored approval for a different set is revoked (deleted) here, in the same transaction, and the
        answer is `CHANGED` with the diff; the next check then says `MISSING`. A dynamic skill (`dynamic=True`
        or no files) is never covered by a persisted approval, so it revokes one that exists.
        """
        presented: Sequence[ManifestFile] = () if dynamic else files
        with self._transaction() as connection:
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE origin = ? AND uri = ?", (ref.origin, ref.uri)
            ).fetchone()
            if row is None:
                return ApprovalCheck(ApprovalStatus.MISSING)
            approval = self._row_to_approval(row)
            if presented and manifest_hash(presented) == approval.manifest_hash:
                return ApprovalCheck(ApprovalStatus.APPROVED, approval)
            connection.execute("DELETE FROM approvals WHERE origin = ? AND uri = ?", (ref.origin, ref.uri))
        return ApprovalCheck(ApprovalStatus.CHANGED, approval, diff_manifests(approval.files, presented))

    def get(self, ref: SkillRef) -> Approval | None:
        """The stored approval of `ref`, without comparing it to anything (for display)."""
        with self._reading() as connection:
            row = connection.execute(
                f"SELECT {_COLUMNS} FROM approvals WHERE origin = ? AND uri = ?", (ref.origin, ref.uri)
            ).fetchone()
        return None if row is None else self._row_to_approval(row)

    def revoke(self, ref: SkillRef) -> bool:
        """Delete the approval of `ref`; True when there was one."""
        with self._transaction() as connection:
            cursor = connection.execute("DELETE FROM approvals WHERE origin = ? AND uri = ?", (ref.origin, ref.uri))
        return cursor.rowcount > 0

    def purge_origin(self, origin: str) -> int:
        """Delete every approval of one origin (the server was removed); returns how many were deleted."""
        validate_origin_label(origin)
        with self._transaction() as connection:
            cursor = connection.execute("DELETE FROM approvals WHERE origin = ?", (origin,))
        return cursor.rowcount

    def list(self, origin: str | None = None) -> builtins.list[Approval]:
        """All approvals, or those of one origin, ordered by (origin, uri)."""
        with self._reading() as connection:
            if origin is None:
                rows = connection.execute(f"SELECT {_COLUMNS} FROM approvals ORDER BY origin, uri").fetchall()
            else:
                validate_origin_label(origin)
                rows = connection.execute(
                    f"SELECT {_COLUMNS} FROM approvals WHERE origin = ? ORDER BY origin, uri", (origin,)
                ).fetchall()
        return [self._row_to_approval(row) for row in rows]

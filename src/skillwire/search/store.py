"""Where the index lives: the SQLite FTS5 schema, opening an index file or memory, and writing rows.

Two FTS5 tables whose bm25() scores the ranking adds (`search/rank.py` says why two):

- `names`, what a document says it is: name, description, aliases, origin label;
- `bodies`, what its SKILL.md says: headings and prose (a document without a known body has no row here);

and `docs`, one plain row per document: its key (group, uri), what the row was made from, and whether
its body is indexed, absent or waiting for the background pass. Tokenizer `porter unicode61` (stemming,
diacritics folded).

An index file is derived data: one of another format (`INDEX_FORMAT`) is dropped and rebuilt, never read
with the wrong meaning, and one that cannot be opened costs an in-memory index, never a query.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from skillwire.core.errors import HostError

# What a stored row holds (columns, tokenizer, `split_body`, `aliases_of`): an index file of another format
# is dropped and rebuilt, never read with the wrong meaning.
INDEX_FORMAT = "skillwire-search-2"  # 2: `names` and `bodies` (1 had one `skills` table of every column)

# What a docs row says of the body: indexed without one (none was known), with it, or waiting for the
# background thread (a file written by a process that stopped first is finished by the next one).
NO_BODY, WITH_BODY, BODY_PENDING = 0, 1, 2

# A row as the index writes it: the rowid, then the columns (name, description, aliases, headings, body,
# origin).
IndexRow = tuple[int, str, str, str, str, str, str]
Columns = tuple[str, str, str, str, str, str]

_TOKENIZE = "tokenize = 'porter unicode61 remove_diacritics 2'"


def no_fts5(exc: Exception) -> HostError:
    return HostError(
        f"searching skills needs SQLite with FTS5, which this Python's sqlite3 ({sqlite3.sqlite_version}) "
        f"lacks ({exc}); listing without a query still pages through every skill"
    )


def create_schema(db: sqlite3.Connection) -> None:
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5(name, description, aliases, origin, {_TOKENIZE})")
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS bodies USING fts5(headings, body, {_TOKENIZE})")
    db.execute(
        "CREATE TABLE IF NOT EXISTS docs (rowid INTEGER PRIMARY KEY, origin TEXT NOT NULL, uri TEXT NOT NULL, "
        "made_of TEXT NOT NULL, with_body INTEGER NOT NULL, UNIQUE (origin, uri))"
    )
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)", (INDEX_FORMAT,))


def open_memory() -> sqlite3.Connection:
    """A new in-memory index; `HostError` when this SQLite has no FTS5."""
    db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    try:
        create_schema(db)
    except sqlite3.OperationalError as exc:  # "no such module: fts5": an SQLite built without it
        db.close()
        raise no_fts5(exc) from exc
    return db


DEFAULT_CACHE_MB = 64  # SQLite's page cache for an index file: the default 2 MB rereads the index per query


def open_file(path: Path, cache_mb: int = DEFAULT_CACHE_MB) -> sqlite3.Connection:
    """The index file at `path`, created or converted to this format; SQLite's and the OS's errors raise.

    `cache_mb`: SQLite's page cache, an upper bound on the file's pages held in the process (what the
    operating system caches of the file is not the process's memory)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # it holds skill bodies, as the cache does
    db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")  # readers of other processes do not wait on a writer
        db.execute("PRAGMA synchronous=NORMAL")  # derived data: a lost last commit is re-indexed
        db.execute(f"PRAGMA cache_size=-{int(cache_mb) * 1024}")
        db.execute("BEGIN IMMEDIATE")
        try:
            stored = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        except sqlite3.OperationalError:
            stored = None  # a new file
        if stored is not None and stored[0] != INDEX_FORMAT:
            for table in ("skills", "names", "bodies", "docs", "meta"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
        create_schema(db)
        db.execute("COMMIT")
    except BaseException:
        db.close()
        raise
    return db


def stored_docs(db: sqlite3.Connection) -> dict[tuple[str, str], tuple[int, str, int]]:
    """(group, uri) -> (rowid, made of, body state) of every row the index holds."""
    return {
        (origin, uri): (int(rowid), made_of, int(with_body))
        for rowid, origin, uri, made_of, with_body in db.execute(
            "SELECT rowid, origin, uri, made_of, with_body FROM docs"
        )
    }


def insert_rows(db: sqlite3.Connection, rows: list[IndexRow]) -> None:
    """Write rows into the two ranked tables: every row into `names`, and into `bodies` only a row with
    a heading or a body (a document whose body is pending or empty has no `bodies` row)."""
    db.executemany(
        "INSERT INTO names (rowid, name, description, aliases, origin) VALUES (?, ?, ?, ?, ?)",
        ((row[0], row[1], row[2], row[3], row[6]) for row in rows),
    )
    db.executemany(
        "INSERT INTO bodies (rowid, headings, body) VALUES (?, ?, ?)",
        ((row[0], row[4], row[5]) for row in rows if row[4] or row[5]),
    )


def delete_rows(db: sqlite3.Connection, rowids: list[int]) -> None:
    for table in ("names", "bodies", "docs"):
        db.executemany(f"DELETE FROM {table} WHERE rowid = ?", ((rowid,) for rowid in rowids))


def insert_docs(db: sqlite3.Connection, docs: list[tuple[int, str, str, str, int]]) -> None:
    db.executemany("INSERT INTO docs (rowid, origin, uri, made_of, with_body) VALUES (?, ?, ?, ?, ?)", docs)


def next_rowid(db: sqlite3.Connection) -> int:
    top = db.execute("SELECT max(rowid) FROM docs").fetchone()[0]
    return int(top) + 1 if top is not None else 0


def give_bodies(db: sqlite3.Connection, rows: list[IndexRow], states: list[tuple[int, int]]) -> None:
    """Rows indexed without their body get it: a pending row has a `names` row (its aliases may come from
    the body too) and no `bodies` row."""
    db.executemany("DELETE FROM names WHERE rowid = ?", ((row[0],) for row in rows))
    insert_rows(db, rows)
    db.executemany("UPDATE docs SET with_body = ? WHERE rowid = ?", states)

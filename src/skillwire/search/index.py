"""The index: documents in, a ranking out. It follows a set of documents row by row, in memory or in a file.

A document is plain data (`SearchDocument`: group, uri, name, description, optionally a qualified name
and a revision); its SKILL.md body comes from a `BodySource` the caller gives, asked only when the row is
(re)made. The index follows the `DocumentSet` it is handed, keyed by what each row is made from (group,
name, qualified name, description, revision): a new set re-indexes only the documents it changed, and
with a file a restart over an unchanged set re-indexes nothing and reads no body. A query hands back only
the rows it was asked for (`ranked(..., limit=)`) and counts the rest.

A new index of more than `BODIES_AT_ONCE` documents answers its first query from names, descriptions and
labels, and a background thread indexes the bodies after it; the finished index is what a synchronous
build gives, row for row. Until then `SearchResult.bodies_pending` says how many were ranked without one.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillwire.search import store
from skillwire.search.rank import DEFAULT_RANKING, Ranking, rank
from skillwire.search.scores import TableScores
from skillwire.search.text import aliases_of, content_words, name_text, split_body

logger = logging.getLogger("skillwire.search")

DEFAULT_LIMIT = 200  # documents `SearchIndex.ranked` hands back by default: four pages of list_skills
# New rows a query indexes with their bodies before answering; more than this (a new index of a large
# catalog) are indexed from name, description and label first and get their bodies from a background
# thread, a batch at a time (the README's `bench.search_eval` section has the measurements).
BODIES_AT_ONCE = 1000
_WITHIN_KEPT = 8  # callers' catalogs whose rowids are kept between queries
_BODY_BATCH = 250  # rows the background thread indexes per lock hold: a query waits at most that long

Key = tuple[str, str]  # (group, uri)


@dataclass(frozen=True)
class SearchDocument:
    """One thing to find. `(group, uri)` is its identity in the index.

    `group`: an origin label (the bridge's upstream or local folder label; "" for one server's own
    catalog), indexed as the `origin` column. `qualified_name`: the name as shown when it differs from the
    bare one (the bridge's `origin/name`); "" means the bare name. `revision`: what else the row is made
    from, typically the listed SKILL.md's digest: when it changes, the row and its body are made again.
    `body`: the SKILL.md text itself, for a caller that holds it anyway (None: ask the `BodySource`); a
    changed body must come with a changed `revision`.
    """

    uri: str
    name: str
    description: str
    group: str = ""
    qualified_name: str = ""
    revision: str = ""
    body: str | None = field(default=None, repr=False)

    @property
    def key(self) -> Key:
        return (self.group, self.uri)

    @property
    def shown_name(self) -> str:
        return self.qualified_name or self.name

    def made_of(self) -> str:
        """What the row is made from: when it changes the row is made again, otherwise kept (text, not a
        hash: it is short, and equal text is the only test)."""
        return "\x1f".join((self.group, self.revision, self.name, self.shown_name, self.description))


class DocumentSet:
    """An immutable set of documents to rank. The index re-reads a set only when handed a different
    object: build a new one when the catalog changes, and pass the same one while it does not."""

    def __init__(self, documents: Iterable[SearchDocument]) -> None:
        self.documents: tuple[SearchDocument, ...] = tuple(documents)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[SearchDocument]:
        return iter(self.documents)


BodySource = Callable[[SearchDocument], "str | None"]


@dataclass(frozen=True)
class SearchResult:
    """The first documents of a ranking, best first, and how many matched in all (a long query's weak
    ones cut).

    `bodies_pending`: documents this answer ranked without their SKILL.md body, because the background
    pass of a new index (or one a stopped process left) has not reached them yet; while it is not 0 a
    document that only its body matches is missing, and the ranking changes once the pass is done.
    """

    documents: list[SearchDocument]
    total: int
    bodies_pending: int = 0


class SearchIndex:
    """`ranked(documents, query, limit=..., within=...)`: the documents matching `query`, best first.

    `body_of`, when given, returns a document's SKILL.md text if the caller holds it (None when it does
    not); `note_body_known(key)` after a read makes the next query index it. With `path` (or a callable
    giving it, asked once at the first query) the index is an SQLite file that outlives the process;
    without it, or when the file cannot be used, it is in memory. Several processes may share one file:
    each query runs in one write transaction, and a process that sees another's commit (`PRAGMA
    data_version`) re-reads what the file holds first. Thread-safe: one lock around every query.
    `cache_mb`: SQLite's page cache for an index file (the most of the file held in memory).
    """

    def __init__(
        self,
        body_of: BodySource | None = None,
        *,
        ranking: Ranking = DEFAULT_RANKING,
        path: Path | Callable[[], Path | None] | None = None,
        bodies_at_once: int = BODIES_AT_ONCE,
        cache_mb: int = store.DEFAULT_CACHE_MB,
    ) -> None:
        self._lock = threading.Lock()
        self._cache_mb = cache_mb
        self._path_of = path  # a callable is asked at the first query (a host knows its origins by then)
        self._path: Path | None = None
        self._db: sqlite3.Connection | None = None
        self._on_disk = False
        self._stored: dict[Key, tuple[int, str, int]] = {}  # what the index holds: (rowid, made of, body state)
        self._current: dict[int, SearchDocument] = {}  # rowid -> the document it indexes
        self._rowid_of: dict[Key, int] = {}
        self._by_name: dict[str, list[int]] = {}  # lowercased bare and qualified name -> rowids
        self._followed: DocumentSet | None = None  # the set the index holds (a reference: never reused)
        self._data_version = -1
        self._body_known: set[Key] = set()  # read since indexed without a body: index again with it
        self._last_made: dict[Key, tuple[SearchDocument, str]] = {}  # each row's document at the last sync
        # The last few `within` collections (callers' catalogs) and their rowids, by identity (each held, so
        # its id is not reused); forgotten when the rows change.
        self._within: OrderedDict[int, tuple[object, frozenset[int]]] = OrderedDict()
        self._body_of = body_of
        self._bodies_at_once = bodies_at_once
        self._pending: set[Key] = set()  # rows indexed without their body yet (BODY_PENDING)
        self._worker: threading.Thread | None = None  # indexing the pending bodies
        self._queue: list[Key] = []  # pending rows, highest rowid first (the worker pops the lowest)
        self._stopping = False
        # Each table's bm25(), in Python off FTS5's postings.
        self._scores = (TableScores("names"), TableScores("bodies"))
        self.ranking = ranking
        self.indexed = 0  # rows made since creation (what tests and the benchmark watch)
        self.bodies_indexed = 0  # of which the background thread gave their bodies later
        self.scored_by_sqlite = 0  # queries whose full ranking SQLite's bm25() scored (a word FTS5 splits)

    @property
    def on_disk(self) -> bool:
        return self._on_disk

    @property
    def bodies_pending(self) -> int:
        return len(self._pending)

    def wait_for_bodies(self, timeout: float | None = None) -> bool:
        """Wait until the background thread has indexed every pending body; False if `timeout` passed first."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
        return self._worker is None or not self._worker.is_alive()

    def close(self) -> None:
        self._stopping = True  # the background thread stops after its batch; the rest waits in the file
        worker = self._worker
        if worker is not None:
            worker.join()
        self._stopping = False
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
                self._followed = None
                self._data_version = -1
                for scores in self._scores:
                    scores.detach()

    def note_body_known(self, key: Key) -> None:
        """A document's SKILL.md was just read and verified: index its body from the next query on."""
        with self._lock:
            held = self._stored.get(key)
            if self._body_of is not None and (held is None or not held[2]):
                self._body_known.add(key)

    def prepare(self, documents: DocumentSet) -> int:
        """Bring the index up to `documents` now (what the first query would do); the pending bodies' count.

        A server calls it in the background after its first answer, so no caller waits for the build.
        """
        with self._lock:
            db = self._open()
            db.execute("BEGIN IMMEDIATE" if self._on_disk else "BEGIN")
            try:
                with _collector_paused():
                    self._sync(db, documents)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                self._followed, self._data_version = None, -1
                raise
            self._start_worker()
            return len(self._pending)

    # -- queries ---------------------------------------------------------------------------------------------------

    def ranked(
        self,
        documents: DocumentSet,
        query: str,
        *,
        limit: int | None = DEFAULT_LIMIT,
        within: Collection[Key] | None = None,
    ) -> SearchResult:
        """The first `limit` documents matching `query` (None: all), best first, and how many matched in all.

        `within`: only these keys count (a caller's own catalog); the others are absent from the answer,
        its total and its cut-off. Pass the same collection object again to reuse its resolved rows.
        A query's work is bounded by `limit`, not by the catalog: the total is a count, not a list.
        """
        ranking = self.ranking
        words = content_words(query, stopwords=ranking.stopwords)
        if not words:
            return SearchResult([], 0)
        with self._lock:
            try:
                return self._ranked_locked(documents, query, words, limit, within)
            except sqlite3.DatabaseError as exc:
                if not self._on_disk:
                    raise
                # A corrupt or vanished index file: drop to memory, index again, answer.
                self._unusable(exc)
                if self._db is not None:
                    self._db.close()
                self._db, self._followed, self._data_version, self._stored = None, None, -1, {}
                self._pending = set()
                for scores in self._scores:
                    scores.detach()
                return self._ranked_locked(documents, query, words, limit, within)

    def _ranked_locked(
        self,
        documents: DocumentSet,
        query: str,
        words: list[str],
        limit: int | None,
        within: Collection[Key] | None,
    ) -> SearchResult:
        db = self._open()
        db.execute("BEGIN IMMEDIATE" if self._on_disk else "BEGIN")
        try:
            with _collector_paused():
                self._sync(db, documents)
                rows = self._rows_within(within)
                order, total, by_sqlite = rank(db, self._scores, self.ranking, query, words, limit, self._by_name, rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self._followed, self._data_version = None, -1  # what is held in memory may be ahead of the file
            raise
        self.scored_by_sqlite += by_sqlite
        current = self._current
        found = [current[rowid] for rowid in order if rowid in current]
        self._start_worker()
        pending = len(self._pending)
        if pending and within is not None:
            pending = sum(1 for key in self._pending if key in within)
        return SearchResult(found, total, pending)

    def _rows_within(self, within: Collection[Key] | None) -> frozenset[int] | None:
        if within is None:
            return None
        held = self._within.get(id(within))
        if held is not None and held[0] is within:
            self._within.move_to_end(id(within))
            return held[1]
        rowid_of = self._rowid_of
        rows = frozenset(rowid_of[key] for key in within if key in rowid_of)
        self._within[id(within)] = (within, rows)
        while len(self._within) > _WITHIN_KEPT:
            self._within.popitem(last=False)
        return rows

    def _start_worker(self) -> None:
        if self._pending and self._worker is None and not self._stopping:
            self._worker = threading.Thread(
                target=self._index_pending_bodies, name="skillwire-search-bodies", daemon=True
            )
            self._worker.start()

    # -- the index -------------------------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        if self._path_of is not None:
            self._path = self._path_of() if callable(self._path_of) else self._path_of
            self._path_of = None  # chosen once: a file that failed is not tried again
        if self._path is not None:
            try:
                self._db = store.open_file(self._path, self._cache_mb)
                self._on_disk = True
                return self._db
            except sqlite3.OperationalError as exc:
                if "fts5" in str(exc):
                    raise store.no_fts5(exc) from exc
                self._unusable(exc)
            except (sqlite3.Error, OSError) as exc:
                self._unusable(exc)
        self._db, self._on_disk = store.open_memory(), False
        return self._db

    def _unusable(self, error: Exception) -> None:
        # A derived index: a file that cannot be opened, or is corrupt, costs an in-memory index, never a query.
        logger.warning(
            "search index %s cannot be used (%s); indexing in memory instead",
            self._path,
            str(error).splitlines()[0] if str(error) else type(error).__name__,
        )
        self._path = None

    def _row(self, document: SearchDocument, *, defer: bool = False) -> tuple[store.Columns, int]:
        """The row's columns and its body state; with `defer`, the body is left for the background thread."""
        names = name_text(document.name, document.shown_name)
        if defer:
            own = " ".join(aliases_of(document.description))
            return (names, document.description, own, "", "", document.group), store.BODY_PENDING
        body = document.body
        if body is None and self._body_of is not None:
            body = self._body_of(document)
        headings = prose = ""
        own_text = document.description
        if body:
            split = split_body(body)
            headings, prose = split.headings, split.prose
            own_text = f"{own_text}\n{split.headings}\n{split.prose}"
        aliases = " ".join(aliases_of(own_text))
        state = store.WITH_BODY if body else store.NO_BODY
        return (names, document.description, aliases, headings, prose, document.group), state

    def _sync(self, db: sqlite3.Connection, documents: DocumentSet) -> None:
        """Make the index hold exactly `documents` (inside the caller's transaction)."""
        data_version = int(db.execute("PRAGMA data_version").fetchone()[0])
        if self._followed is documents and not self._body_known and data_version == self._data_version:
            return
        if data_version != self._data_version:  # first use, or another process wrote: what the file holds counts
            for scores in self._scores:
                scores.forget()
            self._stored = store.stored_docs(db)
            self._pending = {key for key, held in self._stored.items() if held[2] == store.BODY_PENDING}
        wanted = {document.key: document for document in documents}
        stale = [held[0] for key, held in self._stored.items() if key not in wanted]
        fresh: list[tuple[SearchDocument, str]] = []
        current: dict[int, SearchDocument] = {}
        remembered = self._last_made
        made: dict[Key, tuple[SearchDocument, str]] = {}
        for key, document in wanted.items():
            known = remembered.get(key)
            # The same document object as at the last sync: what its row is made of is known.
            made_of = known[1] if known is not None and known[0] is document else document.made_of()
            made[key] = (document, made_of)
            held = self._stored.get(key)
            if held is not None and held[1] == made_of and (held[2] or key not in self._body_known):
                current[held[0]] = document
                continue
            if held is not None:
                stale.append(held[0])
            fresh.append((document, made_of))
        self._last_made = made
        # New rows in identity order, so a new index gives equal scores one stable order (rowid breaks ties).
        fresh.sort(key=lambda item: item[0].key)
        if stale or fresh:
            for scores in self._scores:
                scores.forget()
        if stale:
            gone = set(stale)
            store.delete_rows(db, stale)
            self._stored = {key: held for key, held in self._stored.items() if held[0] not in gone}
            self._pending = {key for key in self._pending if key in self._stored}
        if fresh:
            self._add(db, fresh, current)
        by_name: dict[str, list[int]] = {}
        for rowid, document in current.items():
            bare, qualified = document.name.lower(), document.shown_name.lower()
            by_name.setdefault(bare, []).append(rowid)
            if qualified != bare:
                by_name.setdefault(qualified, []).append(rowid)
        for rowids in by_name.values():
            if len(rowids) > 1:
                rowids.sort()
        self._current, self._by_name, self._followed = current, by_name, documents
        self._rowid_of = {document.key: rowid for rowid, document in current.items()}
        self._within = OrderedDict()
        self._body_known = set()
        self._data_version = data_version

    def _add(
        self, db: sqlite3.Connection, fresh: Sequence[tuple[SearchDocument, str]], current: dict[int, SearchDocument]
    ) -> None:
        first = store.next_rowid(db)
        rows: list[store.IndexRow] = []
        docs = []
        defer = len(fresh) > self._bodies_at_once and (
            self._body_of is not None or any(document.body for document, _ in fresh)
        )
        for offset, (document, made_of) in enumerate(fresh):
            columns, with_body = self._row(document, defer=defer)
            rowid = first + offset
            rows.append((rowid, *columns))
            self._stored[document.key] = (rowid, made_of, with_body)
            current[rowid] = document
            docs.append((rowid, document.group, document.uri, made_of, with_body))
            if defer:
                self._pending.add(document.key)
        store.insert_docs(db, docs)
        store.insert_rows(db, rows)
        self.indexed += len(rows)

    # -- bodies, after the first answer ----------------------------------------------------------------------------

    def _index_pending_bodies(self) -> None:
        """The background thread: give pending rows their bodies, a batch at a time, until none is left.

        A batch's bodies are read and split outside the lock (a body may come from a bucket), and written
        under it, each row only if it is still the one read for. Each row keeps its rowid, so the finished
        index holds what a synchronous build would have, row for row, and ranks the same (equal scores are
        ordered by rowid). Queries in between see the rows done.
        """
        while True:
            with self._lock:
                if self._stopping or self._db is None or not self._pending:
                    self._worker = None
                    return
                batch = [(key, self._last_made.get(key)) for key in self._next_batch()]
            made = [(key, known[1], self._row(known[0])) for key, known in batch if known is not None]
            with self._lock:
                db = self._db
                if db is None:
                    self._worker = None
                    return
                try:
                    db.execute("BEGIN IMMEDIATE" if self._on_disk else "BEGIN")
                    self._index_bodies(db, made)
                    db.execute("COMMIT")
                except sqlite3.Error as exc:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    logger.warning("search index: bodies not indexed (%s); the next query retries", exc)
                    self._followed, self._data_version, self._worker = None, -1, None
                    return

    def _next_batch(self) -> list[Key]:
        """The pending rows of lowest rowid. In rowid order because FTS5 flushes its pending postings into
        a new segment whenever a write's rowid is below the last one's: in set order the same work took
        ten times as long and left the index in hundreds of segments."""
        stored = self._stored
        if not self._queue:
            self._queue = sorted(self._pending, key=lambda key: stored[key][0], reverse=True)
        batch: list[Key] = []
        while self._queue and len(batch) < _BODY_BATCH:
            key = self._queue.pop()
            if key in self._pending:
                self._pending.discard(key)
                batch.append(key)
        return batch

    def _index_bodies(self, db: sqlite3.Connection, made: list[tuple[Key, str, tuple[store.Columns, int]]]) -> None:
        rows: list[store.IndexRow] = []
        states: list[tuple[int, int]] = []
        for key, made_of, (columns, state) in made:
            held = self._stored.get(key)
            if held is None or held[2] != store.BODY_PENDING or held[1] != made_of:
                continue  # changed or gone since: the next sync decides
            rows.append((held[0], *columns))
            states.append((state, held[0]))
            self._stored[key] = (held[0], held[1], state)
        if not rows:
            return
        store.give_bodies(db, rows, states)
        for scores in self._scores:
            scores.forget()
        self.bodies_indexed += len(rows)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, back on after it only if it was on before.

    A query's sync and ranking allocate tens of thousands of container objects (a new index's rows and
    keys, a restart's `docs` rows, each word's postings), none of them cyclic, and every 700 of them the
    collector walked the young heap, and now and then the whole heap: a large share of a new index's
    first query (the README's `bench.search_eval` section). Only for the block: `gc` is process-wide, so
    the other threads' cyclic garbage waits for it and is collected when the next allocations after it
    trigger a collection.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

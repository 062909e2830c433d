"""FTS5's own bm25(), computed in Python from what FTS5 stored, so a query over common words stays cheap.

FTS5 ranks by running bm25() on every row that matches and sorting them all: over 10,000 skills whose
bodies are indexed, a word such as "render" or "file" matches thousands of rows, and that scoring alone
took 14-19 ms a query (`bench/search_eval.py --scale`). There is no top-k pruning in FTS5.

`TableScores` reads, once per word and index version, the word's postings (row, and how often it occurs
in each column) from FTS5's `fts5vocab` view of the same index, each row's size from FTS5's docsize
table and the table's totals from its averages record, and then computes for each query the very sum
FTS5 computes (`fts5_aux.c`, fts5Bm25Function): per phrase, IDF = log((N - nHit + 0.5) / (nHit + 0.5))
(1e-6 when not positive), the phrase frequency f summed instance by instance in column order with the
column's weight, and IDF * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)) added phrase by phrase,
k1 = 1.2, b = 0.75, negated. The same IEEE operations in the same order give the same doubles, so the
ranking is FTS5's to the last bit (`tests/search/test_scores.py` compares every score), and a later
query is a few dictionary passes instead of SQLite re-reading and scoring every match.

What FTS5 still does: storage (the index file and its row-by-row updates are unchanged), tokenizing
(a query word's tokens come from FTS5's tokenizer, through a scratch table), and every query this cannot
score exactly (a word that FTS5 splits into several tokens, a phrase): those go to SQL as before.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import OrderedDict
from collections.abc import Collection, Sequence

_K1 = 1.2  # FTS5's bm25() constants (fts5_aux.c); not settable there, so not here
_B = 0.75
_AVERAGES_ROWID = 1  # FTS5 keeps the row count and per-column token totals in its data table's row 1
_MAX_CACHED_POSTINGS = 2_000_000  # (term, row) pairs held before the cache starts over: ~200 MB at worst
_MAX_CACHED_WORDS = 10_000
_SIZES_ONE_BY_ONE = 500  # rows whose sizes are looked up by rowid before all are read at once

# The `tokenize = ...` option of an FTS5 table's CREATE statement, copied to the scratch table that
# tokenizes query words, so they are split and stemmed exactly as the table's rows were.
_TOKENIZE_OPTION = re.compile(r"""\btokenize\s*=\s*('(?:[^']|'')*'|"(?:[^"]|"")*"|[\w]+)""", re.IGNORECASE)

_SUBSETS_KEPT = 8  # callers' row sets whose statistics are kept (as the index keeps their rows)
_SUBSET_WORDS = 256  # phrases whose contributions are kept per row set

Phrase = tuple[str, bool]  # a query word and whether it is prefix-matched ("word"*)
Counts = tuple[int, ...]  # how many times a term occurs in each column of one row
# A row set's statistics: the set, N, rowid -> k1 * (1 - b + b * D / avgdl), (phrase, weights) -> contributions.
_Subset = tuple[object, int, dict[int, float], dict[tuple[str, tuple[float, ...]], dict[int, float]]]


def varints(blob: bytes) -> list[int]:
    """The SQLite varints in `blob` (FTS5's docsize and averages records are sequences of them)."""
    if all(byte < 0x80 for byte in blob):
        return list(blob)
    values = []
    i, size = 0, len(blob)
    while i < size:
        value = 0
        for position in range(9):
            byte = blob[i]
            i += 1
            if position == 8:  # the ninth byte gives all eight bits
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


class TableScores:
    """bm25() of one FTS5 table for OR-queries of single-token words, exact, from cached postings.

    `forget()` must be called whenever the table's rows change (the caller's sync does); the postings,
    row sizes and totals are read again lazily. `scores()` returns None for a query it cannot score
    exactly, and the caller asks SQLite.
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self._db: sqlite3.Connection | None = None
        self._columns: list[str] = []
        self._tokens: dict[str, tuple[str, ...]] = {}  # query word -> FTS5's tokens for it (tokenizer only)
        self.forget()

    def detach(self) -> None:
        """The connection was closed: the next query attaches to the new one and reads everything again."""
        self._db = None
        self.forget()

    def forget(self) -> None:
        """The table changed: what was read from it is stale."""
        self._postings: dict[str, dict[int, Counts]] = {}
        self._frequencies: dict[tuple[str, tuple[float, ...]], dict[int, float]] = {}
        self._contributed: dict[tuple[str, tuple[float, ...]], dict[int, float]] = {}
        self._prefixed: dict[str, list[str]] = {}
        self._held = 0
        self._row_count = -1
        self._avgdl = 1.0
        self._length_norm: dict[int, float] = {}  # rowid -> k1 * (1 - b + b * D / avgdl), of the rows read
        self._all_sizes = False  # whether _length_norm holds every row
        self._sizes: dict[int, int] | None = None  # rowid -> D (tokens in every column), read for subsets
        # The last few subsets' own statistics (`scores(within=)`), by identity (each held, so its id is not
        # reused): the subset, N, its rows' norms, and the phrases' contributions computed over it.
        self._subsets: OrderedDict[int, _Subset] = OrderedDict()

    # -- reading FTS5's index ----------------------------------------------------------------------------------

    def _attach(self, db: sqlite3.Connection) -> None:
        if db is self._db:
            return
        table = self.table
        # In the connection's temp schema: views of the index, never written to the index file.
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_instances USING fts5vocab(main, {table}, instance)"
        )
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_terms USING fts5vocab(main, {table}, row)")
        found = db.execute("SELECT sql FROM main.sqlite_master WHERE name = ?", (table,)).fetchone()
        option = _TOKENIZE_OPTION.search(found[0] if found is not None else "")
        tokenize = f", tokenize = {option.group(1)}" if option is not None else ""
        db.execute(f"DROP TABLE IF EXISTS temp.{table}_query_words")
        db.execute(f"CREATE VIRTUAL TABLE temp.{table}_query_words USING fts5(word{tokenize})")
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_query_tokens "
            f"USING fts5vocab(temp, {table}_query_words, instance)"
        )
        self._columns = [row[1] for row in db.execute(f"PRAGMA main.table_info({table})")]
        self._tokens = {}
        self._db = db
        self.forget()

    def _word_tokens(self, db: sqlite3.Connection, word: str) -> tuple[str, ...]:
        tokens = self._tokens.get(word)
        if tokens is None:
            # FTS5's own tokenizer (the scratch table's is the index's) decides what a query word is.
            table = self.table
            db.execute(f"INSERT INTO temp.{table}_query_words (rowid, word) VALUES (1, ?)", (word,))
            tokens = tuple(
                term for (term,) in db.execute(f"SELECT term FROM temp.{table}_query_tokens ORDER BY offset")
            )
            db.execute(f"DELETE FROM temp.{table}_query_words")
            if len(self._tokens) >= _MAX_CACHED_WORDS:
                self._tokens.clear()
            self._tokens[word] = tokens
        return tokens

    def _load_totals(self, db: sqlite3.Connection) -> None:
        table = self.table
        found = db.execute(f"SELECT block FROM main.{table}_data WHERE id = ?", (_AVERAGES_ROWID,)).fetchone()
        totals = varints(bytes(found[0])) if found is not None and found[0] else [0]
        self._row_count = totals[0]
        # (double)nToken / (double)nRow, as fts5Bm25GetData; FTS5 never scores an empty table
        self._avgdl = float(sum(totals[1:])) / float(self._row_count) if self._row_count > 0 else 1.0
        self._length_norm, self._all_sizes = {}, False

    def _norms(self, db: sqlite3.Connection, rowids: Collection[int]) -> dict[int, float]:
        """rowid -> k1 * (1 - b + b * D / avgdl) for at least `rowids`: a few rows' sizes are looked up, and
        past `_SIZES_ONE_BY_ONE` every row's are read at once (a rare word's query stays a few lookups)."""
        norm, avgdl = self._length_norm, self._avgdl
        if self._all_sizes:
            return norm
        missing = [rowid for rowid in rowids if rowid not in norm]
        if not missing:
            return norm
        table = self.table
        if len(missing) + len(norm) > _SIZES_ONE_BY_ONE:
            found = db.execute(f"SELECT id, sz FROM main.{table}_docsize")
            self._all_sizes = True
        else:
            marks = ", ".join("?" * len(missing))
            found = db.execute(f"SELECT id, sz FROM main.{table}_docsize WHERE id IN ({marks})", missing)
        for rowid, sizes in found:
            size = float(sum(varints(bytes(sizes))))  # xColumnSize(-1): the row's tokens in every column
            norm[int(rowid)] = _K1 * (1 - _B + _B * size / avgdl)
        return norm

    def _term_postings(self, db: sqlite3.Connection, term: str) -> dict[int, Counts]:
        held = self._postings.get(term)
        if held is not None:
            return held
        column_of = {name: i for i, name in enumerate(self._columns)}
        width = len(self._columns)
        rows: dict[int, list[int]] = {}
        for rowid, column, count in db.execute(
            f"SELECT doc, col, count(*) FROM temp.{self.table}_instances WHERE term = ? GROUP BY doc, col", (term,)
        ):
            counts = rows.get(rowid)
            if counts is None:
                counts = rows[rowid] = [0] * width
            counts[column_of[column]] = int(count)
        postings = {int(rowid): tuple(counts) for rowid, counts in rows.items()}
        if self._held + len(postings) > _MAX_CACHED_POSTINGS:
            self._postings, self._frequencies, self._contributed, self._held = {}, {}, {}, 0
        self._postings[term] = postings
        self._held += len(postings)
        return postings

    def _terms_with_prefix(self, db: sqlite3.Connection, prefix: str) -> list[str]:
        terms = self._prefixed.get(prefix)
        if terms is None:
            # FTS5 matches a prefix against the stored terms' UTF-8 bytes, which order as code points do.
            terms = []
            cursor = db.execute(f"SELECT term FROM temp.{self.table}_terms WHERE term >= ?", (prefix,))
            for (term,) in cursor:
                if not term.startswith(prefix):
                    break  # sorted: past the prefix's range
                terms.append(term)
            cursor.close()
            self._prefixed[prefix] = terms
        return terms

    # -- scoring -----------------------------------------------------------------------------------------------

    def _frequency_of(self, postings: dict[int, Counts], weights: tuple[float, ...]) -> dict[int, float]:
        memo: dict[Counts, float] = {}
        out: dict[int, float] = {}
        for rowid, counts in postings.items():
            frequency = memo.get(counts)
            if frequency is None:
                frequency = 0.0
                for column, count in enumerate(counts):  # instance by instance, in column order, as FTS5 adds
                    weight = weights[column] if column < len(weights) else 1.0
                    for _ in range(count):
                        frequency += weight
                memo[counts] = frequency
            out[rowid] = frequency
        return out

    def _phrase_frequencies(
        self, db: sqlite3.Connection, token: str, prefix: bool, weights: tuple[float, ...]
    ) -> dict[int, float]:
        key = (token + ("*" if prefix else ""), weights)
        held = self._frequencies.get(key)
        if held is not None:
            return held
        terms = self._terms_with_prefix(db, token) if prefix else [token]
        if len(terms) == 1:
            postings = self._term_postings(db, terms[0])
        else:
            summed: dict[int, list[int]] = {}
            for term in terms:
                for rowid, counts in self._term_postings(db, term).items():
                    total = summed.get(rowid)
                    if total is None:
                        summed[rowid] = list(counts)
                    else:
                        for column, count in enumerate(counts):
                            total[column] += count
            postings = {rowid: tuple(counts) for rowid, counts in summed.items()}
        frequencies = self._frequency_of(postings, weights)
        self._frequencies[key] = frequencies
        return frequencies

    def _contributions(
        self, db: sqlite3.Connection, token: str, prefix: bool, weights: tuple[float, ...]
    ) -> dict[int, float]:
        """rowid -> IDF * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl)) of one phrase, for every row it
        occurs in: what the phrase adds to a row's sum. It depends on the index version only (N, nHit, D and
        avgdl are the table's), so it is computed once per phrase until the table changes."""
        key = (token + ("*" if prefix else ""), weights)
        held = self._contributed.get(key)
        if held is not None:
            return held
        frequencies = self._phrase_frequencies(db, token, prefix, weights)
        if self._row_count < 0:
            self._load_totals(db)
        rows, norm = self._row_count, self._norms(db, frequencies.keys())
        hits = len(frequencies)
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        k1_plus_1 = _K1 + 1.0
        contributed = {rowid: idf * ((f * k1_plus_1) / (f + norm[rowid])) for rowid, f in frequencies.items()}
        self._contributed[key] = contributed
        return contributed

    def _subset_statistics(self, db: sqlite3.Connection, within: Collection[int]) -> _Subset:
        """N and each row's k1 * (1 - b + b * D / avgdl) for the table's rows in `within`, avgdl being
        theirs: (double)nToken / (double)nRow as fts5Bm25GetData computes it for a whole table."""
        held = self._subsets.get(id(within))
        if held is not None and held[0] is within:
            self._subsets.move_to_end(id(within))
            return held
        if self._sizes is None:
            self._sizes = {
                int(rowid): sum(varints(bytes(sizes)))
                for rowid, sizes in db.execute(f"SELECT id, sz FROM main.{self.table}_docsize")
            }
        sizes = self._sizes
        rows = [rowid for rowid in within if rowid in sizes]
        count = len(rows)
        avgdl = float(sum(sizes[rowid] for rowid in rows)) / float(count) if count else 1.0
        norms = {rowid: _K1 * (1 - _B + _B * float(sizes[rowid]) / avgdl) for rowid in rows}
        subset: _Subset = (within, count, norms, {})
        self._subsets[id(within)] = subset
        while len(self._subsets) > _SUBSETS_KEPT:
            self._subsets.popitem(last=False)
        return subset

    def _subset_contributions(
        self, db: sqlite3.Connection, token: str, prefix: bool, weights: tuple[float, ...], within: Collection[int]
    ) -> dict[int, float]:
        """`_contributions` over the rows of `within` only, with their own N, hits and average length."""
        _, count, norms, contributions = self._subset_statistics(db, within)
        key = (token + ("*" if prefix else ""), weights)
        held = contributions.get(key)
        if held is not None:
            return held
        frequencies = self._phrase_frequencies(db, token, prefix, weights)
        mine = {rowid: f for rowid, f in frequencies.items() if rowid in norms}
        hits = len(mine)
        idf = math.log((count - hits + 0.5) / (hits + 0.5)) if count else 0.0
        if idf <= 0.0:
            idf = 1e-6
        k1_plus_1 = _K1 + 1.0
        contributed = {rowid: idf * ((f * k1_plus_1) / (f + norms[rowid])) for rowid, f in mine.items()}
        if len(contributions) >= _SUBSET_WORDS:
            contributions.clear()  # bounded: a caller's many distinct words start the cache over
        contributions[key] = contributed
        return contributed

    def scores(
        self,
        db: sqlite3.Connection,
        phrases: Sequence[Phrase],
        weights: tuple[float, ...],
        within: Collection[int] | None = None,
    ) -> dict[int, float] | None:
        """rowid -> the sum bm25(table, *weights) negates, for every row matching any phrase (higher is
        better; FTS5's score is exactly -1.0 times it), or None when a word is not one token (a phrase
        query, which only SQLite scores). The dict may be a cached one: the caller must not change it.

        `within`: only these rows, scored as FTS5 would score a table holding only them (its own row
        count, each word's hits among them, their average length), so the rows outside change nothing."""
        self._attach(db)
        tokens: list[tuple[str, bool]] = []
        for word, prefix in phrases:
            found = self._word_tokens(db, word)
            if len(found) != 1:
                return None
            tokens.append((found[0], prefix))
        if not tokens:
            return {}
        if within is not None:
            parts = [self._subset_contributions(db, token, prefix, weights, within) for token, prefix in tokens]
        else:
            parts = [self._contributions(db, token, prefix, weights) for token, prefix in tokens]
        if len(parts) == 1:
            return parts[0]  # 0.0 + c is c: FTS5's sum of one phrase
        sums = dict(parts[0])
        get = sums.get
        for part in parts[1:]:  # phrase by phrase, as FTS5 adds them
            for rowid, contribution in part.items():
                sums[rowid] = get(rowid, 0.0) + contribution
        return sums

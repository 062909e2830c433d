"""How matches are ranked: BM25 over two FTS5 tables, added, with the knobs in `Ranking`.

A model looking for "the skill that fills PDF forms" among thousands types words, not names, and often
types the user's whole task. What is indexed, per document, each a column with its own BM25 weight, in two
FTS5 tables whose bm25() scores are added (`body_share` weighs the second):

- `names`, what the skill says it is: name, description, aliases, origin label;
- `bodies`, what its SKILL.md says: headings and prose.

Two tables, not one, because FTS5's bm25() normalises a row's term counts by the length of the whole row
and takes a word's IDF over rows matching it in any column: in one table a skill with a long body lost
its own name's and description's matches to a neighbour with a short body, and a word every body uses
weighed as little in names. Each table has its own lengths and IDF, so a match in a short description
counts as such whatever the body's length.

Query words that are English stopwords or task filler ("please", "help") are dropped, so in a long task
the key words are what counts. Prefix matching ("deplo" finds "deployment") is only for short queries (a
word or three, each four letters or more): in a task-length query "for" would match "format" and
"forecast". A task-length query also gets a relevance cut-off (`relative_cutoff` of the best score), so
the model is told that a few skills matched, not "273 of 302". The weights and the cut-off were chosen on
`bench/search_items/tune.txt` (`python -m bench.search_eval --sweep`); FTS5's bm25() fixes k1=1.2 and
b=0.75. An exact name (bare or qualified) ranks first, whatever BM25 says.

Each table's bm25() is computed in Python from FTS5's own postings (`search/scores.py`, exactly FTS5's
doubles) when it can be, otherwise by SQLite; either way the order is FTS5's: score, then rowid.

`within` restricts a ranking to some rows (a caller's own catalog): every row outside it is dropped
before anything is counted, cut or ordered, so it is absent from the answer, the total and the
cut-off's best score. Scored in Python, the rows are scored with their own statistics (row count, each
word's hits, average length), as an index holding only them would score them, so the rows outside
change nothing; a query only SQLite can score (a word FTS5 splits into several tokens) keeps the whole
index's statistics.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from skillwire.search.scores import Phrase, TableScores


@dataclass(frozen=True)
class Ranking:
    """The ranking's knobs (bm25() column weights, prefix and cut-off rules); the defaults were chosen on
    the tuning items of `bench/search_eval.py`, which sweeps them."""

    # The `names` table's columns (what a skill says it is). On the tuning items any of name 2-8,
    # description 1-3, aliases 1-3 with body_share 0.8-1.2 scored within one item of the best: these
    # sit in the middle of that plateau rather than on its edge.
    name: float = 4.0
    description: float = 2.0
    aliases: float = 2.0
    origin: float = 0.5
    # The `bodies` table's columns: a heading says what a section is about, prose may mention anything.
    headings: float = 1.5
    body: float = 1.0
    body_share: float = 1.0  # the bodies table's score is added times this (0: names only)
    prefix_max_words: int = 3  # a query of at most this many words gets prefix matching
    prefix_min_chars: int = 4  # and only on words at least this long
    relative_cutoff: float = 0.3  # a long query keeps the skills scoring at least this share of the best
    cutoff_min_words: int = 4  # a query with fewer content words keeps every match
    min_kept: int = 10  # the cut never leaves fewer than this many (when that many matched)
    stopwords: bool = True


DEFAULT_RANKING = Ranking()

DEFAULT_RANKING = Ranking()


def phrases_of(words: list[str], ranking: Ranking) -> list[Phrase]:
    """Each query word and whether it is prefix-matched: the query is these phrases OR-ed."""
    prefix = len(words) <= ranking.prefix_max_words
    return [(word, prefix and len(word) >= ranking.prefix_min_chars) for word in words]


def match_expression(phrases: list[Phrase]) -> str:
    # Each word is a quoted FTS5 string (a double quote inside is doubled), so no query text is ever
    # read as FTS5 syntax (AND, NEAR, column filters, ...).
    return " OR ".join('"' + word.replace('"', '""') + '"' + ("*" if prefix else "") for word, prefix in phrases)


def words_expression(words: list[str], ranking: Ranking) -> str:
    return match_expression(phrases_of(words, ranking))


def rank(
    db: sqlite3.Connection,
    scores: tuple[TableScores, TableScores],
    ranking: Ranking,
    query: str,
    words: list[str],
    limit: int | None,
    by_name: Mapping[str, list[int]],
    within: Collection[int] | None = None,
) -> tuple[list[int], int, bool]:
    """The rowids of the first `limit` (None: all) matches of `words`, best first, how many matched in all
    (a long query's weak matches cut), and whether SQLite scored them (a word FTS5 splits).

    `by_name`: lowercased bare and qualified names -> rowids, for the exact-name rule. `within`: only these
    rows count (see the module docstring).
    """
    depth = -1 if limit is None else max(limit, ranking.min_kept)
    phrases = phrases_of(words, ranking)
    expression = match_expression(phrases)
    sums = table_sums(db, scores, ranking, phrases, within)
    by_sqlite = sums is None
    matches = _Matches(db, expression, ranking, sums, within)
    rows = matches.best(depth)
    complete = depth < 0 or len(rows) < depth  # every match is in `rows`
    matched = len(rows) if complete else matches.count()
    total = matched
    if len(words) >= ranking.cutoff_min_words and matched > ranking.min_kept:
        # bm25() is negative, lower is better: keep what scores at least a share of the best.
        threshold = rows[0][1] * ranking.relative_cutoff
        passing = sum(1 for _, score in rows if score <= threshold)
        if passing == len(rows) and not complete:
            passing = matches.count_at_most(threshold)
        total = max(ranking.min_kept, passing)
        rows = rows[: max(ranking.min_kept, passing)]
    order = [row[0] for row in rows]
    named_exactly = [rowid for rowid in by_name.get(query.strip().lower(), []) if within is None or rowid in within]
    if named_exactly:
        present = set(order)
        missing = [r for r in named_exactly if r not in present]
        beyond = matches.matching(missing) if missing and not complete else set()
        exact = [r for r in named_exactly if r in present or r in beyond]
        if exact:
            order = exact + [rowid for rowid in order if rowid not in exact]
    return (order if limit is None else order[:limit]), total, by_sqlite


def table_sums(
    db: sqlite3.Connection,
    scores: tuple[TableScores, TableScores],
    ranking: Ranking,
    phrases: list[Phrase],
    within: Collection[int] | None = None,
) -> dict[int, float] | None:
    """rowid -> what bm25() of `names` plus `body_share` times bm25() of `bodies` negates (higher is better),
    computed in Python; None when a table cannot be scored so (then SQLite scores both). With `within`, as
    the tables would score holding only those rows."""
    names, bodies = scores
    weights = (ranking.name, ranking.description, ranking.aliases, ranking.origin)
    named = names.scores(db, phrases, weights, within)
    if named is None:
        return None
    if ranking.body_share <= 0:
        return named
    read = bodies.scores(db, phrases, (ranking.headings, ranking.body), within)
    if read is None:
        return None
    share = ranking.body_share
    scaled = read if share == 1.0 else {rowid: share * score for rowid, score in read.items()}
    # What SQL computes: the names row's score plus share * the bodies row's (0.0 where a table has none).
    # Adding two doubles is exact either way round, so the larger dict is copied (at C speed) and the
    # smaller one added to it. Both may be cached dicts: neither is changed in place.
    small, large = (named, scaled) if len(named) <= len(scaled) else (scaled, named)
    sums = dict(large)
    get = sums.get
    for rowid, score in small.items():
        sums[rowid] = get(rowid, 0.0) + score
    return sums


class _Matches:
    """One query's matches: a row's score is bm25() over `names` plus `body_share` times bm25() over `bodies`
    (negative, lower is better; a row matching in one table only scores 0 in the other). Scored in Python
    (`search/scores.py`, the same doubles as FTS5's bm25()) when it can, otherwise asked of SQLite."""

    def __init__(
        self,
        db: sqlite3.Connection,
        expression: str,
        ranking: Ranking,
        sums: dict[int, float] | None,
        within: Collection[int] | None = None,
    ) -> None:
        self._db, self._expression, self._sums = db, expression, sums
        names = ", ".join(str(w) for w in (ranking.name, ranking.description, ranking.aliases, ranking.origin))
        parts = [f"SELECT rowid, bm25(names, {names}) AS score FROM names WHERE names MATCH ?1"]
        matches = ["SELECT rowid FROM names WHERE names MATCH ?1"]
        self._tables = ["names"]
        if ranking.body_share > 0:
            bodies = ", ".join(str(w) for w in (ranking.headings, ranking.body))
            parts.append(
                f"SELECT rowid, {ranking.body_share!r} * bm25(bodies, {bodies}) AS score FROM bodies "
                "WHERE bodies MATCH ?1"
            )
            matches.append("SELECT rowid FROM bodies WHERE bodies MATCH ?1")
            self._tables.append("bodies")
        # (rowid, score) per table a row matches in. Its LIMIT keeps SQLite from flattening it into the
        # outer query, where bm25() cannot be called (names only: "unable to use function bm25").
        self._scored = " UNION ALL ".join(parts) + " LIMIT -1"
        self._matches = " UNION ".join(matches)  # each matching rowid once
        if within is not None:
            if sums is None:
                # SQLite scored the rows: all of them are read once (no LIMIT can skip the rows outside
                # `within`), as the negated sums the Python path holds, which order the same way.
                found = self._db.execute(
                    f"SELECT rowid, sum(score) AS total FROM ({self._scored}) GROUP BY rowid", (self._expression,)
                )
                sums = {int(rowid): -float(total) for rowid, total in found}
            self._sums = {rowid: total for rowid, total in sums.items() if rowid in within}

    def best(self, limit: int) -> list[tuple[int, float]]:
        """The first `limit` (-1: all) matches as (rowid, score), best first; equal scores by rowid."""
        sums = self._sums
        if sums is None:
            rows = self._db.execute(
                f"SELECT rowid, sum(score) AS total FROM ({self._scored}) GROUP BY rowid "
                "ORDER BY total, rowid LIMIT ?2",
                (self._expression, limit),
            ).fetchall()
            return [(int(rowid), float(score)) for rowid, score in rows]
        if 0 <= limit < len(sums):
            # The limit-th best sum (a C-speed pass over floats), then only the rows at least that good
            # are sorted: ties at the edge are all kept, so the order is ORDER BY score, rowid.
            edge = heapq.nlargest(limit, sums.values())[-1] if limit else float("inf")
            candidates = [(-total, rowid) for rowid, total in sums.items() if total >= edge]
        else:
            candidates = [(-total, rowid) for rowid, total in sums.items()]
        candidates.sort()
        return [(rowid, score) for score, rowid in candidates[: limit if limit >= 0 else None]]

    def count(self) -> int:
        """How many rows match: a count, with no row handed to Python."""
        if self._sums is None:
            found = self._db.execute(f"SELECT count(*) FROM ({self._matches})", (self._expression,)).fetchone()
            return int(found[0])
        return len(self._sums)

    def count_at_most(self, threshold: float) -> int:
        """How many matches score at most `threshold` (bm25(), negative)."""
        if self._sums is None:
            found = self._db.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM ({self._scored}) GROUP BY rowid HAVING sum(score) <= ?2)",
                (self._expression, threshold),
            ).fetchone()
            return int(found[0])
        least = -threshold  # -1.0 * total <= threshold exactly when total >= -threshold (negation is exact)
        return sum(1 for total in self._sums.values() if total >= least)

    def matching(self, rowids: list[int]) -> set[int]:
        """Which of `rowids` match.

        A few are looked up one by one (FTS5 seeks a rowid in each doclist); more, by one pass over the
        matches, with no scoring. Never `rowid IN (...)`: FTS5 then runs the whole match once per rowid.
        """
        if self._sums is not None:
            sums = self._sums
            return {rowid for rowid in rowids if rowid in sums}
        if len(rowids) <= _LOOKUPS:
            return {
                rowid
                for rowid in rowids
                if any(
                    self._db.execute(
                        f"SELECT 1 FROM {table} WHERE {table} MATCH ? AND rowid = ?", (self._expression, rowid)
                    ).fetchone()
                    for table in self._tables
                )
            }
        wanted = set(rowids)
        found = self._db.execute(self._matches, (self._expression,))
        return {int(rowid) for (rowid,) in found if rowid in wanted}


_LOOKUPS = 8

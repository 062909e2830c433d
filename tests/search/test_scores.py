"""Each table's bm25() is computed in Python from FTS5's own postings (`search/scores.py`), so a
query over common words does not have SQLite score every match (issue 21: later queries < 10 ms); every
score must be FTS5's to the last bit, so the ranking cannot change."""

from __future__ import annotations

import sqlite3

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search import SkillSearch
from skillwire.search import rank
from skillwire.search.scores import TableScores, varints

COLUMNS = ("name", "description", "body")
TOKENIZE = "porter unicode61 remove_diacritics 2"
ROWS = [
    (
        "deploy service",
        "Deploys a service to the cluster.",
        "## Deploying\n\nDeployment steps, deployer notes, deploy.",
    ),
    ("invoice", "Bills the customer. Billing and invoices.", "Invoice invoice invoice the café's customer."),
    ("diagram", "Draws a diagram of the deployment.", "Render the diagram; rendering is slow. " * 40),
    ("cafe", "Menus for a café.", "Cafe, café, CAFÉ and cafés."),
    ("empty", "", ""),
    ("lint", "Lints code.", "lint lint lint " * 90 + " deploy"),
]
QUERIES: list[list[tuple[str, bool]]] = [
    [("deploy", False)],
    [("deplo", True)],
    [("deploy", True), ("invoice", False), ("diagram", True)],
    [("cafe", False), ("render", True)],
    [("ceramics", False)],
    [("lint", False), ("the", False), ("deploy", False)],
    [("invoices", False), ("invoice", False)],  # two phrases with one stem: each counted, as FTS5 does
    [("caf", True)],
]


def fts5_table() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute(f"CREATE VIRTUAL TABLE docs USING fts5({', '.join(COLUMNS)}, tokenize = '{TOKENIZE}')")
    db.executemany(
        f"INSERT INTO docs (rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?)", [(i, *r) for i, r in enumerate(ROWS)]
    )
    return db


def sqlite_scores(
    db: sqlite3.Connection, phrases: list[tuple[str, bool]], weights: tuple[float, ...]
) -> dict[int, float]:
    expression = " OR ".join(f'"{word}"' + ("*" if prefix else "") for word, prefix in phrases)
    columns = ", ".join(str(w) for w in weights)
    found = db.execute(f"SELECT rowid, bm25(docs, {columns}) FROM docs WHERE docs MATCH ?", (expression,))
    return {int(rowid): float(score) for rowid, score in found}


def python_scores(
    scores: TableScores, db: sqlite3.Connection, phrases: list[tuple[str, bool]], weights: tuple[float, ...]
) -> dict[int, float]:
    sums = scores.scores(db, phrases, weights)
    assert sums is not None
    return {rowid: -1.0 * total for rowid, total in sums.items()}


@pytest.mark.parametrize("weights", [(1.0, 1.0, 1.0), (6.0, 2.0, 0.6), (5.0, 1.0, 0.0), (0.3, 0.7, 0.1)])
def test_every_score_is_fts5s_own_to_the_last_bit(weights: tuple[float, float, float]) -> None:
    db = fts5_table()
    scores = TableScores("docs")
    for phrases in QUERIES:
        assert python_scores(scores, db, phrases, weights) == sqlite_scores(db, phrases, weights), phrases
        assert python_scores(scores, db, phrases, weights) == sqlite_scores(db, phrases, weights)  # cached: same


def test_after_rows_change_the_scores_follow_the_table() -> None:
    db = fts5_table()
    scores = TableScores("docs")
    weights = (6.0, 2.0, 0.6)
    assert python_scores(scores, db, QUERIES[2], weights) == sqlite_scores(db, QUERIES[2], weights)
    db.execute("DELETE FROM docs WHERE rowid = 2")
    db.execute("INSERT INTO docs (rowid, name, description, body) VALUES (9, 'deploy', 'deploy deploy', 'x')")
    scores.forget()  # what the search's sync does after changing rows
    for phrases in QUERIES:
        assert python_scores(scores, db, phrases, weights) == sqlite_scores(db, phrases, weights), phrases


def test_a_word_fts5_splits_is_left_to_sqlite() -> None:
    db = fts5_table()
    # U+19B0 is a letter to Python's \w but a separator to unicode61: FTS5 reads "ab\u19b0cd" as a phrase.
    assert TableScores("docs").scores(db, [("ab\u19b0cd", False)], (1.0, 1.0, 1.0)) is None


def test_varints_are_sqlites() -> None:
    assert varints(bytes([5, 0, 0x7F])) == [5, 0, 127]
    assert varints(bytes([0x81, 0x3B, 0x01])) == [187, 1]
    assert varints(bytes([0x82, 0x80, 0x00])) == [32768]
    assert varints(bytes([0xFF] * 8 + [0xFF])) == [2**64 - 1]


def entry(name: str, description: str) -> SkillEntry:
    uri = f"skill://{name}/SKILL.md"
    return SkillEntry(uri, {"name": name, "description": description}, (ManifestFile(uri, "sha256:" + "0" * 64, 10),))


WORDS = ["deploy", "invoice", "schema", "render", "audit", "billing", "cluster", "lint"]


def big_catalog(count: int) -> tuple[Registry, SkillSearch]:
    registry = Registry()
    registry.set_origin(
        "work",
        "mcp",
        [entry(f"skill-{i:04d}", f"Helps with {WORDS[i % 8]} work for team {i % 31}.") for i in range(count)],
    )

    def body_of(skill: RegisteredSkill) -> str:
        i = int(skill.name.split("-")[1])
        return f"# Use\n\n{WORDS[(i * 3) % 8]} and {WORDS[(i * 5) % 8]}. " + f"Check the {WORDS[(i * 7) % 8]}. " * (
            i % 9
        )

    return registry, SkillSearch(body_of)


@pytest.mark.parametrize(
    "query", ["render the invoice schema", "audit the cluster billing forecast before the deploy", "lint", "abᦰcd lint"]
)
def test_a_query_ranks_as_sqlite_ranks_it(query: str, monkeypatch: pytest.MonkeyPatch) -> None:
    registry, search = big_catalog(600)
    found = search.ranked(registry, query, limit=50)
    assert search.scored_by_sqlite == 0 or "ᦰ" in query
    _, reference = big_catalog(600)
    monkeypatch.setattr(rank, "table_sums", lambda *args: None)  # the SQL path: bm25() of both tables
    expected = reference.ranked(registry, query, limit=50)
    assert reference.scored_by_sqlite == 1
    assert ([s.name for s in found.skills], found.total) == ([s.name for s in expected.skills], expected.total)


def test_later_queries_over_common_words_are_not_scored_by_sqlite() -> None:
    registry, search = big_catalog(600)
    for query in ("render the invoice schema", "deploy", "audit cluster billing lint schema"):
        assert search.ranked(registry, query, limit=50).total > 50  # more matches than the page holds
    assert search.scored_by_sqlite == 0
    search.ranked(registry, "ab\u19b0cd", limit=50)
    assert search.scored_by_sqlite == 1

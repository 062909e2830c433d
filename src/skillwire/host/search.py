"""Ranked search over the host's registry: SQLite FTS5 with BM25, in memory, rebuilt when the registry changes.

A model looking for "the skill that fills PDF forms" among thousands types words, not names, so a
substring match is not enough: every skill's name (split on `-`, `_` and `/`, the qualified name
too), description and origin label are indexed with the `porter unicode61` tokenizer (stemming, so
"deploying" finds "deployment"; diacritics folded) and ranked with `bm25()`, a name hit weighing
more than a description hit. Query words are ORed and matched as prefixes (three letters or more),
so a partial or extra word narrows the ranking instead of emptying it. The index lives in an
in-memory SQLite database (the stdlib module ships FTS5) and is rebuilt only when
`Registry.version` moves, so a query after the listing is cached costs one FTS lookup.
"""

from __future__ import annotations

import re
import sqlite3
import threading

from skillwire.core.errors import HostError
from skillwire.host.registry import RegisteredSkill, Registry

# Words of a query: letters and digits of any script (what unicode61 keeps as token characters).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_QUERY_WORDS = 32  # more words than this is a paragraph, not a query; the rest are ignored
_MIN_PREFIX = 3  # shorter words match whole tokens only: "a*" would match half the catalog
# bm25() column weights: name, description, origin label.
_BM25_WEIGHTS = "5.0, 1.0, 0.5"


def query_words(query: str) -> list[str]:
    """The distinct lowercased words of `query`, in order, at most `MAX_QUERY_WORDS`."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        seen.setdefault(word, None)
    return list(seen)[:MAX_QUERY_WORDS]


def _match_expression(words: list[str]) -> str:
    # Each word is a quoted FTS5 string (a double quote inside is doubled), so no query text is ever
    # read as FTS5 syntax (AND, NEAR, column filters, ...).
    terms = []
    for word in words:
        quoted = '"' + word.replace('"', '""') + '"'
        terms.append(quoted + "*" if len(word) >= _MIN_PREFIX else quoted)
    return " OR ".join(terms)


def _name_text(skill: RegisteredSkill) -> str:
    # The name and the qualified name (origin/path suffix), separators as spaces so each part is a token.
    return re.sub(r"[-_/.:]+", " ", f"{skill.name} {skill.display_name}")


class SkillSearch:
    """`search(registry, query)`: the registry's skills matching `query`, best first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._skills: list[RegisteredSkill] = []
        self._indexed: tuple[int, int] | None = None  # (id(registry), registry.version) of the built index

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
                self._indexed = None

    def _build(self, registry: Registry) -> sqlite3.Connection:
        key = (id(registry), registry.version)
        if self._db is not None and self._indexed == key:
            return self._db
        if self._db is not None:
            self._db.close()
        db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            db.execute(
                "CREATE VIRTUAL TABLE skills USING fts5(name, description, origin, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
        except sqlite3.OperationalError as exc:  # "no such module: fts5": an SQLite built without it
            db.close()
            raise HostError(
                f"searching skills needs SQLite with FTS5, which this Python's sqlite3 ({sqlite3.sqlite_version}) "
                f"lacks ({exc}); list_skills without a query still pages through every skill"
            ) from exc
        # Sorted by identity, so equal scores come back in one stable order (rowid breaks ties).
        skills = sorted(registry, key=lambda s: (s.ref.origin, s.ref.uri))
        db.executemany(
            "INSERT INTO skills (rowid, name, description, origin) VALUES (?, ?, ?, ?)",
            ((i, _name_text(s), s.description, s.ref.origin) for i, s in enumerate(skills)),
        )
        self._db, self._skills, self._indexed = db, skills, key
        return db

    def search(self, registry: Registry, query: str) -> list[RegisteredSkill]:
        """Every skill matching at least one word of `query`, ranked by BM25; [] when it has no words."""
        words = query_words(query)
        if not words:
            return []
        with self._lock:
            db = self._build(registry)
            rows = db.execute(
                f"SELECT rowid FROM skills WHERE skills MATCH ? ORDER BY bm25(skills, {_BM25_WEIGHTS}), rowid",
                (_match_expression(words),),
            ).fetchall()
            found = [self._skills[row[0]] for row in rows]
        # An exact name (bare or qualified) is what the model meant: first, whatever BM25 says.
        wanted = query.strip().lower()
        exact = [s for s in found if wanted in (s.name.lower(), s.display_name.lower())]
        return exact + [s for s in found if s not in exact] if exact else found

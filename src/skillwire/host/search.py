"""Ranked search over the host's registry: SQLite FTS5 with BM25, in memory, rebuilt when the registry changes.

A model looking for "the skill that fills PDF forms" among thousands types words, not names, and often
types the user's whole task. What is indexed, per skill, each a column with its own BM25 weight, in two
FTS5 tables whose bm25() scores are added (`body_share` weighs the second):

- `names`, what the skill says it is: name, description, aliases, origin label;
- `bodies`, what its SKILL.md says: headings and prose.

Two tables, not one, because FTS5's bm25() normalises a row's term counts by the length of the whole row
and takes a word's IDF over rows matching it in any column: in one table a skill with a long body lost
its own name's and description's matches to a neighbour with a short body, and a word every body uses
weighed as little in names. Each table has its own lengths and IDF, so a match in a short description
counts as such whatever the body's length (on the tuning items: task top-1 72% -> 81%).

The columns:

- the name (split on `-`, `_`, `/`, the qualified name too) and the origin label;
- the description;
- aliases the skill defines in its own text: an acronym with its parenthesised expansion either way
  round ("Product Requirements Document (PRD)", "PRD (product requirements document)"), so a query
  with one finds a skill that wrote the other;
- the SKILL.md body when the host already holds it verified (`SkillHost.indexable_body`: local skills,
  and upstream ones whose SKILL.md is in the verified content cache); nothing is fetched to index it.
  The body is cut at `BODY_CHARS`, its headings are a column of their own weighted above the prose, and
  fenced code is left out (identifiers and flags there match task words by accident).

Tokenizer `porter unicode61` (stemming, diacritics folded). Query words that are English stopwords or
task filler ("please", "help") are dropped, so in a long task the key words are what counts. Prefix
matching ("deplo" finds "deployment") is only for short queries (a word or three, each four letters or
more): in a task-length query "for" would match "format" and "forecast". A task-length query also gets
a relevance cut-off (`RELATIVE_CUTOFF` of the best score), so the model is told that a few skills
matched, not "273 of 302". The weights and the cut-off were chosen on `bench/search_items/tune.txt`
(`python -m bench.search_eval --sweep`); FTS5's bm25() fixes k1=1.2 and b=0.75.

The index follows the registry row by row, keyed by what a row is made from (name,
description, label, listed SKILL.md digest): a change re-indexes only the skills it touched, and with
a file (`SkillHost.search_index_path`, beside the default content cache) a restart over an unchanged
catalog re-indexes nothing and reads no body. A query hands back only the rows it was asked for
(`ranked(..., limit=)`) and counts the rest. Each table's bm25() is computed in Python from
FTS5's own postings (`host/search_scores.py`, exactly FTS5's doubles): FTS5 has no top-k pruning and
scored every matching row per query, which over 10,000 bodies was most of a later query's time.

A new index of more than `BODIES_AT_ONCE` skills answers its first query from names, descriptions and
labels, and a background thread indexes the bodies after it (about a second of CPU at 10,000 skills,
which the first answer does not wait for); the finished index is what a synchronous build gives.
"""

from __future__ import annotations

import contextlib
import gc
import heapq
import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from skillwire.core.errors import HostError
from skillwire.host.registry import RegisteredSkill, Registry
from skillwire.host.search_scores import Phrase, TableScores

# Words of a query: letters and digits of any script (what unicode61 keeps as token characters).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
logger = logging.getLogger(__name__)

MAX_QUERY_WORDS = 32  # more words than this is a paragraph, not a query; the rest are ignored
DEFAULT_LIMIT = 200  # skills `SkillSearch.ranked` hands back by default: four pages of list_skills
# New rows a query indexes with their bodies before answering; more than this (a new index of a large
# catalog) are indexed from name, description and label first and get their bodies from a background
# thread, a batch at a time. Measured (`bench/search_eval.py --scale`): a row with a body costs ~0.1 ms,
# 11 MB of bodies at 10,000 skills about a second, which the first query should not wait for.
BODIES_AT_ONCE = 1000
_BODY_BATCH = 250  # rows the background thread indexes per lock hold (~25 ms): a query waits at most that
# What a docs row says of the body: indexed without one (none was known), with it, or waiting for the
# background thread (a file written by a process that stopped first is finished by the next one).
_NO_BODY, _WITH_BODY, _BODY_PENDING = 0, 1, 2
BODY_CHARS = 6000  # of a SKILL.md body indexed: the purpose and first sections, not every reference table

# The common English function words (the usual IR list) plus what people put around a task ("please
# help me", "I want to") that says nothing about which skill fits.
_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your yours yourself
    yourselves also via using use want need please help let lets get got like one two every thing things
    something way ok sure actually really
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


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
BodySource = Callable[[RegisteredSkill], str | None]


def query_words(query: str) -> list[str]:
    """The distinct lowercased words of `query`, in order, at most `MAX_QUERY_WORDS`."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        seen.setdefault(word, None)
    return list(seen)[:MAX_QUERY_WORDS]


def content_words(query: str, *, stopwords: bool = True) -> list[str]:
    """The query words that say what is wanted: stopwords dropped, unless nothing else is left."""
    words = query_words(query)
    if not stopwords:
        return words
    kept = [w for w in words if w not in STOPWORDS]
    return kept or words


def _phrases(words: list[str], ranking: Ranking) -> list[Phrase]:
    """Each query word and whether it is prefix-matched: the query is these phrases OR-ed."""
    prefix = len(words) <= ranking.prefix_max_words
    return [(word, prefix and len(word) >= ranking.prefix_min_chars) for word in words]


def _expression(phrases: list[Phrase]) -> str:
    # Each word is a quoted FTS5 string (a double quote inside is doubled), so no query text is ever
    # read as FTS5 syntax (AND, NEAR, column filters, ...).
    return " OR ".join('"' + word.replace('"', '""') + '"' + ("*" if prefix else "") for word, prefix in phrases)


def _match_expression(words: list[str], ranking: Ranking) -> str:
    return _expression(_phrases(words, ranking))


# Compiled once: `re.sub` with a pattern string looks it up in `re`'s cache on every call, once per row.
_NAME_SEPARATORS = re.compile(r"[-_/.:]+")


def _name_text(skill: RegisteredSkill) -> str:
    # The name and the qualified name (origin/path suffix), separators as spaces so each part is a token.
    return _NAME_SEPARATORS.sub(" ", f"{skill.name} {skill.display_name}")


# -- what a skill says about itself ------------------------------------------------------------------------------

_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*$", re.MULTILINE | re.DOTALL)
# "Product Requirements Document (PRD)": words, then an acronym in parentheses.
_EXPANSION_THEN_ACRONYM = re.compile(r"((?:[A-Za-z][\w'-]*[ \t]+){1,8})\(([A-Z][A-Za-z0-9]{1,7}s?)\)")
# "PRD (product requirements document)" or "PRD — product requirements document": the other way round.
_ACRONYM_THEN_EXPANSION = re.compile(
    r"\b([A-Z][A-Z0-9]{1,7}s?)[ \t]*(?:\(|[-–—:][ \t]+)([A-Za-z][\w' -]{3,80}?)(?:\)|[.,;\n])"
)
# Two capitals in a row: without one, no pattern below can match. No `\b`, which made the check twice as slow.
_CAPITALS = re.compile(r"[A-Z][A-Z0-9]")
_SLASH_ALIAS = re.compile(r"\b([A-Z][A-Z0-9]{1,7})[ \t]*/[ \t]*([A-Za-z][\w -]{2,40}?)(?=[,.;)\n]|$)")


_PARTS = re.compile(r"[\s-]+")  # "non-disclosure agreement" spells NDA: each part of a hyphenated word counts


def _initials_match(words: list[str], acronym: str) -> list[str] | None:
    """The trailing words of `words` whose initials spell `acronym` (small words may be skipped)."""
    letters = acronym.rstrip("s").lower() if len(acronym) > 2 else acronym.lower()
    picked: list[str] = []
    i = len(letters) - 1
    for word in reversed(words):
        if i < 0:
            break
        if word.lower()[0] == letters[i]:
            picked.append(word)
            i -= 1
        elif word.lower() in {"of", "and", "for", "the", "to", "a", "&"} and picked:
            picked.append(word)
        else:
            return None
    return list(reversed(picked)) if i < 0 else None


def aliases_of(text: str) -> list[str]:
    """Acronym/expansion pairs a skill defines in `text`, each as "ACRONYM expansion words"."""
    found: dict[str, None] = {}
    if _CAPITALS.search(text) is None:
        return []  # most descriptions define nothing; the patterns below backtrack over every word
    for match in _EXPANSION_THEN_ACRONYM.finditer(text if "(" in text else ""):
        words = [w for w in _PARTS.split(match.group(1)) if w]
        picked = _initials_match(words, match.group(2))
        if picked:
            found.setdefault(f"{match.group(2)} {' '.join(picked)}", None)
    for match in _ACRONYM_THEN_EXPANSION.finditer(text):
        words = [w for w in _PARTS.split(match.group(2)) if w]
        picked = _initials_match(words[: len(match.group(1)) + 2], match.group(1))
        # "PRD (product requirements document)": the expansion's leading words spell it.
        lead = words[: len(match.group(1).rstrip("s"))]
        if lead and "".join(w[0] for w in lead).lower() == match.group(1).rstrip("s").lower():
            found.setdefault(f"{match.group(1)} {' '.join(lead)}", None)
        elif picked:
            found.setdefault(f"{match.group(1)} {' '.join(picked)}", None)
    for match in _SLASH_ALIAS.finditer(text if "/" in text else ""):
        found.setdefault(f"{match.group(1)} {match.group(2)}", None)
    return list(found)


@dataclass(frozen=True)
class BodyText:
    headings: str
    prose: str


# A fence line opens with one of these; the fenced block ends at the next line opening with the same one.
_FENCE_MARKS = ("```", "~~~")
_HEADING_LINE = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*")


def _without_fences(text: str) -> str:
    """`text` with each fenced block (opening line to closing line) replaced by one line holding a space.

    Line by line, so it is linear: an unclosed fence keeps its text, as if it were prose.
    """
    lines = text.split("\n")
    opening: dict[str, list[int]] = {mark: [] for mark in _FENCE_MARKS}
    for number, line in enumerate(lines):
        mark = line[:3]
        if mark in opening:
            opening[mark].append(number)
    if not any(opening.values()):
        return text
    out: list[str] = []
    next_of = {mark: 0 for mark in _FENCE_MARKS}  # index into opening[mark] of the first line not yet passed
    number = 0
    while number < len(lines):
        line = lines[number]
        mark = line[:3]
        if mark in opening:
            marks = opening[mark]
            while next_of[mark] < len(marks) and marks[next_of[mark]] <= number:
                next_of[mark] += 1
            if next_of[mark] < len(marks):  # closed further down: the whole block becomes one blank line
                out.append(" ")
                number = marks[next_of[mark]] + 1
                continue
        out.append(line)
        number += 1
    return "\n".join(out)


def split_body(skill_md: str, limit: int = BODY_CHARS) -> BodyText:
    """A SKILL.md's body as indexed: frontmatter and fenced code left out, cut at `limit`, headings apart.

    Line by line rather than with multi-line regular expressions: at 10,000 skills those were half a
    second of the index build (Python's `re` tries every position of every body).
    """
    text = _FRONTMATTER.sub("", skill_md, count=1) if skill_md.startswith("---") else skill_md
    if "```" in text or "~~~" in text:
        text = _without_fences(text)
    text = text[:limit]
    if "#" not in text:
        return BodyText("", text)
    lines = text.split("\n")
    headings = []
    for number, line in enumerate(lines):
        if line.startswith("#"):
            heading = _HEADING_LINE.fullmatch(line)
            if heading is not None:
                headings.append(heading.group(1))
                lines[number] = " "
    return BodyText(" ".join(headings), "\n".join(lines))


@dataclass(frozen=True)
class SearchResult:
    """The first skills of a ranking, best first, and how many matched in all (a long query's weak ones cut).

    `bodies_pending`: skills this answer ranked without their SKILL.md body, because the background
    pass of a new index (or one a stopped process left) has not reached them yet; while it is not 0 a
    skill that only its body matches is missing, and the ranking changes once the pass is done.
    """

    skills: list[RegisteredSkill]
    total: int
    bodies_pending: int = 0


# What a stored row holds (columns, tokenizer, `split_body`, `aliases_of`): an index file of another format
# is dropped and rebuilt, never read with the wrong meaning.
INDEX_FORMAT = "skillwire-search-2"  # 2: `names` and `bodies` (1 had one `skills` table of every column)
_Key = tuple[str, str]  # (origin label, uri)


def _made_of(skill: RegisteredSkill) -> str:
    """What a skill's indexed row is made from: when it changes the row is made again, otherwise kept.

    The listed SKILL.md digest stands for the body (the body is only indexed once verified against it), so
    an unchanged skill's body is never read again, in this process or after a restart. Kept as the text
    itself, not hashed: it is short, and equal text is the only test.
    """
    entry = skill.entry
    listed = entry.file(skill.ref.uri)  # None for a dynamic skill
    parts = (skill.ref.origin, skill.kind, entry.name, skill.display_name, entry.description)
    return "\x1f".join((*parts, listed.digest if listed is not None else ""))


# A row as `SkillSearch` writes it: the rowid, then `_row`'s columns (name, description, aliases, headings,
# body, origin).
_IndexRow = tuple[int, str, str, str, str, str, str]


def _insert_rows(db: sqlite3.Connection, rows: list[_IndexRow]) -> None:
    """Write rows into the two ranked tables: every row into `names`, and into `bodies` only a row with
    a heading or a body (a skill whose body is pending or empty has no `bodies` row)."""
    db.executemany(
        "INSERT INTO names (rowid, name, description, aliases, origin) VALUES (?, ?, ?, ?, ?)",
        ((row[0], row[1], row[2], row[3], row[6]) for row in rows),
    )
    db.executemany(
        "INSERT INTO bodies (rowid, headings, body) VALUES (?, ?, ?)",
        ((row[0], row[4], row[5]) for row in rows if row[4] or row[5]),
    )


class SkillSearch:
    """`ranked(registry, query, limit=...)`: the registry's skills matching `query`, best first.

    `body_of`, when given, returns a skill's SKILL.md text if the host holds it verified (None when it
    does not); `note_body_known(origin, uri)` after a read makes the next query index it.

    The index follows the registry row by row: a query after a change re-indexes only the skills whose
    name, description, label or listed SKILL.md digest changed (and those whose body became known), and
    drops the ones that left. With `path` (or a callable giving it, asked once at the first query) the
    index is an SQLite file that outlives the process, so a restart over an unchanged catalog indexes
    nothing; without it, or when the file cannot be used, it is in memory. Several processes may share
    one file: each query runs in one write transaction, and a process that sees another's commit
    (`PRAGMA data_version`) re-reads what the file holds first.
    """

    def __init__(
        self,
        body_of: BodySource | None = None,
        *,
        ranking: Ranking = DEFAULT_RANKING,
        path: Path | Callable[[], Path | None] | None = None,
        bodies_at_once: int = BODIES_AT_ONCE,
    ) -> None:
        self._lock = threading.Lock()
        self._path_of = path  # a callable is asked at the first query (a host knows its origins by then)
        self._path: Path | None = None
        self._db: sqlite3.Connection | None = None
        self._on_disk = False
        self._stored: dict[_Key, tuple[int, str, int]] = {}  # what the index holds: (rowid, made of, with body)
        self._current: dict[int, RegisteredSkill] = {}  # rowid -> the registry's skill it indexes
        self._by_name: dict[str, list[int]] = {}  # lowercased bare and qualified name -> rowids
        self._synced: tuple[int, int] | None = None  # (id(registry), registry.version) the index follows
        self._data_version = -1
        self._body_known: set[_Key] = set()  # read since indexed without a body: index again with it
        self._last_made: dict[
            _Key, tuple[RegisteredSkill, str]
        ] = {}  # what each skill's row was made of at the last sync
        self._body_of = body_of
        self._bodies_at_once = bodies_at_once
        self._pending: set[_Key] = set()  # rows indexed without their body yet (_BODY_PENDING)
        self._worker: threading.Thread | None = None  # indexing the pending bodies
        self._queue: list[_Key] = []  # pending rows, highest rowid first (the worker pops the lowest)
        self._stopping = False
        # Each table's bm25(), in Python off FTS5's postings.
        self._scores = (TableScores("names"), TableScores("bodies"))
        self.ranking = ranking
        self.indexed = 0  # rows made since creation (what tests and the benchmark watch)
        self.bodies_indexed = 0  # of which the background thread gave their bodies later
        self.scored_by_sqlite = 0  # queries whose full ranking SQLite's bm25() scored (a word FTS5 splits)

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
                self._synced = None
                self._data_version = -1
                for scores in self._scores:
                    scores.detach()

    def note_body_known(self, origin: str, uri: str) -> None:
        """A skill's SKILL.md was just read and verified: index its body from the next query on."""
        with self._lock:
            held = self._stored.get((origin, uri))
            if self._body_of is not None and (held is None or not held[2]):
                self._body_known.add((origin, uri))

    # -- the index -------------------------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        if self._path_of is not None:
            self._path = self._path_of() if callable(self._path_of) else self._path_of
            self._path_of = None  # chosen once: a file that failed is not tried again
        if self._path is not None:
            try:
                self._db = self._open_file(self._path)
                self._on_disk = True
                return self._db
            except sqlite3.OperationalError as exc:
                if "fts5" in str(exc):
                    raise self._no_fts5(exc) from exc
                self._unusable(exc)
            except (sqlite3.Error, OSError) as exc:
                self._unusable(exc)
        db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        try:
            self._create(db)
        except sqlite3.OperationalError as exc:  # "no such module: fts5": an SQLite built without it
            db.close()
            raise self._no_fts5(exc) from exc
        self._db, self._on_disk = db, False
        return db

    def _unusable(self, error: Exception) -> None:
        # A derived index: a file that cannot be opened, or is corrupt, costs an in-memory index, never a query.
        logger.warning(
            "search index %s cannot be used (%s); indexing in memory instead",
            self._path,
            str(error).splitlines()[0] if str(error) else type(error).__name__,
        )
        self._path = None

    @staticmethod
    def _no_fts5(exc: Exception) -> HostError:
        return HostError(
            f"searching skills needs SQLite with FTS5, which this Python's sqlite3 ({sqlite3.sqlite_version}) "
            f"lacks ({exc}); list_skills without a query still pages through every skill"
        )

    def _open_file(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # it holds skill bodies, as the cache does
        db = sqlite3.connect(path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")  # readers of other processes do not wait on a writer
            db.execute("PRAGMA synchronous=NORMAL")  # derived data: a lost last commit is re-indexed
            db.execute("PRAGMA cache_size=-65536")  # up to 64 MB of pages (the default 2 MB rereads the index)
            db.execute("BEGIN IMMEDIATE")
            try:
                stored = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            except sqlite3.OperationalError:
                stored = None  # a new file
            if stored is not None and stored[0] != INDEX_FORMAT:
                for table in ("skills", "names", "bodies", "docs", "meta"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
            self._create(db)
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        # Two tables with their own row lengths and IDF (the module's docstring says why). A skill without
        # a known body has no `bodies` row.
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS names USING fts5(name, description, aliases, origin, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        db.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS bodies USING fts5(headings, body, "
            "tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        db.execute(
            "CREATE TABLE IF NOT EXISTS docs (rowid INTEGER PRIMARY KEY, origin TEXT NOT NULL, uri TEXT NOT NULL, "
            "made_of TEXT NOT NULL, with_body INTEGER NOT NULL, UNIQUE (origin, uri))"
        )
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('format', ?)", (INDEX_FORMAT,))

    def _row(self, skill: RegisteredSkill, *, defer: bool = False) -> tuple[tuple[str, str, str, str, str, str], int]:
        """The row's columns and its body state; with `defer`, the body is left for the background thread."""
        if defer:
            own = " ".join(aliases_of(skill.description))
            return (_name_text(skill), skill.description, own, "", "", skill.ref.origin), _BODY_PENDING
        body = self._body_of(skill) if self._body_of is not None else None
        headings = prose = ""
        own_text = skill.description
        if body:
            split = split_body(body)
            headings, prose = split.headings, split.prose
            own_text = f"{own_text}\n{split.headings}\n{split.prose}"
        aliases = " ".join(aliases_of(own_text))
        state = _WITH_BODY if body else _NO_BODY
        return (_name_text(skill), skill.description, aliases, headings, prose, skill.ref.origin), state

    def _sync(self, db: sqlite3.Connection, registry: Registry) -> None:
        """Make the index hold exactly the registry's skills (inside the caller's transaction)."""
        data_version = int(db.execute("PRAGMA data_version").fetchone()[0])
        following = (id(registry), registry.version)
        if self._synced == following and not self._body_known and data_version == self._data_version:
            return
        if data_version != self._data_version:  # first use, or another process wrote: what the file holds counts
            for scores in self._scores:
                scores.forget()
            self._stored = {
                (origin, uri): (int(rowid), made_of, int(with_body))
                for rowid, origin, uri, made_of, with_body in db.execute(
                    "SELECT rowid, origin, uri, made_of, with_body FROM docs"
                )
            }
            self._pending = {key for key, held in self._stored.items() if held[2] == _BODY_PENDING}
        wanted = {(skill.ref.origin, skill.ref.uri): skill for skill in registry}
        stale = [held[0] for key, held in self._stored.items() if key not in wanted]
        fresh: list[tuple[RegisteredSkill, str]] = []
        current: dict[int, RegisteredSkill] = {}
        remembered = self._last_made
        made: dict[_Key, tuple[RegisteredSkill, str]] = {}
        for key, skill in wanted.items():
            known = remembered.get(key)
            # The same registered skill object as at the last sync: what its row is made of is known.
            made_of = known[1] if known is not None and known[0] is skill else _made_of(skill)
            made[key] = (skill, made_of)
            held = self._stored.get(key)
            if held is not None and held[1] == made_of and (held[2] or key not in self._body_known):
                current[held[0]] = skill
                continue
            if held is not None:
                stale.append(held[0])
            fresh.append((skill, made_of))
        self._last_made = made
        # New rows in identity order, so a new index gives equal scores one stable order (rowid breaks ties).
        fresh.sort(key=lambda item: (item[0].ref.origin, item[0].ref.uri))
        if stale or fresh:
            for scores in self._scores:
                scores.forget()
        if stale:
            gone = set(stale)
            for table in ("names", "bodies", "docs"):
                db.executemany(f"DELETE FROM {table} WHERE rowid = ?", ((rowid,) for rowid in stale))
            self._stored = {key: held for key, held in self._stored.items() if held[0] not in gone}
            self._pending = {key for key in self._pending if key in self._stored}
        if fresh:
            top = db.execute("SELECT max(rowid) FROM docs").fetchone()[0]
            next_rowid = int(top) + 1 if top is not None else 0
            rows: list[_IndexRow] = []
            docs = []
            defer = self._body_of is not None and len(fresh) > self._bodies_at_once
            for offset, (skill, made_of) in enumerate(fresh):
                columns, with_body = self._row(skill, defer=defer)
                rowid = next_rowid + offset
                rows.append((rowid, *columns))
                self._stored[(skill.ref.origin, skill.ref.uri)] = (rowid, made_of, with_body)
                current[rowid] = skill
                docs.append((rowid, skill.ref.origin, skill.ref.uri, made_of, with_body))
                if defer:
                    self._pending.add((skill.ref.origin, skill.ref.uri))
            db.executemany("INSERT INTO docs (rowid, origin, uri, made_of, with_body) VALUES (?, ?, ?, ?, ?)", docs)
            _insert_rows(db, rows)
            self.indexed += len(rows)
        by_name: dict[str, list[int]] = {}
        for rowid, skill in current.items():
            bare, qualified = skill.name.lower(), skill.display_name.lower()
            by_name.setdefault(bare, []).append(rowid)
            if qualified != bare:
                by_name.setdefault(qualified, []).append(rowid)
        for rowids in by_name.values():
            if len(rowids) > 1:
                rowids.sort()
        self._current, self._by_name, self._synced = current, by_name, following
        self._body_known = set()
        self._data_version = data_version

    # -- queries ---------------------------------------------------------------------------------------------------

    def search(self, registry: Registry, query: str) -> list[RegisteredSkill]:
        """Every skill matching `query`, best first (a long query's weak matches cut); [] when it has no words."""
        return self.ranked(registry, query, limit=None).skills

    def ranked(self, registry: Registry, query: str, *, limit: int | None = DEFAULT_LIMIT) -> SearchResult:
        """The first `limit` skills matching `query` (None: all), best first, and how many matched in all.

        A query's work is bounded by `limit`, not by the catalog: SQLite scores the matching rows and
        hands back only the best ones, and the total is a count, not a list.
        """
        ranking = self.ranking
        words = content_words(query, stopwords=ranking.stopwords)
        if not words:
            return SearchResult([], 0)
        with self._lock:
            try:
                return self._ranked_locked(registry, query, words, limit)
            except sqlite3.DatabaseError as exc:
                if not self._on_disk:
                    raise
                # A corrupt or vanished index file: drop to memory, index again, answer.
                self._unusable(exc)
                if self._db is not None:
                    self._db.close()
                self._db, self._synced, self._data_version, self._stored = None, None, -1, {}
                self._pending = set()
                for scores in self._scores:
                    scores.detach()
                return self._ranked_locked(registry, query, words, limit)

    def _ranked_locked(self, registry: Registry, query: str, words: list[str], limit: int | None) -> SearchResult:
        db = self._open()
        db.execute("BEGIN IMMEDIATE" if self._on_disk else "BEGIN")
        try:
            with _collector_paused():
                self._sync(db, registry)
                result = self._query(db, query, words, limit)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            self._synced, self._data_version = None, -1  # what is held in memory may be ahead of the file
            raise
        pending = len(self._pending)
        if pending and self._worker is None and not self._stopping:
            self._worker = threading.Thread(
                target=self._index_pending_bodies, name="skillwire-search-bodies", daemon=True
            )
            self._worker.start()
        return SearchResult(result.skills, result.total, pending) if pending else result

    # -- bodies, after the first answer ----------------------------------------------------------------------------

    def _index_pending_bodies(self) -> None:
        """The background thread: give pending rows their bodies, a batch per lock hold, until none is left.

        Each row keeps its rowid, so the finished index holds what a synchronous build would have, row for
        row, and ranks the same (equal scores are ordered by rowid). Queries in between see the rows done.
        """
        while True:
            with self._lock:
                db = self._db
                if self._stopping or db is None or not self._pending:
                    self._worker = None
                    return
                batch = self._next_batch()
                try:
                    db.execute("BEGIN IMMEDIATE" if self._on_disk else "BEGIN")
                    self._index_bodies(db, batch)
                    db.execute("COMMIT")
                except sqlite3.Error as exc:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    logger.warning("search index: bodies not indexed (%s); the next query retries", exc)
                    self._synced, self._data_version, self._worker = None, -1, None
                    return

    def _next_batch(self) -> list[_Key]:
        """The pending rows of lowest rowid. In rowid order because FTS5 flushes its pending postings into
        a new segment whenever a write's rowid is below the last one's: in set order the same work took
        ten times as long (5 s of CPU for 10,000 bodies) and left the index in hundreds of segments."""
        stored = self._stored
        if not self._queue:
            self._queue = sorted(self._pending, key=lambda key: stored[key][0], reverse=True)
        batch: list[_Key] = []
        while self._queue and len(batch) < _BODY_BATCH:
            key = self._queue.pop()
            if key in self._pending:
                self._pending.discard(key)
                batch.append(key)
        return batch

    def _index_bodies(self, db: sqlite3.Connection, keys: list[_Key]) -> None:
        rows: list[_IndexRow] = []
        states: list[tuple[int, int]] = []
        for key in keys:
            held, known = self._stored.get(key), self._last_made.get(key)
            if held is None or held[2] != _BODY_PENDING or known is None or known[1] != held[1]:
                continue  # changed or gone since: the next sync decides
            columns, state = self._row(known[0])
            rows.append((held[0], *columns))
            states.append((state, held[0]))
            self._stored[key] = (held[0], held[1], state)
        if not rows:
            return
        # A pending row has a `names` row (its aliases may come from the body too) and no `bodies` row.
        db.executemany("DELETE FROM names WHERE rowid = ?", ((row[0],) for row in rows))
        _insert_rows(db, rows)
        db.executemany("UPDATE docs SET with_body = ? WHERE rowid = ?", states)
        for scores in self._scores:
            scores.forget()
        self.bodies_indexed += len(rows)

    def _query(self, db: sqlite3.Connection, query: str, words: list[str], limit: int | None) -> SearchResult:
        ranking = self.ranking
        depth = -1 if limit is None else max(limit, ranking.min_kept)
        phrases = _phrases(words, ranking)
        expression = _expression(phrases)
        sums = self._sums(db, phrases)
        self.scored_by_sqlite += sums is None
        matches = _Matches(db, expression, ranking, sums)
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
        # An exact name (bare or qualified) is what the model meant: first, whatever BM25 says.
        named_exactly = self._by_name.get(query.strip().lower(), [])
        if named_exactly:
            present = set(order)
            missing = [r for r in named_exactly if r not in present]
            beyond = matches.matching(missing) if missing and not complete else set()
            exact = [r for r in named_exactly if r in present or r in beyond]
            if exact:
                order = exact + [rowid for rowid in order if rowid not in exact]
        kept = order if limit is None else order[:limit]
        current = self._current
        return SearchResult([current[rowid] for rowid in kept if rowid in current], total)

    def _sums(self, db: sqlite3.Connection, phrases: list[Phrase]) -> dict[int, float] | None:
        """rowid -> what bm25() of `names` plus `body_share` times bm25() of `bodies` negates (higher is better),
        computed in Python; None when a table cannot be scored so (then SQLite scores both)."""
        ranking = self.ranking
        names, bodies = self._scores
        named = names.scores(db, phrases, (ranking.name, ranking.description, ranking.aliases, ranking.origin))
        if named is None:
            return None
        if ranking.body_share <= 0:
            return named
        read = bodies.scores(db, phrases, (ranking.headings, ranking.body))
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


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for the block, back on after it only if it was on before.

    A query's sync and ranking allocate tens of thousands of container objects (a new index's rows and
    keys, a restart's `docs` rows, each word's postings), none of them cyclic, and every 700 of them the
    collector walked the young heap, and now and then the whole heap: about 40% of a new 10,000-skill
    index's first query and 35-60% of a restart's (`bench.search_eval --scale`, README). Only for the block: `gc` is
    process-wide, so the other threads' cyclic garbage waits for it, a few hundred milliseconds at most,
    and is collected when the next allocations after it trigger a collection (nothing is frozen, unlike
    `catalog._build`).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class _Matches:
    """One query's matches: a row's score is bm25() over `names` plus `body_share` times bm25() over `bodies`
    (negative, lower is better; a row matching in one table only scores 0 in the other). Scored in Python
    (`search_scores`, the same doubles as FTS5's bm25()) when it can, otherwise asked of SQLite."""

    def __init__(
        self, db: sqlite3.Connection, expression: str, ranking: Ranking, sums: dict[int, float] | None
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

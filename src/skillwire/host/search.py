"""Ranked search over the host's registry: SQLite FTS5 with BM25, in memory, rebuilt when the registry changes.

A model looking for "the skill that fills PDF forms" among thousands types words, not names, and often
types the user's whole task. What is indexed, per skill, each a column with its own BM25 weight:

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
(`python -m bench.search_eval`); FTS5's bm25() fixes k1=1.2 and b=0.75.

The index lives in an in-memory SQLite database (the stdlib module ships FTS5) and is rebuilt only
when `Registry.version` moves or a skill's body becomes known, so a repeated query costs one lookup.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass

from skillwire.core.errors import HostError
from skillwire.host.registry import RegisteredSkill, Registry

# Words of a query: letters and digits of any script (what unicode61 keeps as token characters).
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
MAX_QUERY_WORDS = 32  # more words than this is a paragraph, not a query; the rest are ignored
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

    name: float = 6.0
    description: float = 2.0
    aliases: float = 3.0
    headings: float = 1.0
    body: float = 0.6
    origin: float = 0.5
    prefix_max_words: int = 3  # a query of at most this many words gets prefix matching
    prefix_min_chars: int = 4  # and only on words at least this long
    relative_cutoff: float = 0.3  # a long query keeps the skills scoring at least this share of the best
    cutoff_min_words: int = 4  # a query with fewer content words keeps every match
    min_kept: int = 10  # the cut never leaves fewer than this many (when that many matched)
    stopwords: bool = True
    # Reciprocal-rank fusion with a second ranking over name and description only, every word kept and
    # prefix-matched (what main shipped before bodies were indexed): a skill whose name and description
    # say it outright is not buried by one whose long body repeats the task's words. 0 turns it off.
    fuse_name_ranking: float = 2.0
    fusion_k: int = 10
    # Only for short queries: in a whole task the name ranking's many loose hits bring back the
    # specialised neighbours whose descriptions repeat the task's words.
    fuse_max_words: int = 3


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


def _match_expression(words: list[str], ranking: Ranking) -> str:
    # Each word is a quoted FTS5 string (a double quote inside is doubled), so no query text is ever
    # read as FTS5 syntax (AND, NEAR, column filters, ...).
    prefix = len(words) <= ranking.prefix_max_words
    terms = []
    for word in words:
        quoted = '"' + word.replace('"', '""') + '"'
        terms.append(quoted + "*" if prefix and len(word) >= ranking.prefix_min_chars else quoted)
    return " OR ".join(terms)


def _name_text(skill: RegisteredSkill) -> str:
    # The name and the qualified name (origin/path suffix), separators as spaces so each part is a token.
    return re.sub(r"[-_/.:]+", " ", f"{skill.name} {skill.display_name}")


# -- what a skill says about itself ------------------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n.*?^---[ \t]*$", re.MULTILINE | re.DOTALL)
# "Product Requirements Document (PRD)": words, then an acronym in parentheses.
_EXPANSION_THEN_ACRONYM = re.compile(r"((?:[A-Za-z][\w'-]*[ \t]+){1,8})\(([A-Z][A-Za-z0-9]{1,7}s?)\)")
# "PRD (product requirements document)" or "PRD — product requirements document": the other way round.
_ACRONYM_THEN_EXPANSION = re.compile(
    r"\b([A-Z][A-Z0-9]{1,7}s?)[ \t]*(?:\(|[-–—:][ \t]+)([A-Za-z][\w' -]{3,80}?)(?:\)|[.,;\n])"
)
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]")
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
    if _ACRONYM.search(text) is None:
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


def split_body(skill_md: str, limit: int = BODY_CHARS) -> BodyText:
    """A SKILL.md's body as indexed: frontmatter and fenced code left out, cut at `limit`, headings apart."""
    text = _FRONTMATTER.sub("", skill_md, count=1)
    text = _FENCE.sub(" ", text)[:limit]
    headings = " ".join(m.group(1) for m in _HEADING.finditer(text))
    prose = _HEADING.sub(" ", text)
    return BodyText(headings, prose)


class SkillSearch:
    """`search(registry, query)`: the registry's skills matching `query`, best first.

    `body_of`, when given, returns a skill's SKILL.md text if the host holds it verified (None when it
    does not); `note_body_known(ref)` after a read makes the next query index it.
    """

    def __init__(self, body_of: BodySource | None = None, *, ranking: Ranking = DEFAULT_RANKING) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._skills: list[RegisteredSkill] = []
        self._by_name: dict[str, list[int]] = {}  # lowercased bare and qualified name -> rowids
        self._indexed: tuple[int, int, int] | None = None  # (id(registry), registry.version, bodies) built
        self._body_of = body_of
        self._bodies_generation = 0
        self._with_body: set[tuple[str, str]] = set()
        self.ranking = ranking

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
                self._indexed = None

    def note_body_known(self, origin: str, uri: str) -> None:
        """A skill's SKILL.md was just read and verified: index its body from the next query on."""
        with self._lock:
            if self._body_of is not None and (origin, uri) not in self._with_body:
                self._bodies_generation += 1

    def _row(self, skill: RegisteredSkill) -> tuple[str, str, str, str, str, str]:
        body = self._body_of(skill) if self._body_of is not None else None
        headings = prose = ""
        own_text = skill.description
        if body:
            self._with_body.add((skill.ref.origin, skill.ref.uri))
            split = split_body(body)
            headings, prose = split.headings, split.prose
            own_text = f"{own_text}\n{split.headings}\n{split.prose}"
        aliases = " ".join(aliases_of(own_text))
        return (_name_text(skill), skill.description, aliases, headings, prose, skill.ref.origin)

    def _build(self, registry: Registry) -> sqlite3.Connection:
        key = (id(registry), registry.version, self._bodies_generation)
        if self._db is not None and self._indexed == key:
            return self._db
        if self._db is not None:
            self._db.close()
        db = sqlite3.connect(":memory:", check_same_thread=False)
        try:
            db.execute(
                "CREATE VIRTUAL TABLE skills USING fts5(name, description, aliases, headings, body, origin, "
                "tokenize = 'porter unicode61 remove_diacritics 2')"
            )
            # The fused name ranking's own table: FTS5 computes a word's IDF over rows matching it in any
            # column, so in `skills` a word common in bodies would weigh little in names too.
            db.execute(
                "CREATE VIRTUAL TABLE names USING fts5(name, description, aliases, origin, "
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
        self._with_body = set()
        rows = [(i, *self._row(s)) for i, s in enumerate(skills)]
        db.executemany(
            "INSERT INTO skills (rowid, name, description, aliases, headings, body, origin) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        db.executemany(
            "INSERT INTO names (rowid, name, description, aliases, origin) VALUES (?, ?, ?, ?, ?)",
            ((row[0], row[1], row[2], row[3], row[6]) for row in rows),
        )
        by_name: dict[str, list[int]] = {}
        for i, skill in enumerate(skills):
            for name in {skill.name.lower(), skill.display_name.lower()}:
                by_name.setdefault(name, []).append(i)
        self._db, self._skills, self._indexed, self._by_name = db, skills, key, by_name
        return db

    def search(self, registry: Registry, query: str) -> list[RegisteredSkill]:
        """The skills matching `query`, best first (a long query's weak matches cut); [] when it has no words."""
        ranking = self.ranking
        words = content_words(query, stopwords=ranking.stopwords)
        if not words:
            return []
        weights = (ranking.name, ranking.description, ranking.aliases, ranking.headings, ranking.body, ranking.origin)
        with self._lock:
            db = self._build(registry)
            rows = self._ranked(db, weights, _match_expression(words, ranking), table="skills")
            named: list[tuple[int, float]] = []
            if ranking.fuse_name_ranking > 0 and len(words) <= ranking.fuse_max_words:
                every = query_words(query)
                loose = dataclasses.replace(ranking, prefix_max_words=MAX_QUERY_WORDS, prefix_min_chars=3)
                named = self._ranked(
                    db, _NAME_WEIGHTS, _match_expression(every, loose), table="names", limit=_FUSED_DEPTH
                )
            skills, by_name = self._skills, self._by_name
        if len(words) >= ranking.cutoff_min_words and len(rows) > ranking.min_kept:
            # bm25() is negative, lower is better: keep what scores at least a share of the best.
            best = rows[0][1]
            keep = max(ranking.min_kept, sum(1 for _, score in rows if score <= best * ranking.relative_cutoff))
            rows = rows[:keep]
        order = [row[0] for row in rows]
        if named:
            fused: dict[int, float] = {}
            for weight, ranked in ((1.0, order[:_FUSED_DEPTH]), (ranking.fuse_name_ranking, [r[0] for r in named])):
                for position, rowid in enumerate(ranked):
                    fused[rowid] = fused.get(rowid, 0.0) + weight / (ranking.fusion_k + position)
            # The fused head, then the rest of the full ranking; a name-only match joins only the head.
            # Equal fused scores (one first in each ranking) go the full ranking's way: it saw the body.
            place = {rowid: i for i, rowid in enumerate(order)}
            head = sorted(fused, key=lambda rowid: (-fused[rowid], place.get(rowid, len(place)), rowid))
            if len(rows) >= ranking.min_kept and len(words) >= ranking.cutoff_min_words:
                head = head[: max(len(order[:_FUSED_DEPTH]), ranking.min_kept)]
            seen = set(head)
            order = head + [rowid for rowid in order if rowid not in seen]
        # An exact name (bare or qualified) is what the model meant: first, whatever BM25 says.
        exact = [rowid for rowid in by_name.get(query.strip().lower(), ()) if rowid in set(order)]
        if exact:
            order = exact + [rowid for rowid in order if rowid not in exact]
        return [skills[rowid] for rowid in order]

    @staticmethod
    def _ranked(
        db: sqlite3.Connection, weights: tuple[float, ...], expression: str, *, table: str, limit: int = -1
    ) -> list[tuple[int, float]]:
        columns = ", ".join(str(w) for w in weights)
        rows = db.execute(
            f"SELECT rowid, bm25({table}, {columns}) AS score FROM {table} WHERE {table} MATCH ? "
            "ORDER BY score, rowid LIMIT ?",
            (expression, limit),
        ).fetchall()
        return [(int(rowid), float(score)) for rowid, score in rows]


# The fused name ranking's bm25() weights and how deep each ranking is fused.
_NAME_WEIGHTS = (5.0, 1.0, 1.0, 0.5)  # name, description, aliases, origin
_FUSED_DEPTH = 50

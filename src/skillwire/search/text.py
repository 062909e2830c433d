"""What the search index reads of a document: query words, a SKILL.md body's headings and prose, aliases.

Text only, no SQLite and no ranking: the store (`search/store.py`) writes what these functions return, and
the ranking (`search/rank.py`) turns a query into the words `query_words` finds. Every function here is
linear in its input (issue 35, defect 8: a heading pattern that backtracked made one long heading line
quadratic); `tests/search/test_text.py` holds a property test over generated bodies for it.

The frontmatter of a SKILL.md is found by its one owner, `core/skill_md.split_skill_md` (a BOM, CRLF line
ends and a `...` closing line are frontmatter there, and so here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillwire.core.errors import NotASkill
from skillwire.core.skill_md import split_skill_md

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


# Compiled once: `re.sub` with a pattern string looks it up in `re`'s cache on every call, once per row.
_NAME_SEPARATORS = re.compile(r"[-_/.:]+")


def name_text(name: str, qualified_name: str) -> str:
    """The name column's text: the name and the qualified name, separators as spaces so each part is a token."""
    return _NAME_SEPARATORS.sub(" ", f"{name} {qualified_name}")


# -- what a skill says about itself ------------------------------------------------------------------------------

# "Product Requirements Document (PRD)": up to `_EXPANSION_WORDS` words, then an acronym in parentheses.
# Found from each parenthesised acronym backwards (`expansions_then_acronyms`): the pattern
# `((?:[A-Za-z][\w'-]*[ \t]+){1,8})\(ACRONYM\)` that said this before retried its word loop at every
# letter of a long word and was quadratic in it (a 6,000-letter word cost 240 ms).
_ACRONYM_IN_PARENTHESES = re.compile(r"\(([A-Z][A-Za-z0-9]{1,7}s?)\)")
_EXPANSION_WORDS = 8
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_BLANKS = frozenset(" \t")
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


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character in "_'-"  # `[\w'-]` (`\w` is isalnum() or "_", code point by code point)


def expansions_then_acronyms(text: str) -> list[tuple[str, str]]:
    r"""Each "Words Of It (WOI)" in `text` as (the up to eight words before the parenthesis with their
    blanks, the acronym), left to right, as `re.finditer` of `((?:[A-Za-z][\w'-]*[ \t]+){1,8})\((ACRONYM)\)`
    finds them, in time linear in `text`.

    Each parenthesised acronym is walked back from, a word and its blanks at a time, never before the
    previous find's end: the pattern's earliest start is the farthest word reached, and a word that does
    not open with an ASCII letter can only be the first one, from its first ASCII letter on.
    `tests/search/test_text.py` checks the two agree on generated text.
    """
    found: list[tuple[str, str]] = []
    floor = 0
    for match in _ACRONYM_IN_PARENTHESES.finditer(text):
        end = match.start()
        start = -1
        at = end
        for _ in range(_EXPANSION_WORDS):
            blanks = at
            while blanks > floor and text[blanks - 1] in _BLANKS:
                blanks -= 1
            word = blanks
            while word > floor and _is_word_character(text[word - 1]):
                word -= 1
            if blanks == at or word == blanks:
                break  # no blank, or no word before the blanks: the words end here
            if text[word] in _ASCII_LETTERS:
                start = at = word
                continue
            first = next((i for i in range(word, blanks) if text[i] in _ASCII_LETTERS), -1)
            if first >= 0:
                start = first  # the first word may start inside a run, at its first ASCII letter
            break
        if start >= 0:
            found.append((text[start:end], match.group(1)))
            floor = match.end()
    return found


def aliases_of(text: str) -> list[str]:
    """Acronym/expansion pairs a skill defines in `text`, each as "ACRONYM expansion words"."""
    found: dict[str, None] = {}
    if _CAPITALS.search(text) is None:
        return []  # most descriptions define nothing; the patterns below backtrack over every word
    for expansion, acronym in expansions_then_acronyms(text) if "(" in text else ():
        words = [w for w in _PARTS.split(expansion) if w]
        picked = _initials_match(words, acronym)
        if picked:
            found.setdefault(f"{acronym} {' '.join(picked)}", None)
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
_HEADING_BLANKS = " \t"
_HEADING_TRAIL = " \t#"


def heading_text(line: str) -> str | None:
    """The text of an ATX heading line (`## Title ##` -> "Title"), or None when `line` is not one.

    What the pattern `#{1,6}[ \t]+(.+?)[ \t#]*` captures with `fullmatch` (the rule this index has always
    used), computed with string methods in one pass: the pattern's lazy group tried every end position
    and rescanned the trailing run each time, quadratic in a line such as `# a` followed by thousands of
    `" #"` and one letter (issue 35, defect 8). `tests/search/test_text.py` checks the two agree on
    generated lines.
    """
    hashes = len(line) - len(line.lstrip("#"))
    if not 1 <= hashes <= 6:
        return None
    after = line[hashes:]
    if not after or after[0] not in _HEADING_BLANKS:
        return None
    rest = after.lstrip(_HEADING_BLANKS)
    if not rest:
        # Only blanks after the hashes: the pattern gives back one blank to its group, if it has two.
        return after[-1] if len(after) >= 2 else None
    if "\n" in rest:
        return None  # `.` never matches a line break (a caller splits lines on it first)
    kept = rest.rstrip(_HEADING_TRAIL)
    return kept if kept else rest[0]


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


def body_of_skill_md(skill_md: str) -> str:
    """The body of a SKILL.md as indexed: what follows the frontmatter as `core/skill_md.split_skill_md`
    finds it, or the whole text when it has none (or an unclosed one: nothing says where it would end).

    The closing line's line break is kept in front of the body: every index built so far held it, and
    with it a skill whose body is empty still has its (blank) `bodies` row, which the table's row count,
    and so every word's IDF, counts. Dropping it would change rankings for no reader's benefit.
    """
    try:
        body = split_skill_md(skill_md)[1]
    except NotASkill:
        return skill_md
    return "\n" + body if body or skill_md.endswith("\n") else body


def split_body(skill_md: str, limit: int = BODY_CHARS) -> BodyText:
    """A SKILL.md's body as indexed: frontmatter and fenced code left out, cut at `limit`, headings apart.

    Line by line rather than with multi-line regular expressions: at 10,000 skills those were half a
    second of the index build (Python's `re` tries every position of every body).
    """
    text = body_of_skill_md(skill_md)
    if "```" in text or "~~~" in text:
        text = _without_fences(text)
    text = text[:limit]
    if "#" not in text:
        return BodyText("", text)
    lines = text.split("\n")
    headings = []
    for number, line in enumerate(lines):
        if line.startswith("#"):
            heading = heading_text(line)
            if heading is not None:
                headings.append(heading)
                lines[number] = " "
    return BodyText(" ".join(headings), "\n".join(lines))

"""The links of a SKILL.md body, and lint's rules for the relative ones (pure: no I/O).

The body is read as CommonMark by markdown-it-py, so what counts as a link is what a Markdown
renderer shows as one: nothing inside fenced or indented code blocks, code spans, HTML blocks or
comments. Two kinds of destination are checked:

* inline links, images and autolinks (`[t](dest)`, `![alt](dest)`), at the line they start on;
* link reference definitions (`[label]: dest`), at their own line, used or not: the definition is
  where the path is written, so it is where the fix goes, and a reference-style use of it
  (`[t][label]`) is not reported a second time.

A GFM footnote (`[^1]` and its `[^1]: text`) is not a link: CommonMark alone would read a one-word
footnote as a link reference definition, so definitions whose label starts with `^` are dropped
before the inline pass, which then leaves `[^1]` as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from skillwire.checks.findings import Finding, Rule, RuleSet

__all__ = ["check_links"]

RelPath = tuple[str, ...]

#: The link rules, in the order `skillwire lint --list-rules` shows them.
LINK_RULES = RuleSet(
    {
        "broken-link": Rule("error", "a relative link to a file that does not exist in the skill"),
        "link-escapes": Rule("error", "a relative link that climbs out of the skill"),
        "link-not-served": Rule("error", "a relative link to a file that exists but is not served"),
        "absolute-link": Rule("warning", "a link to an absolute path (references resolve against the skill root)"),
    },
    one_line=True,
)


@dataclass(frozen=True)
class CaseMismatch:
    """Nothing has the linked name, but a served file differs from it only in letter case."""

    served: str  # the served path, '/'-joined


@dataclass(frozen=True)
class NotServed:
    """Something exists at the linked path, and `reason` is why `skillwire serve` leaves it out."""

    reason: str


MISSING: Final = "missing"
#: What a skill-relative path is: served as a file or a folder, nothing at all, or something else.
Target = Literal["file", "dir", "missing"] | CaseMismatch | NotServed
LinkTarget = Callable[[RelPath], Target]


@dataclass(frozen=True)
class Link:
    """One link destination of a body: its 0-based line in the body, and the destination."""

    line: int
    href: str  # as CommonMark resolves it: entities decoded, unsafe characters percent-encoded
    shown: str  # the same, percent-decoded for people to read (markdown-it's own display form)


def _resolve_no_references(state: StateCore) -> None:
    """Between the block and the inline pass: no reference resolves in the inline pass (definitions
    are reported at their own line), and GFM footnote definitions are not links at all."""
    state.env["references"] = {}
    state.tokens = [t for t in state.tokens if not (t.type == "definition" and str(t.meta["label"]).startswith("^"))]


_MARKDOWN = MarkdownIt("commonmark", {"inline_definitions": True})
_MARKDOWN.core.ruler.after("block", "skillwire_definitions", _resolve_no_references)

_LINE_BREAKS = ("softbreak", "hardbreak")


def _inline_links(inline: Token) -> Iterator[tuple[int, str]]:
    """(0-based line, href) of each link and image in an inline token; its map gives the first line,
    and each line break before a link moves it one line down."""
    first = inline.map[0] if inline.map else 0
    breaks = 0
    for child in inline.children or ():
        if child.type in _LINE_BREAKS:
            breaks += 1
        elif child.type == "link_open":
            yield first + breaks, str(child.attrs.get("href", ""))
        elif child.type == "image":
            yield first + breaks, str(child.attrs.get("src", ""))


def body_links(body: str) -> list[Link]:
    """Every link destination in a SKILL.md body, in line order."""
    # CommonMark turns a lone CR into a line break; a SKILL.md's lines end at LF only (the line numbers
    # of every finding count LFs), so a lone CR is read as a space here.
    text = body.replace("\r\n", "\n").replace("\r", " ")
    found: list[tuple[int, str]] = []
    for token in _MARKDOWN.parse(text, {}):
        if token.type == "inline":
            found.extend(_inline_links(token))
        elif token.type == "definition":
            found.append((token.map[0] if token.map else 0, str(token.meta["url"])))
    found.sort(key=lambda pair: pair[0])  # stable: links on one line stay in the order written
    return [Link(line, href, _MARKDOWN.normalizeLinkText(href)) for line, href in found]


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def skill_path(href: str) -> RelPath | None:
    """The skill-relative path a relative `href` names, '..' resolved; None when it climbs out."""
    stack: list[str] = []
    for part in unquote(href).split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return None
            stack.pop()
        else:
            stack.append(part)
    return tuple(stack)


def check_links(
    body: str, body_start_line: int, target: LinkTarget, *, file: str, skill: str | None = None
) -> list[Finding]:
    """Relative links in a SKILL.md body that point to nothing served, or out of the skill.

    `target` gets the normalised skill-relative path of each link and says what is there (`Target`).
    `body_start_line` is the 1-based file line of the body's first line.
    """
    out: list[Finding] = []

    def add(rule: str, line: int, message: str, suggestion: str) -> None:
        out.append(LINK_RULES.finding(rule, message, file=file, line=line, suggestion=suggestion, skill=skill))

    for link in body_links(body):
        line, dest = body_start_line + link.line, link.shown
        if not link.href or link.href.startswith(("#", "//")) or _SCHEME.match(link.href):
            continue
        path = link.href.split("#", 1)[0].split("?", 1)[0]
        if not path:
            continue
        if path.startswith("/"):
            add(
                "absolute-link",
                line,
                f"link to the absolute path {dest!r}; hosts resolve references against the skill root",
                "link relative to the folder of SKILL.md, e.g. 'references/x.md'",
            )
            continue
        rel = skill_path(path)
        if rel is None:
            add(
                "link-escapes",
                line,
                f"link to {dest!r} climbs out of the skill (links resolve against the folder of this SKILL.md, "
                "and hosts refuse to leave it)",
                "copy the file into the skill and link to it relatively",
            )
            continue
        if not rel:
            continue  # the skill root itself
        what = target(rel)
        if what in ("file", "dir"):
            continue
        if what == MISSING:
            add(
                "broken-link",
                line,
                f"link to {dest!r}: no such file in the skill",
                "fix the path (links resolve against the folder of SKILL.md) or add the file",
            )
        elif isinstance(what, CaseMismatch):
            add(
                "broken-link",
                line,
                f"link to {dest!r}: no such file in the skill (names are case-sensitive)",
                f"did you mean {what.served!r}?",
            )
        elif isinstance(what, NotServed):
            add(
                "link-not-served",
                line,
                f"link to {dest!r}: the file exists but is not served ({what.reason})",
                "serve the file (a regular file inside the skill, not ignored) or remove the link",
            )
    return out

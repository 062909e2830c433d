"""What the index reads of a SKILL.md (`search/text.py`): the frontmatter through its one owner, headings and
aliases in linear time, each checked against the patterns that said it before on generated text."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.search import DocumentSet, SearchDocument, SearchIndex, aliases_of, split_body
from skillwire.search.text import expansions_then_acronyms, heading_text

# The rules as patterns, as this index wrote them before they were made linear: the reference.
HEADING_PATTERN = re.compile(r"#{1,6}[ \t]+(.+?)[ \t#]*")
EXPANSION_PATTERN = re.compile(r"((?:[A-Za-z][\w'-]*[ \t]+){1,8})\(([A-Z][A-Za-z0-9]{1,7}s?)\)")

FRONTMATTER_WORD = "zanzibarquokka"  # in the frontmatter only: a body must never hold it
BODY = "# Filling forms\n\nFill the PDF form fields from a table.\n"


def skill_md(*, newline: str = "\n", bom: bool = False, closer: str = "---") -> str:
    lines = ["---", "name: pdf-forms", "description: Fill PDF forms.", f"metadata: {FRONTMATTER_WORD}", closer]
    text = newline.join(lines) + newline + BODY.replace("\n", newline)
    return ("\ufeff" + text) if bom else text


# -- the frontmatter is found by core/skill_md.split_skill_md (issue 38) -----------------------------------------


def test_an_lf_frontmatter_is_not_body_text() -> None:
    body = split_body(skill_md())
    assert FRONTMATTER_WORD not in body.prose
    assert body.headings == "Filling forms"


def test_a_crlf_frontmatter_is_not_body_text() -> None:
    body = split_body(skill_md(newline="\r\n"))
    assert FRONTMATTER_WORD not in body.prose
    assert "name:" not in body.prose
    assert "Fill the PDF form fields" in body.prose


def test_a_frontmatter_after_a_bom_is_not_body_text() -> None:
    body = split_body(skill_md(bom=True))
    assert FRONTMATTER_WORD not in body.prose
    assert body.headings == "Filling forms"


def test_a_frontmatter_closed_by_dots_is_not_body_text() -> None:
    body = split_body(skill_md(closer="..."))
    assert FRONTMATTER_WORD not in body.prose
    assert body.headings == "Filling forms"


def test_an_unclosed_frontmatter_leaves_the_text_as_it_is() -> None:
    text = "---\nname: x\n# Heading\nprose"
    assert split_body(text).prose.startswith("---\nname: x")  # nothing says where the block would end


def test_a_word_only_in_a_crlf_bom_or_dots_frontmatter_finds_nothing() -> None:
    bodies = {
        "skill://crlf/SKILL.md": skill_md(newline="\r\n"),
        "skill://bom/SKILL.md": skill_md(bom=True),
        "skill://dots/SKILL.md": skill_md(closer="..."),
    }
    documents = DocumentSet(SearchDocument(uri, uri.split("/")[2], "Fill PDF forms.") for uri in bodies)
    index = SearchIndex(lambda document: bodies[document.uri])
    assert index.ranked(documents, FRONTMATTER_WORD).total == 0
    assert index.ranked(documents, "fields table").total == 3  # the bodies are indexed


# -- headings: linear, and what the pattern captured (issue 35, defect 8) -------------------------------------------


@given(st.text(alphabet="#", min_size=0, max_size=8), st.text(alphabet="# \t\rab", max_size=30))
@settings(max_examples=2000, deadline=None)
def test_heading_text_is_what_the_pattern_captured(hashes: str, rest: str) -> None:
    line = hashes + rest
    match = HEADING_PATTERN.fullmatch(line)
    assert heading_text(line) == (match.group(1) if match is not None else None)


@given(st.lists(st.text(alphabet="# \t\rabc`~-\n", max_size=30), max_size=12))
@settings(max_examples=500, deadline=None)
def test_a_bodys_headings_are_what_the_pattern_captured(lines: list[str]) -> None:
    body = "\n".join(["prose", *lines])  # a first line that opens no frontmatter
    expected = []
    for line in body.split("\n"):
        if line.startswith("#") and (match := HEADING_PATTERN.fullmatch(line)) is not None:
            expected.append(match.group(1))
    if "```" in body or "~~~" in body:
        return  # fenced blocks drop lines first; the fences have their own tests
    assert split_body(body).headings == " ".join(expected)


def test_forty_worst_case_heading_bodies_cost_milliseconds() -> None:
    # The shape of issue 35's defect 8: one heading line whose tail is a long run of " #" then a letter.
    # The pattern took about 80 ms a body (3.3 s for 40); linear, all 40 take well under 100 ms.
    bodies = [f"# a{' #' * 2990}b{i}\n\nprose" for i in range(40)]
    started = time.process_time()
    for body in bodies:
        assert split_body(body).headings.startswith("a #")
    assert time.process_time() - started < 0.1


# -- aliases: linear, and what the pattern found ---------------------------------------------------------------------


@given(st.text(alphabet="aAbBZ9_'-é( )\t.s", max_size=60))
@settings(max_examples=3000, deadline=None)
def test_expansions_are_what_the_pattern_found(text: str) -> None:
    expected = [(m.group(1), m.group(2)) for m in EXPANSION_PATTERN.finditer(text)]
    assert expansions_then_acronyms(text) == expected


@given(st.lists(st.sampled_from(["Product", "Requirements", "Document", "(PRD)", "(PRDs)", "x-y", "9a", " ", "\t"])))
@settings(max_examples=1000, deadline=None)
def test_expansions_of_words_are_what_the_pattern_found(parts: list[str]) -> None:
    text = " ".join(parts)
    expected = [(m.group(1), m.group(2)) for m in EXPANSION_PATTERN.finditer(text)]
    assert expansions_then_acronyms(text) == expected


def test_a_long_word_before_a_parenthesis_costs_milliseconds() -> None:
    # Where the old pattern retried its word loop at every letter: 240 ms a body at 6,000 letters.
    bodies = [f"AB ({'a' * 6000}", f"( AB {'a-' * 3000}", f"AB {('a' * 40 + ' ') * 150}("] * 14
    started = time.process_time()
    for body in bodies:
        aliases_of(body)
        split_body(body)
    assert time.process_time() - started < 0.1

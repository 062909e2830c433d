"""The fast path for simple frontmatter answers only where it agrees exactly with the full parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.core.errors import FrontmatterError, NotASkill
from skillwire.core.json import JSONValue
from skillwire.core.skill_md import split_skill_md
from skillwire.core.yaml import parse_frontmatter
from skillwire.core.yaml._flat import parse_simple_frontmatter

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "awesome-copilot" / "skills"

SCALARS = [
    "plain text",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "true",
    "True",
    "FALSE",
    "null",
    "~",
    "Null",
    "010",
    "0o17",
    "0x1F",
    "1.10",
    "1e3",
    "-0",
    "+12",
    ".5",
    "1.",
    "2024-01-31",
    "12:30",
    "a:b",
    "http://x.y/z",
    "a, b, and c",
    "[not] a list",
    "x {y}",
    "'quoted'",
    "'it''s'",
    '"double"',
    '"with \\\\ escape"',
    "a # comment",
    "a#b",
    "é ü 技能",
    ".inf",
    "-.inf",
    ".nan",
    "1e400",
    "- dash",
    "? q",
    ": colon",
    "*alias",
    "&anchor x",
    "!tag x",
    "|",
    ">",
    "%x",
    "@x",
    "`x`",
    "trailing:",
    "x: y",
    "9007199254740993",
    "0.1e-2",
    "1_000",
]
KEYS = ["name", "description", "license", "version", "allowed-tools", "x.y", "_k", "true", "1", "null", "a b"]


def typed(value: JSONValue) -> str:
    """JSON with types made explicit, so True vs 1 and 1 vs 1.0 vs -0.0 are told apart."""

    def walk(item: JSONValue) -> object:
        if isinstance(item, dict):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return [type(item).__name__, repr(item)]

    return json.dumps(walk(value), sort_keys=False)


def assert_agrees(text: str) -> bool:
    fast = parse_simple_frontmatter(text)
    if fast is None:
        return False
    try:
        full = parse_frontmatter(text, fast_path=False)
    except FrontmatterError as exc:  # pragma: no cover - the assertion reports it
        pytest.fail(f"fast path accepted {text!r}, the full parser rejects it: {exc}")
    assert typed(fast) == typed(full), text
    return True


# What the seeded loop this replaces wrote: 1-6 top-level keys, each a scalar (sometimes with trailing
# space or a comment) or a block of 0-3 nested scalars, sometimes followed by a blank, comment,
# continuation or list line. Whole lines are drawn at once: hypothesis' cost is per draw.
SCALAR_LINE = st.sampled_from(
    [f"{key}: {value}{tail}" for key in KEYS for value in SCALARS for tail in ("", "  ", " # c")]
)
BLOCK = st.builds(
    lambda key, indent, nested: [f"{key}:", *(indent + line for line in nested)],
    st.sampled_from(KEYS),
    st.sampled_from(["  ", "    "]),
    st.lists(st.sampled_from([f"{key}: {value}" for key in KEYS for value in SCALARS]), max_size=3),
)
EXTRA_LINE: st.SearchStrategy[list[str]] = st.one_of(
    st.just([]), st.sampled_from(["", "# comment", "  continued", "- item"]).map(lambda line: [line])
)
DOCUMENT = st.lists(
    st.tuples(st.one_of(SCALAR_LINE.map(lambda line: [line]), BLOCK), EXTRA_LINE), min_size=1, max_size=6
).map(lambda keys: "\n".join(line for lines, extra in keys for line in (*lines, *extra)))


def test_random_documents_agree_with_full_parser() -> None:
    answered = 0

    # The property runs inside this test so that the count asserted below is over exactly the documents
    # it checked: 150 batches of 20 (hypothesis' cost is per example; a failing batch shrinks to one
    # document), the 3,000 documents of the seeded loop this replaces.
    @settings(max_examples=150)
    @given(batch=st.lists(DOCUMENT, min_size=20, max_size=20, unique=True))
    def fast_path_agrees(batch: list[str]) -> None:
        nonlocal answered
        answered += sum(assert_agrees(text) for text in batch)

    fast_path_agrees()
    # The fast path must be doing real work, not declining everything.
    assert answered > 150


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: x\ndescription: yes\n", {"name": "x", "description": "yes"}),
        ("v: 010\nw: 0o17\nf: 1.10\n", {"v": 10, "w": 15, "f": 1.1}),
        ("a: 'it''s' # c\nb: \"q\"\n", {"a": "it's", "b": "q"}),
        ('metadata:\n  version: "1.0"\n  owner: me\n', {"metadata": {"version": "1.0", "owner": "me"}}),
        ("empty:\nnext: 1\n", {"empty": None, "next": 1}),
    ],
)
def test_simple_subset_values(text: str, expected: dict[str, JSONValue]) -> None:
    assert parse_simple_frontmatter(text) == expected
    assert typed(parse_simple_frontmatter(text)) == typed(expected)


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\na: 2\n",  # duplicate: the full parser owns the error
        "a: |\n  block\n",
        "a: [1, 2]\n",
        "a:\n  - x\n",
        "a: x\n  continued\n",
        "a: &x 1\nb: *x\n",
        "a: !!str 1\n",
        "a:\tb\n",
        "a: .inf\n",
        "true: x\n",
        "a:\n  b:\n    c: 1\n",
        "a: x: y\n",
    ],
)
def test_declines_outside_the_subset(text: str) -> None:
    assert parse_simple_frontmatter(text) is None


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpora/awesome-copilot is not present")
def test_corpus_agrees_and_is_mostly_fast() -> None:
    total = fast = 0
    for path in sorted(CORPUS.rglob("SKILL.md")):
        try:
            yaml_text = split_skill_md(path.read_text(encoding="utf-8"))[0]
        except (NotASkill, UnicodeDecodeError):
            continue
        total += 1
        fast += assert_agrees(yaml_text)
    assert total > 400
    assert fast / total > 0.5, f"only {fast}/{total} corpus frontmatters took the fast path"

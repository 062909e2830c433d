"""Deep flow nesting is refused in linear time, before ruamel's scanner (issue 35, defect 14).

The scanner's simple-key bookkeeping is quadratic on the way to the composer's depth refusal: 2.5 KB of
`a: [[[[…` cost 0.55 s of CPU. `core/yaml/_decode._refuse_deep_flow_nesting` counts the flow indicators
that open collections in one walk and refuses past `MAX_DEPTH` with the composer's own words. The
property: over generated nesting depths and shapes (mixed `[` and `{`, closed or not) decorated with
brackets that open nothing (quoted scalars, comments inside flow, block scalars, plain values and their
continuation lines, comment lines), the walk refuses exactly the documents whose flow nesting is past
`MAX_DEPTH`, within 10 ms, and lets every other one through to the parser.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.core.errors import FrontmatterError
from skillwire.core.yaml import MAX_DEPTH, _decode, parse_frontmatter

BUDGET_SECONDS = 0.010

# Brackets that open nothing, each as the scalar it sits in (a flow item or a value).
QUOTED = st.sampled_from(
    [
        '"' + "[" * 260 + '"',
        '"' + "{[" * 130 + '\\"]"',
        "'" + "[{" * 130 + "''" + "'",
        '"a\\\\"',
        "'[[{{'",
    ]
)
# Lines before the nested value, each holding brackets the walk must not count.
BLOCK_DECORATIONS = st.sampled_from(
    [
        "b: |\n  " + "[" * 260 + "\n  " + "{" * 10 + "\n",
        "c: >-\n    " + "[{" * 130 + "\n\n    ]]\n",
        "# " + "[" * 260 + "\n",
        'd: "' + "[" * 260 + '"\n',
        "e: x " + "[" * 260 + "\n",
        "f: plain\n  " + "[" * 260 + "\n  {{{{\n",
        "g: 'it''s " + "{" * 260 + "'\n",
        "h: [1, '" + "[" * 260 + "'] # " + "[" * 10 + "\n",
        "i:\n  - " + '"' + "[" * 260 + '"\n',
    ]
)


@st.composite
def nested_documents(draw: st.DrawFn) -> tuple[str, int]:
    """(a frontmatter document, the flow nesting depth of its `a` value)."""
    depth = draw(st.integers(min_value=1, max_value=3 * MAX_DEPTH // 2))
    kinds = draw(st.lists(st.sampled_from("[{"), min_size=depth, max_size=depth))
    decorated = draw(st.lists(st.sampled_from(["", "quoted", "comment"]), min_size=depth, max_size=depth))
    leaf = draw(st.sampled_from(["x", "1", '"[["', "'{'"]))
    closed = draw(st.booleans())
    opening: list[str] = []
    for kind, decoration in zip(kinds, decorated, strict=True):
        extra = ""
        if decoration == "quoted":
            extra = draw(QUOTED) + ": 1, " if kind == "{" else draw(QUOTED) + ", "
        elif decoration == "comment":
            extra = ("k0: 1, " if kind == "{" else "1, ") + "# " + "[{" * 3 + "\n"
        opening.append(kind + extra + ("k: " if kind == "{" else ""))
    closing = "".join("]" if kind == "[" else "}" for kind in reversed(kinds)) if closed else ""
    before = "".join(draw(st.lists(BLOCK_DECORATIONS, max_size=4)))
    return before + "a: " + "".join(opening) + leaf + closing + "\n", depth


@settings(max_examples=150)
@given(nested_documents())
def test_flow_nesting_past_the_limit_is_refused_in_linear_time_and_nothing_else_is(case: tuple[str, int]) -> None:
    text, depth = case
    if depth <= MAX_DEPTH:
        # The walk alone (the parser is slow on deep documents: what this defect is about), which counts
        # none of the brackets in quotes, comments, block scalars and plain text.
        _decode._refuse_deep_flow_nesting(text, 1)
        return
    started = time.process_time()
    refusal = _refusal(text)
    spent = time.process_time() - started
    assert refusal.endswith(f"collections are nested more than {MAX_DEPTH} deep"), (refusal, text)
    assert spent < BUDGET_SECONDS, f"{spent * 1000:.1f} ms for {len(text):,} bytes nested {depth} deep"
    line = text.splitlines()[int(refusal.split(":")[0].removeprefix("line ")) - 1]
    assert "[" in line or "{" in line


def _refusal(text: str) -> str:
    """Why `text` is refused ("" when it decodes): an unclosed collection is a syntax error, not a depth one."""
    try:
        parse_frontmatter(text)
    except FrontmatterError as exc:
        return str(exc)
    return ""


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 2500,  # the review's 2.5 KB
        "a: " + "{" * 2500,
        "a: " + "[{a: " * 500,
        "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
        "a: " + "[" * 65_000,  # at the size bound
        "[" * 2500,
        "a:\n  - " + "[" * 2500,
    ],
)
def test_the_reported_shapes_are_refused_under_ten_milliseconds(text: str) -> None:
    spent = []
    for _ in range(3):
        started = time.process_time()
        with pytest.raises(FrontmatterError, match=rf"nested more than {MAX_DEPTH} deep"):
            parse_frontmatter(text)
        spent.append(time.process_time() - started)
    assert min(spent) < BUDGET_SECONDS, f"{min(spent) * 1000:.1f} ms"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('a: "' + "[" * 300 + '"', "[" * 300),
        ("a: x" + "[" * 300, "x" + "[" * 300),
        ("a: |\n  " + "{" * 300 + "\n", "{" * 300 + "\n"),
        ("a: x\n  " + "[" * 300, "x " + "[" * 300),
        ("a: 1 # " + "[" * 300, 1),
        ("a: ['" + "[" * 300 + "']", ["[" * 300]),
    ],
)
def test_brackets_that_open_nothing_still_decode(text: str, value: object) -> None:
    assert parse_frontmatter(text) == {"a": value}

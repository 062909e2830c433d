"""The core schema's plain-scalar resolution: the first-character shortcut of `_resolve_plain` answers
exactly as the schema's regular expressions (npm yaml's core schema) do, for every text."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from skillwire.core.yaml._schema import _resolve_by_expressions, _resolve_plain

Scalar = None | bool | int | float | str


def same(a: Scalar, b: Scalar) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


# The letters of every keyword and numeric form, so short draws hit them and their near misses.
ALPHABET = "nNuUlLtTrReEfFaAsSoOxXiIbB~0123456789+-._ :#"


@given(st.text(alphabet=ALPHABET, max_size=7) | st.text(max_size=12))
@example("")
@example("~")
@example("null")
@example("Null")
@example("NULL")
@example("nULL")
@example("true")
@example("True")
@example("TRUE")
@example("tRUE")
@example("false")
@example("False")
@example("FALSE")
@example("no")
@example("yes")
@example("0o17")
@example("0x1F")
@example(".inf")
@example("-.Inf")
@example(".NaN")
@example("1e3")
@example("+12")
@example("skill-02090")
def test_the_shortcut_agrees_with_the_expressions(text: str) -> None:
    assert same(_resolve_plain(text), _resolve_by_expressions(text)), text

"""Tests of core.skill_md, core.yaml and core.json: splitting SKILL.md, YAML 1.2 core-schema decoding, comparison, lint.

The decoding tests are table-driven, and `test_matches_npm_yaml` holds `parse_frontmatter` to the
reference the conformance suite itself uses: npm `yaml` v2 (`yaml.parse`, default options), through its
answers checked in as tests/data/npm_yaml_reference.json, so they run without Node and start no process.
tests/e2e/test_frontmatter_npm.py checks that file against live npm yaml (under the Node 22 of
`scripts/install-tools`) and runs the corpus through it.
"""

from __future__ import annotations

import json
import math
import re
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.checks.hazards import yaml_interop_hazards
from skillwire.core.errors import FrontmatterError, NotASkill, SkillError
from skillwire.core.json import JSONValue, frontmatter_differences
from skillwire.core.skill_md import SkillDocument, parse_skill_md, split_skill_md
from skillwire.core.yaml import REFUSALS, parse_frontmatter
from support.npm_yaml import GOLDEN, Reference, load_golden

BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


def same_json(a: JSONValue, b: JSONValue) -> bool:
    """JSON equality with JavaScript number semantics (1 == 1.0, True != 1)."""
    return not frontmatter_differences({"v": a}, {"v": b})


# --------------------------------------------------------------------------------------------------
# split_skill_md / parse_skill_md
# --------------------------------------------------------------------------------------------------

SPLITS = [
    # (text, frontmatter_text, body, frontmatter_start_line, body_start_line)
    ("---\nname: x\n---\nBody\n", "name: x", "Body\n", 2, 4),
    ("---\nname: x\ndescription: y\n---\n", "name: x\ndescription: y", "", 2, 5),
    ("---\nname: x\n---", "name: x", "", 2, 4),
    ("\ufeff---\nname: x\n---\nBody", "name: x", "Body", 2, 4),
    ("---\r\nname: x\r\n---\r\nBody\r\nmore\r\n", "name: x", "Body\r\nmore\r\n", 2, 4),
    ("\ufeff---\r\na: 1\r\n---\r\n", "a: 1", "", 2, 4),
    ("---  \nname: x\n---\t \nBody", "name: x", "Body", 2, 4),
    ("---\nname: x\n...\nBody", "name: x", "Body", 2, 4),
    ("---\ndescription: a --- b\n---\n", "description: a --- b", "", 2, 4),
    ("---\na: 1\n--- b\n---\nBody", "a: 1\n--- b", "Body", 2, 5),
    ("---\na: |\n  x\n\n---\n", "a: |\n  x\n", "", 2, 6),
    ("---\n---\nBody", "", "Body", 2, 3),
    ("---\na: 1\n---\nBody\n---\nmore: 2\n---\n", "a: 1", "Body\n---\nmore: 2\n---\n", 2, 4),
]


@pytest.mark.parametrize(("text", "yaml_text", "body", "fm_line", "body_line"), SPLITS)
def test_split_skill_md(text: str, yaml_text: str, body: str, fm_line: int, body_line: int) -> None:
    assert split_skill_md(text) == (yaml_text, body, fm_line, body_line)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "does not start with a YAML frontmatter block"),
        ("name: x\n", "does not start with a YAML frontmatter block"),
        ("\n---\nname: x\n---\n", "does not start with a YAML frontmatter block"),
        ("--- name: x\n---\n", "does not start with a YAML frontmatter block"),
        ("----\nname: x\n---\n", "does not start with a YAML frontmatter block"),
        (" ---\nname: x\n---\n", "does not start with a YAML frontmatter block"),
        ("---\nname: x\n", "never closed"),
        ("---", "never closed"),
        ("---\nname: x\n----\n", "never closed"),
        ("---\nname: x\n --- \n", "never closed"),
        ("---\rname: x\r---\r", "does not start with a YAML frontmatter block"),
    ],
)
def test_split_skill_md_rejects(text: str, message: str) -> None:
    with pytest.raises(NotASkill, match=re.escape(message)):
        split_skill_md(text)


def _split_by_the_rules(text: str) -> tuple[str, str, int, int] | None:
    """The rules of `split_skill_md` spelled out on `str.split`: lines end at LF, line 1 is `---` and the
    first later line that is `---` or `...` (blanks after, then CR/LF) closes it; None when it is no skill."""
    text = text.removeprefix("\ufeff")
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    if not lines or re.fullmatch(r"---[ \t]*", lines[0].rstrip("\r\n")) is None:
        return None
    offset = len(lines[0])
    for number, line in enumerate(lines[1:], start=2):
        if re.fullmatch(r"(?:---|\.\.\.)[ \t]*", line.rstrip("\r\n")):
            inside = text[len(lines[0]) : offset]
            inside = inside[:-2] if inside.endswith("\r\n") else inside[:-1] if inside.endswith("\n") else inside
            return inside, text[offset + len(line) :], 2, number + 1
        offset += len(line)
    return None


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["---", "...", "\n", "\r\n", "\r", " ", "\t", "a", "x: 1", "\ufeff", "-", "."])))
def test_split_skill_md_follows_its_rules_on_any_text(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = _split_by_the_rules(text)
    if expected is None:
        with pytest.raises(NotASkill):
            split_skill_md(text)
    else:
        assert split_skill_md(text) == expected


def test_no_frontmatter_message_is_precise() -> None:
    with pytest.raises(NotASkill) as info:
        parse_skill_md(b"# Title\n")
    assert str(info.value) == "SKILL.md does not start with a YAML frontmatter block ('---' on line 1)"


def test_parse_skill_md_bom_and_crlf() -> None:
    data = "\ufeff---\r\nname: pdf\r\ndescription: |\r\n  Line one\r\n  Line two\r\nok: yes\r\n---\r\n# Body\r\n"
    document = parse_skill_md(data.encode("utf-8"))
    assert document == SkillDocument(
        frontmatter={"name": "pdf", "description": "Line one\nLine two\n", "ok": "yes"},
        frontmatter_text="name: pdf\r\ndescription: |\r\n  Line one\r\n  Line two\r\nok: yes",
        body="# Body\r\n",
        frontmatter_start_line=2,
        body_start_line=8,
    )


def test_dashes_inside_a_value_do_not_end_the_frontmatter() -> None:
    document = parse_skill_md(b"---\nname: x\ndescription: a --- b\n---\nbody --- more\n---\n")
    assert document.frontmatter == {"name": "x", "description": "a --- b"}
    assert document.body == "body --- more\n---\n"


def test_parse_skill_md_accepts_str() -> None:
    assert parse_skill_md("---\nname: x\n---\n").frontmatter == {"name": "x"}


@pytest.mark.parametrize("data", [b"---\nname: \xff\n---\n", b"\xfe\xff---\n", b"---\nname: caf\xc3\n---\n"], ids=str)
def test_parse_skill_md_rejects_non_utf8(data: bytes) -> None:
    with pytest.raises(NotASkill, match="not valid UTF-8"):
        parse_skill_md(data)


def test_errors_are_skill_errors() -> None:
    assert issubclass(NotASkill, SkillError)
    assert issubclass(FrontmatterError, SkillError)


@pytest.mark.parametrize(
    ("data", "line", "fragment"),
    [
        (
            b"---\nname: x\ndescription: y\nname: z\n---\n",
            4,
            "duplicate key 'name' (first defined on line 2)",
        ),
        (b"\xef\xbb\xbf---\r\nname: x\r\nname: z\r\n---\r\n", 3, "duplicate key 'name'"),
        (b"---\nname: x\ndescription: [a\n---\n", 4, "invalid YAML"),
        (b"---\nname: x\n\tdescription: y\n---\n", 3, "invalid YAML"),
        (b"---\nname: x\nsize: .inf\n---\n", 3, "not a finite number"),
        (b"---\n- a\n---\n", 2, "must be a YAML mapping, not a sequence"),
        (b"---\n# only a comment\n---\n", 2, "frontmatter is empty"),
        (b"---\n---\n", 2, "frontmatter is empty"),
        (b"---\nname: x\n...\n---\n", None, None),
    ],
)
def test_parse_skill_md_error_lines(data: bytes, line: int | None, fragment: str | None) -> None:
    if line is None:
        assert parse_skill_md(data).frontmatter == {"name": "x"}
        return
    with pytest.raises(FrontmatterError) as info:
        parse_skill_md(data)
    assert info.value.line == line
    assert str(info.value).startswith(f"line {line}: ")
    assert fragment is not None
    assert fragment in str(info.value)


# --------------------------------------------------------------------------------------------------
# parse_frontmatter: YAML 1.2 core schema
# --------------------------------------------------------------------------------------------------

DECODES: list[tuple[str, dict[str, Any]]] = [
    # booleans and YAML 1.1 look-alikes
    (
        "a: true\nb: True\nc: TRUE\nd: false\ne: False\nf: FALSE",
        dict(a=True, b=True, c=True, d=False, e=False, f=False),
    ),
    (
        "a: yes\nb: no\nc: on\nd: off\ne: y\nf: n\ng: Yes\nh: tRUE",
        dict(a="yes", b="no", c="on", d="off", e="y", f="n", g="Yes", h="tRUE"),
    ),
    # null
    ("a: null\nb: Null\nc: NULL\nd: ~\ne:\nf: nULL", dict(a=None, b=None, c=None, d=None, e=None, f="nULL")),
    # integers
    ("a: 0o17\nb: 0x1F\nc: 010\nd: -12\ne: +7\nf: 0", dict(a=15, b=31, c=10, d=-12, e=7, f=0)),
    ("a: 0b101\nb: 1_000\nc: -0x1\nd: 0o8\ne: 1:30", dict(a="0b101", b="1_000", c="-0x1", d="0o8", e="1:30")),
    ("a: 9007199254740993", dict(a=9007199254740992.0)),
    # floats
    (
        "a: 1.10\nb: 1e3\nc: .5\nd: -1.5E-2\ne: 1.\nf: +.5",
        dict(a=1.1, b=1000.0, c=0.5, d=-0.015, e=1.0, f=0.5),
    ),
    ("a: 1.0\nb: 1.2.3\nc: 1e\nd: e3\ne: .", dict(a=1.0, b="1.2.3", c="1e", d="e3", e=".")),
    # dates stay strings
    (
        "a: 2024-01-31\nb: 2024-01-31T10:20:30Z\nc: 2024-01-31 10:20:30 +01:00",
        dict(a="2024-01-31", b="2024-01-31T10:20:30Z", c="2024-01-31 10:20:30 +01:00"),
    ),
    # strings
    (
        "a: 'it''s'\nb: \"tab\\there \\u00e9 \\U0001F600\"\nc: b#c\nd: e # comment",
        dict(a="it's", b="tab\there é 😀", c="b#c", d="e"),
    ),
    ('a: "\\ud83d\\ude00"', dict(a="😀")),
    (
        "a: |\n  x\n  y\nb: >-\n  folded\n  text\nc: |+\n  keep\n\nd: end",
        dict(a="x\ny\n", b="folded text", c="keep\n\n", d="end"),
    ),
    ("a: |\n  no final newline", dict(a="no final newline\n")),
    ("description: a --- b", dict(description="a --- b")),
    ("a: x\u2028y\nb: x\x85y", dict(a="x\u2028y", b="x\x85y")),
    # tabs as separators (YAML 1.2), not as indentation
    ("a:\tb\nc: d\t# comment\ne:\t[f,\tg]\nh: i\tj", dict(a="b", c="d", e=["f", "g"], h="i\tj")),
    # explicit tags, as npm yaml resolves them
    (
        "a: !!str 12\nb: !!int '12'\nc: !!float 1\nd: !!bool yes\ne: !!int 0x1f\nf: !custom 3",
        dict(a="12", b=12, c="1", d="yes", e=31, f="3"),
    ),
    (
        "a: !!null ''\nb: !!str\nc: !local {x: 1}\nd: ! 12\ne: !!map [1]",
        dict(a=None, b="", c={"x": 1}, d="12", e=[1]),
    ),
    # merge keys are plain keys under YAML 1.2 core
    ("base: &b {x: 1}\nchild:\n  <<: *b\n  y: 2", dict(base={"x": 1}, child={"<<": {"x": 1}, "y": 2})),
    # non-string keys become JavaScript property names
    (
        "1: a\ntrue: b\nnull: c\n1.5: d\n0x10: e\n1e21: f\n1e-7: g\n.inf: h",
        {"1": "a", "true": "b", "": "c", "1.5": "d", "16": "e", "1e+21": "f", "1e-7": "g", "Infinity": "h"},
    ),
    ("? complex\n: value\n? |\n  block key\n: v", {"complex": "value", "block key\n": "v"}),
    # aliases
    ("a: &x {k: v}\nb: *x\nc: [*x, *x]", dict(a={"k": "v"}, b={"k": "v"}, c=[{"k": "v"}, {"k": "v"}])),
    ("&k key: &v value\nother: *v", dict(key="value", other="value")),
    # flow collections
    (
        "a: [~, null, b]\nb: {c, d: e}\nc: [x: 1]",
        dict(a=[None, None, "b"], b={"c": None, "d": "e"}, c=[{"x": 1}]),
    ),
    # document markers
    ("a: 1\n...\n# trailing comment", dict(a=1)),
    ("%YAML 1.2\n--- # comment\na: 1", dict(a=1)),
    ("\ufeffa: 1", dict(a=1)),
    # metadata keeps its YAML types (the lint reports non-strings)
    ("metadata:\n  version: 1.0\n  author: me", dict(metadata={"version": 1.0, "author": "me"})),
]


@pytest.mark.parametrize(("yaml_text", "expected"), DECODES)
def test_parse_frontmatter(yaml_text: str, expected: dict[str, JSONValue]) -> None:
    result = parse_frontmatter(yaml_text)
    assert frontmatter_differences(expected, result) == []
    assert list(result) == list(expected)  # key order follows the file
    json.dumps(result, allow_nan=False)


@pytest.mark.parametrize(
    ("yaml_text", "key", "kind"),
    [
        ("v: 1e3", "v", float),
        ("v: 1.10", "v", float),
        ("v: 010", "v", int),
        ("v: 0o17", "v", int),
        ("v: 0x1F", "v", int),
        ("v: true", "v", bool),
        ("v: 12345678901234567890", "v", float),
        ("v: !!int 12", "v", int),
    ],
)
def test_python_types(yaml_text: str, key: str, kind: type) -> None:
    assert type(parse_frontmatter(yaml_text)[key]) is kind


def test_negative_zero_keeps_its_sign() -> None:
    # npm yaml reads `-0` as -0, which util.isDeepStrictEqual tells apart from 0.
    value = parse_frontmatter("a: -0\nb: -0.0")
    assert all(math.copysign(1.0, v) == -1.0 for v in value.values() if isinstance(v, float))
    assert json.dumps(value) == '{"a": -0.0, "b": -0.0}'


def test_big_integers_read_as_javascript_doubles() -> None:
    assert parse_frontmatter("a: 12345678901234567890") == {"a": 1.2345678901234567e19}
    assert parse_frontmatter("12345678901234567890: x") == {"12345678901234567000": "x"}


ERRORS = [
    # (yaml_text, line, fragment)
    ("a: 1\na: 2", 2, "duplicate key 'a' (first defined on line 1)"),
    ("a:\n  b: 1\n  b: 2", 3, "duplicate key 'b'"),
    ("a: {b: 1, b: 2}", 1, "duplicate key 'b'"),
    ("1: a\n1.0: b", 2, "duplicate key '1'"),
    ("1: a\n'1': b", 2, "duplicate key '1'"),
    ("null: a\n~: b", 2, "duplicate key ''"),
    ("&k a: 1\n*k : 2", 2, "duplicate key 'a'"),
    ("a: .inf", 1, "Infinity is not a finite number"),
    ("a: [-.inf]", 1, "-Infinity is not a finite number"),
    ("a: .nan", 1, "NaN is not a finite number"),
    ("a: 1e400", 1, "not a finite number"),
    ("- a\n- b", 1, "must be a YAML mapping, not a sequence"),
    ("just text", 1, "must be a YAML mapping, not a scalar"),
    ("", 1, "frontmatter is empty"),
    ("# nothing", 1, "frontmatter is empty"),
    ("~", 1, "frontmatter is empty"),
    ("a: 1\n--- b: 2", 2, "more than one YAML document"),
    ("a: 1\n...\nb: 2", 3, "more than one YAML document"),
    ("a: 1\n b: 2", 2, "invalid YAML"),
    ("a: [b", 2, "invalid YAML"),
    ("a: 'b", 2, "invalid YAML"),
    ("a:\n\t- x", 2, "invalid YAML"),
    ("a: b\n\tc: d", 2, "invalid YAML"),
    ("a: b: c", 1, "invalid YAML"),
    ("a: @b", 1, "invalid YAML"),
    ('a: "\\q"', 1, "invalid YAML"),
    ("a: *nothing", 1, "alias *nothing refers to no anchor"),
    ("a: &x [*x]", 1, "refers to a node that contains it"),
    ("[a]: b", 1, "mapping keys must be scalars"),
    ("a: !!binary aGk=", 1, "!!binary is not supported"),
    ("a: !!timestamp 2024-01-01", 1, "!!timestamp is not supported"),
    ("a: !!set {x}", 1, "!!set is not supported"),
    ("a: !!omap [x: 1]", 1, "!!omap is not supported"),
    ("!!merge <<: {x: 1}", 1, "!!merge is not supported"),
    ("%YAML 1.1\n---\na: yes", 2, "%YAML 1.1 directive"),
    ("a: " + "[" * 201 + "]" * 201, 1, "nested more than 200 deep"),
]


@pytest.mark.parametrize(("yaml_text", "line", "fragment"), ERRORS)
def test_parse_frontmatter_errors(yaml_text: str, line: int, fragment: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(yaml_text)
    assert fragment in str(info.value)
    assert info.value.line == line


def test_first_line_offsets_error_lines() -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter("name: x\nname: y", first_line=2)
    assert info.value.line == 3
    assert str(info.value) == "line 3: duplicate key 'name' (first defined on line 2)"
    with pytest.raises(FrontmatterError) as syntax:
        parse_frontmatter("a: 1\n  b: [", first_line=10)
    assert syntax.value.line is not None
    assert syntax.value.line >= 11


def test_billion_laughs_fails_fast() -> None:
    started = time.perf_counter()
    with pytest.raises(FrontmatterError, match="expands too much"):
        parse_frontmatter(BILLION_LAUGHS)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    ("aliases", "ok"),
    [(99, True), (100, False)],
)
def test_alias_budget_matches_npm_yaml(aliases: int, ok: bool) -> None:
    # npm yaml's maxAliasCount (100) counts the anchor itself: 99 aliases of a scalar pass, 100 fail.
    text = "a: &s x\n" + "".join(f"k{i}: *s\n" for i in range(aliases))
    if ok:
        assert len(parse_frontmatter(text)) == aliases + 1
    else:
        with pytest.raises(FrontmatterError, match="expands too much"):
            parse_frontmatter(text)


EMPTY_ALIAS_BOMB = "e: &e []\nb: &b [" + ", ".join(["*e"] * 2000) + "]\n" + "".join(f"k{i}: *b\n" for i in range(20))


def test_alias_bomb_of_empty_collections_fails_fast() -> None:
    # npm yaml does not count aliases of empty collections (their weight is 0), and shares the
    # aliased object; we copy, so we also cap the values that aliases add. (npm yaml accepts this
    # document, after seconds of its own quadratic alias bookkeeping, so it is not in REFUSALS.)
    started = time.perf_counter()
    with pytest.raises(FrontmatterError, match="aliases expand to more than 10000 values"):
        parse_frontmatter(EMPTY_ALIAS_BOMB)
    assert time.perf_counter() - started < 1.0


def test_aliases_may_not_nest_too_deep() -> None:
    text = "a: &a " + "[" * 150 + "]" * 150 + "\nb: " + "[" * 60 + "*a" + "]" * 60
    with pytest.raises(FrontmatterError, match="nests collections more than 200 deep"):
        parse_frontmatter(text)
    assert parse_frontmatter("a: &a " + "[" * 150 + "]" * 150 + "\nb: " + "[" * 40 + "*a" + "]" * 40)


def test_aliased_values_are_independent_copies() -> None:
    result = parse_frontmatter("a: &x {k: [1]}\nb: *x")
    b = result["b"]
    assert isinstance(b, dict)
    b["k"] = "changed"
    assert result["a"] == {"k": [1]}


# --------------------------------------------------------------------------------------------------
# frontmatter_differences
# --------------------------------------------------------------------------------------------------

DIFFERENCES: list[tuple[dict[str, JSONValue], dict[str, JSONValue], list[str]]] = [
    ({"a": "x"}, {"a": "x"}, []),
    ({"description": "x"}, {"description": "y"}, ["description: entry has 'x', file has 'y'"]),
    ({"reviewed": True}, {"reviewed": "yes"}, ["reviewed: entry has true, file has 'yes'"]),
    ({"v": 1}, {"v": 1.0}, []),
    ({"v": 1000}, {"v": 1e3}, []),
    ({"v": True}, {"v": 1}, ["v: entry has true, file has 1"]),
    ({"v": 0}, {"v": False}, ["v: entry has 0, file has false"]),
    ({"v": "1.0"}, {"v": 1.0}, ["v: entry has '1.0', file has 1.0"]),
    ({"v": 0}, {"v": -0.0}, ["v: entry has 0, file has -0.0"]),
    ({"v": 9007199254740993}, {"v": 9007199254740992.0}, []),
    ({"v": None}, {}, []),  # like the conformance suite: a missing field counts as null
    ({}, {"v": "x"}, ["v: entry has null, file has 'x'"]),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, []),
    ({"m": {"x": "1"}}, {"m": {"x": 1}}, ["m.x: entry has '1', file has 1"]),
    ({"m": {"x": None}}, {"m": {}}, ["m.x: entry has null, file has no such key"]),
    ({"m": {}}, {"m": {"y": 1}}, ["m.y: entry has no such key, file has 1"]),
    ({"l": [1, "a"]}, {"l": [1, "b"]}, ["l[1]: entry has 'a', file has 'b'"]),
    ({"l": [1]}, {"l": [1, 2]}, ["l: entry has 1 items [1], file has 2 items [1, 2]"]),
    ({"l": []}, {"l": {}}, ["l: entry has [], file has {}"]),
    (
        {"a": "x", "b": 1},
        {"a": "y", "c": 2},
        ["a: entry has 'x', file has 'y'", "b: entry has 1, file has null", "c: entry has null, file has 2"],
    ),
]


@pytest.mark.parametrize(("expected", "actual", "differences"), DIFFERENCES)
def test_frontmatter_differences(
    expected: dict[str, JSONValue], actual: dict[str, JSONValue], differences: list[str]
) -> None:
    assert frontmatter_differences(expected, actual) == differences


def test_frontmatter_differences_truncates_long_values() -> None:
    (line,) = frontmatter_differences({"d": "x" * 500}, {"d": "y"})
    assert len(line) < 200
    assert "…" in line


def test_yaml_1_1_reading_differs_from_ours() -> None:
    # What PyYAML would have produced for `reviewed: yes`, compared with what the file says.
    assert frontmatter_differences({"reviewed": True}, parse_frontmatter("reviewed: yes")) == [
        "reviewed: entry has true, file has 'yes'"
    ]


# --------------------------------------------------------------------------------------------------
# yaml_interop_hazards
# --------------------------------------------------------------------------------------------------

HAZARDS = [
    # (yaml_text, [(line, path, message fragment)])
    ("reviewed: yes", [(1, "reviewed", "boolean in YAML 1.1 parsers")]),
    ("a: On\nb: OFF\nc: no", [(1, "a", "boolean"), (2, "b", "boolean"), (3, "c", "boolean")]),
    ("a: y\nb: N", [(1, "a", "YAML 1.1 spec"), (2, "b", "YAML 1.1 spec")]),
    ("on: x", [(1, "on", "key 'on' is a string")]),
    ("created: 2024-01-31", [(1, "created", "date")]),
    ("at: 2024-01-31T10:20:30Z", [(1, "at", "date")]),
    ("mode: 0o17", [(1, "mode", "integer 15 in YAML 1.2 but a string")]),
    ("perm: 010", [(1, "perm", "integer 10 in YAML 1.2 but the octal number 8")]),
    ("v: 09", [(1, "v", "integer 9 in YAML 1.2 but a string")]),
    ("version: 1.10", [(1, "version", "the number 1.1, not the text as written")]),
    ("version: 1.0", [(1, "version", "the number 1, not the text")]),
    ("num: 1e3", [(1, "num", "number 1000 in YAML 1.2 but a string in YAML 1.1")]),
    ("t: 1:30", [(1, "t", "base-60")]),
    ("b: 0b11", [(1, "b", "binary")]),
    ("u: 1_000", [(1, "u", "number in YAML 1.1")]),
    ("x: .inf", [(1, "x", "not a finite number")]),
    ("big: 12345678901234567890", [(1, "big", "beyond JavaScript's exact integers")]),
    ("e: =", [(1, "e", "'value' tag")]),
    ("<<: {a: 1}", [(1, "<<", "merge key")]),
    ("tags: [yes, 'no', 2024-01-01]", [(1, "tags[0]", "boolean"), (1, "tags[2]", "date")]),
    ("a:\n  b:\n    - on", [(3, "a.b[0]", "boolean")]),
    # Non-string metadata values break a field rule (core/fields.py), not a YAML reading: no hazard here.
    ("metadata:\n  version: 1.5\n  count: 3\n  flag: true\n  none:\n  list: [a]\n  map: {a: b}", []),
    ("metadata: [a]", []),
    # nothing to report
    (
        "name: x\ndescription: 'yes'\nok: true\nnum: 3\nf: 1.5\nd: '2024-01-31'\nz: null\nmetadata:\n  v: '1.0'",
        [],
    ),
    ('a: "on"\nb: |\n  yes\nc: !!str 010', []),
]


@pytest.mark.parametrize(("yaml_text", "expected"), HAZARDS)
def test_yaml_interop_hazards(yaml_text: str, expected: list[tuple[int, str, str]]) -> None:
    hazards = yaml_interop_hazards(yaml_text)
    assert [(line, path) for line, path, _ in hazards] == [(line, path) for line, path, _ in expected]
    for (_, _, message), (_, _, fragment) in zip(hazards, expected, strict=True):
        assert fragment in message


def test_yaml_interop_hazards_lines_are_file_lines() -> None:
    assert yaml_interop_hazards("name: x\nok: yes", first_line=2)[0][:2] == (3, "ok")


def test_yaml_interop_hazards_rejects_broken_yaml() -> None:
    with pytest.raises(FrontmatterError) as info:
        yaml_interop_hazards("a: [b", first_line=5)
    assert info.value.line == 6


def test_hazard_claims_hold_for_pyyaml() -> None:
    yaml = pytest.importorskip("yaml")  # PyYAML, the YAML 1.1 parser FastMCP uses
    for text, pyyaml_value in [
        ("yes", True),
        ("on", True),
        ("010", 8),
        ("0o17", "0o17"),
        ("1e3", "1e3"),
        ("1:30", 90),
        ("0b101", 5),
        ("1_000", 1000),
    ]:
        assert yaml.safe_load(f"a: {text}")["a"] == pyyaml_value, text
        assert yaml_interop_hazards(f"a: {text}"), text
    assert type(yaml.safe_load("a: 2024-01-31")["a"]).__name__ == "date"


# --------------------------------------------------------------------------------------------------
# Differential test against npm yaml (the conformance suite's parser)
# --------------------------------------------------------------------------------------------------

# Frontmatter texts chosen to probe every place where YAML 1.1 parsers, PyYAML/ruamel's scanner and
# npm yaml (YAML 1.2) could part ways. Each must decode to what npm yaml gives, or fail where it fails.
REFERENCE_CASES: list[str] = [
    # scalars and the core schema
    "a: 1e3\nb: 1.10\nc: 0o17\nd: 010\ne: 0x1F\nf: 2024-01-31\ng: yes\nh: on\ni: ~\nj: True\nk: 12345678901234567890",
    "a: +1\nb: +.5\nc: -.5\nd: 0o\ne: 0x\nf: 0xG\ng: 1_000\nh: 1.2.3\ni: 1e\nj: e3\nk: 0.\nl: .\nm: -\nn: +",
    "a: ０\nb: tRUE\nc: nULL\nd: Null\ne: NULL\nf: FALSE\ng: y\nh: N",
    "a: 9007199254740993\nb: 0xFFFFFFFFFFFFFFFFF\nc: 0o7777777777777777777777\nd: -0x1",
    "a: -0\nb: -0.0\nc: -0e0\nd: '-0'\ne: !!int -0\nf: +0",
    "a: .inf",
    "a: -.Inf",
    "a: .NaN",
    "a: 1e400",
    "a: [1, .inf]",
    # numeric, boolean and null keys
    "1: a\ntrue: b\nnull: c\n1.5: e\n0x10: f\n0o10: g\n.5: h",
    ".inf: 1\n.nan: 2\n1e21: x\n1e-7: y\n0.1: z\n-0: w\n12345678901234567890: v",
    "123456789012345678901234567890: x\n0.000001: y\n100000000000000000000: z\n1000000000000000000000: w",
    "0.1e1: x\n1.0e+2: y\n-1.5: z\n~: n\nfalse: f",
    "1e400: x",
    # duplicate keys
    "a: 1\na: 2",
    "1: a\n1.0: b",
    "null: a\n~: b",
    "a:\n  b: 1\n  b: 2",
    "a: {b: 1, b: 2}",
    '"a": 1\na: 2',
    "'a': 1\n\"a\": 2",
    "a: 1\nA: 2",
    "<<: 1\n<<: 2",
    # strings, escapes, folding
    'a: "\\x41\\u263a\\/"',
    "a: 'it''s'",
    "a: b#c\nd: e # f",
    'a: "\\ud83d\\ude00"',
    'a: "\\U0001F600"',
    'a: "\\N\\_\\L\\P\\e\\0\\a\\b\\v\\f\\ \\t\\""',
    'a: "\\q"',
    'a: "\\x4',
    'a: "\\u12"',
    'a: "\\uD800"',
    "a: 'multi\n\n  line'",
    'a: "x\\\n  y"',
    'a: "x \\\n  y"',
    "a: 'x\r\n  y'",
    "a: x\u2028y",
    "a: x\x85y",
    'a: "x\u2028y"',
    "a: |\n  x\u2028y\n",
    "a: x\u2029y",
    "a: x\x01y",
    'a: "x\x01y"',
    "a: x\x7fy",
    "a: x\ufeffy",
    "\ufeffa: 1",
    "a: x\ufffey",
    "a: \U0001f600",
    "a: x\x00y",
    "a: \u00e9\u00e8\nb: \u4e2d\u6587\n\u952e: \u503c",
    "emoji: \U0001f600\n\U0001f600: x",
    "a: b\u3000c",
    "a:\u00a0b",
    # block scalars
    "a: |\n  x",
    "a: |+\n  x",
    "a: |-\n  x",
    "a: >\n  x",
    "a: >+\n  x",
    "a: |\n  x\n  ",
    "a: |\n\n",
    "a: |",
    "a: >\n",
    "a: |+\n  x\n\n",
    "a: >\n  x\n  y\n\n  z\n",
    "a: |2\n   x\n  y",
    "a: |-2\n   x",
    "a: |+2\n   x\n\n",
    "a: >\n  a\n    b\n  c\n",
    "a: >\n  a \n  b\n",
    "a: |  # c\n  x",
    "a: |\n  x\n # c\nb: 1",
    "a: |\r\n  x\r\n  y\r\n",
    "a: >-\n\n  x\n\n  y\n\n",
    "a: |\n  \n  x\n",
    "a: |\n x\n  y\n",
    "a: |1\n  x",
    "a: |\n    \n  x",
    "a: |\n\n\n  x\n\n",
    "a: |\n  x\n\ty",
    "a: |\n  x\n  \ty\n",
    "a: |\n\tx",
    "a: |\t# c\n  x",
    "a: |2\t\n   x",
    # plain multi-line scalars and indentation
    "a: b\n  c\n  d",
    "a: b\n\n  c",
    "a: b\n  # c\n  d",
    "a: b # c\n  d",
    "a:\n  b\n  c: d",
    "a:\n  - b\n  c: d",
    "a:\n- b\n-c",
    "a:\n-\n- b",
    "a:   \n  b: c",
    "a: # c\n  b: c",
    "a: x\n b",
    "a:\n b\nc: d",
    "a:\n  b: c\n d: e",
    "a:\n    b: c\n  d: e",
    "a: 1\n b: 2",
    " a: 1\n b: 2",
    " a: 1\nb: 2",
    "\n\na: 1",
    "#c\na: 1",
    # tabs
    "a:\tb",
    "a: b\t# c",
    "a:\t\n  b: c",
    "\ta: b",
    "a:\n  b:\tc",
    "a: b\t",
    "a:\n \tb: c",
    "a: [\tb]",
    "a:\n\tb",
    "a: x\n\ty",
    "a: x\n  \ty",
    "key:\t\t value",
    "? a\n:\tb",
    "a:\t&x b\nc:\t*x",
    'a: "x\ty"',
    'a: "x\n\ty"',
    "a:\t[b,\tc]",
    "a: {\tb: c}",
    "a:\n  - b\t\n  -\tc",
    "a\t#x: b",
    "a: b\t#c\nd: e",
    "a: b\tc",
    "a: b \t c",
    "a: !!str\tb",
    "a: &x\tb",
    "a:\n  x\n\t\n  y",
    "a: x\n\t\n  y",
    "a: x\n  y\t\n  z",
    "a: 'x\n\ty'",
    "a: 'x\n \ty'",
    "a: b\n\t\nc: d",
    "a: b\n \t \nc: d",
    "a: !foo\tx",
    "a: !!\tb",
    # quoted scalars and flow collections across lines
    'a: "x\ny"',
    "a: 'x\ny'",
    'a:\n  b: "x\n  y"',
    'a:\n  - "x\n  y"',
    'a: "x\n\n y"',
    'a: "x\n "',
    'a: "x\n"',
    'a: "x\n\t\n y"',
    'a: "x\n  \t\n y"',
    "a: [b,\n]",
    "a: [b,\n c]",
    "a:\n  b: [c,\n  d]",
    "a:\n  b: [c,\n   d]",
    "a: {b: c,\n}",
    "a: [b\nc]",
    "a: [b\n c]",
    "a:\n  b: 'x\n   y'",
    'a:\n- b\n- "c\n d"',
    "a:\n- b\n- [c,\n d]",
    "a:\n- [c,\n  d]",
    "a: [\n]",
    "a: [\n  # c\n]",
    "a: [b, # c\n# d\n c]",
    "a: [b, #c\n  c]",
    "a: [[b,\n]]",
    "a: [[b,\n ]]",
    'a: ["x\ny"]',
    'a: ["x\n y"]',
    "a: [b,\n\n c]",
    "a: [b,\n \t\n c]",
    "- a: [b,\n  c]",
    "- a: [b,\n   c]",
    "a: [b,\n\tc]",
    "a: {b: c,\n\td: e}",
    # flow collection shapes
    "a: [~, null, , b]",
    "a: [a, , b]",
    "a: {a, b: c}",
    "a: [a: b]",
    "a: [a: b, c]",
    "a: [? a : b]",
    "a: {? a}",
    "a: {a: }",
    "a: {: b}",
    "a: [b]]",
    "a: b]",
    "a: b}",
    "a: {b: [c}]",
    "a: ,",
    "a: [,]",
    "a: [b,,]",
    "a: [b, [c, [d, [e]]]]",
    "a: " + "[" * 60 + "]" * 60,
    "a: {" + ", ".join(f"k{i}: {i}" for i in range(50)) + "}",
    # keys and indicators
    "a:b: c",
    "a: b: c",
    "a: http://x.y/z?q=1#f",
    "a: -x",
    "a: ?x",
    "a: :x",
    "a: x:",
    "a: x :y",
    "a: - x",
    "- a\nb: c",
    "a: @x",
    "a: `x",
    "a: %x",
    "a: *",
    "? a\n: b",
    "? \n: v",
    "?\n: v",
    "? a\n? b\n",
    "k" * 1025 + ": v",
    "k" * 1023 + ": v",
    '"' + "k" * 1030 + '": v',
    # documents and directives
    "",
    "# c",
    "x",
    "- 1",
    "--- a\n--- b",
    "a: b\n...",
    "a: 1\n...\n# c\n",
    "a: 1\n...\n---\nb: 2",
    "--- a: 1",
    "--- !!map\na: 1",
    "---\na: 1\n",
    "%YAML 1.2\n---\na: 1",
    "%FOO bar\n---\na: 1",
    "%TAG !! tag:example.com:\n---\na: !!int 12",
    "%TAG !e! tag:yaml.org,2002:\n---\na: !e!int 12",
    # anchors and aliases
    "a: &x {b: 1}\nc: *x\n<<: *x",
    "a: &a[b] 1",
    "a: [&a b, *a]",
    "&a b: 1\nc: *a",
    "a: &x 1\nb: &x 2\nc: *x",
    "a: *x\nb: &x 1",
    "a: &x [*x]",
    "a: &x {b: *x}",
    "a: &a x\nb: *a\nc: *a",
    "&a a: &b b\n*b : *a",
    "a: &e {}\n" + "".join(f"k{i}: *e\n" for i in range(200)),
    "a: &s x\n" + "".join(f"k{i}: *s\n" for i in range(99)),
    "a: &s x\n" + "".join(f"k{i}: *s\n" for i in range(100)),
    "a: &m {x: &n [1, 2]}\nb: [*m, *n, *m]",
    "a: &e []\nb: &f [*e, *e]\n" + "".join(f"k{i}: *f\n" for i in range(150)),
    "a: &a [1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c]",
    BILLION_LAUGHS,
    # merge keys
    "<<: {a: 1}",
    "b: &b {x: 1}\nc:\n  <<: *b\n  y: 2",
    "c:\n  <<: [{a: 1}, {b: 2}]",
    "'<<': 1",
    # tags
    "x: [!!float 1, !!int '12', !!int abc, !!bool yes, !!str 12, !foo 12]",
    "a: !!str [x]",
    "a: !!map [x]",
    "a: !!seq x",
    "a: !!seq {x: 1}",
    "a: !!int 0o17",
    "a: !!float 1e3",
    "a: !!float .5",
    "a: !!float .inf",
    "a: !!null ~",
    "a: !!null x",
    "a: !!null ''",
    "a: !!bool True",
    "a: !!int 1.5",
    "a: !!int 0x1f",
    "a: !!str",
    "a: !!int",
    "a: !!null",
    "a: !custom {x: 1}",
    "a: !<tag:yaml.org,2002:int> 12",
    "a: !<!x>\tb",
    "a: ! 12",
    "a: !\t12",
    "a: !!str 012",
    "!!str 1: x",
    "!!int '1': x\n1: y",
    "a: !!timestamp x",
    "a: !!set x",
    "a: !!binary [1]",
    # a tab between node properties and an empty key's ':' in an explicit key's value: npm refuses it
    # (found by tests/e2e/test_frontmatter_fuzz.py); with content before the ':' or a comment after, it is a key
    "? k\n:  !!null\t :",
    "? k\n: !!null\t: y",
    "? k\n:  !!null \t: y",
    "? k\n: !!null &a\t: y",
    "a:\n  ? k\n  : !!null\t : y",
    "? k\n: !x\t:",
    "? k\n: !x\t:\ty",
    "? k\n:\t!x\t: y",
    "? k\n: !x\t:y",
    "? k\n:  !!str a\t: y",
    "? k\n: &a b\t: c",
    "? k\n: !!null\t #c\n  : y",
    "? k\n: !x\t\n  : y",
    # tabs in the leading blanks of a line
    "\t{a: 1}",
    "a:\n  \t[x]",
    "a:\n  \tx",
    'a:\n  \t"x"',
    "a:\n  \t- x",
    "a:\n  \tb: c",
    '\t"a": 1',
    "a:\n \t'x'",
    "a: 1\n\t{b: 2}",
    "a:\n  b: 1\n  \t[c]",
    "a:\n  \t&x b",
    "a:\n  \t!!str b",
    "a:\n  \t#c\n  b",
    "a:\n\t# c\n  b: 1",
    "a:\n \t \n  b: 1",
    "a: |\n  x\n\t\n  y",
    "a: |\n\t\n  x",
    "a: >\n  x\n  \t\n  y",
    "a: |\n \t\n  x",
    "a: |2\n\t\n   x",
    "a: >\n\t#c",
    "a: |\n  x\n\t#c\nb: 1",
    "a: |\n  x\n \t#c\nb: 1",
    "a: |+\n  x\n\t",
    "a: >\n \n  ]\n",
    # trailing spaces at the end of the input
    "a: |+\n  x\n \n ",
    "a: x\n  ",
    "a: |+\n  x\n\n  ",
    " 1:\t|+\r\n  ::\r\n  x\r\n  ",
    # comments must follow a blank
    "a: 'x'#c",
    'a: "x"#c',
    "a: [b]#c",
    "a: {b: c}#c",
    "a: [b, c]#",
    "a: &x#y 1\nb: *x#y",
    "a: !!str#c x",
    "a: [b,#c\n c]",
    "\ufeff#c\na: 1",
    # empty implicit keys
    ": b: c",
    ": - x",
    ": b",
    "a: 1\n: b",
    "? a\n: b: c",
    "? a\n: - x",
    "x:\n  : b: c",
    "? a\nk: v\n: b: c",
    # ':' '?' '-' and tags inside flow collections
    'a: {"b":"c"}',
    'a: {"b":1,"c":[1,2]}',
    "a: [a:b]",
    "a: {b:c}",
    "a: [ba:]",
    "a: [ba:, c]",
    "a: {b:}",
    "a: {b: c:}",
    "a: [-]",
    "a: [-x]",
    "a: {k: -}",
    "a: [:x]",
    "a: {k: :x}",
    "a: [?x]",
    "a: {?x: 1}",
    "a: [x?]",
    'a: ["b":c]',
    'a: ["a" : b]',
    "a: [!]",
    "a: {k: !/}",
    "a: [!!str]",
    "a: !foo,bar x",
    "a: [!foo,bar]",
    "a: [!<tag:x,y>]",
    "a: [-, a]",
    "a: [&x, *x]",
    '"a":b',
    # realistic frontmatter
    "name: x\ndescription: y\nmetadata:\n  version: 1.0\n  author: me\n  tags: [a, b]",
    "name: pdf\ndescription: >-\n  Extract text.\n  Use when: asked.\nallowed-tools: Bash(git:*) Read\nlicense: MIT",
    "name: azure-role-selector\nallowed-tools: ['Azure MCP/documentation', 'Azure MCP/bicepschema']",
    "name: apk\nargument-hint: [apk-file-or-directory]\ndisable-model-invocation: true",
    "name: x\ndescription: 'Use when: the user asks'\nuser-invocable: false\ncontext: fork",
    "description: a --- b",
    "description: a\n  --- b",
    "description: |\n  ---x\n",
    "a: ... b",
    "a: b\n... # c",
    "on: yes\noff: no\ny: n",
    "date: 2024-01-31\ntime: 2024-01-31T10:20:30Z\nspace: 2024-01-31 10:20:30 +01:00",
    "version: 1.10\nv2: 1.0\nv3: 1.",
    "sexa: 1:30\nbin: 0b101\nunder: 1_000",
    # issue 11, item 3 (found by tests/e2e/test_frontmatter_fuzz.py): each read as npm yaml reads it, or refused
    "a: !<!> b",
    "a: [!<!> b]",
    "a:\n\t\nb: c",
    "a b: \n\t",
    "a:\n-\t&x y",
    "a:\n-\t- x",
    "? \t&x y",
    "name:\n-\tx: y",
    "null: !!null \t\n\t",
    "? null\n:\t ?\nyes: 1",
    'name: |+\n   \n \t\n  \n"k": v',
    "a: b\r# c",
    "a: |\n  x\n     ",
    "a: |+\n  x\n  ",
    "a: |-\n  x\n   ",
    "a: >+\n  x\n\n  ",
    "a: |\n  \n  x\n  ",
    'description: "\\UFFFFFFFF"',
    'description: "\\U00110000"',
    # ... and by its long run (50,000 documents)
    "a: !!!bool x",
    "'':\n-\n   - \n\t",
    "a:\n-\n\t",
    "? \n\t",
    "name: &x1 \n  ? metadata\n  : yes\n  # c\n\t",
    "a:\n  m: y\n  # c\n \t",
]

DIVERGENCES = {refusal.example: refusal.why for refusal in REFUSALS}


def differential_cases() -> list[str]:
    """Every text whose npm yaml answer the tests compare against (and the golden file stores)."""
    return list(dict.fromkeys(REFERENCE_CASES + list(DIVERGENCES)))


def _non_index_keys(value: dict[str, Any]) -> list[str]:
    # JavaScript enumerates integer-like keys first, so only the other keys keep file order there.
    return [key for key in value if not re.fullmatch(r"0|[1-9][0-9]{0,9}", key)]


def _mismatch(text: str, reference: Reference | str) -> str | None:
    """None when our reading of ``text`` agrees with npm yaml's, else what differs."""
    try:
        ours: dict[str, JSONValue] | None = parse_frontmatter(text)
        error = None
    except FrontmatterError as exc:
        ours, error = None, str(exc)
    if isinstance(reference, str):
        return None if error is not None else f"npm yaml fails ({reference.splitlines()[0]}), we give {ours!r}"
    if reference.non_finite:
        return None if error is not None else f"npm yaml gives a non-finite number, we give {ours!r}"
    if not isinstance(reference.value, dict):
        return None if error is not None else f"npm yaml gives a non-mapping, we give {ours!r}"
    if ours is None:
        return f"npm yaml gives {reference.value!r}, we fail: {error}"
    problems = frontmatter_differences(reference.value, ours)
    if set(reference.value) != set(ours):
        problems.append(f"keys {sorted(reference.value)} != {sorted(ours)}")
    if _non_index_keys(reference.value) != _non_index_keys(ours):
        problems.append(f"key order {list(reference.value)} != {list(ours)}")
    try:
        json.dumps(ours, allow_nan=False)
    except ValueError as exc:
        problems.append(f"not JSON: {exc}")
    return "; ".join(problems) or None


@pytest.fixture(scope="module")
def references() -> dict[str, Reference | str]:
    """npm yaml's answers from the checked-in golden file (tests/e2e/test_frontmatter_npm.py holds it to
    live npm yaml where Node 22 is installed)."""
    return load_golden()


def test_golden_file_covers_every_case() -> None:
    golden = load_golden()
    missing = [text for text in differential_cases() if text not in golden]
    assert not missing, f"{len(missing)} cases are not in {GOLDEN.name}: run scripts/refresh-yaml-reference"


def test_reference_cases_are_many_and_distinct() -> None:
    assert len(set(REFERENCE_CASES)) == len(REFERENCE_CASES)
    assert len(REFERENCE_CASES) >= 60
    assert not set(REFERENCE_CASES) & set(DIVERGENCES)


@pytest.mark.parametrize("index", range(len(REFERENCE_CASES)))
def test_matches_npm_yaml(index: int, references: dict[str, Reference | str]) -> None:
    text = REFERENCE_CASES[index]
    problem = _mismatch(text, references[text])
    assert problem is None, f"{text!r}: {problem}"


@pytest.mark.parametrize("text", list(DIVERGENCES), ids=[f"divergence{i}" for i in range(len(DIVERGENCES))])
def test_documented_divergences(text: str, references: dict[str, Reference | str]) -> None:
    reference = references[text]
    assert isinstance(reference, Reference), f"npm yaml now rejects {text!r}; drop it from REFUSALS"
    assert not reference.non_finite
    with pytest.raises(FrontmatterError):
        parse_frontmatter(text)


def test_reference_harness_round_trips_values(references: dict[str, Reference | str]) -> None:
    reference = references["a: -0\nb: -0.0\nc: -0e0\nd: '-0'\ne: !!int -0\nf: +0"]
    assert isinstance(reference, Reference)
    assert math.copysign(1.0, reference.value["a"]) == -1.0
    assert reference.value["f"] == 0
    assert references["a: .inf"] == Reference({"a": None}, non_finite=True)
    assert isinstance(references["a: 1\na: 2"], str)

"""The one list of what npm yaml accepts and this decoder refuses, each with an example."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    """A class of frontmatter npm ``yaml`` accepts and we refuse, with one example of it.

    The contract is "equal to npm yaml, or refused": refusing is conformance-safe (a skipped skill is
    never a mismatch), so it is how we handle what npm reads wrongly, what is not JSON, and the
    corners where YAML readers disagree. ``tests/core/test_frontmatter.py`` checks that every example is
    still accepted by npm yaml and still refused here, so an entry goes stale loudly.
    """

    example: str
    why: str


REFUSALS: tuple[Refusal, ...] = (
    Refusal("&k a: 1\n*k : 2", "two keys with the same JSON name (via an alias): npm keeps the last; we refuse"),
    Refusal("1: a\n'1': b", "keys 1 and '1' are the same JSON key: npm keeps the last; we refuse"),
    Refusal(".nan: 1\n.nan: 2", "keys NaN and NaN are the same JSON key: npm keeps the last; we refuse"),
    Refusal("a: !!binary aGk=", "YAML 1.1 !!binary: npm yields a Buffer, which is not JSON"),
    Refusal("a: !<tag:yaml.org,2002:binary> aGk=", "YAML 1.1 !!binary, verbatim tag"),
    Refusal("a: !!timestamp 2024-01-01", "YAML 1.1 !!timestamp: npm yields a Date, which JSON turns into a string"),
    Refusal("a: !!set\n  ? x", "YAML 1.1 !!set: npm yields a Set, which JSON turns into {}"),
    Refusal("a: !!omap\n  - x: 1", "YAML 1.1 !!omap: npm yields a Map, which JSON turns into {}"),
    Refusal("a: !!pairs [x: 1]", "YAML 1.1 !!pairs"),
    Refusal("!!merge <<: {z: 1}", "explicit !!merge: npm merges; we do not implement YAML 1.1 merge keys"),
    Refusal("%YAML 1.1\n---\na: yes", "a %YAML 1.1 directive switches npm to the YAML 1.1 schema; frontmatter is 1.2"),
    Refusal("? [a]\n: b", "collection key: npm stringifies it as YAML ('[ a ]'); we refuse"),
    Refusal("? - x\n: y", "collection key (block sequence)"),
    Refusal("? {x: 1}\n: y", "collection key (flow mapping)"),
    Refusal("[a]: b", "collection key (implicit)"),
    Refusal("{a: b}: c", "collection key (implicit flow mapping)"),
    Refusal("a: &x\n  k: v\nb: *x\n*x : 3", "alias to a mapping used as a key: npm names the key '*x'"),
    Refusal(
        "a: " + "[" * 201 + "]" * 201,
        "nesting deeper than MAX_DEPTH (200); flow nesting past it is refused by a linear walk before parsing",
    ),
    Refusal("a: [: b]", "ruamel's parser cannot read an empty implicit key inside a flow sequence"),
    Refusal("a:\r b", "a lone CR right after 'key:' (npm reads it as part of the value)"),
    Refusal("a: [:]", "ruamel's parser cannot read an empty implicit key inside a flow sequence"),
    Refusal("description: 'It''s''", "npm yaml bug: a single-quoted scalar ending in '' at the very end of input"),
    Refusal("name: x\ndescription\n  : 'value'", "npm yaml leniency: an implicit key with its ':' on the next line"),
    Refusal("? k\n- x", "npm yaml leniency: an indentless sequence after an explicit key (npm drops it)"),
    Refusal("a: [!\x1e\x07]", "control characters right after '!' or '&': npm reads them as separators"),
    Refusal("a: &a " + "[" * 150 + "]" * 150 + "\nb: " + "[" * 60 + "*a" + "]" * 60, "an alias nesting past MAX_DEPTH"),
    Refusal(
        'a: "x\\\n\n  y"',
        "an escaped line break, then an empty line: npm yaml folds it to 'x y', YAML 1.2 says 'x\\ny'",
    ),
    Refusal('a: "x \\\n\n\n y"', "an escaped line break, then empty lines: npm yaml keeps one line break fewer"),
    Refusal(
        "a: b\rc",
        "a CR without LF: npm yaml reads it as content in some places, as a blank in others",
    ),
    Refusal("a: 'x\ry'", "a lone carriage return, even inside quotes"),
    Refusal("a: |+\n  ", "a block scalar of blank lines only, ended by a line of spaces without a line break"),
    Refusal("a: |1\n x\n  \nb: c", "a line of spaces longer than an explicit block indentation: npm reads it as empty"),
    Refusal("a: \n\t\n", "a blank line starting with a tab where the value of 'key:' may begin"),
    Refusal("a: !<> b", "an empty verbatim tag (ruamel's scanner needs a URI)"),
    Refusal(
        "a: |\n  : !x\t: y",
        "a line ': <properties><tab>:' even inside a block or quoted scalar (refused by the line, before parsing)",
    ),
    Refusal("a: x\n\t", "a last line of blanks with a tab and no line break: npm's answer depends on the lines before"),
)

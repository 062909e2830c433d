"""SKILL.md frontmatter: where the block is, and what its YAML means.

This module owns one rule: *a skill's frontmatter is the JSON object a YAML 1.2 core-schema parser
reads from the block between the leading ``---`` line and the next ``---`` (or ``...``) line.*
"A YAML 1.2 core-schema parser" means, precisely, npm ``yaml`` v2 with default options
(``yaml.parse``), the parser the official conformance suite uses to check that an entry's
``frontmatter`` is identical to its SKILL.md. The differential test in ``tests/test_frontmatter.py``
holds this module to that reference.

What that means in practice:

* ``yes``/``no``/``on``/``off``/``y``/``n`` and dates stay strings; ``true``/``True``/``TRUE`` are
  booleans; ``0o17`` is 15, ``0x1F`` is 31, ``010`` is 10; ``1.10`` is the float 1.1.
* Numbers follow JavaScript: integers beyond 2**53 become the nearest float, ``-0`` is ``-0.0``.
  Non-finite numbers (``.inf``, ``.nan``, ``1e999``) cannot be JSON, so they are a
  `FrontmatterError` (npm ``yaml`` returns ``Infinity``, which ``JSON.stringify`` turns into ``null``).
* Merge keys (``<<``) are ordinary keys, as in npm ``yaml``'s core schema.
* Scalar keys are converted to JSON keys the way JavaScript does (``1`` -> ``"1"``, ``true`` ->
  ``"true"``, ``null`` -> ``""``); collection keys are a `FrontmatterError`.
* Two keys that end up as the same JSON key are a `FrontmatterError` naming the key and its line.
* Aliases are expanded under npm ``yaml``'s own budget (``maxAliasCount: 100``), computed without
  building the expanded structure, so an alias bomb fails in milliseconds. Aliased values are
  copied, and the copies may add at most `MAX_ALIAS_NODES` values (npm yaml shares them instead,
  and does not count aliases of empty collections at all).
* Explicit tags behave as in npm ``yaml``: ``!!str``/``!!int``/``!!float``/``!!bool``/``!!null`` apply
  when the text fits the tag (else the value stays a string), unknown and local tags are ignored,
  and the YAML 1.1 types npm would turn into non-JSON objects (``!!binary``, ``!!timestamp``,
  ``!!set``, ``!!omap``, ``!!pairs``, ``!!merge``) are a `FrontmatterError`.

The YAML itself is read by ruamel.yaml's pure-Python parser, whose scanner (PyYAML's, at heart)
is corrected here wherever YAML 1.2 and npm ``yaml`` read text differently (tabs, lone CR and NEL/
LS/PS characters, flow-collection indicators, indentation of continuation lines, ...). Where npm
``yaml`` accepts a malformed document or one that YAML readers disagree on, this module refuses it
with a `FrontmatterError`; `REFUSALS` lists every such class.

Everything here is sans-IO: callers hand in bytes or text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from ruamel.yaml.reader import Reader, ReaderError
from ruamel.yaml.scanner import Scanner, ScannerError
from ruamel.yaml.tokens import ScalarToken, TagToken

from skillwire.core.errors import FrontmatterError, NotASkill

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "JSONValue",
    "SkillDocument",
    "frontmatter_differences",
    "frontmatter_size_problem",
    "parse_frontmatter",
    "parse_skill_md",
    "split_skill_md",
    "yaml_interop_hazards",
]

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None

#: npm ``yaml``'s default ``maxAliasCount``.
MAX_ALIAS_COUNT = 100
#: Collections nested deeper than this are refused (frontmatter is flat in practice).
MAX_DEPTH = 200
#: At most this many JSON values may come from expanding aliases (npm yaml's budget lets aliases
#: of empty collections through uncounted; we copy aliased values, so we count them all).
MAX_ALIAS_NODES = 10_000

#: Frontmatter longer than this (UTF-8 bytes) is refused before it is decoded. Real frontmatter is a
#: few hundred bytes (the largest of the 417 skills in the awesome-copilot corpus is 1,307 bytes; a
#: description may hold at most 1,024 characters), so 64 KiB is 50 times the largest seen. Decoding
#: is linear (``python -m bench.frontmatter_bench``: 0.007-20 ms per KB, by how many tokens a KB
#: holds), so the bound caps a hostile SKILL.md at about a second of one core, and honest
#: frontmatter at a few milliseconds.
MAX_FRONTMATTER_BYTES = 64 * 1024

_MAX_SAFE_INTEGER = 2**53

# --------------------------------------------------------------------------------------------------
# Deliberate refusals: the one list of what npm yaml accepts and this decoder refuses
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A class of frontmatter npm ``yaml`` accepts and we refuse, with one example of it.

    The contract is "equal to npm yaml, or refused": refusing is conformance-safe (a skipped skill is
    never a mismatch), so it is how we handle what npm reads wrongly, what is not JSON, and the
    corners where YAML readers disagree. ``tests/test_frontmatter.py`` checks that every example is
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
    Refusal("a: " + "[" * 201 + "]" * 201, "nesting deeper than MAX_DEPTH (200)"),
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
)


# --------------------------------------------------------------------------------------------------
# Splitting SKILL.md
# --------------------------------------------------------------------------------------------------

_OPENING = re.compile(r"---[ \t]*")
_CLOSING = re.compile(r"(?:---|\.\.\.)[ \t]*")
_LINE = re.compile(r"[^\n]*\n|[^\n]+")


@dataclass(frozen=True)
class SkillDocument:
    """A parsed SKILL.md: its frontmatter as JSON, the raw YAML, and the Markdown body."""

    frontmatter: dict[str, JSONValue]
    frontmatter_text: str
    body: str
    frontmatter_start_line: int
    body_start_line: int


def split_skill_md(text: str) -> tuple[str, str, int, int]:
    """Split SKILL.md text into ``(frontmatter_text, body, frontmatter_start_line, body_start_line)``.

    A leading BOM is skipped; lines may end in LF or CRLF. The first line must be ``---`` (trailing
    blanks allowed) and the block ends at the first later line that is ``---`` or ``...``, so a
    ``---`` inside a value never cuts it. ``frontmatter_text`` excludes the line break before the
    closing line, as the conformance suite's extractor does (this matters only for a block scalar
    that ends the frontmatter). Line numbers are 1-based.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = _LINE.findall(text)
    if not lines or _OPENING.fullmatch(lines[0].rstrip("\r\n")) is None:
        raise NotASkill("SKILL.md does not start with a YAML frontmatter block ('---' on line 1)")
    start = len(lines[0])
    offset = start
    for index, line in enumerate(lines[1:], start=2):
        if _CLOSING.fullmatch(line.rstrip("\r\n")) is not None:
            yaml_end = offset
            if text.endswith("\n", start, yaml_end):
                yaml_end -= 2 if text.endswith("\r\n", start, yaml_end) else 1
            frontmatter_text = text[start : max(start, yaml_end)]
            body = text[offset + len(line) :]
            return frontmatter_text, body, 2, index + 1
        offset += len(line)
    raise NotASkill(
        "SKILL.md frontmatter opened with '---' on line 1 is never closed (no later line is exactly '---' or '...')"
    )


def parse_skill_md(data: bytes | str) -> SkillDocument:
    """Decode a whole SKILL.md (UTF-8 bytes or text) into a `SkillDocument`.

    Raises `NotASkill` when the bytes are not UTF-8 or there is no frontmatter block, and
    `FrontmatterError` (with a line number in the file) when the YAML is not a valid JSON object.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotASkill(f"SKILL.md is not valid UTF-8 (byte offset {exc.start}: {exc.reason})") from None
    else:
        text = data
    frontmatter_text, body, fm_line, body_line = split_skill_md(text)
    frontmatter = parse_frontmatter(frontmatter_text, first_line=fm_line)
    return SkillDocument(
        frontmatter=frontmatter,
        frontmatter_text=frontmatter_text,
        body=body,
        frontmatter_start_line=fm_line,
        body_start_line=body_line,
    )


# --------------------------------------------------------------------------------------------------
# YAML 1.2 core schema (the regular expressions of npm yaml's core schema, anchored at both ends)
# --------------------------------------------------------------------------------------------------

_NULL = re.compile(r"(?:~|[Nn]ull|NULL)?")
_BOOL = re.compile(r"[Tt]rue|TRUE|[Ff]alse|FALSE")
_INT_OCT = re.compile(r"0o[0-7]+")
_INT_DEC = re.compile(r"[-+]?[0-9]+")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT_NAN = re.compile(r"[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN")
_FLOAT_EXP = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)")

_TAG = "tag:yaml.org,2002:"
_NULL_TAG, _BOOL_TAG, _INT_TAG, _FLOAT_TAG = _TAG + "null", _TAG + "bool", _TAG + "int", _TAG + "float"
# npm yaml knows these YAML 1.1 tags even under the core schema; they yield values JSON cannot carry
# (Date, Uint8Array, Set, Map, a merge), so frontmatter refuses them.
_YAML11_SCALAR_TAGS = frozenset({_TAG + "binary", _TAG + "timestamp", _TAG + "merge"})
_YAML11_COLLECTION_TAGS = {_TAG + "omap": "seq", _TAG + "pairs": "seq", _TAG + "set": "map"}

_Number = int | float
_Scalar = None | bool | int | float | str


def _js_int(text: str, base: int) -> _Number:
    """`parseInt` as JavaScript computes it: exact up to 2**53, the nearest double beyond."""
    value = int(text, base)
    if value == 0 and text.startswith("-"):
        return -0.0
    if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
        return value
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _resolve_plain(text: str) -> _Scalar:
    """The core-schema value of an untagged plain scalar."""
    if _NULL.fullmatch(text):
        return None
    if _BOOL.fullmatch(text):
        return text[0] in "tT"
    if _INT_OCT.fullmatch(text):
        return _js_int(text[2:], 8)
    if _INT_DEC.fullmatch(text):
        return _js_int(text, 10)
    if _INT_HEX.fullmatch(text):
        return _js_int(text[2:], 16)
    if _FLOAT_NAN.fullmatch(text):
        return math.nan if text.endswith(("nan", "NaN", "NAN")) else (-math.inf if text[0] == "-" else math.inf)
    if _FLOAT_EXP.fullmatch(text) or _FLOAT.fullmatch(text):
        return float(text)
    return text


def _resolve_tagged(text: str, tag: str) -> _Scalar:
    """A scalar with an explicit tag, as npm yaml's ``findScalarTagByName`` resolves it."""
    if tag == _NULL_TAG:
        return None if _NULL.fullmatch(text) else text
    if tag == _BOOL_TAG:
        return (text[0] in "tT") if _BOOL.fullmatch(text) else text
    if tag == _INT_TAG:
        if _INT_OCT.fullmatch(text):
            return _js_int(text[2:], 8)
        if _INT_DEC.fullmatch(text):
            return _js_int(text, 10)
        if _INT_HEX.fullmatch(text):
            return _js_int(text[2:], 16)
        return text
    if tag == _FLOAT_TAG:
        return (
            _resolve_plain(text)
            if _FLOAT_NAN.fullmatch(text) or _FLOAT_EXP.fullmatch(text) or (_FLOAT.fullmatch(text))
            else text
        )
    # !!str, the non-specific "!", local and unknown tags: the text itself.
    return text


def _js_number_to_string(value: _Number) -> str:
    """JavaScript's ``String(number)`` (ECMAScript Number::toString), used for numeric keys."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # n: position of the decimal point relative to the first significant digit.
    point = len(whole) + (int(exp_text) if exp_text else 0)
    if whole == "0":
        stripped = fraction.lstrip("0")
        point = -(len(fraction) - len(stripped)) + (int(exp_text) if exp_text else 0)
        digits = stripped
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= point <= 21:
        return sign + digits + "0" * (point - k)
    if 0 < point <= 21:
        return sign + digits[:point] + "." + digits[point:]
    if -6 < point <= 0:
        return sign + "0." + "0" * (-point) + digits
    exponent = point - 1
    exp_sign = "+" if exponent >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{exp_sign}{abs(exponent)}"


# --------------------------------------------------------------------------------------------------
# Composition: ruamel.yaml events -> a small node tree that keeps aliases as references
# --------------------------------------------------------------------------------------------------


class _Node:
    __slots__ = ("anchor", "line")

    def __init__(self, anchor: str | None, line: int) -> None:
        self.anchor = anchor
        self.line = line


class _ScalarNode(_Node):
    __slots__ = ("value",)

    def __init__(self, anchor: str | None, line: int, value: _Scalar) -> None:
        super().__init__(anchor, line)
        self.value = value


class _SeqNode(_Node):
    __slots__ = ("items",)

    def __init__(self, anchor: str | None, line: int) -> None:
        super().__init__(anchor, line)
        self.items: list[_Node] = []


class _MapNode(_Node):
    __slots__ = ("pairs", "pending_key")

    def __init__(self, anchor: str | None, line: int) -> None:
        super().__init__(anchor, line)
        self.pairs: list[tuple[_Node, _Node]] = []
        self.pending_key: _Node | None = None


class _AliasNode(_Node):
    __slots__ = ("target",)

    def __init__(self, name: str, line: int, target: _Node) -> None:
        super().__init__(None, line)
        self.anchor = name
        self.target = target


_BREAKS = "\r\n\x85\u2028\u2029"
# A run of characters a quoted scalar keeps as they are (no quote, escape, blank or line break).
_FLOW_RUN = re.compile("[^ \t'\"\\\\\0" + _BREAKS + "]+")


class _Scanner(Scanner):
    """ruamel's scanner, corrected to YAML 1.2 as npm ``yaml`` reads it, where PyYAML's rules differ.

    Each correction was found by the differential test against npm yaml:

    * Tabs may separate tokens (``key:<TAB>value``, ``value<TAB># comment``, ``!tag<TAB>value``,
      tabs inside plain scalars, after enough space indentation); they may not indent block
      structure or block scalar lines. PyYAML (and so ruamel) rejects nearly every tab.
    * Continuation lines of quoted scalars and flow collections inside a block collection must be
      indented more than that collection; ruamel does not check.
    * In flow collections ``:`` before a flow indicator, or right after a JSON-like key
      (``"a":b``), is a value indicator; ``-``/``?``/``:`` start a plain scalar only before a
      character that can continue it; a tag ends at a flow indicator.
    * A comment needs a blank before it (``'x'#c`` is an error).
    * ``: value`` with an empty implicit key cannot carry a compact mapping or sequence on its line.
    * Leading blank lines of a block scalar may be less indented than its first content line.
    """

    _synthetic_last_break = False  # see `_ScannerEndingInBlanks`

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader=loader)
        self._tab_indented_at = -1  # reader index of a token that only tabs separate from the indentation
        self._explicit_keys: set[int] = set()  # columns of block `? key` entries awaiting their `: value`
        self._json_end = -1  # reader index just after the last quoted scalar or flow collection
        self._fetched_value = False  # the last token fetched was a block mapping's ':'
        self._after_value = False  # ... as seen by the scan for the token being fetched now
        self._block_increment: int | None = None  # the explicit indentation of the block scalar being read
        self._fetched_indicator = False  # the last token fetched was a block `-` or `?`
        self._after_indicator = False

    def fetch_more_tokens(self) -> Any:
        self._after_value, self._fetched_value = self._fetched_value, False
        self._after_indicator, self._fetched_indicator = self._fetched_indicator, False
        return super().fetch_more_tokens()

    def _starts_block_node(self) -> bool:
        """Whether node properties or a block indicator (``- ``, ``? ``, ``: ``) start at the reader."""
        ch, after = self.reader.peek(), self.reader.peek(1)
        return ch in "&!" or (ch in "-?:" and after in "\0 \t" + _BREAKS)

    def fetch_tag(self) -> None:
        super().fetch_tag()
        self._fetched_value = self._after_value and not self.flow_level  # `key: !tag` still awaits its value

    def fetch_anchor(self) -> None:
        super().fetch_anchor()
        self._fetched_value = self._after_value and not self.flow_level

    def fetch_block_entry(self) -> None:
        super().fetch_block_entry()
        self._fetched_indicator = not self.flow_level

    def _blank_from(self, offset: int, *, comment: bool = True) -> bool:
        """Whether the rest of the line, from ``offset`` on, is blanks and maybe (``comment``) a comment."""
        peek = self.reader.peek
        while peek(offset) in " \t":
            offset += 1
        return peek(offset) in ("#\0" if comment else "\0") + _BREAKS

    def _in_indentation(self) -> bool:
        """Whether only blanks precede the reader's position on its line."""
        column = int(self.reader.column)
        return all(self.reader.peek(-i) in " \t" for i in range(1, column + 1))

    def _check_continuation(self, spaces: int, what: str, start_mark: Any) -> None:
        """A new line inside a flow scalar or collection: npm yaml's ``continueScalar`` rule."""
        if self.indent < 0 or spaces > self.indent:
            return
        offset = spaces
        while self.reader.peek(offset) in " \t":
            offset += 1
        ch = self.reader.peek(offset)
        if ch in "\0" + _BREAKS and offset == spaces:
            return  # an empty line
        if what == "flow collection" and (
            ch in "#\0" + _BREAKS or (ch in "]}" and self.flow_level == 1 and spaces == self.indent)
        ):
            return
        self.reader.forward(spaces)
        raise ScannerError(
            f"while scanning a {what}",
            start_mark,
            f"found a continuation line indented {spaces} spaces; it must be indented more than "
            f"the enclosing block collection (column {self.indent + 1})",
            self.reader.get_mark(),
        )

    def _tab_error(self, where: str) -> ScannerError:
        return ScannerError(None, None, f"tabs are not allowed as indentation ({where})", self.reader.get_mark())

    def _skip_tab_in_indentation(self) -> bool:
        """At a tab in a line's leading blanks: skip the blanks if YAML 1.2 reads them as separation.

        That is when the line is blank, or when the spaces before the tab already indent the line
        enough and what follows is neither block structure (``- ``, ``? ``, ``: ``, or a key, which
        `fetch_value` checks) nor node properties (``&anchor``, ``!tag``), as npm yaml decides;
        otherwise the tab is indentation, which is an error.
        """
        if self._blank_from(0):
            if self._after_value and self.reader.column == 0 and self._blank_from(0, comment=False):
                # npm yaml refuses a tab on a blank line where the value of `key:` may still begin.
                raise self._tab_error("a blank line after 'key:' starts with a tab")
            while self.reader.peek() in " \t":
                self.reader.forward()
            return True
        column = int(self.reader.column)
        spaces = 0
        while spaces < column and self.reader.peek(spaces - column) == " ":
            spaces += 1
        offset = 0
        while self.reader.peek(offset) in " \t":
            offset += 1
        ch, after = self.reader.peek(offset), self.reader.peek(offset + 1)
        structure = ch in "&!" or (ch in "-?:" and after in "\0 \t" + _BREAKS)
        if spaces != column or spaces <= self.indent or structure:
            raise self._tab_error("use spaces")
        self.reader.forward(offset)
        self._tab_indented_at = int(self.reader.index)
        return False

    def fetch_key(self) -> None:
        if not self.flow_level:
            self._explicit_keys.add(int(self.reader.column))
        super().fetch_key()
        self._fetched_indicator = not self.flow_level

    def fetch_value(self) -> None:
        key = self.possible_simple_keys.get(self.flow_level)
        if self.flow_level:
            super().fetch_value()
            return
        if key is not None:
            if key.index == self._tab_indented_at:
                raise self._tab_error("a mapping key must be indented with spaces")
            self._explicit_keys.discard(int(key.column))
            super().fetch_value()
            self._fetched_value = True
            return
        column = int(self.reader.column)
        explicit = column in self._explicit_keys
        self._explicit_keys.discard(column)
        super().fetch_value()
        self._fetched_value = True
        self._fetched_indicator = True  # a `:` with no key on its line: as `-` and `?` for tabs
        if not explicit:
            # `: value` with an empty implicit key: a compact mapping or sequence may not follow on the
            # same line (YAML 1.2 allows them only after an explicit `? key`).
            self.allow_simple_key = False

    def scan_to_next_token(self) -> None:
        peek, forward = self.reader.peek, self.reader.forward
        if self.reader.index == 0 and peek() == "\ufeff":
            forward()
        while True:
            # Asked once per line, not once per blank: asking per tab made `a:` + n tabs cost O(n**2).
            in_indentation = self.flow_level == 0 and self._in_indentation()
            tab_after_indicator = False
            while True:
                ch = peek()
                if ch == " " or (ch == "\t" and not in_indentation):
                    tab_after_indicator = tab_after_indicator or (ch == "\t" and self._after_indicator)
                    forward()
                elif ch == "\t":
                    if not self._skip_tab_in_indentation():
                        return
                else:
                    break
            if tab_after_indicator:
                # `-<TAB>&a x`, `?<TAB>- x`, `-<TAB>k: v`: npm yaml counts that tab as the indentation of
                # a block node (the last `fetch_value` checks, once the key is known to be a key).
                if self._starts_block_node():
                    raise self._tab_error("a tab after '-' or '?' before node properties or a block indicator")
                self._tab_indented_at = int(self.reader.index)
            if peek() == "#":
                if self.reader.column > 0 and peek(-1) not in " \t\ufeff":
                    raise ScannerError(
                        None,
                        None,
                        "a comment must be separated from the token before it by a space",
                        self.reader.get_mark(),
                    )
                while peek() not in "\0" + _BREAKS:
                    forward()
            if not self.scan_line_break():
                return
            if not self.flow_level:
                self.allow_simple_key = True
            else:
                spaces = 0
                while peek(spaces) == " ":
                    spaces += 1
                self._check_continuation(spaces, "flow collection", self.reader.get_mark())

    def scan_plain_spaces(self, indent: int, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        length = 0
        while peek(length) in " \t":
            length += 1
        whitespaces = self.reader.prefix(length)
        forward(length)
        if peek() not in _BREAKS:
            if whitespaces:
                chunks.append(whitespaces)
            return chunks
        line_break = self.scan_line_break()
        self.allow_simple_key = True
        breaks: list[str] = []
        while True:
            if self.reader.prefix(3) in ("---", "...") and peek(3) in "\0 \t" + _BREAKS:
                return None
            spaces = 0
            while peek(spaces) == " ":
                spaces += 1
            if self.flow_level:
                self._check_continuation(spaces, "flow collection", start_mark)
            forward(spaces)
            if peek() == "\t" and (self.flow_level or self.reader.column >= indent):
                while peek() in " \t":
                    forward()
            if peek() not in _BREAKS:
                break
            breaks.append(self.scan_line_break())
        if line_break != "\n":
            chunks.append(line_break)
        elif not breaks:
            chunks.append(" ")
        chunks.extend(breaks)
        return chunks

    def scan_flow_scalar_non_spaces(self, double: Any, start_mark: Any) -> Any:
        # ruamel's loop, with two corrections: an escape naming no Unicode code point (``\\UFFFFFFFF``)
        # is a syntax error, as in npm yaml (ruamel's ``chr()`` raised OverflowError/ValueError); and
        # an escaped line break followed by an empty line is refused, because npm yaml folds that
        # differently from the YAML 1.2 spec (a documented refusal). Runs of ordinary characters are
        # matched with one regular expression, not one ``peek`` per character.
        reader = self.reader
        chunks: list[str] = []
        while True:
            run = _FLOW_RUN.match(reader.buffer, reader.pointer)
            if run is not None:
                chunks.append(run.group())
                reader.forward(run.end() - run.start())
            ch = reader.peek()
            if not double and ch == "'" and reader.peek(1) == "'":
                chunks.append("'")
                reader.forward(2)
            elif (double and ch == "'") or (not double and ch in '"\\'):
                chunks.append(ch)
                reader.forward()
            elif double and ch == "\\":
                reader.forward()
                chunks.extend(self._scan_escape(start_mark))
            else:
                return chunks

    def _scan_escape(self, start_mark: Any) -> list[str]:
        """What the escape after a backslash in a double-quoted scalar stands for."""
        reader = self.reader
        ch = reader.peek()
        if ch in self.ESCAPE_REPLACEMENTS:
            reader.forward()
            return [self.ESCAPE_REPLACEMENTS[ch]]
        if ch in self.ESCAPE_CODES:
            length = self.ESCAPE_CODES[ch]
            reader.forward()
            digits = reader.prefix(length)
            if len(digits) != length or not all(d in "0123456789ABCDEFabcdef" for d in digits):
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    f"expected an escape of {length} hexadecimal digits after '\\{ch}', but found {digits!r}",
                    reader.get_mark(),
                )
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    f"invalid escape '\\{ch}{digits}': U+{code:X} is beyond the last Unicode code point U+10FFFF",
                    reader.get_mark(),
                )
            reader.forward(length)
            return [chr(code)]
        if ch in _BREAKS:
            self.scan_line_break()
            breaks = self.scan_flow_scalar_breaks(True, start_mark)
            if breaks:
                raise ScannerError(
                    "while scanning a double-quoted scalar",
                    start_mark,
                    "an escaped line break followed by an empty line is read differently by YAML parsers; "
                    "drop the backslash or the empty line",
                    reader.get_mark(),
                )
            return []
        raise ScannerError(
            "while scanning a double-quoted scalar",
            start_mark,
            f"found unknown escape character {ch!r}",
            reader.get_mark(),
        )

    def scan_flow_scalar_breaks(self, double: Any, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        while True:
            if self.reader.prefix(3) in ("---", "...") and peek(3) in "\0 \t" + _BREAKS:
                raise ScannerError(
                    "while scanning a quoted scalar",
                    start_mark,
                    "found unexpected document separator",
                    self.reader.get_mark(),
                )
            spaces = 0
            while peek(spaces) == " ":
                spaces += 1
            self._check_continuation(spaces, "quoted scalar", start_mark)
            while peek() in " \t":
                forward()
            if peek() not in _BREAKS:
                return chunks
            chunks.append(self.scan_line_break())

    def _token_end(self) -> str:
        """Characters that may directly follow a tag or end a plain scalar here."""
        return "\0 \t" + _BREAKS + (",[]{}" if self.flow_level else "")

    def _scan_tag_suffix(self, start_mark: Any) -> str:
        # YAML 1.2 ns-tag-char: a URI character other than '!' and the flow indicators.
        peek = self.reader.peek
        chunks: list[str] = []
        length = 0
        while True:
            ch = peek(length)
            if ch == "%":
                chunks.append(self.reader.prefix(length))
                self.reader.forward(length)
                length = 0
                chunks.append(self.scan_uri_escapes("tag", start_mark))
            elif ch.isascii() and (ch.isalnum() or ch in "-;/?:@&=+$_.~*'()#"):
                length += 1
            else:
                break
        chunks.append(self.reader.prefix(length))
        self.reader.forward(length)
        if not "".join(chunks):
            raise ScannerError(
                "while parsing a tag",
                start_mark,
                f"expected a tag suffix, but found {peek()!r}",
                self.reader.get_mark(),
            )
        return "".join(chunks)

    def scan_tag(self) -> Any:
        # ruamel's scan_tag with YAML 1.2's characters: a tab or (in a flow collection) a flow
        # indicator may follow the tag, and a shorthand tag never contains '!' or a flow indicator.
        peek, forward = self.reader.peek, self.reader.forward
        start_mark = self.reader.get_mark()
        end = self._token_end()
        ch = peek(1)
        short_handle = "!"
        if ch == "!":
            short_handle = "!!"
            forward()
            ch = peek(1)
        handle: str | None
        if ch == "<":
            handle = None
            forward(2)
            suffix = self.scan_tag_uri("tag", start_mark)
            if suffix == "!":
                raise ScannerError(
                    "while parsing a tag",
                    start_mark,
                    "the verbatim tag !<!> is not a tag (npm yaml refuses it)",
                    start_mark,
                )
            if peek() != ">":
                raise ScannerError(
                    "while parsing a tag",
                    start_mark,
                    f"expected '>' but found {peek()!r}",
                    self.reader.get_mark(),
                )
            forward()
        elif ch in end:
            if short_handle == "!!":
                raise ScannerError("while scanning a tag", start_mark, "the !! tag has no suffix", start_mark)
            handle = None
            suffix = short_handle
            forward()
        else:
            length = 1
            use_handle = False
            while ch not in end + ",[]{}":
                if ch == "!":
                    use_handle = True
                    break
                length += 1
                ch = peek(length)
            if use_handle:
                handle = self.scan_tag_handle("tag", start_mark)
            else:
                handle = short_handle
                forward()
            suffix = self._scan_tag_suffix(start_mark)
        if peek() not in end:
            raise ScannerError(
                "while scanning a tag",
                start_mark,
                f"expected a space after the tag, but found {peek()!r}",
                self.reader.get_mark(),
            )
        return TagToken((handle, suffix), start_mark, self.reader.get_mark())

    # --- YAML 1.2 flow-context rules for '?', ':' and plain scalars ---------------------------------

    def _after_json_node(self) -> bool:
        """Whether only blanks separate the reader from a just-ended quoted scalar or flow collection."""
        distance = int(self.reader.index) - self._json_end
        return self._json_end >= 0 and all(self.reader.peek(-i) in " \t" for i in range(1, distance + 1))

    def fetch_single(self) -> None:
        super().fetch_single()
        self._json_end = int(self.reader.index)

    def fetch_double(self) -> None:
        super().fetch_double()
        self._json_end = int(self.reader.index)

    def fetch_flow_sequence_end(self) -> None:
        super().fetch_flow_sequence_end()
        self._json_end = int(self.reader.index)

    def fetch_flow_mapping_end(self) -> None:
        super().fetch_flow_mapping_end()
        self._json_end = int(self.reader.index)

    def check_key(self) -> Any:
        # '?' is the key indicator only when a blank follows it, in flow collections too.
        return self.reader.peek(1) in "\0 \t" + _BREAKS

    def check_value(self) -> Any:
        following = self.reader.peek(1)
        if not self.flow_level:
            return following in "\0 \t" + _BREAKS
        # In a flow collection ':' is a value indicator before a blank or a flow indicator, and
        # right after a JSON-like key ("a":b, [a]:b).
        return following in self._token_end() or self._after_json_node()

    def check_plain(self) -> Any:
        ch, following = self.reader.peek(), self.reader.peek(1)
        if ch not in "\0 \t" + _BREAKS + "-?:,[]{}#&*!|>'\"%@`":
            return True
        return ch in "-?:" and following not in self._token_end()

    def scan_plain(self) -> Any:
        # ruamel's scan_plain, where (in a flow collection) ':' before a flow indicator ends the scalar.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        start_mark = end_mark = self.reader.get_mark()
        indent = self.indent + 1
        spaces: list[str] = []
        end = self._token_end()
        while peek() != "#":
            length = 0
            while True:
                ch = peek(length)
                if (ch == ":" and peek(length + 1) in end) or ch in end:
                    break
                length += 1
            if length == 0:
                break
            self.allow_simple_key = False
            chunks.extend(spaces)
            chunks.append(self.reader.prefix(length))
            forward(length)
            end_mark = self.reader.get_mark()
            spaces = self.scan_plain_spaces(indent, start_mark)
            if not spaces or (not self.flow_level and self.reader.column < indent):
                break
        return ScalarToken("".join(chunks), True, start_mark, end_mark)

    def scan_block_scalar_indentation(self) -> Any:
        # PyYAML's version: ruamel adds a check that rejects a leading blank line with *fewer* spaces
        # than the lines after it, which YAML 1.2 and npm yaml allow.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        max_indent = 0
        end_mark = self.reader.get_mark()
        blank_max = 0  # the most spaces on a leading empty line
        while peek() in " " + _BREAKS:
            if self._at_synthetic_last_break():
                forward()
                end_mark = self.reader.get_mark()
            elif peek() != " ":
                blank_max = max(blank_max, int(self.reader.column))
                chunks.append(self.scan_line_break())
                end_mark = self.reader.get_mark()
            else:
                forward()
                max_indent = max(max_indent, int(self.reader.column))
        if peek() == "\t" and self.reader.column <= self.indent:
            raise self._tab_error("in a block scalar")
        if peek() != "\0" and blank_max > self.reader.column:
            raise ScannerError(
                "while scanning a block scalar",
                None,
                "a leading empty line is indented more than the first line after it; "
                "give the block scalar an explicit indentation indicator (|2, >2)",
                self.reader.get_mark(),
            )
        return chunks, max_indent, end_mark

    def _at_synthetic_last_break(self) -> bool:
        """At the line break added after a last line of spaces, which npm yaml does not count as a line."""
        return self._synthetic_last_break and self.reader.peek() == "\n" and self.reader.peek(1) == "\0"

    def scan_block_scalar_breaks(self, indent: int) -> Any:
        # ruamel's version, plus npm yaml's rule that a tab may not stand in a block scalar's indentation.
        peek, forward = self.reader.peek, self.reader.forward
        chunks: list[str] = []
        end_mark = self.reader.get_mark()
        while True:
            while self.reader.column < indent and peek() == " ":
                forward()
            if peek() == "\t" and self.reader.column < indent:
                raise self._tab_error("in a block scalar")
            if peek() not in _BREAKS:
                return chunks, end_mark
            if self._at_synthetic_last_break():
                forward()
                return chunks, end_mark
            chunks.append(self.scan_line_break())
            end_mark = self.reader.get_mark()

    def scan_block_scalar(self, style: Any, rt: bool | None = False) -> Any:
        start = int(self.reader.pointer)
        min_indent = max(self.indent + 1, 1)
        token = super().scan_block_scalar(style, rt)
        if self._block_increment is not None:
            # npm yaml reads a line of spaces longer than an explicit indentation as an empty line when
            # it trails the content (YAML 1.2: a line of content); refused rather than guessed.
            indent = min_indent + self._block_increment - 1
            for line in self.reader.buffer[start : int(self.reader.pointer)].split("\n")[1:]:
                line = line.removesuffix("\r")
                if len(line) > indent and not line.strip(" "):
                    raise ScannerError(
                        "while scanning a block scalar",
                        token.start_mark,
                        f"a line of only spaces is longer than the block scalar's indentation ({indent}); YAML "
                        "readers disagree on whether it is content: remove the spaces",
                        token.end_mark,
                    )
        return token

    def scan_block_scalar_indicators(self, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        chomping: bool | None = None
        increment: int | None = None
        for _ in range(2):
            ch = peek()
            if ch in "+-" and chomping is None:
                chomping = ch == "+"
                forward()
            elif ch in "123456789" and increment is None:
                increment = int(ch)
                forward()
            elif ch == "0" and increment is None:
                raise ScannerError(
                    "while scanning a block scalar",
                    start_mark,
                    "expected indentation indicator in the range 1-9, but found 0",
                    self.reader.get_mark(),
                )
        ch = peek()
        if ch not in "\0 \t" + _BREAKS:
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected chomping or indentation indicators, but found {ch!r}",
                self.reader.get_mark(),
            )
        self._block_increment = increment
        return chomping, increment

    def scan_block_scalar_ignored_line(self, start_mark: Any) -> Any:
        peek, forward = self.reader.peek, self.reader.forward
        while peek() in " \t":
            forward()
        if peek() == "#":
            while peek() not in "\0" + _BREAKS:
                forward()
        ch = peek()
        if ch not in "\0" + _BREAKS:
            raise ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected a comment or a line break, but found {ch!r}",
                self.reader.get_mark(),
            )
        self.scan_line_break()
        return None


class _ScannerEndingInBlanks(_Scanner):
    """For text whose last line holds only spaces and no line break (one is added before scanning)."""

    _synthetic_last_break = True

    def scan_block_scalar(self, style: Any, rt: bool | None = False) -> Any:
        token = super().scan_block_scalar(style, rt)
        if self.reader.peek() == "\0" and not str(token.value).strip(" \n"):
            # npm yaml reads such a last line differently again when the block scalar has no content.
            raise ScannerError(
                "while scanning a block scalar",
                token.start_mark,
                "a block scalar of blank lines only ends in a line of spaces; YAML readers disagree on "
                "its value: remove the spaces",
                self.reader.get_mark(),
            )
        return token


class _Reader(Reader):
    """ruamel's reader without its printable-character check: npm ``yaml`` accepts control characters."""

    def check_printable(self, data: Any) -> None:
        return None


# Characters YAML 1.2 (and npm yaml) read as ordinary content but ruamel, following YAML 1.1, does not:
# NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR are line breaks in 1.1; a CR not followed by LF is a
# line break for ruamel but plain content for npm yaml; NUL is ruamel's end-of-input sentinel.
_SPECIAL = re.compile("[\x00\x85\u2028\u2029]|\r(?!\n)")
_TRAILING_BLANKS = re.compile(r"(?:(?<=[\r\n])|\A) +\Z")
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _join_surrogates(text: str) -> str:
    """``"\\ud83d\\ude00"`` escapes give a surrogate pair, which JavaScript reads as one character."""
    if not _SURROGATE_PAIR.search(text):
        return text
    return _SURROGATE_PAIR.sub(lambda m: m.group().encode("utf-16-le", "surrogatepass").decode("utf-16-le"), text)


def _events(yaml_text: str) -> tuple[Iterator[Any], dict[str, str]]:
    """ruamel.yaml parse events for ``yaml_text``, and the placeholders to map back in scalar values."""
    restore: dict[str, str] = {}
    if _SPECIAL.search(yaml_text):
        # Swap each special character for a private-use one that does not occur in the text.
        present = set(yaml_text)
        pool = (chr(c) for c in range(0xE000, 0xF900) if chr(c) not in present)
        placeholders: dict[str, str] = {}
        for special in sorted(set(_SPECIAL.findall(yaml_text))):
            placeholder = next(pool, None)
            if placeholder is None:  # pragma: no cover - needs 6400 distinct private-use characters
                raise FrontmatterError("frontmatter uses too many distinct private-use characters")
            placeholders[special] = placeholder
            restore[placeholder] = special
        yaml_text = _SPECIAL.sub(lambda m: placeholders[m.group()], yaml_text)
    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.Reader = _Reader
    yaml.Scanner = _Scanner
    # npm yaml ends the last line at the end of input (`a: |` + `  x`, no newline, is "x\n"); a last
    # line of only spaces is content if a block scalar indented less ends there, and ignored otherwise,
    # which `_ScannerEndingInBlanks` tells apart.
    if _TRAILING_BLANKS.search(yaml_text):
        yaml.Scanner = _ScannerEndingInBlanks
    if yaml_text and not yaml_text.endswith(("\n", "\r")):
        yaml_text += "\n"
    return iter(yaml.parse(yaml_text)), restore


def _scalar_text(event: Any, restore: dict[str, str]) -> str:
    text = str(event.value)
    for placeholder, special in restore.items():
        text = text.replace(placeholder, special)
    return _join_surrogates(text)


def _syntax_error(exc: YAMLError, yaml_text: str, first_line: int) -> FrontmatterError:
    if isinstance(exc, MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        context = f" ({exc.context})" if exc.context and exc.problem else ""
        if mark is not None:
            return FrontmatterError(
                f"invalid YAML: {problem}{context} (column {mark.column + 1})", line=first_line + mark.line
            )
        return FrontmatterError(f"invalid YAML: {problem}{context}")
    if isinstance(exc, ReaderError):
        position = int(exc.position)
        line = first_line + yaml_text.count("\n", 0, position)
        return FrontmatterError(
            f"invalid YAML: character U+{int(exc.character):04X} is not allowed ({exc.reason})", line=line
        )
    return FrontmatterError(f"invalid YAML: {exc}")


def _compose(yaml_text: str, first_line: int) -> _Node | None:
    """Build the node tree of the single document in ``yaml_text`` (None when there is none)."""
    anchors: dict[str, _Node] = {}
    stack: list[_SeqNode | _MapNode] = []
    root: _Node | None = None
    documents = 0
    events, restore = _events(yaml_text)

    def attach(node: _Node) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        parent = stack[-1]
        if isinstance(parent, _SeqNode):
            parent.items.append(node)
        elif parent.pending_key is None:
            parent.pending_key = node
        else:
            parent.pairs.append((parent.pending_key, node))
            parent.pending_key = None

    try:
        for event in events:
            line = first_line + event.start_mark.line if event.start_mark is not None else first_line
            if isinstance(event, ScalarEvent):
                tag = event.tag
                text = _scalar_text(event, restore)
                if tag is None:
                    value = _resolve_plain(text) if event.style is None else text
                elif tag in _YAML11_SCALAR_TAGS:
                    raise FrontmatterError(
                        f"YAML 1.1 tag !!{tag[len(_TAG) :]} is not supported in frontmatter (its value is not JSON)",
                        line=line,
                    )
                else:
                    value = _resolve_tagged(text, str(tag))
                node: _Node = _ScalarNode(event.anchor, line, value)
                attach(node)
                if event.anchor is not None:
                    anchors[event.anchor] = node
            elif isinstance(event, (SequenceStartEvent, MappingStartEvent)):
                kind = "seq" if isinstance(event, SequenceStartEvent) else "map"
                if event.tag is not None and _YAML11_COLLECTION_TAGS.get(str(event.tag)) == kind:
                    raise FrontmatterError(
                        f"YAML 1.1 tag !!{str(event.tag)[len(_TAG) :]} is not supported in frontmatter "
                        "(its value is not JSON)",
                        line=line,
                    )
                if len(stack) >= MAX_DEPTH:
                    raise FrontmatterError(f"collections are nested more than {MAX_DEPTH} deep", line=line)
                collection: _SeqNode | _MapNode = (
                    _SeqNode(event.anchor, line) if kind == "seq" else _MapNode(event.anchor, line)
                )
                attach(collection)
                if event.anchor is not None:
                    anchors[event.anchor] = collection
                stack.append(collection)
            elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                stack.pop()
            elif isinstance(event, AliasEvent):
                target = anchors.get(event.anchor)
                if target is None:
                    raise FrontmatterError(f"alias *{event.anchor} refers to no anchor defined before it", line=line)
                attach(_AliasNode(event.anchor, line, target))
            elif isinstance(event, DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise FrontmatterError(
                        "frontmatter holds more than one YAML document (a '---' or '...' line inside it?)",
                        line=line,
                    )
                version = event.version
                if version is not None and tuple(version) != (1, 2):
                    raise FrontmatterError(
                        f"%YAML {'.'.join(map(str, version))} directive: frontmatter is YAML 1.2", line=line
                    )
            elif isinstance(event, (DocumentEndEvent, StreamStartEvent, StreamEndEvent)):
                pass
    except YAMLError as exc:
        raise _syntax_error(exc, yaml_text, first_line) from None
    return root


# --------------------------------------------------------------------------------------------------
# Conversion to JSON, with npm yaml's alias accounting
# --------------------------------------------------------------------------------------------------


class _AnchorData:
    __slots__ = ("alias_count", "count", "done", "height", "res", "size")

    def __init__(self) -> None:
        self.count = 1
        self.alias_count = 0
        self.res: JSONValue = None
        self.done = False
        self.size = -1  # JSON values in `res`, once measured
        self.height = 0  # collections nested in `res`


def _measure(value: JSONValue) -> tuple[int, int]:
    """(number of JSON values, nesting height) of a value; a scalar is (1, 0)."""
    if isinstance(value, list):
        items = [_measure(item) for item in value]
    elif isinstance(value, dict):
        items = [_measure(item) for item in value.values()]
    else:
        return 1, 0
    return 1 + sum(size for size, _ in items), 1 + max((height for _, height in items), default=0)


def _copy_json(value: JSONValue) -> JSONValue:
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy_json(item) for key, item in value.items()}
    return value


class _Converter:
    """npm yaml's ``toJS``: same traversal order, same alias budget, JSON-only output.

    Aliased values are copied, so on top of npm yaml's own budget (which does not count aliases
    of empty collections) the copies may add at most `MAX_ALIAS_NODES` values in all, and may not
    nest deeper than `MAX_DEPTH`.
    """

    def __init__(self) -> None:
        self.anchors: dict[int, _AnchorData] = {}
        self.expanded = 0

    def value(self, node: _Node, depth: int) -> JSONValue:
        result = self.convert(node, depth)
        if isinstance(result, float) and not math.isfinite(result):
            raise FrontmatterError(
                f"{_js_number_to_string(result)} is not a finite number; frontmatter must be JSON",
                line=node.line,
            )
        return result

    def convert(self, node: _Node, depth: int) -> JSONValue:
        """``node`` as JSON; ``depth`` is the number of collections around it."""
        if isinstance(node, _AliasNode):
            return self.resolve_alias(node, depth)
        data: _AnchorData | None = None
        if node.anchor is not None:
            data = _AnchorData()
            self.anchors[id(node)] = data
        result: JSONValue
        if isinstance(node, _ScalarNode):
            result = node.value
            if data is not None:
                data.res = result
        elif isinstance(node, _SeqNode):
            items: list[JSONValue] = []
            if data is not None:
                data.res = items
            for item in node.items:
                items.append(self.value(item, depth + 1))
            result = items
        else:
            assert isinstance(node, _MapNode)
            mapping: dict[str, JSONValue] = {}
            if data is not None:
                data.res = mapping
            key_lines: dict[str, int] = {}
            for key_node, value_node in node.pairs:
                key = self.key(key_node, depth + 1)
                if key in key_lines:
                    raise FrontmatterError(
                        f"duplicate key {key!r} (first defined on line {key_lines[key]})", line=key_node.line
                    )
                key_lines[key] = key_node.line
                mapping[key] = self.value(value_node, depth + 1)
            result = mapping
        if data is not None:
            data.done = True
        return result

    def key(self, node: _Node, depth: int) -> str:
        target = node.target if isinstance(node, _AliasNode) else node
        if not isinstance(target, _ScalarNode):
            raise FrontmatterError("mapping keys must be scalars (a JSON object key is a string)", line=node.line)
        jskey = self.convert(node, depth)
        if jskey is None:
            return ""
        if isinstance(jskey, bool):
            return "true" if jskey else "false"
        if isinstance(jskey, (int, float)):
            return _js_number_to_string(jskey)
        assert isinstance(jskey, str)
        return jskey

    def resolve_alias(self, node: _AliasNode, depth: int) -> JSONValue:
        found = node.target
        data = self.anchors.get(id(found))
        if data is None:
            self.convert(found, depth)
            data = self.anchors[id(found)]
        if not data.done:
            raise FrontmatterError(f"alias *{node.anchor} refers to a node that contains it", line=node.line)
        # npm yaml's budget (Alias.resolve): the anchor's use count times its own alias weight.
        data.count += 1
        if data.alias_count == 0:
            data.alias_count = self.alias_count(found)
        if data.count * data.alias_count > MAX_ALIAS_COUNT:
            raise FrontmatterError(
                f"alias *{node.anchor} expands too much (more than {MAX_ALIAS_COUNT} alias expansions, "
                "as in a 'billion laughs' attack)",
                line=node.line,
            )
        # Ours: the copies themselves stay small and shallow.
        if data.size < 0:
            data.size, data.height = _measure(data.res)
        self.expanded += data.size
        if self.expanded > MAX_ALIAS_NODES:
            raise FrontmatterError(
                f"aliases expand to more than {MAX_ALIAS_NODES} values (as in a 'billion laughs' attack)",
                line=node.line,
            )
        if depth + data.height > MAX_DEPTH:
            raise FrontmatterError(f"alias *{node.anchor} nests collections more than {MAX_DEPTH} deep", line=node.line)
        return _copy_json(data.res)

    def alias_count(self, node: _Node) -> int:
        if isinstance(node, _AliasNode):
            data = self.anchors.get(id(node.target))
            return data.count * data.alias_count if data is not None else 0
        if isinstance(node, _SeqNode):
            return max((self.alias_count(item) for item in node.items), default=0)
        if isinstance(node, _MapNode):
            return max(
                (max(self.alias_count(k), self.alias_count(v)) for k, v in node.pairs),
                default=0,
            )
        return 1


def _unexpected(exc: Exception, first_line: int) -> FrontmatterError:
    """A `FrontmatterError` for a failure the decoder did not foresee (a bug here, or in ruamel).

    Skill files are untrusted input: whatever the decoder trips over must reach the caller as a
    reason attached to that one skill, never as a raw exception that stops a scan or a server.
    """
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return FrontmatterError(
        f"the YAML decoder failed on this frontmatter ({type(exc).__name__}{': ' + detail if detail else ''})",
        line=first_line,
    )


_LONE_CR = re.compile("\r(?!\n)")


def _refuse_lone_cr(yaml_text: str, first_line: int) -> None:
    """A CR without LF is never a line end in a SKILL.md (lines are split at LF), and npm yaml reads
    it as content in some places and as a blank in others: refused (see `REFUSALS`)."""
    found = _LONE_CR.search(yaml_text)
    if found is not None:
        line = first_line + yaml_text.count("\n", 0, found.start())
        raise FrontmatterError(
            "a carriage return (CR) not followed by a line feed; YAML readers disagree on it: use LF or CRLF",
            line=line,
        )


def frontmatter_size_problem(yaml_text: str, max_bytes: int | None = MAX_FRONTMATTER_BYTES) -> str | None:
    """Why ``yaml_text`` is too long to decode (over ``max_bytes`` UTF-8 bytes), or None."""
    if max_bytes is None or len(yaml_text) * 4 <= max_bytes:
        return None
    size = len(yaml_text.encode("utf-8", "surrogatepass"))
    if size <= max_bytes:
        return None
    return f"frontmatter is {size:,} bytes, over the {max_bytes:,}-byte limit (real frontmatter is a few KB)"


def parse_frontmatter(
    yaml_text: str,
    *,
    first_line: int = 1,
    fast_path: bool = True,
    max_bytes: int | None = MAX_FRONTMATTER_BYTES,
) -> dict[str, JSONValue]:
    """Decode frontmatter YAML into a JSON object exactly as npm ``yaml`` v2 (YAML 1.2 core) does.

    ``first_line`` is the 1-based line of ``yaml_text``'s first line in the SKILL.md, so every
    `FrontmatterError` carries a line number in the file. Key order follows the file. Every failure,
    foreseen or not, is a `FrontmatterError`; so is frontmatter over ``max_bytes``
    (`MAX_FRONTMATTER_BYTES`; None lifts the bound, for benchmarks).
    """
    too_long = frontmatter_size_problem(yaml_text, max_bytes)
    if too_long is not None:
        raise FrontmatterError(too_long, line=first_line)
    try:
        _refuse_lone_cr(yaml_text, first_line)
        return _parse_frontmatter(yaml_text, first_line, fast_path)
    except FrontmatterError:
        raise
    except Exception as exc:  # the one boundary where any decoder failure becomes a reason
        raise _unexpected(exc, first_line) from exc


def _parse_frontmatter(yaml_text: str, first_line: int, fast_path: bool) -> dict[str, JSONValue]:
    # Most frontmatter is flat `key: scalar` lines; that subset has a fast exact decoder.
    from skillwire.core.frontmatter_fast import parse_simple_frontmatter

    simple = parse_simple_frontmatter(yaml_text) if fast_path else None
    if simple is not None:
        return simple
    root = _compose(yaml_text, first_line)
    if root is None:
        raise FrontmatterError("frontmatter is empty; it must be a YAML mapping", line=first_line)
    if not isinstance(root, _MapNode) and not (isinstance(root, _AliasNode) and isinstance(root.target, _MapNode)):
        kind = "a sequence" if isinstance(root, _SeqNode) else "a scalar"
        if isinstance(root, _ScalarNode) and root.value is None:
            raise FrontmatterError("frontmatter is empty; it must be a YAML mapping", line=root.line)
        raise FrontmatterError(f"frontmatter must be a YAML mapping, not {kind}", line=root.line)
    result = _Converter().value(root, 0)
    assert isinstance(result, dict)
    return result


# --------------------------------------------------------------------------------------------------
# Comparing frontmatter
# --------------------------------------------------------------------------------------------------


def _as_js_number(value: _Number) -> float:
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _same_number(a: _Number, b: _Number) -> bool:
    """JavaScript's ``Object.is`` on the doubles: 1 is 1.0, but 0 is not -0 and NaN is NaN."""
    x, y = _as_js_number(a), _as_js_number(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def _render(value: object, limit: int = 80) -> str:
    def walk(item: object) -> str:
        if item is None:
            return "null"
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, (int, float)):
            return repr(item)
        if isinstance(item, str):
            return repr(item)
        if isinstance(item, list):
            return "[" + ", ".join(walk(v) for v in item) + "]"
        if isinstance(item, dict):
            return "{" + ", ".join(f"{k!r}: {walk(v)}" for k, v in item.items()) + "}"
        return repr(item)

    text = walk(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _diff(path: str, expected: object, actual: object, out: list[str]) -> None:
    def report() -> None:
        out.append(f"{path}: entry has {_render(expected)}, file has {_render(actual)}")

    if _kind(expected) != _kind(actual):
        report()
    elif isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if not _same_number(expected, actual):
            report()
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(
                f"{path}: entry has {len(expected)} items {_render(expected)}, "
                f"file has {len(actual)} items {_render(actual)}"
            )
            return
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _diff(f"{path}[{index}]", e, a, out)
    elif isinstance(expected, dict) and isinstance(actual, dict):
        for key in [*expected, *(k for k in actual if k not in expected)]:
            sub = f"{path}.{key}"
            if key not in actual:
                out.append(f"{sub}: entry has {_render(expected[key])}, file has no such key")
            elif key not in expected:
                out.append(f"{sub}: entry has no such key, file has {_render(actual[key])}")
            else:
                _diff(sub, expected[key], actual[key], out)
    elif expected != actual:
        report()


def frontmatter_differences(expected: dict[str, JSONValue], actual: dict[str, JSONValue]) -> list[str]:
    """Compare an entry's frontmatter (``expected``) with a file's (``actual``), field by field.

    Returns one human-readable line per difference (empty when they are identical), e.g.
    ``"reviewed: entry has true, file has 'yes'"``. The comparison is the conformance suite's:
    over the union of top-level keys, a missing field counts as ``null``, values are compared like
    Node's ``util.isDeepStrictEqual`` on the JSON (so ``1`` equals ``1.0``, ``true`` is not ``1``,
    ``0`` is not ``-0.0``, and key order does not matter).
    """
    out: list[str] = []
    for key in list(expected) + [k for k in actual if k not in expected]:
        _diff(key, expected.get(key), actual.get(key), out)
    return out


# --------------------------------------------------------------------------------------------------
# Interop hazards (for `skillwire lint`)
# --------------------------------------------------------------------------------------------------

_YAML11_BOOL = re.compile(r"yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF")
_YAML11_BOOL_SPEC_ONLY = re.compile(r"[yYnN]")
_YAML11_TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?"
)
_LEADING_ZERO_INT = re.compile(r"[-+]?0[0-9]+")
_YAML11_BINARY = re.compile(r"[-+]?0b[0-1_]+")
_YAML11_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_UNDERSCORE_NUMBER = re.compile(r"[-+]?(?:0x[0-9a-fA-F_]+|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?)")
# PyYAML's float (YAML 1.1) needs a dot, and a signed exponent.
_PYYAML_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?")
_TRAILING_ZERO = re.compile(r"[-+]?[0-9]*\.[0-9]*0(?:[eE].*)?|[-+]?[0-9]+\.(?:[eE].*)?")


def _plain_hazard(text: str) -> str | None:
    """Why a plain scalar is read differently by YAML 1.1 parsers, or silently changes, if it does."""
    shown = repr(text)
    quote = "; quote it"
    if _YAML11_BOOL.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a boolean in YAML 1.1 parsers (PyYAML, FastMCP){quote}"
    if _YAML11_BOOL_SPEC_ONLY.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a boolean in the YAML 1.1 spec (e.g. go-yaml v2){quote}"
    if _YAML11_TIMESTAMP.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a date (not JSON) in YAML 1.1 parsers (PyYAML){quote}"
    if text == "=":
        return f"'=' is a string in YAML 1.2 but PyYAML reads it as a 'value' tag it cannot load{quote}"
    if text == "<<":
        return f"'<<' is a plain string in YAML 1.2 but a merge key in YAML 1.1 parsers{quote}"
    if _INT_OCT.fullmatch(text):
        return f"{shown} is the integer {int(text[2:], 8)} in YAML 1.2 but a string in YAML 1.1 parsers{quote}"
    if _LEADING_ZERO_INT.fullmatch(text):
        octal = set(text.lstrip("+-")) <= set("01234567")
        old = f"the octal number {int(text, 8)}" if octal else "a string"
        return f"{shown} is the integer {int(text, 10)} in YAML 1.2 but {old} in YAML 1.1 parsers{quote}"
    if _YAML11_BINARY.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a binary integer in YAML 1.1 parsers{quote}"
    if _YAML11_SEXAGESIMAL.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a base-60 number in YAML 1.1 parsers{quote}"
    if "_" in text and _UNDERSCORE_NUMBER.fullmatch(text):
        return f"{shown} is a string in YAML 1.2 but a number in YAML 1.1 parsers{quote}"
    value = _resolve_plain(text)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{shown} is not a finite number, so it cannot be JSON{quote}"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > _MAX_SAFE_INTEGER:
        return f"{shown} is beyond JavaScript's exact integers; it reads as {_js_number_to_string(value)}{quote}"
    if _FLOAT_EXP.fullmatch(text) and not _PYYAML_FLOAT.fullmatch(text):
        number = _js_number_to_string(float(text))
        return f"{shown} is the number {number} in YAML 1.2 but a string in YAML 1.1 parsers (PyYAML){quote}"
    if isinstance(value, float) and _TRAILING_ZERO.fullmatch(text):
        return (
            f"{shown} is the number {_js_number_to_string(value)}, not the text as written"
            f"{quote} if it is a version or an identifier"
        )
    return None


@dataclass
class _Frame:
    path: str
    is_map: bool
    in_key: bool  # the collection itself sits in a mapping key
    index: int = 0
    expect_key: bool = True
    key: str = "?"

    def child(self) -> tuple[str, bool]:
        """The path of the next node in this collection, and whether that node is a mapping key."""
        if not self.is_map:
            self.index += 1
            return f"{self.path}[{self.index - 1}]", False
        if self.expect_key:
            return self.path, True
        return (f"{self.path}.{self.key}" if self.path else self.key), False

    def done(self, was_key: bool, key_text: str) -> None:
        if self.is_map:
            self.expect_key = not was_key
            if was_key:
                self.key = key_text


def yaml_interop_hazards(yaml_text: str, *, first_line: int = 1) -> list[tuple[int, str, str]]:
    """Plain scalars that YAML 1.1 parsers read differently, or that silently change meaning.

    Returns ``(line, key_path, message)`` for each, in file order: plain ``yes``/``no``/``on``/
    ``off``/``y``/``n``, unquoted dates, ``0o17``, ``010``, ``0b1``, ``1_000``, ``1:30``, ``1e3``,
    numbers whose written digits are lost (``1.10``, ``1.0``), non-finite numbers, integers beyond
    2**53, ``=`` and ``<<``. (Field rules, such as metadata values being strings, are core/fields.py's.)
    ``line`` is 1-based in the SKILL.md (``first_line`` is where ``yaml_text``
    starts); ``key_path`` looks like ``metadata.version`` or ``allowed-tools[0]``. Raises
    `FrontmatterError` when the YAML cannot be parsed.
    """
    too_long = frontmatter_size_problem(yaml_text)
    if too_long is not None:
        raise FrontmatterError(too_long, line=first_line)
    try:
        _refuse_lone_cr(yaml_text, first_line)
        return _interop_hazards(yaml_text, first_line)
    except FrontmatterError:
        raise
    except Exception as exc:  # as in parse_frontmatter
        raise _unexpected(exc, first_line) from exc


def _interop_hazards(yaml_text: str, first_line: int) -> list[tuple[int, str, str]]:
    hazards: list[tuple[int, str, str]] = []
    frames: list[_Frame] = []

    def next_node() -> tuple[str, bool]:
        return frames[-1].child() if frames else ("", False)

    def finish(is_key: bool, text: str) -> None:
        if frames:
            frames[-1].done(is_key, text)

    try:
        events, restore = _events(yaml_text)
        previous_end = first_line
        for event in events:
            line = first_line + event.start_mark.line if event.start_mark is not None else first_line
            if isinstance(event, ScalarEvent) and event.style is None and not event.value:
                line = previous_end  # an empty value: ruamel marks it at the next token
            if event.end_mark is not None:
                previous_end = first_line + event.end_mark.line
            if isinstance(event, ScalarEvent):
                path, is_key = next_node()
                text = _scalar_text(event, restore)
                problem = _plain_hazard(text) if event.style is None and event.tag is None else None
                if problem is not None:
                    where = (f"{path}.{text}" if path else text) if is_key else (path or "(top level)")
                    hazards.append((line, where, ("key " if is_key else "") + problem))
                finish(is_key, text)
            elif isinstance(event, AliasEvent):
                path, is_key = next_node()
                finish(is_key, f"*{event.anchor}")
            elif isinstance(event, (SequenceStartEvent, MappingStartEvent)):
                path, is_key = next_node()
                is_map = isinstance(event, MappingStartEvent)
                frames.append(_Frame(f"{path}.?" if is_key else path, is_map, is_key))
            elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                frame = frames.pop()
                finish(frame.in_key, "?")
    except YAMLError as exc:
        raise _syntax_error(exc, yaml_text, first_line) from None
    return hazards

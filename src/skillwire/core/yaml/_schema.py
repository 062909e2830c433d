"""npm yaml's core schema: the regular expressions (anchored at both ends) and tag resolution."""

from __future__ import annotations

import math
import re

from skillwire.core.yaml._jsnum import _js_int

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


def _resolve_int(text: str) -> _Number | None:
    """The value of the core schema's integer forms (0o octal, decimal, 0x hex), as npm yaml reads them;
    None when `text` is none of them. Plain and `!!int` scalars both resolve through here."""
    if _INT_OCT.fullmatch(text):
        return _js_int(text[2:], 8)
    if _INT_DEC.fullmatch(text):
        return _js_int(text, 10)
    if _INT_HEX.fullmatch(text):
        return _js_int(text[2:], 16)
    return None


# Every numeric form above starts with one of these; every other plain scalar that is not a string is
# one of `_WORDS` (what `_NULL` and `_BOOL` match).
_NUMBER_START = frozenset("0123456789+-.")
_WORDS: dict[str, bool | None] = {"": None, "~": None, "null": None, "Null": None, "NULL": None}
_WORDS |= {word: word[0] in "tT" for word in ("true", "True", "TRUE", "false", "False", "FALSE")}


def _resolve_plain(text: str) -> _Scalar:
    """The core-schema value of an untagged plain scalar."""
    if text[:1] not in _NUMBER_START:
        # Most scalars (names, descriptions, keys) start with a letter: one set and one dict look-up
        # instead of ten regular expressions (they were a tenth of a cold scan's SKILL.md parsing).
        return _WORDS.get(text, text)
    return _resolve_by_expressions(text)


def _resolve_by_expressions(text: str) -> _Scalar:
    """The core-schema value of an untagged plain scalar, every form's expression tried in order:
    what `_resolve_plain` answers, without its shortcut (tests/core/test_yaml_schema.py compares them)."""
    if _NULL.fullmatch(text):
        return None
    if _BOOL.fullmatch(text):
        return text[0] in "tT"
    if (number := _resolve_int(text)) is not None:
        return number
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
        number = _resolve_int(text)
        return text if number is None else number
    if tag == _FLOAT_TAG:
        return (
            _resolve_plain(text)
            if _FLOAT_NAN.fullmatch(text) or _FLOAT_EXP.fullmatch(text) or (_FLOAT.fullmatch(text))
            else text
        )
    # !!str, the non-specific "!", local and unknown tags: the text itself.
    return text

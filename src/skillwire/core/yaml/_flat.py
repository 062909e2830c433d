"""A fast path for the frontmatter most skills have: `key: scalar` lines and one nested mapping.

The full YAML 1.2 parser (`core.yaml`, pure Python on ruamel's scanner) costs milliseconds per
SKILL.md, which dominates a cold scan of a large catalog. Most frontmatter is a handful of
`name: x`, `description: ...`, `license: MIT` lines and perhaps a `metadata:` block of `key: value`
pairs. This module decodes exactly that subset and returns None for anything else: block or flow
collections, multi-line or block scalars, anchors, tags, escapes, tabs, control characters,
duplicate keys, keys that are not plain strings, non-finite numbers. The caller then uses the full
parser, which also produces every error message. Scalars are resolved by the full parser's own
core-schema resolver, so the two can only disagree on structure, and a test checks that they agree
on every input where this path answers.
"""

from __future__ import annotations

import math
import re
import sys

from skillwire.core.json import JSONValue
from skillwire.core.yaml._schema import _resolve_plain

# A plain key: starts with a letter or underscore; what follows is word characters, '-' or '.'.
_KEY = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_TOP = re.compile(rf"({_KEY}):(?: +(.*))?")
_NESTED = re.compile(rf"( +)({_KEY}):(?: +(.*))?")
# Characters that make a line unsafe for this path: controls, tabs, NEL, LS, PS, BOM.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
# A plain scalar may not start with an indicator; inside, ': ' and ' #' end or break it.
_PLAIN_START_FORBIDDEN = set("-?:,[]{}#&*!|>'\"%@`")
_SINGLE = re.compile(r"'((?:[^']|'')*)'(?: +#.*)? *")
_DOUBLE = re.compile(r'"([^"\\]*)"(?: +#.*)? *')


def _scalar(raw: str) -> tuple[bool, JSONValue]:
    """(ok, value) for the text after `key: `; ok is False when this path cannot decide."""
    if raw == "":
        return True, None
    first = raw[0]
    if first == "'":
        match = _SINGLE.fullmatch(raw)
        return (True, match.group(1).replace("''", "'")) if match else (False, None)
    if first == '"':
        match = _DOUBLE.fullmatch(raw)
        return (True, match.group(1)) if match else (False, None)
    if first in _PLAIN_START_FORBIDDEN:
        return False, None
    comment = raw.find(" #")
    text = (raw if comment < 0 else raw[:comment]).rstrip(" ")
    if ": " in text or text.endswith(":") or "#" in text[:1]:
        return False, None
    value = _resolve_plain(text)
    if isinstance(value, float) and not math.isfinite(value):
        return False, None
    return True, value


def _plain_string_key(key: str) -> bool:
    # YAML caps implicit keys at 1024 characters; long keys are left to the full parser's error.
    return len(key) <= 1000 and isinstance(_resolve_plain(key), str)


def parse_simple_frontmatter(yaml_text: str) -> dict[str, JSONValue] | None:
    """The decoded mapping when `yaml_text` is in the simple subset, else None."""
    if _UNSAFE.search(yaml_text.replace("\n", "").replace("\r", "")):
        return None
    result: dict[str, JSONValue] = {}
    lines = yaml_text.replace("\r\n", "\n").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        stripped = line.strip(" ")
        if stripped == "" or stripped.startswith("#"):
            continue
        match = _TOP.fullmatch(line)
        if match is None:
            return None
        # Keys interned: every skill repeats the same few (`name`, `description`, `metadata`), and a
        # server keeps every frontmatter (issue 25; docs/measurements.md).
        key, raw = sys.intern(match.group(1)), match.group(2) or ""
        if key in result or not _plain_string_key(key):
            return None
        ok, value = _scalar(raw.rstrip(" "))
        if not ok:
            return None
        if raw.strip(" ") == "":
            nested, index = _nested_mapping(lines, index)
            if nested is None:
                return None
            result[key] = nested if nested else None
            continue
        # A plain value followed by a more-indented line would be a multi-line scalar: not ours.
        if index < len(lines) and lines[index].startswith(" ") and lines[index].strip(" "):
            return None
        result[key] = value
    return result if result else None


def _nested_mapping(lines: list[str], index: int) -> tuple[dict[str, JSONValue] | None, int]:
    """One level of `  key: scalar` lines after an empty top-level value ({} when there are none)."""
    nested: dict[str, JSONValue] = {}
    indent: str | None = None
    while index < len(lines):
        line = lines[index]
        stripped = line.strip(" ")
        if stripped == "":
            index += 1
            continue
        if not line.startswith(" "):
            break
        if stripped.startswith("#"):
            index += 1
            continue
        match = _NESTED.fullmatch(line)
        if match is None or (indent is not None and match.group(1) != indent):
            return None, index
        indent = match.group(1)
        key, raw = sys.intern(match.group(2)), (match.group(3) or "").rstrip(" ")
        if key in nested or not _plain_string_key(key) or raw == "":
            return None, index
        ok, value = _scalar(raw)
        if not ok:
            return None, index
        nested[key] = value
        index += 1
    return nested, index

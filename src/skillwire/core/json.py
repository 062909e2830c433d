"""JSON values and JavaScript equality: what frontmatter *is* once decoded, and how two are compared.

Frontmatter is a JSON object (SEP-2640); entries carry it, SKILL.md files hold it as YAML, and a host
compares the two the way the conformance suite does (Node's ``util.isDeepStrictEqual`` on the JSON).
Anything that only needs the type or the comparison imports this module, not the YAML engine.
"""

from __future__ import annotations

import json
import math
from typing import TypeAlias

__all__ = ["JSONValue", "frontmatter_differences"]

JSONValue: TypeAlias = bool | int | float | str | list["JSONValue"] | dict[str, "JSONValue"] | None

_Number = int | float
# What pydantic-core refuses (a lone surrogate: a file name that is not UTF-8, a "\\ud800" escape in YAML)
# is escaped by json's encoder, `\\ud800`, which every JSON decoder reads back as the same string.
_FALLBACK = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def to_json(value: object) -> bytes:
    """Compact UTF-8 JSON of a JSON value, decoding to what `json.dumps` would; pydantic-core writes it
    (the snapshot's slices and the digest cache's frontmatter rows at a 10,000-skill cold start: 0.55 s
    of CPU with `json.dumps`, 0.1 s with it). A non-finite float is written as NaN or Infinity where
    `json.dumps(allow_nan=False)` raised: decoded frontmatter never holds one (the YAML decoder refuses)."""
    # Imported here: a catalog used without a server never pays pydantic-core's import.
    import pydantic_core

    try:
        return pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        return _FALLBACK.encode(value).encode()


def from_json(data: bytes) -> object:
    """The JSON in `data`, parsed by pydantic-core from the bytes themselves (a warm restart's snapshot:
    0.055 s of CPU at 10,000 skills where `json.loads` took 0.11 s, the text included; issue 25), and by
    `json` what pydantic-core refuses: an escaped lone surrogate, which `to_json`'s fallback writes, reads
    back as it always did, and bytes that are no JSON raise `json`'s own error (a ValueError, or a
    RecursionError past the interpreter's nesting limit). Only keys are cached: other strings repeat little."""
    import pydantic_core  # loaded already in a server (the SDK, ops.logs); here for a catalog alone

    try:
        return pydantic_core.from_json(data, cache_strings="keys")
    except ValueError:
        pass
    # Decoded to text as `json.loads` decodes bytes. The caller still holds the bytes, so this rare path
    # has both at its peak, as `json.loads(bytes)` itself would.
    return json.loads(data.decode(json.detect_encoding(data), "surrogatepass"))


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


def js_equal(a: object, b: object) -> bool:
    """Whether two JSON values are equal as Node's `util.isDeepStrictEqual` sees them (`1` is not `true`)."""
    out: list[str] = []
    _diff("", a, b, out)
    return not out


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

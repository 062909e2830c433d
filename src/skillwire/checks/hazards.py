"""Interop hazards (for ``skillwire lint``): plain scalars YAML 1.1 parsers read differently and values
that silently change meaning, each with its file line and key path; and, from the same pass, the line
of each frontmatter key, so lint can point at a field without parsing the YAML a third time.

It lives with lint, not with the YAML engine (core/yaml/), because nothing else asks for it: the
server, the host and the decoder never need a hazard. It walks the engine's own event stream through
its one public event API (`core.yaml.events.frontmatter_events`, the npm corrections and the decoder's
refusals applied), so a hazard's line and path are those of the value the decoder read, and every
frontmatter the decoder accepts can be walked here.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass

from skillwire.core.errors import FrontmatterError
from skillwire.core.yaml.events import (
    MAX_SAFE_INTEGER,
    EventKind,
    frontmatter_events,
    is_exponent_float,
    is_octal_int,
    js_number_text,
    resolve_plain,
    unexpected_failure,
)

__all__ = ["Hazard", "HazardKind", "interop_hazards", "yaml_interop_hazards"]

KeyPath = tuple[str, ...]


class HazardKind(enum.Enum):
    """What kind of interop hazard a `Hazard` is: lint picks its rule from this, never from the message."""

    YAML11_BOOL = "yaml11-bool"  # yes/no/on/off/y/n: strings in YAML 1.2, booleans in YAML 1.1
    YAML11_DATE = "yaml11-date"  # an unquoted date: a string in 1.2, a date in 1.1
    YAML11_VALUE_TAG = "yaml11-value-tag"  # '=': PyYAML's 'value' tag
    YAML11_MERGE_KEY = "yaml11-merge-key"  # '<<': a merge key in 1.1
    OCTAL = "octal"  # 0o17 / 010: different numbers (or a string) in 1.1 and 1.2
    YAML11_NUMBER = "yaml11-number"  # 0b1, 1:30, 1_000, 1e3: strings in one version, numbers in the other
    NOT_FINITE = "not-finite"  # .inf, .nan, 1e999: not JSON
    BEYOND_SAFE_INTEGER = "beyond-safe-integer"  # beyond 2**53: JavaScript rounds it
    NUMBER_LOSES_TEXT = "number-loses-text"  # 1.10 reads as 1.1
    FOLDED_TRAILING_NEWLINE = "folded-trailing-newline"  # `description: >` ending in a line break (FastMCP)


@dataclass(frozen=True)
class Hazard:
    """One interop hazard: its kind, the scalar as written, where it is, and a sentence for people.

    ``path`` looks like ``metadata.version`` or ``allowed-tools[0]`` (a key's own path ends in the key);
    ``line`` is 1-based in the SKILL.md; ``is_key`` says the scalar is a mapping key.
    """

    kind: HazardKind
    text: str
    path: str
    line: int
    message: str
    is_key: bool = False


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


def _plain_hazard(text: str) -> tuple[HazardKind, str] | None:
    """Why a plain scalar is read differently by YAML 1.1 parsers, or silently changes, if it does
    (the problem only: quoting it is the fix, said by `quote_advice` and at the end of the message)."""
    shown = repr(text)
    if _YAML11_BOOL.fullmatch(text):
        return (
            HazardKind.YAML11_BOOL,
            f"{shown} is a string in YAML 1.2 but a boolean in YAML 1.1 parsers (PyYAML, FastMCP)",
        )
    if _YAML11_BOOL_SPEC_ONLY.fullmatch(text):
        return (
            HazardKind.YAML11_BOOL,
            f"{shown} is a string in YAML 1.2 but a boolean in the YAML 1.1 spec (e.g. go-yaml v2)",
        )
    if _YAML11_TIMESTAMP.fullmatch(text):
        return (
            HazardKind.YAML11_DATE,
            f"{shown} is a string in YAML 1.2 but a date (not JSON) in YAML 1.1 parsers (PyYAML)",
        )
    if text == "=":
        return (
            HazardKind.YAML11_VALUE_TAG,
            "'=' is a string in YAML 1.2 but PyYAML reads it as a 'value' tag it cannot load",
        )
    if text == "<<":
        return (
            HazardKind.YAML11_MERGE_KEY,
            "'<<' is a plain string in YAML 1.2 but a merge key in YAML 1.1 parsers",
        )
    if is_octal_int(text):
        return (
            HazardKind.OCTAL,
            f"{shown} is the integer {int(text[2:], 8)} in YAML 1.2 but a string in YAML 1.1 parsers",
        )
    if _LEADING_ZERO_INT.fullmatch(text):
        octal = set(text.lstrip("+-")) <= set("01234567")
        old = f"the octal number {int(text, 8)}" if octal else "a string"
        return (
            HazardKind.OCTAL,
            f"{shown} is the integer {int(text, 10)} in YAML 1.2 but {old} in YAML 1.1 parsers",
        )
    if _YAML11_BINARY.fullmatch(text):
        return (
            HazardKind.YAML11_NUMBER,
            f"{shown} is a string in YAML 1.2 but a binary integer in YAML 1.1 parsers",
        )
    if _YAML11_SEXAGESIMAL.fullmatch(text):
        return (
            HazardKind.YAML11_NUMBER,
            f"{shown} is a string in YAML 1.2 but a base-60 number in YAML 1.1 parsers",
        )
    if "_" in text and _UNDERSCORE_NUMBER.fullmatch(text):
        return HazardKind.YAML11_NUMBER, f"{shown} is a string in YAML 1.2 but a number in YAML 1.1 parsers"
    value = resolve_plain(text)
    if isinstance(value, float) and not math.isfinite(value):
        return HazardKind.NOT_FINITE, f"{shown} is not a finite number, so it cannot be JSON"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > MAX_SAFE_INTEGER:
        return (
            HazardKind.BEYOND_SAFE_INTEGER,
            f"{shown} is beyond JavaScript's exact integers; it reads as {js_number_text(value)}",
        )
    if is_exponent_float(text) and not _PYYAML_FLOAT.fullmatch(text):
        number = js_number_text(float(text))
        return (
            HazardKind.YAML11_NUMBER,
            f"{shown} is the number {number} in YAML 1.2 but a string in YAML 1.1 parsers (PyYAML)",
        )
    if isinstance(value, float) and _TRAILING_ZERO.fullmatch(text):
        return HazardKind.NUMBER_LOSES_TEXT, (f"{shown} is the number {js_number_text(value)}, not the text as written")
    return None


#: When quoting is the fix only in some cases (after "quote it"); for every other kind it always is.
_QUOTE_WHEN = {HazardKind.NUMBER_LOSES_TEXT: " if it is a version or an identifier"}


def quote_advice(hazard: Hazard) -> tuple[str, str]:
    """A quotable hazard's message as its two parts: the problem, and when quoting it is the fix ("" for
    always). Recomputed from the hazard's kind and text, so a reader never takes the message apart."""
    found = _plain_hazard(hazard.text)
    if found is None or found[0] is not hazard.kind:
        raise ValueError(f"not a quotable hazard: {hazard.kind.value}")
    return ("key " if hazard.is_key else "") + found[1], _QUOTE_WHEN.get(hazard.kind, "")


@dataclass(frozen=True)
class FrontmatterScan:
    """What one pass over frontmatter YAML finds: the hazards in file order, and the 1-based file line
    of each top-level key and of each key one level below it (``("metadata", "version")``)."""

    hazards: list[Hazard]
    key_lines: dict[KeyPath, int]


@dataclass
class _Frame:
    path: str
    is_map: bool
    in_key: bool  # the collection itself sits in a mapping key
    index: int = 0
    expect_key: bool = True
    key: str = "?"
    keys: KeyPath | None = None  # where its keys go in `key_lines`: the top level, or one level below

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


def scan_frontmatter(yaml_text: str, *, first_line: int = 1) -> FrontmatterScan:
    """The interop hazards (`interop_hazards`) and the key lines of frontmatter YAML, in one pass.

    ``first_line`` is where ``yaml_text`` starts in the SKILL.md. Raises `FrontmatterError` when the
    YAML cannot be parsed.
    """
    try:
        return _scan(yaml_text, first_line)
    except FrontmatterError:
        raise
    except Exception as exc:  # as in parse_frontmatter
        raise unexpected_failure(exc, first_line) from exc


def interop_hazards(yaml_text: str, *, first_line: int = 1) -> list[Hazard]:
    """Scalars that other YAML readers (YAML 1.1 parsers, FastMCP) read differently, or that silently
    change meaning, as `Hazard` data in file order.

    Plain ``yes``/``no``/``on``/``off``/``y``/``n``, unquoted dates, ``0o17``, ``010``, ``0b1``,
    ``1_000``, ``1:30``, ``1e3``, numbers whose written digits are lost (``1.10``, ``1.0``), non-finite
    numbers, integers beyond 2**53, ``=`` and ``<<``; and a top-level ``description: >`` (folded) whose
    value ends in a line break, which FastMCP 4.2.3's ``read_skill`` rejects. (Field rules, such as
    metadata values being strings, are core/fields.py's.) ``first_line`` is where ``yaml_text``
    starts in the SKILL.md. Raises `FrontmatterError` when the YAML cannot be parsed.
    """
    return scan_frontmatter(yaml_text, first_line=first_line).hazards


def yaml_interop_hazards(yaml_text: str, *, first_line: int = 1) -> list[tuple[int, str, str]]:
    """`interop_hazards` as ``(line, key_path, message)`` tuples (the message starts with "key " for a key)."""
    return [(h.line, h.path, h.message) for h in interop_hazards(yaml_text, first_line=first_line)]


def _scan(yaml_text: str, first_line: int) -> FrontmatterScan:
    hazards: list[Hazard] = []
    key_lines: dict[KeyPath, int] = {}
    frames: list[_Frame] = []

    def next_node() -> tuple[str, bool]:
        return frames[-1].child() if frames else ("", False)

    def finish(is_key: bool, text: str) -> None:
        if frames:
            frames[-1].done(is_key, text)

    for event in frontmatter_events(yaml_text, first_line=first_line):
        line = event.line
        if event.kind is EventKind.SCALAR:
            path, is_key = next_node()
            text = event.text
            if is_key and frames[-1].keys is not None:
                key_lines.setdefault((*frames[-1].keys, text), line)
            found = _plain_hazard(text) if event.plain else None
            if found is not None:
                kind, problem = found
                where = (f"{path}.{text}" if path else text) if is_key else (path or "(top level)")
                message = f"{'key ' if is_key else ''}{problem}; quote it{_QUOTE_WHEN.get(kind, '')}"
                hazards.append(Hazard(kind, text, where, line, message, is_key))
            elif event.style == ">" and path == "description" and not is_key and text.endswith("\n"):
                hazards.append(
                    Hazard(
                        HazardKind.FOLDED_TRAILING_NEWLINE,
                        text,
                        path,
                        line,
                        "a folded 'description: >' keeps its final line break in YAML 1.2, and FastMCP "
                        "4.2.3's read_skill rejects the skill; write 'description: >-' to drop it",
                    )
                )
            finish(is_key, text)
        elif event.kind is EventKind.ALIAS:
            path, is_key = next_node()
            finish(is_key, f"*{event.text}")
        elif event.kind is EventKind.START:
            path, is_key = next_node()
            keys: KeyPath | None = None
            if not frames:
                keys = ()  # the frontmatter itself
            elif not is_key and frames[-1].keys == () and frames[-1].is_map:
                keys = (frames[-1].key,)  # the value of a top-level key
            frames.append(
                _Frame(f"{path}.?" if is_key else path, event.mapping, is_key, keys=keys if event.mapping else None)
            )
        else:
            frame = frames.pop()
            finish(frame.in_key, "?")
    return FrontmatterScan(hazards, key_lines)

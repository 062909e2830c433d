"""The YAML engine's event stream, for readers that need more than the decoded value: one public API.

`checks/hazards.py` (lint's interop hazards and key lines) walks frontmatter as the decoder reads it:
the same ruamel scanner with the npm corrections, the same refusals before parsing, the same
placeholders mapped back, the same errors. It reads it here, as plain data (`YamlEvent`), never
through ruamel's classes or this package's private modules; the scalar rules it compares against
(`resolve_plain`, the YAML 1.2 octal and exponent forms, JavaScript's exact integers) are here too,
so the engine's internals have one reader: this package.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from skillwire.core.errors import FrontmatterError
from skillwire.core.yaml._decode import (
    _refuse_deep_flow_nesting,
    _refuse_lone_cr,
    _unexpected,
    frontmatter_size_problem,
)
from skillwire.core.yaml._jsnum import _MAX_SAFE_INTEGER, _js_number_to_string
from skillwire.core.yaml._scanner import _events, _scalar_text, _syntax_error
from skillwire.core.yaml._schema import _FLOAT_EXP, _INT_OCT, _resolve_plain

__all__: list[str] = []  # internal to skillwire: lint's reader of the engine (checks/hazards.py)

#: JavaScript's exact integers end here: past it, npm yaml's number is rounded.
MAX_SAFE_INTEGER = _MAX_SAFE_INTEGER


class EventKind(enum.Enum):
    SCALAR = "scalar"
    ALIAS = "alias"
    START = "start"  # a mapping or a sequence opens
    END = "end"  # the innermost open one closes


@dataclass(frozen=True, slots=True)
class YamlEvent:
    """One parse event as data: its kind, its 1-based line in the file, and for a scalar its text as the
    decoder reads it (an alias: its anchor), whether it is plain and untagged, and its block style
    (`>`, `|`, or None); for a start, whether a mapping opens (else a sequence)."""

    kind: EventKind
    line: int
    text: str = ""
    plain: bool = False
    style: str | None = None
    mapping: bool = False


def frontmatter_events(yaml_text: str, *, first_line: int = 1) -> Iterator[YamlEvent]:
    """The events of frontmatter YAML in file order, read as `parse_frontmatter` reads it.

    ``first_line`` is where ``yaml_text`` starts in the SKILL.md. Frontmatter the decoder refuses before
    parsing (too long, a lone CR, flow nesting past `MAX_DEPTH`) and YAML that cannot be parsed raise
    `FrontmatterError`, as does any failure of the engine (as in `parse_frontmatter`).
    """
    too_long = frontmatter_size_problem(yaml_text)
    if too_long is not None:
        raise FrontmatterError(too_long, line=first_line)
    try:
        _refuse_lone_cr(yaml_text, first_line)
        _refuse_deep_flow_nesting(yaml_text, first_line)
        events, restore = _events(yaml_text)
        previous_end = first_line
        for event in events:
            line = first_line + event.start_mark.line if event.start_mark is not None else first_line
            if isinstance(event, ScalarEvent) and event.style is None and not event.value:
                line = previous_end  # an empty value: ruamel marks it at the next token
            if event.end_mark is not None:
                previous_end = first_line + event.end_mark.line
            if isinstance(event, ScalarEvent):
                plain = event.style is None and event.tag is None
                yield YamlEvent(EventKind.SCALAR, line, _scalar_text(event, restore), plain, event.style)
            elif isinstance(event, AliasEvent):
                yield YamlEvent(EventKind.ALIAS, line, str(event.anchor))
            elif isinstance(event, (SequenceStartEvent, MappingStartEvent)):
                yield YamlEvent(EventKind.START, line, mapping=isinstance(event, MappingStartEvent))
            elif isinstance(event, (SequenceEndEvent, MappingEndEvent)):
                yield YamlEvent(EventKind.END, line, mapping=isinstance(event, MappingEndEvent))
    except FrontmatterError:
        raise
    except YAMLError as exc:
        raise _syntax_error(exc, yaml_text, first_line) from None
    except Exception as exc:  # as in parse_frontmatter: the engine's failure is this frontmatter's reason
        raise _unexpected(exc, first_line) from exc


def resolve_plain(text: str) -> object:
    """What a plain, untagged scalar means in the YAML 1.2 core schema as npm yaml reads it."""
    return _resolve_plain(text)


def is_octal_int(text: str) -> bool:
    """`0o17`: an integer in YAML 1.2's core schema."""
    return _INT_OCT.fullmatch(text) is not None


def is_exponent_float(text: str) -> bool:
    """`1e3`, `.5E-2`: a float in YAML 1.2's core schema."""
    return _FLOAT_EXP.fullmatch(text) is not None


def js_number_text(value: int | float) -> str:
    """A number as JavaScript prints it (what npm yaml's value becomes in JSON)."""
    return _js_number_to_string(value)


def unexpected_failure(exc: Exception, first_line: int) -> FrontmatterError:
    """The `FrontmatterError` for a failure nobody foresaw while reading frontmatter (the decoder's own
    catch-all wording), for a reader that wraps its walk of the events as the decoder wraps its own."""
    return _unexpected(exc, first_line)

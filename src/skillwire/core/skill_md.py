"""SKILL.md: where the frontmatter block is, and the parsed document.

This module owns one rule: *a skill's frontmatter is the JSON object read from the block between the
leading ``---`` line and the next ``---`` (or ``...``) line* (the YAML itself is `skillwire.core.yaml`'s).
Sans-IO: callers hand in bytes or text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillwire.core.errors import NotASkill
from skillwire.core.json import JSONValue

__all__ = ["SkillDocument", "parse_skill_md", "split_skill_md"]

_OPENING = re.compile(r"---[ \t]*")
_CLOSING = re.compile(r"(?:---|\.\.\.)[ \t]*")
_CLOSING_STARTS = ("---", "...")  # what every line `_CLOSING` matches starts with


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
    # Line by line up to the closing line only: the body (most of a SKILL.md) is never split into lines.
    # Lines are cut with `str.find`, and only one starting `---` or `...` is matched against the closing
    # pattern: a regex iterator over the lines was a fifth of decoding a typical SKILL.md.
    length = len(text)
    newline = text.find("\n")
    start = length if newline < 0 else newline + 1
    if _OPENING.fullmatch(text[:start].rstrip("\r\n")) is None:
        raise NotASkill("SKILL.md does not start with a YAML frontmatter block ('---' on line 1)")
    offset = start
    index = 2
    while offset < length:
        newline = text.find("\n", offset)
        end = length if newline < 0 else newline + 1
        if text.startswith(_CLOSING_STARTS, offset) and _CLOSING.fullmatch(text[offset:end].rstrip("\r\n")):
            yaml_end = offset
            if text.endswith("\n", start, yaml_end):
                yaml_end -= 2 if text.endswith("\r\n", start, yaml_end) else 1
            frontmatter_text = text[start : max(start, yaml_end)]
            return frontmatter_text, text[end:], 2, index + 1
        offset = end
        index += 1
    raise NotASkill(
        "SKILL.md frontmatter opened with '---' on line 1 is never closed (no later line is exactly '---' or '...')",
        kind="unclosed",
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
            raise NotASkill(
                f"SKILL.md is not valid UTF-8 (byte offset {exc.start}: {exc.reason})", kind="not-utf8"
            ) from None
    else:
        text = data
    frontmatter_text, body, fm_line, body_line = split_skill_md(text)
    # Imported here, not with the module: the YAML engine (ruamel.yaml) is a tenth of a second of
    # imports that a server serving its persisted snapshot, whose frontmatter is decoded, never needs.
    from skillwire.core.yaml import parse_frontmatter

    frontmatter = parse_frontmatter(frontmatter_text, first_line=fm_line)
    return SkillDocument(
        frontmatter=frontmatter,
        frontmatter_text=frontmatter_text,
        body=body,
        frontmatter_start_line=fm_line,
        body_start_line=body_line,
    )

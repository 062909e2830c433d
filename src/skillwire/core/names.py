"""Agent Skills naming rules (the `name` field, and the final segment of a skill path).

The conformance suite applies the ASCII rule `^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`; that is
what a server must publish. The Agent Skills text says "unicode lowercase alphanumeric", and its
reference validator accepts `café`; hosts accept such names (`allow_unicode=True`) so one exotic
entry never costs a listing.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from skillwire.core.errors import InvalidName

MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
# The conformance regexes are JavaScript, where `$` is end of input; Python's `$` also matches before a
# trailing newline, so they are written with `\Z` here.
ASCII_NAME_RE = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?\Z")
# RFC 3986 reg-name, as the conformance suite's authority check writes it.
REG_NAME_RE = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*\Z")


def name_problem(name: object, *, allow_unicode: bool = False) -> str | None:
    """Why `name` is not a valid skill name, or None when it is."""
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__}"
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; the limit is {MAX_NAME_LENGTH}"
    if name.startswith("-") or name.endswith("-"):
        return "must not start or end with '-'"
    if "--" in name:
        return "must not contain '--'"
    if allow_unicode:
        normal = unicodedata.normalize("NFKC", name)
        if normal != name or name != name.lower() or not all(c.isalnum() or c == "-" for c in name):
            return "may contain only lowercase letters, digits and '-'"
        return None
    if not ASCII_NAME_RE.match(name):
        return "may contain only lowercase ASCII letters a-z, digits 0-9 and '-'"
    return None


def validate_name(name: object, *, allow_unicode: bool = False) -> str:
    problem = name_problem(name, allow_unicode=allow_unicode)
    if problem is not None:
        raise InvalidName(str(name), problem)
    assert isinstance(name, str)
    return name


def description_problem(description: object) -> str | None:
    """Why `description` breaks the Agent Skills rule (a 1–1024 character string), or None."""
    if not isinstance(description, str):
        return f"description must be a string, got {type(description).__name__}"
    if not description.strip():
        return "description must not be empty"
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return f"description is {len(description)} characters long; the limit is {MAX_DESCRIPTION_LENGTH}"
    return None


def frontmatter_problem(frontmatter: Mapping[str, object], folder: str, *, allow_unicode: bool = False) -> str | None:
    """Why a decoded frontmatter cannot be published for a skill in `folder`, or None."""
    if "name" not in frontmatter:
        return "frontmatter has no 'name'"
    name = frontmatter["name"]
    problem = name_problem(name, allow_unicode=allow_unicode)
    if problem is not None:
        return f"frontmatter name {name!r} {problem}"
    if name != folder:
        return f"frontmatter name {name!r} does not match its folder {folder!r}"
    if "description" not in frontmatter:
        return "frontmatter has no 'description'"
    return description_problem(frontmatter["description"]) or metadata_problem(frontmatter)


def metadata_problem(frontmatter: Mapping[str, object]) -> str | None:
    """Why `metadata` is not what Agent Skills defines (a mapping of strings to strings), or None.

    SEP-2640 requires a served skill to conform, and the TypeScript SDK's host refuses the whole
    listing when one entry has a list or a mapping there.
    """
    if "metadata" not in frontmatter:
        return None
    metadata = frontmatter["metadata"]
    if not isinstance(metadata, Mapping):
        return f"metadata must be a mapping of strings, got {_kind(metadata)}"
    for key, value in metadata.items():
        if not isinstance(value, str):
            return f"metadata.{key} must be a string, got {_kind(value)}"
    return None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return "a string" if isinstance(value, str) else type(value).__name__

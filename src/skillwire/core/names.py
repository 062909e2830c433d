"""Agent Skills naming syntax (what a `name` may look like) and the field length bounds.

Which fields must hold a valid name, and everything else about the fields, is core/fields.py.

The conformance suite applies the ASCII rule `^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`; that is
what a server must publish. The Agent Skills text says "unicode lowercase alphanumeric", and its
reference validator accepts `café`; hosts accept such names (`allow_unicode=True`) so one exotic
entry never costs a listing.
"""

from __future__ import annotations

import re
import unicodedata

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

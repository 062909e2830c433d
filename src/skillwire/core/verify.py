"""Verification lives here: "these bytes are the listed file" and "this SKILL.md matches this entry".

Pure (no I/O). Everyone who holds bytes that a manifest describes asks here: the host before any byte
reaches the caller (host/host.py, host/cache.py), the terminal tools (cli/cat.py, cli/pull.py), the
audit behind `skillwire check` (checks/audit/), and the server before it serves a file it published
(catalog/snapshot.py) or a generated SKILL.md (server/extension.py).

- A file: its length first (cheap, and what a truncated or grown file fails), then its SHA-256.
  `file_mismatches` reports both (for the audit, which reports every difference); `verify_file` raises
  the first (`SizeMismatch`, `DigestMismatch`).
- A SKILL.md: parsed as YAML 1.2 and compared with the entry's frontmatter field by field with JSON
  equality as JavaScript has it (`1` equals `1.0`, `true` is not `1`, key order does not matter), the
  conformance suite's `isDeepStrictEqual`; never Python's `==`, where `1 == True`.
  `skill_md_mismatch` returns what differs in two forms: `details` quote the served values (for a
  person at a terminal), `fields` name only the entry's fields (safe to hand to a model). The caller
  chooses which one its exception carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skillwire.core.errors import DigestMismatch, FrontmatterError, FrontmatterMismatch, NotASkill, SizeMismatch
from skillwire.core.json import JSONValue, frontmatter_differences
from skillwire.core.manifest import ManifestFile, sha256_digest
from skillwire.core.skill_md import SkillDocument, parse_skill_md


def file_mismatches(uri: str, size: int | None, digest: str | None, data: bytes) -> list[SizeMismatch | DigestMismatch]:
    """How `data` differs from a listed `size` and `digest` (None: not known, not compared); [] when it is the file."""
    out: list[SizeMismatch | DigestMismatch] = []
    if size is not None and len(data) != size:
        out.append(SizeMismatch(uri, size, len(data)))
    if digest is not None:
        actual = sha256_digest(data)
        if actual != digest:
            out.append(DigestMismatch(uri, digest, actual))
    return out


def file_problem(listed: ManifestFile, data: bytes) -> SizeMismatch | DigestMismatch | None:
    """Why `data` is not the listed file (its size, else its digest), or None when it is."""
    if len(data) != listed.size:
        return SizeMismatch(listed.uri, listed.size, len(data))  # no hash of bytes already known wrong
    actual = sha256_digest(data)
    return DigestMismatch(listed.uri, listed.digest, actual) if actual != listed.digest else None


def file_matches(listed: ManifestFile, data: bytes) -> bool:
    return file_problem(listed, data) is None


def verify_file(listed: ManifestFile, data: bytes) -> bytes:
    """`data`, when it is the listed file; `SizeMismatch` or `DigestMismatch` when it is not."""
    problem = file_problem(listed, data)
    if problem is not None:
        raise problem
    return data


def frontmatter_equal(a: Mapping[str, JSONValue], b: Mapping[str, JSONValue]) -> bool:
    """Whether two frontmatters are the same JSON, as JavaScript compares it (see the module docstring)."""
    return not frontmatter_differences(dict(a), dict(b))


@dataclass(frozen=True)
class SkillMdMismatch:
    """Why a SKILL.md does not match an entry: it does not parse, or fields differ."""

    details: list[str]  # quote the served file (values, the parse error): for a person
    fields: list[str]  # name only the entry's fields (and a count of extra ones): safe to show a model
    parse_error: NotASkill | FrontmatterError | None = None


def skill_md_mismatch(
    expected: Mapping[str, JSONValue], data: bytes
) -> tuple[SkillDocument | None, SkillMdMismatch | None]:
    """Parse `data` and compare its frontmatter with `expected`: (the document, None) when they match."""
    try:
        document = parse_skill_md(data)
    except (NotASkill, FrontmatterError) as exc:
        line = f" (line {exc.line})" if isinstance(exc, FrontmatterError) and exc.line is not None else ""
        mismatch = SkillMdMismatch(
            [f"the served SKILL.md has no valid frontmatter ({exc})"],
            [f"the served SKILL.md has no valid frontmatter{line}"],
            exc,
        )
        return None, mismatch
    details = frontmatter_differences(dict(expected), document.frontmatter)
    if not details:
        return document, None
    return document, SkillMdMismatch(details, _differing_fields(expected, document.frontmatter))


def verify_skill_md(uri: str, expected: Mapping[str, JSONValue], data: bytes, *, quote: bool) -> SkillDocument:
    """The parsed SKILL.md when it matches `expected`; else `FrontmatterMismatch`, quoting the file only
    when `quote` (a terminal may show the served words; text that can reach a model must not)."""
    document, mismatch = skill_md_mismatch(expected, data)
    if mismatch is not None:
        raise FrontmatterMismatch(uri, mismatch.details if quote else mismatch.fields) from None
    assert document is not None
    return document


def _differing_fields(expected: Mapping[str, JSONValue], actual: Mapping[str, JSONValue]) -> list[str]:
    """The entry's fields the served SKILL.md disagrees with, without quoting anything from the file."""
    out: list[str] = []
    extra = 0
    for key in [*expected, *(k for k in actual if k not in expected)]:
        before = {key: expected[key]} if key in expected else {}
        after = {key: actual[key]} if key in actual else {}
        if not frontmatter_differences(before, after):
            continue
        if key in expected:
            out.append(f"{key}: the served SKILL.md does not match the entry")
        else:
            extra += 1
    if extra:
        out.append(f"the served SKILL.md has {extra} field(s) the entry does not declare")
    return out

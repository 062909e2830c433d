"""The rules of `skillwire lint`: local skill folders checked before they are published.

Three layers, each usable on its own:

* `check_skill_md` is pure: the bytes of one SKILL.md in, findings out (frontmatter block, YAML,
  the Agent Skills fields, YAML 1.1-vs-1.2 interop hazards, length).
* `check_links` (checks/links.py) is pure too: a SKILL.md body and a callback that says what a
  skill-relative path is.
* `lint_path` walks a folder with the server's own discovery and ignore rules
  (`skillwire.catalog.filesystem.walk_root`), so limits, nesting and "not served" findings describe
  exactly what `skillwire serve` would publish. It opens nothing but `.skillignore` and SKILL.md files,
  except in a folder that `skillwire sign` signed: there it hashes the files as `serve` does, to say which
  signed skill no longer matches its signature (`signature-stale`).

Every finding has a stable rule id (see `RULES`), a file, a 1-based line when one applies (the line
of the offending frontmatter key, link or byte), a severity and a suggestion. The field rules are
core/fields.py's (`FIELD_RULES` names each one here, with a severity that follows its weight there).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import MAX_SKILL_MD_BYTES, Ignored, SkillRoot, scan_root, walk_root
from skillwire.catalog.safe_open import read_regular
from skillwire.catalog.signatures import SIGNATURES_FILE, SignatureBook
from skillwire.checks.findings import Finding, Rule, RuleSet, printable
from skillwire.checks.hazards import FrontmatterScan, Hazard, HazardKind, quote_advice, scan_frontmatter
from skillwire.checks.links import LINK_RULES, MISSING, CaseMismatch, NotServed, Target, check_links
from skillwire.core.errors import FrontmatterError, GitError, InvalidSkillURI, LintPathError, NotASkill, SigningError
from skillwire.core.fields import AGENT_SKILLS_FIELDS, Problem, field_problems, is_publishable_name
from skillwire.core.fields import RULES as FIELD_WEIGHTS
from skillwire.core.fields import Rule as FieldRule
from skillwire.core.json import JSONValue
from skillwire.core.manifest import MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, over_limit
from skillwire.core.skill_md import split_skill_md
from skillwire.core.uri import SKILL_MD, format_uri, validate_segment
from skillwire.core.yaml import parse_frontmatter

if TYPE_CHECKING:
    from skillwire.catalog.git_tree import GitTreeSource

__all__ = [
    "RULES",
    "LintReport",
    "LintedSkill",
    "SkillMdCheck",
    "check_skill_md",
    "lint_path",
]

RelPath = tuple[str, ...]


def _weighed(rule: FieldRule, summary: str) -> Rule:
    """A field rule's lint severity follows its weight in `core.fields`, so lint cannot disagree with serve."""
    return Rule("warning" if FIELD_WEIGHTS[rule] == "advice" else "error", summary)


#: Every rule id, its severity and what it checks. Ids are stable: scripts and CI filters may rely on them.
RULES = RuleSet(
    {
        # SKILL.md and its frontmatter block
        "not-utf8": Rule("error", "SKILL.md is not valid UTF-8"),
        "no-frontmatter": Rule("error", "SKILL.md does not start with a '---' frontmatter block"),
        "unclosed-frontmatter": Rule("error", "the frontmatter block is never closed"),
        "yaml-syntax": Rule("error", "the frontmatter is not valid YAML 1.2 (or not JSON-compatible)"),
        "duplicate-key": Rule("error", "a frontmatter key appears twice"),
        "frontmatter-not-mapping": Rule("error", "the frontmatter is empty or not a mapping"),
        "skill-md-too-large": Rule("error", "SKILL.md is too large to be parsed"),
        # Agent Skills fields
        "missing-name": _weighed(FieldRule.NAME_MISSING, "no 'name' field"),
        "name-not-string": _weighed(FieldRule.NAME_NOT_STRING, "'name' is not a string"),
        "invalid-name": _weighed(FieldRule.NAME_INVALID, "'name' breaks the Agent Skills naming rule"),
        "unicode-name": _weighed(
            FieldRule.NAME_NOT_ASCII, "'name' is valid Agent Skills but not ASCII, which SEP-2640 conformance requires"
        ),
        "name-mismatch": _weighed(
            FieldRule.NAME_MISMATCH, "'name' differs from the skill's folder (the final URI segment)"
        ),
        "missing-description": _weighed(FieldRule.DESCRIPTION_MISSING, "no 'description' field"),
        "description-not-string": _weighed(FieldRule.DESCRIPTION_NOT_STRING, "'description' is not a string"),
        "empty-description": _weighed(FieldRule.DESCRIPTION_EMPTY, "'description' is empty"),
        "description-too-long": _weighed(FieldRule.DESCRIPTION_TOO_LONG, "'description' is over 1024 characters"),
        "compatibility-not-string": _weighed(
            FieldRule.COMPATIBILITY_NOT_STRING, "'compatibility' is not a string (skillwire serve skips the skill)"
        ),
        "compatibility-too-long": _weighed(
            FieldRule.COMPATIBILITY_TOO_LONG, "'compatibility' is over 500 characters (skillwire serve skips the skill)"
        ),
        "compatibility-empty": _weighed(FieldRule.COMPATIBILITY_EMPTY, "'compatibility' is empty"),
        "license-not-string": _weighed(FieldRule.LICENSE_NOT_STRING, "'license' is not a string"),
        "allowed-tools-not-string": _weighed(
            FieldRule.ALLOWED_TOOLS_NOT_STRING, "'allowed-tools' is not a space-separated string"
        ),
        "unknown-key": _weighed(
            FieldRule.UNKNOWN_KEY, "a frontmatter key Agent Skills does not define (SEP-2640 serves it)"
        ),
        "metadata-not-mapping": _weighed(
            FieldRule.METADATA_NOT_MAPPING, "'metadata' is not a mapping (skillwire serve skips the skill)"
        ),
        "metadata-not-string": _weighed(
            FieldRule.METADATA_NOT_STRING, "a 'metadata' value is not a string (skillwire serve skips the skill)"
        ),
        "reserved-metadata-key": _weighed(
            FieldRule.METADATA_RESERVED_KEY, "a 'metadata' key under the reserved io.modelcontextprotocol/ prefix"
        ),
        # Interop: what other parsers and validators read differently
        "yaml-bool": Rule("warning", "yes/no/on/off/y/n: a string in YAML 1.2, a boolean in YAML 1.1"),
        "yaml-date": Rule("warning", "an unquoted date: a string in YAML 1.2, a date in YAML 1.1"),
        "yaml-octal": Rule("warning", "0o17 or 010: read as different numbers (or a string) by YAML 1.1 and 1.2"),
        "yaml-number-text": Rule("warning", "a number whose written digits are lost (1.10 is read as 1.1)"),
        "yaml-interop": Rule("warning", "another scalar YAML 1.1 and 1.2 parsers read differently"),
        "folded-description": Rule(
            "warning", "'description: >' keeps a final line break; FastMCP 4.2.3 rejects the skill"
        ),
        "bom": Rule(
            "warning", "a byte order mark before '---' (the Agent Skills validator and Codex find no frontmatter)"
        ),
        "dashes-in-frontmatter": Rule(
            "warning", "'---' inside the frontmatter (the Agent Skills validator cuts it there)"
        ),
        "closing-dots": Rule(
            "warning", "the frontmatter is closed with '...' (the Agent Skills validator needs '---')"
        ),
        "skill-md-too-long": Rule("warning", "SKILL.md is over 500 lines (Agent Skills recommendation)"),
        # Files and limits, as `skillwire serve` would publish them
        "too-many-files": Rule("error", "over 512 served files in one skill (SEP-2640 limit)"),
        "too-large": Rule("error", "over 16 MiB of served files in one skill (SEP-2640 limit)"),
        "unpublishable-name": Rule("error", "a file or folder name that cannot be part of a URI"),
        "symlink-outside": Rule("warning", "a symlink whose target leaves the folder (not served)"),
        "symlink-to-ignored": Rule("warning", "a symlink to an ignored file (not served)"),
        "dangling-symlink": Rule("warning", "a symlink to nothing (not served)"),
        "symlinked-directory": Rule("warning", "a symlinked directory (not followed)"),
        "special-file": Rule("warning", "a FIFO, socket or device (never opened, not served)"),
        "unreadable": Rule("warning", "a file or folder that cannot be read (not served)"),
        "unusable-skillignore": Rule("error", "a .skillignore that cannot be used (its folder is not published)"),
        "lowercase-skill-md": Rule("warning", "a skill.md not named exactly SKILL.md (not a skill)"),
        # SKILL.md body (checks/links.py)
        **LINK_RULES,
        # Skills in a folder
        "nested-skill": Rule("info", "a skill inside another skill (published separately; its files count in both)"),
        "skill-at-root": Rule("info", "PATH is itself a skill (serve its parent, or PATH=<name>)"),
        "duplicate-name": Rule("warning", "two skills under one PATH share a name"),
        "signature-stale": Rule(
            "warning", "a signed skill whose files no longer match its signature (skillwire serve sends it unsigned)"
        ),
        "no-skills": Rule("error", "no SKILL.md under PATH"),
    },
    record=("file", "line", "severity", "rule", "message", "suggestion", "skill"),
    one_line=True,
)

MAX_SKILL_MD_LINES = 500


def _finding(rule: str, file: str, line: int | None, message: str, suggestion: str, skill: str | None) -> Finding:
    return RULES.finding(rule, message, file=file, line=line, suggestion=suggestion, skill=skill)


# --------------------------------------------------------------------------------------------------
# SKILL.md (pure)
# --------------------------------------------------------------------------------------------------


def key_lines(yaml_text: str, first_line: int) -> dict[RelPath, int]:
    """The 1-based file line of each top-level key, and of each key one level below (`("metadata", "x")`);
    empty when the YAML cannot be read."""
    try:
        return scan_frontmatter(yaml_text, first_line=first_line).key_lines
    except FrontmatterError:
        return {}


def suggest_name(text: str) -> str:
    """A valid ASCII skill name close to `text` (for suggestions only)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9]+", "-", ascii_text)).strip("-")[:64].strip("-")
    return slug or "my-skill"


#: The lint rule of each interop hazard kind (the kind, not the message, decides the finding).
HAZARD_RULES: dict[HazardKind, str] = {
    HazardKind.YAML11_BOOL: "yaml-bool",
    HazardKind.YAML11_DATE: "yaml-date",
    HazardKind.OCTAL: "yaml-octal",
    HazardKind.NUMBER_LOSES_TEXT: "yaml-number-text",
    HazardKind.YAML11_VALUE_TAG: "yaml-interop",
    HazardKind.YAML11_MERGE_KEY: "yaml-interop",
    HazardKind.YAML11_NUMBER: "yaml-interop",
    HazardKind.NOT_FINITE: "yaml-interop",
    HazardKind.BEYOND_SAFE_INTEGER: "yaml-interop",
    HazardKind.FOLDED_TRAILING_NEWLINE: "folded-description",
}


def _written(value: JSONValue) -> str:
    """A scalar as YAML 1.2 would write it (for suggestions)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _hazard_finding(hazard: Hazard, file: str, skill: str | None) -> Finding:
    rule, path, text = HAZARD_RULES[hazard.kind], hazard.path, hazard.text
    message = f"{path}: {hazard.message}" if path else hazard.message
    if hazard.kind is HazardKind.FOLDED_TRAILING_NEWLINE:
        return _finding(
            rule, file, hazard.line, message, "write 'description: >-' (folded, no final line break)", skill
        )
    head, tail = quote_advice(hazard)
    leaf = path.rsplit(".", 1)[-1] if path else "key"
    if hazard.is_key:
        example = f'"{text}": …'
    elif path.endswith("]"):
        example = f'- "{text}"'
    else:
        example = f'{leaf}: "{text}"'
    suggestion = f"quote it{tail}, e.g. {example}" if text else f"quote it{tail}"
    return _finding(rule, file, hazard.line, f"{path}: {head}" if path else head, suggestion, skill)


@dataclass(frozen=True)
class SkillMdCheck:
    """What `check_skill_md` found, plus what later checks need: the frontmatter when it parsed, and
    the Markdown body (with its first line in the file) when there is a frontmatter block."""

    findings: list[Finding]
    frontmatter: dict[str, JSONValue] | None = None
    body: str | None = None
    body_start_line: int = 0


def check_skill_md(data: bytes, *, file: str, expected_name: str | None, skill: str | None = None) -> SkillMdCheck:
    """Check one SKILL.md's bytes. `expected_name` is the skill's folder (the final URI segment)."""
    out: list[Finding] = []

    def add(rule: str, line: int | None, message: str, suggestion: str) -> None:
        out.append(_finding(rule, file, line, message, suggestion, skill))

    if data.startswith(b"\xef\xbb\xbf"):
        add(
            "bom",
            1,
            "SKILL.md starts with a UTF-8 byte order mark; the Agent Skills validator and Codex then see "
            "no frontmatter",
            "save the file as UTF-8 without a BOM",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        add(
            "not-utf8",
            line,
            f"SKILL.md is not valid UTF-8 (byte offset {exc.start}: {exc.reason})",
            "re-save the file as UTF-8",
        )
        return SkillMdCheck(out)

    line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if line_count > MAX_SKILL_MD_LINES:
        add(
            "skill-md-too-long",
            MAX_SKILL_MD_LINES + 1,
            f"SKILL.md has {line_count} lines; Agent Skills recommends under {MAX_SKILL_MD_LINES}",
            "move detail into files under references/ and link to them from SKILL.md",
        )

    try:
        frontmatter_text, body, fm_line, body_line = split_skill_md(text)
    except NotASkill as exc:
        if exc.kind == "unclosed":
            add(
                "unclosed-frontmatter",
                1,
                "the frontmatter opened with '---' on line 1 is never closed",
                "end the frontmatter with a line that is exactly '---'",
            )
        else:
            stripped = text.lstrip("\ufeff")
            lead = stripped.lstrip(" \t\r\n")
            hint = (
                "remove what comes before the opening '---': it must be the very first line"
                if lead.startswith("---")
                else "start the file with '---', 'name: <folder name>', 'description: <what and when>', '---'"
            )
            add("no-frontmatter", 1, "SKILL.md does not start with a YAML frontmatter block ('---' on line 1)", hint)
        return SkillMdCheck(out)

    for index, fm_text_line in enumerate(frontmatter_text.splitlines()):
        if "---" in fm_text_line:
            add(
                "dashes-in-frontmatter",
                fm_line + index,
                "'---' inside the frontmatter: the Agent Skills validator (skills-ref) ends the frontmatter there",
                "quote the value or reword it without '---'",
            )
    closing = text.removeprefix("\ufeff").split("\n")[body_line - 2]
    if closing.rstrip().startswith("..."):
        add(
            "closing-dots",
            body_line - 1,
            "the frontmatter is closed with '...'; the Agent Skills validator (skills-ref) needs '---'",
            "close the frontmatter with '---'",
        )

    try:
        frontmatter = parse_frontmatter(frontmatter_text, first_line=fm_line)
    except FrontmatterError as exc:
        line = exc.line if exc.line is not None else fm_line
        message = str(exc).removeprefix(f"line {exc.line}: ")
        if exc.kind == "duplicate-key":
            add("duplicate-key", line, message, "keep one of the two; YAML parsers disagree on which one wins")
        elif exc.kind == "not-a-mapping":
            add(
                "frontmatter-not-mapping",
                line,
                message,
                "write the frontmatter as 'key: value' lines with at least name and description",
            )
        else:
            add(
                "yaml-syntax",
                line,
                message,
                "fix the YAML on that line; quote values containing ': ', ' #', or starting with [ { * & ! | > % @",
            )
        return SkillMdCheck(out, None, body, body_line)

    # The second and last pass over the YAML: the decoder above gives the value (through its flat fast
    # path, for most SKILL.md files, which has no events to keep lines from); this walk of the same
    # corrected event stream gives both the hazards and the line of each key.
    try:
        scan = scan_frontmatter(frontmatter_text, first_line=fm_line)
    except FrontmatterError:  # pragma: no cover - the text parsed above
        scan = FrontmatterScan([], {})
    lines, hazards = scan.key_lines, scan.hazards

    def at(*path: str) -> int:
        return lines.get(path, lines.get(path[:1], 1))

    # Where the value read differs from the text written (`1.10`), a suggestion must not quote the value read.
    misread = {h.path for h in hazards if h.kind is not HazardKind.FOLDED_TRAILING_NEWLINE}
    out.extend(_check_fields(frontmatter, expected_name, at, file, skill, misread))
    for hazard in hazards:
        out.append(_hazard_finding(hazard, file, skill))
    out.sort(key=lambda f: (f.line or 0, f.rule))
    return SkillMdCheck(out, frontmatter, body, body_line)


#: The lint rule id of each field rule of `core.fields` (the rule, not the message, decides the finding).
FIELD_RULES: dict[FieldRule, str] = {
    FieldRule.NAME_MISSING: "missing-name",
    FieldRule.NAME_NOT_STRING: "name-not-string",
    FieldRule.NAME_INVALID: "invalid-name",
    FieldRule.NAME_NOT_ASCII: "unicode-name",
    FieldRule.NAME_MISMATCH: "name-mismatch",
    FieldRule.DESCRIPTION_MISSING: "missing-description",
    FieldRule.DESCRIPTION_NOT_STRING: "description-not-string",
    FieldRule.DESCRIPTION_EMPTY: "empty-description",
    FieldRule.DESCRIPTION_TOO_LONG: "description-too-long",
    FieldRule.COMPATIBILITY_NOT_STRING: "compatibility-not-string",
    FieldRule.COMPATIBILITY_TOO_LONG: "compatibility-too-long",
    FieldRule.COMPATIBILITY_EMPTY: "compatibility-empty",
    FieldRule.LICENSE_NOT_STRING: "license-not-string",
    FieldRule.ALLOWED_TOOLS_NOT_STRING: "allowed-tools-not-string",
    FieldRule.METADATA_NOT_MAPPING: "metadata-not-mapping",
    FieldRule.METADATA_NOT_STRING: "metadata-not-string",
    FieldRule.METADATA_RESERVED_KEY: "reserved-metadata-key",
    FieldRule.UNKNOWN_KEY: "unknown-key",
}


def _field_suggestion(problem: Problem, fm: dict[str, JSONValue], expected_name: str | None, misread: bool) -> str:
    """How to fix one field problem (lint's own advice; what is wrong is `problem.message`)."""
    rule = problem.rule
    name = fm.get("name")
    # Every name a suggestion offers passes the name rule itself: never "rename the folder to" a name this
    # same report calls invalid, nor "set name:" to a folder name that is not a valid name.
    folder_valid = is_publishable_name(expected_name)
    folder_name = expected_name if folder_valid else suggest_name(expected_name or "")
    rename = "" if folder_valid else f" and rename the folder to {folder_name!r}"
    if rule is FieldRule.NAME_MISSING:
        return f"add 'name: {folder_name}'{rename}"
    if rule is FieldRule.NAME_NOT_STRING:
        return f"write the folder's name: name: {folder_name}{rename}"
    if rule in (FieldRule.NAME_INVALID, FieldRule.NAME_NOT_ASCII):
        rule_text = "1-64 characters from a-z, 0-9 and '-'" if rule is FieldRule.NAME_INVALID else "an ASCII name"
        if folder_valid:
            return f"use {rule_text}, such as the folder's name: 'name: {expected_name}'"
        candidate = suggest_name(str(name))
        return f"use {rule_text}, e.g. 'name: {candidate}', and rename the folder to {candidate!r}"
    if rule is FieldRule.NAME_MISMATCH:
        options = [f"set 'name: {expected_name}'"] if folder_valid else []
        if is_publishable_name(name):
            options.append(f"rename the folder to {name!r}")
        if not options:  # neither is a valid name: one that is, for both
            candidate = suggest_name(str(name))
            return f"set 'name: {candidate}' and rename the folder to {candidate!r}"
        return " or ".join(options)
    if rule is FieldRule.DESCRIPTION_MISSING:
        return "add 'description:' saying what the skill does and when to use it"
    if rule is FieldRule.DESCRIPTION_NOT_STRING:
        return "write the description as text (quote it if it looks like a number or a boolean)"
    if rule is FieldRule.DESCRIPTION_EMPTY:
        return "say what the skill does and when to use it"
    if rule in (FieldRule.DESCRIPTION_TOO_LONG, FieldRule.COMPATIBILITY_TOO_LONG):
        return "shorten it and move detail into the SKILL.md body"
    if rule is FieldRule.COMPATIBILITY_NOT_STRING:
        return "describe the environment in one string, e.g. 'Needs Python 3.11 and network access'"
    if rule is FieldRule.COMPATIBILITY_EMPTY:
        return "remove the key or describe the environment the skill needs"
    if rule is FieldRule.LICENSE_NOT_STRING:
        return "write a license name or bundled file, e.g. 'license: Apache-2.0'"
    if rule is FieldRule.ALLOWED_TOOLS_NOT_STRING:
        value = fm.get("allowed-tools")
        example = " ".join(str(v) for v in value) if isinstance(value, list) else "Bash(git:*) Read"
        return f"write it as one string, e.g. allowed-tools: {example!r}"
    if rule is FieldRule.METADATA_NOT_MAPPING:
        return 'write metadata as a block of `key: "value"` lines'
    if rule is FieldRule.METADATA_NOT_STRING:
        metadata = fm.get("metadata")
        key = str(problem.path[-1])
        value = metadata.get(key) if isinstance(metadata, dict) else None
        if isinstance(value, (list, dict)):
            return "write it as one string (metadata values are strings)"
        if misread:
            return "quote it as written (metadata values are strings)"  # `1.10` was read as 1.1
        return f'quote it: {key}: "{_written(value)}"'
    if rule is FieldRule.METADATA_RESERVED_KEY:
        return "use a key of your own (e.g. 'acme.example/...'); hosts ignore unknown reserved keys"
    return (
        f"keep it if your hosts use it, or move it under 'metadata:' as a string ({', '.join(AGENT_SKILLS_FIELDS)} "
        "are the Agent Skills fields)"
    )


def _check_fields(
    fm: dict[str, JSONValue],
    expected_name: str | None,
    at: Callable[..., int],
    file: str,
    skill: str | None,
    misread: set[str],
) -> Iterable[Finding]:
    for problem in field_problems(fm, expected_name):
        missing = problem.rule in (FieldRule.NAME_MISSING, FieldRule.DESCRIPTION_MISSING)
        line = 1 if missing else at(*(str(part) for part in problem.path))
        suggestion = _field_suggestion(problem, fm, expected_name, problem.dotted in misread)
        yield _finding(FIELD_RULES[problem.rule], file, line, problem.message, suggestion, skill)


# --------------------------------------------------------------------------------------------------
# Folders
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LintedSkill:
    folder: str  # display path of the skill folder
    skill_md: str
    uri: str | None  # the SKILL.md URI it would be served at (None when no URI can be formed)


@dataclass
class LintReport:
    path: str
    skills: list[LintedSkill] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


#: The lint rule and the advice for each reason the walk leaves a path out (the reason is data, the
#: sentence only what people read).
IGNORED_RULES: dict[Ignored, tuple[str, str]] = {
    Ignored.SYMLINK_OUTSIDE: ("symlink-outside", "copy the file into the skill folder"),
    Ignored.SYMLINK_TO_IGNORED: ("symlink-to-ignored", "link to a file that is served, or drop it"),
    Ignored.DANGLING_SYMLINK: ("dangling-symlink", "fix or remove the symlink"),
    Ignored.SYMLINKED_DIRECTORY: ("symlinked-directory", "copy the folder into the skill instead of linking it"),
    Ignored.SPECIAL_FILE: ("special-file", "remove it from the skill folder"),
    Ignored.CANNOT_STAT: ("unreadable", "fix its permissions"),
    Ignored.UNREADABLE_DIRECTORY: ("unreadable", "fix its permissions"),
    Ignored.UNUSABLE_SKILLIGNORE: (
        "unusable-skillignore",
        "make it a readable UTF-8 regular file inside the folder with valid gitignore patterns",
    ),
}


def _ignored_finding(shown: str, why: str, kind: Ignored, skill: str | None) -> Finding:
    rule, suggestion = IGNORED_RULES[kind]
    return _finding(rule, shown, None, f"not served: {why}", suggestion, skill)


def _read_regular(path: str, limit: int) -> bytes:
    """Read a regular file without ever blocking on a FIFO or following a symlink swapped in since the walk."""
    return read_regular(path, limit)


def _exists_exactly(base: str, rel: RelPath) -> bool:
    """Whether `rel` exists below `base` with exactly this spelling (case-insensitive disks lie)."""
    current = base
    for part in rel:
        try:
            if part not in os.listdir(current):
                return False
        except OSError:
            return False
        current = os.path.join(current, part)
    return True


def _rel_of(shown: str, display_root: str, real_root: str) -> RelPath | None:
    for base in (display_root, real_root):
        rel = os.path.relpath(os.path.normpath(shown), base)
        if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            return () if rel == "." else tuple(rel.split(os.sep))
    return None


def _stale_signatures(spec: str, root: SkillRoot, report: LintReport) -> list[Finding]:
    """`signature-stale` for each skill `ROOT/.skillwire-signatures.json` signed whose files changed since.

    Only a folder `skillwire sign` wrote that file into pays for it: the files are hashed with `serve`'s own
    scan, so "stale" means exactly what `serve` would decide (it then sends the skill unsigned)."""
    signatures_path = root.path / SIGNATURES_FILE
    if not signatures_path.is_file():
        return []
    shown_file = printable(os.path.normpath(str(signatures_path)))
    try:
        book = SignatureBook.load([signatures_path])
    except SigningError as exc:
        return [_finding("unreadable", shown_file, None, f"{exc}", "sign the folder again: skillwire sign", None)]
    scanned = scan_root(root, DigestCache())
    by_uri = {linted.uri: linted for linted in report.skills if linted.uri is not None}
    found: list[Finding] = []
    for skill in scanned.skills:
        entry = skill.entry
        linted = by_uri.get(entry.uri)
        if linted is None or entry.uri not in book.records or book.signature_for(entry) is not None:
            continue
        difference = book.first_difference(entry)
        where, what = linted.skill_md, "its files changed (this signatures file does not record which)"
        if difference is not None:
            path, how = difference
            what = f"{path} {'was added' if how == 'added' else how} since signing"
            if how != "removed":
                where = printable(os.path.join(linted.folder, *path.split("/")))
        found.append(
            _finding(
                "signature-stale",
                where,
                None,
                f"{printable(entry.uri)} no longer matches its publisher signature: {printable(what)}; "
                "skillwire serve sends it unsigned",
                f"re-sign it: skillwire sign {printable(spec)} --key KEY",
                linted.folder,
            )
        )
    return found


def lint_path(spec: str, *, folder_name: str | None = None, tree: GitTreeSource | None = None) -> LintReport:
    """Lint every skill under `spec` (a folder, a folder of skills at any depth, or a SKILL.md);
    `PATH=PREFIX` and `PATH=SCHEME://PREFIX` work as in `skillwire serve`. A skill at the top is linted
    as `folder_name` when given (a git SUBDIR's name). With `tree`, the files are that git tree's, read
    from git's objects (`catalog/git_tree.py`; `spec` then only gives the prefix): nothing is checked out."""
    try:
        root = SkillRoot.parse(spec)
    except InvalidSkillURI as exc:
        raise LintPathError(f"{spec}: {exc}") from None
    if tree is not None:
        display_root = real_root = tree.base
        walked = tree.walk()
        read_file: Callable[[str, int], bytes] = tree.read_real
        listed = {rel for rel, _, _ in walked.files}

        def shown(rel: RelPath) -> str:
            return tree.shown(rel)

        def rel_of(reported: str) -> RelPath | None:
            head = tree.base + "/"
            return tuple(reported[len(head) :].split("/")) if reported.startswith(head) else None

        def exists_exactly(rel: RelPath) -> bool:
            return rel in listed

    else:
        path = root.path
        if path.is_file() and path.name == SKILL_MD:
            path = path.parent
        if not path.exists():
            raise LintPathError(f"{path}: no such file or folder")
        if not path.is_dir():
            raise LintPathError(f"{path}: not a folder; give a skill folder, a folder of skills, or a SKILL.md")
        display_root = os.path.normpath(str(path))
        real_root = os.path.realpath(path)
        walked = walk_root(SkillRoot(Path(display_root)))
        read_file = _read_regular

        def shown(rel: RelPath) -> str:
            return os.path.normpath(os.path.join(display_root, *rel))

        def rel_of(reported: str) -> RelPath | None:
            return _rel_of(reported, display_root, real_root)

        def exists_exactly(rel: RelPath) -> bool:
            return _exists_exactly(real_root, rel)

    report = LintReport(display_root)

    prefix = root.prefix
    if () in walked.skill_dirs and not prefix:
        prefix = (folder := folder_name or os.path.basename(real_root.rstrip("/")),)
        report.findings.append(
            _finding(
                "skill-at-root",
                shown((SKILL_MD,)),
                None,
                f"{display_root} is itself a skill, linted as {folder!r}; `skillwire serve {display_root}` would "
                "skip it (a SKILL.md at the top of a served folder has no URI path)",
                f"serve its parent folder, or give a prefix: skillwire serve {display_root}={folder}",
                printable(display_root),
            )
        )

    skill_dirs = walked.skill_dirs
    skill_set = set(skill_dirs)

    def owner(rel: RelPath) -> RelPath | None:
        """The deepest skill folder holding `rel`."""
        for cut in range(len(rel), -1, -1):
            if rel[:cut] in skill_set:
                return rel[:cut]
        return None

    files = walked.files
    # Names that cannot be part of a URI: reported once, with the deepest skill holding them.
    bad_names: dict[RelPath, list[tuple[RelPath, str]]] = {}
    for rel, _real, _st in files:
        for part in rel:
            try:
                validate_segment(part)
            except InvalidSkillURI as exc:
                where = owner(rel)
                if where is not None:
                    bad_names.setdefault(where, []).append((rel, exc.reason))
                break
    ignored_by_owner: dict[RelPath | None, list[tuple[str, str, Ignored]]] = {}
    ignored_reason: dict[RelPath, str] = {}
    for reported, why in walked.ignored:
        rel_or_none = rel_of(reported)
        where = owner(rel_or_none) if rel_or_none is not None else None
        shown_path = shown(rel_or_none) if rel_or_none is not None else reported
        ignored_by_owner.setdefault(where, []).append((shown_path, why, walked.kinds[reported]))
        if rel_or_none is not None:
            ignored_reason[rel_or_none] = why

    names: dict[str, list[LintedSkill]] = {}
    for skill_dir in skill_dirs:
        folder = shown(skill_dir)
        skill_key = printable(folder)
        skill_md_rel = (*skill_dir, SKILL_MD)
        skill_md_file = shown(skill_md_rel)
        segments = prefix + skill_dir
        try:
            uri: str | None = format_uri(root.scheme, (*segments, SKILL_MD))
        except InvalidSkillURI:
            uri = None
        linted = LintedSkill(skill_key, printable(skill_md_file), uri)
        report.skills.append(linted)

        def add(rule: str, file: str, line: int | None, message: str, suggestion: str, key: str = skill_key) -> None:
            report.findings.append(_finding(rule, file, line, message, suggestion, key))

        n = len(skill_dir)
        members = [(rel, real, size) for rel, real, size in files if rel[:n] == skill_dir]
        inner = [d for d in skill_dirs if len(d) > n and d[:n] == skill_dir]
        count, total = len(members), sum(size for _, _, size in members)
        nested_note = f", including {len(inner)} nested skill(s)" if inner else ""
        if over_limit(count, 0) is not None:  # each limit on its own: both may be broken
            add(
                "too-many-files",
                skill_md_file,
                None,
                f"the skill would serve {count} files{nested_note}; SEP-2640 allows {MAX_FILES_PER_SKILL} per skill "
                "(SKILL.md included), so skillwire serve skips it",
                "list what need not be published in a .skillignore, or split the skill",
            )
        if over_limit(0, total) is not None:
            largest = sorted(members, key=lambda m: -m[2])[:3]
            shown_largest = ", ".join(f"{'/'.join(rel[n:])} ({size:,} bytes)" for rel, _, size in largest)
            add(
                "too-large",
                skill_md_file,
                None,
                f"the skill would serve {total:,} bytes{nested_note}; SEP-2640 allows {MAX_BYTES_PER_SKILL:,} "
                f"(16 MiB) per skill, so skillwire serve skips it; largest: {shown_largest}",
                "list large files in a .skillignore, or publish them elsewhere and link to them",
            )
        for rel, reason in bad_names.get(skill_dir, []):
            add(
                "unpublishable-name",
                shown(rel),
                None,
                f"{'/'.join(rel[n:])!r} cannot be published in a URI ({reason}); skillwire serve skips the skill "
                "and every skill enclosing it",
                "rename it: no control characters, no '\\', valid UTF-8",
            )
        for shown_path, why, kind in ignored_by_owner.get(skill_dir, []):
            report.findings.append(_ignored_finding(shown_path, why, kind, skill_key))

        outer = next((skill_dir[:cut] for cut in range(n - 1, -1, -1) if skill_dir[:cut] in skill_set), None)
        if outer is not None:
            add(
                "nested-skill",
                skill_md_file,
                None,
                f"nested inside the skill at {shown(outer)}: published as its own skill"
                + (f" ({uri})" if uri else "")
                + f", and its {count} file(s) are also listed in the enclosing skill and count toward its limits",
                "nothing to do if intended; move it beside the enclosing skill to keep the two apart",
            )

        skill_md = next((real, size) for rel, real, size in members if rel == skill_md_rel)
        if skill_md[1] > MAX_SKILL_MD_BYTES:
            add(
                "skill-md-too-large",
                skill_md_file,
                None,
                f"SKILL.md is {skill_md[1]:,} bytes; skillwire refuses to parse a SKILL.md over "
                f"{MAX_SKILL_MD_BYTES:,} bytes",
                "keep SKILL.md short and move detail into references/",
            )
            continue
        try:
            data = read_file(skill_md[0], MAX_SKILL_MD_BYTES)
        except (OSError, GitError) as exc:
            add(
                "unreadable",
                skill_md_file,
                None,
                f"cannot read SKILL.md: {getattr(exc, 'strerror', None) or exc}",
                "fix its permissions",
            )
            continue
        checked = check_skill_md(data, file=skill_md_file, expected_name=segments[-1], skill=skill_key)
        report.findings.extend(checked.findings)
        name = (checked.frontmatter or {}).get("name")
        if isinstance(name, str):
            names.setdefault(name, []).append(linted)
        if checked.body is None:
            continue
        served = {rel[n:] for rel, _, _ in members}
        served_dirs = {rel[n:cut] for rel, _, _ in members for cut in range(n + 1, len(rel))}
        lowered = {"/".join(r).lower(): "/".join(r) for r in served}

        def classify(
            target: RelPath,
            skill_dir: RelPath = skill_dir,
            served: set[RelPath] = served,
            served_dirs: set[RelPath] = served_dirs,
            lowered: dict[str, str] = lowered,
        ) -> Target:
            if target in served:
                return "file"
            if target in served_dirs:
                return "dir"
            full = (*skill_dir, *target)
            if exists_exactly(full):
                return NotServed(ignored_reason.get(full) or "ignored by name or by a .skillignore")
            match = lowered.get("/".join(target).lower())
            return CaseMismatch(match) if match else MISSING

        report.findings.extend(
            check_links(checked.body, checked.body_start_line, classify, file=skill_md_file, skill=skill_key)
        )

    for name, holders in names.items():
        if len(holders) > 1:
            for holder in holders:
                others = ", ".join(h.folder for h in holders if h is not holder)
                report.findings.append(
                    _finding(
                        "duplicate-name",
                        holder.skill_md,
                        None,
                        f"name {name!r} is also used by {others}; names SHOULD be unique in a listing",
                        "rename one of them, so hosts need not tell them apart by path",
                        holder.folder,
                    )
                )

    if tree is None:  # a git tree's committed signatures are checked by `serve` itself
        report.findings.extend(_stale_signatures(spec, SkillRoot(Path(display_root), root.prefix, root.scheme), report))

    # Outside every skill: only what hides skills (or would have been one) matters.
    for shown_path, why, kind in ignored_by_owner.get(None, []):
        if kind is Ignored.UNUSABLE_SKILLIGNORE or os.path.basename(shown_path) == SKILL_MD:
            report.findings.append(_ignored_finding(shown_path, why, kind, None))
    for rel, _real, _st in files:
        if rel[-1] != SKILL_MD and rel[-1].lower() == SKILL_MD.lower() and rel[:-1] not in skill_set:
            report.findings.append(
                _finding(
                    "lowercase-skill-md",
                    shown(rel),
                    None,
                    f"{rel[-1]!r} is not named exactly {SKILL_MD}, so this folder is not a skill "
                    "(the Agent Skills validator accepts skill.md; SEP-2640 servers need SKILL.md)",
                    f"rename it to {SKILL_MD}",
                    None,
                )
            )
    if not skill_dirs:
        report.findings.append(
            _finding(
                "no-skills",
                display_root,
                None,
                f"no {SKILL_MD} found under {display_root} (at any depth)",
                f"a skill is a folder holding a file named exactly {SKILL_MD}",
                None,
            )
        )
    return report

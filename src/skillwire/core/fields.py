"""Every rule about what a skill entry and its frontmatter may hold lives here, as one table.

The Agent Skills fields (`name`, `description`, `compatibility`, `license`, `metadata`,
`allowed-tools`), "name equals the final segment of the skill path", the SEP-2640 entry shape
(`uri`, `frontmatter`, `resources` as an array or `"dynamic"`, files inside the skill, no duplicates,
digests, sizes, the skill's own SKILL.md listed) and the per-skill limits. Each broken rule is a
`Problem(rule, path, message)`: `rule` is a `Rule` member (data, never recovered from the message),
`path` locates the value (`("frontmatter", "metadata", "k")`, `("resources", 3, "digest")`), and
`message` is the one sentence every consumer shows.

Who asks, and what they do with the answer (`RULES` says, per rule, how bad it is):

* the server before it publishes a skill (`publish_problem`: the first problem that makes a skill
  unpublishable; catalog/filesystem.py and catalog/inline.py skip the skill with that reason);
* a host before it accepts an entry (`SkillEntry.from_wire` raises the first `refused` problem);
* `skillwire lint` (checks/lint.py) and `skillwire check` (checks/audit/), which report every
  problem as a finding under their own rule ids.

A host and a server apply the same bounds, with two documented differences: a host accepts a
Unicode name that Agent Skills allows and the SEP-2640 conformance regex does not (one exotic
entry must not cost a listing; see core/names.py), and the limits are not a reason to refuse an
entry at listing time, only to decline loading the skill (`LimitExceeded`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, cast

from skillwire.core.errors import InvalidSkillURI
from skillwire.core.manifest import DIGEST_RE, limit_problem, over_limit
from skillwire.core.names import MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, name_problem
from skillwire.core.uri import SkillPath, canonical_uri

RESERVED_METADATA_PREFIX = "io.modelcontextprotocol/"
AGENT_SKILLS_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
DYNAMIC: Literal["dynamic"] = "dynamic"


class Rule(StrEnum):
    """One rule of Agent Skills or SEP-2640 about an entry or its frontmatter."""

    # frontmatter fields (Agent Skills)
    NAME_MISSING = "name-missing"
    NAME_NOT_STRING = "name-not-string"
    NAME_INVALID = "name-invalid"
    NAME_NOT_ASCII = "name-not-ascii"
    NAME_MISMATCH = "name-mismatch"
    DESCRIPTION_MISSING = "description-missing"
    DESCRIPTION_NOT_STRING = "description-not-string"
    DESCRIPTION_EMPTY = "description-empty"
    DESCRIPTION_TOO_LONG = "description-too-long"
    COMPATIBILITY_NOT_STRING = "compatibility-not-string"
    COMPATIBILITY_TOO_LONG = "compatibility-too-long"
    COMPATIBILITY_EMPTY = "compatibility-empty"
    LICENSE_NOT_STRING = "license-not-string"
    ALLOWED_TOOLS_NOT_STRING = "allowed-tools-not-string"
    METADATA_NOT_MAPPING = "metadata-not-mapping"
    METADATA_NOT_STRING = "metadata-not-string"
    METADATA_RESERVED_KEY = "metadata-reserved-key"
    UNKNOWN_KEY = "unknown-key"
    # the entry (SEP-2640)
    ENTRY_NOT_OBJECT = "entry-not-object"
    URI_MISSING = "uri-missing"
    URI_INVALID = "uri-invalid"
    FRONTMATTER_NOT_OBJECT = "frontmatter-not-object"
    RESOURCES_MISSING = "resources-missing"
    RESOURCES_INVALID = "resources-invalid"
    RESOURCE_NOT_OBJECT = "resource-not-object"
    RESOURCE_OUTSIDE = "resource-outside"
    RESOURCE_DUPLICATE = "resource-duplicate"
    DIGEST_INVALID = "digest-invalid"
    SIZE_INVALID = "size-invalid"
    SKILL_MD_MISSING = "skill-md-missing"
    # limits (SEP-2640)
    TOO_MANY_FILES = "too-many-files"
    TOO_LARGE = "too-large"


#: How bad a broken rule is:
#: - "refused": a served skill MUST NOT have it: servers do not publish it, hosts refuse the entry,
#:   lint reports an error, check a failure;
#: - "unpublishable": servers do not publish it (lint: error), hosts accept it (check: warning);
#: - "limit": servers do not publish it and hosts decline to load it (lint: error; check: warning,
#:   as the conformance suite has it, since a host MAY still load it);
#: - "advice": published and accepted; lint and check warn.
Weight = Literal["refused", "unpublishable", "limit", "advice"]

RULES: dict[Rule, Weight] = {
    Rule.NAME_MISSING: "refused",
    Rule.NAME_NOT_STRING: "refused",
    Rule.NAME_INVALID: "refused",
    Rule.NAME_NOT_ASCII: "unpublishable",
    Rule.NAME_MISMATCH: "refused",
    Rule.DESCRIPTION_MISSING: "refused",
    Rule.DESCRIPTION_NOT_STRING: "refused",
    Rule.DESCRIPTION_EMPTY: "refused",
    Rule.DESCRIPTION_TOO_LONG: "refused",
    Rule.COMPATIBILITY_NOT_STRING: "refused",
    Rule.COMPATIBILITY_TOO_LONG: "refused",
    Rule.COMPATIBILITY_EMPTY: "advice",
    Rule.LICENSE_NOT_STRING: "advice",
    Rule.ALLOWED_TOOLS_NOT_STRING: "advice",
    Rule.METADATA_NOT_MAPPING: "refused",
    Rule.METADATA_NOT_STRING: "refused",
    Rule.METADATA_RESERVED_KEY: "advice",
    Rule.UNKNOWN_KEY: "advice",
    Rule.ENTRY_NOT_OBJECT: "refused",
    Rule.URI_MISSING: "refused",
    Rule.URI_INVALID: "refused",
    Rule.FRONTMATTER_NOT_OBJECT: "refused",
    Rule.RESOURCES_MISSING: "refused",
    Rule.RESOURCES_INVALID: "refused",
    Rule.RESOURCE_NOT_OBJECT: "refused",
    Rule.RESOURCE_OUTSIDE: "refused",
    Rule.RESOURCE_DUPLICATE: "refused",
    Rule.DIGEST_INVALID: "refused",
    Rule.SIZE_INVALID: "refused",
    Rule.SKILL_MD_MISSING: "refused",
    Rule.TOO_MANY_FILES: "limit",
    Rule.TOO_LARGE: "limit",
}

PathPart = str | int


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule: which (`rule`), where (`path`, from the entry or the frontmatter) and why."""

    rule: Rule
    path: tuple[PathPart, ...]
    message: str

    @property
    def weight(self) -> Weight:
        return RULES[self.rule]

    @property
    def dotted(self) -> str:
        """`frontmatter.metadata.k`, `resources[3].digest`: the path as people write it."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out


def describe(value: object) -> str:
    """A JSON value's kind, for messages: "the number 1.1", "a list", "empty (null)"."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}" if not isinstance(value, float) or math.isfinite(value) else "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return "a string" if isinstance(value, str) else type(value).__name__


# -- the frontmatter ----------------------------------------------------------------------------------------


def field_problems(
    frontmatter: Mapping[str, object], folder: str | None, *, prefix: tuple[PathPart, ...] = ()
) -> Iterator[Problem]:
    """Every Agent Skills field rule `frontmatter` breaks, in field order.

    `folder` is the final segment of the skill's path (None when it is not known, as for a lone
    SKILL.md); `prefix` is put before every path (`("frontmatter",)` inside an entry).
    """

    def at(*path: PathPart) -> tuple[PathPart, ...]:
        return (*prefix, *path)

    if "name" not in frontmatter:
        yield Problem(Rule.NAME_MISSING, at("name"), "frontmatter has no 'name'")
    else:
        name = frontmatter["name"]
        if not isinstance(name, str):
            yield Problem(Rule.NAME_NOT_STRING, at("name"), f"frontmatter name must be a string, not {describe(name)}")
        else:
            ascii_reason = name_problem(name)
            if name_problem(name, allow_unicode=True) is not None:
                yield Problem(Rule.NAME_INVALID, at("name"), f"frontmatter name {name!r} {ascii_reason}")
            elif ascii_reason is not None:
                yield Problem(
                    Rule.NAME_NOT_ASCII,
                    at("name"),
                    f"frontmatter name {name!r} {ascii_reason} (Agent Skills allows it; the SEP-2640 conformance "
                    "regex does not, so servers do not publish it)",
                )
            if folder is not None and name != folder:
                yield Problem(
                    Rule.NAME_MISMATCH,
                    at("name"),
                    f"frontmatter name {name!r} does not match its folder {folder!r} (the final segment of its URI)",
                )

    if "description" not in frontmatter:
        yield Problem(Rule.DESCRIPTION_MISSING, at("description"), "frontmatter has no 'description'")
    else:
        description = frontmatter["description"]
        if not isinstance(description, str):
            yield Problem(
                Rule.DESCRIPTION_NOT_STRING,
                at("description"),
                f"description must be a string, not {describe(description)}",
            )
        elif not description.strip():
            yield Problem(Rule.DESCRIPTION_EMPTY, at("description"), "description must not be empty")
        elif len(description) > MAX_DESCRIPTION_LENGTH:
            yield Problem(
                Rule.DESCRIPTION_TOO_LONG,
                at("description"),
                f"description is {len(description)} characters long; the limit is {MAX_DESCRIPTION_LENGTH}",
            )

    if "compatibility" in frontmatter:
        compatibility = frontmatter["compatibility"]
        if not isinstance(compatibility, str):
            yield Problem(
                Rule.COMPATIBILITY_NOT_STRING,
                at("compatibility"),
                f"compatibility must be a string, not {describe(compatibility)}",
            )
        elif len(compatibility) > MAX_COMPATIBILITY_LENGTH:
            yield Problem(
                Rule.COMPATIBILITY_TOO_LONG,
                at("compatibility"),
                f"compatibility is {len(compatibility)} characters long; the limit is {MAX_COMPATIBILITY_LENGTH}",
            )
        elif not compatibility.strip():
            yield Problem(
                Rule.COMPATIBILITY_EMPTY,
                at("compatibility"),
                "compatibility is empty; Agent Skills wants 1-500 characters when it is present",
            )

    if "license" in frontmatter and not isinstance(frontmatter["license"], str):
        yield Problem(
            Rule.LICENSE_NOT_STRING, at("license"), f"license is {describe(frontmatter['license'])}, not a string"
        )
    if "allowed-tools" in frontmatter and not isinstance(frontmatter["allowed-tools"], str):
        yield Problem(
            Rule.ALLOWED_TOOLS_NOT_STRING,
            at("allowed-tools"),
            f"allowed-tools is {describe(frontmatter['allowed-tools'])}; Agent Skills defines it as one "
            "space-separated string",
        )

    if "metadata" in frontmatter:
        # Agent Skills: a map from strings to strings. SEP-2640 requires a served skill to conform, and
        # the TypeScript SDK's host refuses the whole listing when one entry has a list here.
        metadata = frontmatter["metadata"]
        if not isinstance(metadata, Mapping):
            yield Problem(
                Rule.METADATA_NOT_MAPPING,
                at("metadata"),
                f"metadata must be a mapping of strings, not {describe(metadata)}",
            )
        else:
            for key, value in cast(Mapping[str, object], metadata).items():
                if not isinstance(value, str):
                    yield Problem(
                        Rule.METADATA_NOT_STRING,
                        at("metadata", key),
                        f"metadata.{key} must be a string (Agent Skills metadata values are strings), not "
                        f"{describe(value)}",
                    )
                if isinstance(key, str) and key.startswith(RESERVED_METADATA_PREFIX):
                    yield Problem(
                        Rule.METADATA_RESERVED_KEY,
                        at("metadata", key),
                        f"metadata key {key!r} uses the prefix {RESERVED_METADATA_PREFIX!r}, reserved by SEP-2640",
                    )

    for key in frontmatter:
        if key not in AGENT_SKILLS_FIELDS:
            yield Problem(
                Rule.UNKNOWN_KEY,
                at(key),
                f"{key!r} is not an Agent Skills field: SEP-2640 serves it verbatim, but the Agent Skills "
                "validator (skills-ref) rejects unknown keys",
            )


def is_publishable_name(name: object) -> bool:
    """Whether `name` passes the name rule as servers publish it (the ASCII rule): what a suggestion may offer."""
    return isinstance(name, str) and name_problem(name) is None


def publish_problem(frontmatter: Mapping[str, object], folder: str) -> Problem | None:
    """The first rule that keeps a server from publishing a skill with this frontmatter, or None."""
    return next((p for p in field_problems(frontmatter, folder) if p.weight in ("refused", "unpublishable")), None)


# -- the entry ----------------------------------------------------------------------------------------------


def entry_problems(raw: object) -> Iterator[Problem]:
    """Every rule a `skills/list` / `skills/get` entry breaks: its shape, its frontmatter, its limits.

    Checks stop where nothing further can be known (no object, no URI); otherwise every problem is
    reported, so a collect-all consumer (`skillwire check`) and a fail-fast one (`from_wire`) agree.
    """
    if not isinstance(raw, Mapping):
        yield Problem(Rule.ENTRY_NOT_OBJECT, (), f"an entry must be an object, got {type(raw).__name__}")
        return
    entry = cast(Mapping[str, Any], raw)
    uri = entry.get("uri")
    if not isinstance(uri, str) or not uri:
        yield Problem(Rule.URI_MISSING, ("uri",), "entry has no 'uri' string")
        return
    path: SkillPath | None
    try:
        path = SkillPath.from_skill_md_uri(uri)
    except InvalidSkillURI as exc:
        yield Problem(Rule.URI_INVALID, ("uri",), f"entry uri {uri!r}: {exc.reason}")
        path = None
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, Mapping):
        yield Problem(Rule.FRONTMATTER_NOT_OBJECT, ("frontmatter",), "'frontmatter' must be an object")
    else:
        yield from field_problems(frontmatter, path.name if path is not None else None, prefix=("frontmatter",))
    if "resources" not in entry:
        yield Problem(
            Rule.RESOURCES_MISSING, ("resources",), "'resources' is missing (an array or \"dynamic\" is required)"
        )
        return
    resources = entry["resources"]
    if resources == DYNAMIC:
        return
    if not isinstance(resources, list):
        yield Problem(
            Rule.RESOURCES_INVALID,
            ("resources",),
            f"'resources' must be an array or \"dynamic\", got {resources!r:.60}",
        )
        return
    items = cast(list[object], resources)
    yield from _resource_problems(uri, path, items)


def _resource_problems(skill_uri: str, path: SkillPath | None, items: list[object]) -> Iterator[Problem]:
    seen: set[str] = set()  # canonical URIs: `x.md` and `%78.md` are the same file
    total = 0
    for index, item in enumerate(items):
        where = f"resources[{index}]"
        if not isinstance(item, Mapping):
            yield Problem(Rule.RESOURCE_NOT_OBJECT, ("resources", index), f"{where} must be an object")
            continue
        obj = cast(Mapping[str, Any], item)
        file_uri, digest, size = obj.get("uri"), obj.get("digest"), obj.get("size")
        if not isinstance(file_uri, str):
            yield Problem(
                Rule.RESOURCE_NOT_OBJECT,
                ("resources", index, "uri"),
                f"{where}: uri {file_uri!r} is not a file inside {path.root_uri if path else 'the skill'}",
            )
            continue
        if path is not None and path.file_path_of(file_uri) is None:
            yield Problem(
                Rule.RESOURCE_OUTSIDE,
                ("resources", index, "uri"),
                f"{where}: uri {file_uri!r} is not a file inside {path.root_uri}",
            )
            continue
        try:
            canonical = canonical_uri(file_uri)
        except InvalidSkillURI:
            canonical = file_uri
        if canonical in seen:
            yield Problem(Rule.RESOURCE_DUPLICATE, ("resources", index, "uri"), f"{where}: {file_uri} is listed twice")
            continue
        seen.add(canonical)
        if not isinstance(digest, str) or not DIGEST_RE.match(digest):
            yield Problem(
                Rule.DIGEST_INVALID,
                ("resources", index, "digest"),
                f"{where} {file_uri}: digest {digest!r} is not 'sha256:' + 64 lowercase hex characters",
            )
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            yield Problem(
                Rule.SIZE_INVALID,
                ("resources", index, "size"),
                f"{where} {file_uri}: size {size!r} is not a non-negative integer",
            )
        else:
            total += size
    listed_verbatim = any(isinstance(i, Mapping) and cast(Mapping[str, Any], i).get("uri") == skill_uri for i in items)
    if not listed_verbatim:
        yield Problem(Rule.SKILL_MD_MISSING, ("resources",), "'resources' does not list the skill's own SKILL.md")
    kind = over_limit(len(items), total)
    if kind is not None:
        rule = Rule.TOO_MANY_FILES if kind == "files" else Rule.TOO_LARGE
        yield Problem(rule, ("resources",), f"skill {limit_problem(len(items), total)}")


def entry_refusal(raw: object, *, allow_unicode_names: bool = True) -> Problem | None:
    """The first problem that makes a host refuse this entry (see the module docstring), or None."""
    for problem in entry_problems(raw):
        if problem.weight == "refused" or (problem.rule is Rule.NAME_NOT_ASCII and not allow_unicode_names):
            return problem
    return None

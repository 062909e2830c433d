"""The check's rules: every rule id with its severity, section and the protocol version it applies
from (`RULES`), how field problems map to rule ids (`ENTRY_RULES`), and the fixed messages.

The table `skillwire check --list-rules` prints; a finding can only be made for an id listed here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import (
    Request,
)
from mcp_types.jsonrpc import METHOD_NOT_FOUND

from skillwire.checks.findings import Rule, RuleSet, Severity
from skillwire.core.fields import Problem
from skillwire.core.fields import Rule as FieldRule
from skillwire.core.protocol import EXTENSION_ID

SERVER = "server"
ENVELOPE_KEYS = ("config", "specVersion", "stability", "id")
NONEXISTENT = "skillwire-check-nonexistent"

Send = Callable[[Request[Any, Any]], Awaitable[dict[str, Any]]]
Progress = Callable[[int, int], None]


#: The first protocol version whose schema has `resultType` and the `ttlMs`/`cacheScope` cache attributes;
#: a 2025-11-25 (`initialize`) session has neither, so those rules do not apply to it.
MODERN_ERA = "2026-07-28"


def _rule(severity: Severity, section: str, summary: str, since: str | None = None) -> Rule:
    """A check rule, written section first as `skillwire check --list-rules` shows it."""
    return Rule(severity, summary, section, since)


#: Every rule `skillwire check` applies: stable ids, one line each. Failures are MUSTs, warnings SHOULDs.
RULES = RuleSet(
    {
        # capability declaration
        "cap.extension-missing": _rule("failure", "[Cap]", f"the server does not declare {EXTENSION_ID}"),
        "cap.settings-envelope": _rule(
            "warning", "[Cap]", "extension settings wrapped in an envelope instead of inline"
        ),
        "cap.directory-read-invalid": _rule("failure", "[Cap]", "directoryRead is not a boolean"),
        "cap.resources-missing": _rule("failure", "[Cap]", "the resources capability is not declared"),
        "cap.list-not-implemented": _rule("failure", "[Cap]", "skills/list is not implemented"),
        "cap.get-not-implemented": _rule("failure", "[Cap]", "skills/get is not implemented"),
        "cap.directory-read-not-implemented": _rule(
            "failure", "[Cap]", "directoryRead: true but resources/directory/read is not implemented"
        ),
        # skills/list
        "list.error": _rule("failure", "[List]", "a skills/list page failed"),
        "list.result-invalid": _rule("failure", "[List]", "a skills/list result has no skills array"),
        "list.result-type": _rule("failure", "[List]", 'skills/list resultType is not "complete"', MODERN_ERA),
        "list.ttl-invalid": _rule("failure", "[List]", "skills/list ttlMs missing or not an integer >= 0", MODERN_ERA),
        "list.cache-scope-invalid": _rule(
            "failure", "[List]", "skills/list cacheScope missing or not public/private", MODERN_ERA
        ),
        "list.cursor-invalid": _rule("failure", "[List]", "skills/list nextCursor is not a string"),
        "list.cursor-repeated": _rule("failure", "[List]", "skills/list repeats a cursor (a pagination loop)"),
        "list.page-limit": _rule("warning", "[List]", "skills/list did not end within the page limit"),
        "list.entry-not-object": _rule("failure", "[List]", "a skills/list entry is not an object"),
        "list.split-entry": _rule("failure", "[List]", "one skill's entry appears on more than one page"),
        "list.duplicate-entry": _rule("warning", "[List]", "one skill's entry appears twice on a page"),
        # entry shape, URI and name rules
        "entry.uri-missing": _rule("failure", "[Map]", "an entry has no uri string"),
        "entry.uri-invalid": _rule("failure", "[Map]", "an entry uri is not <scheme>://<skill-path>/SKILL.md"),
        "entry.scheme-not-skill": _rule("warning", "[Map]", "an entry uri does not use skill://"),
        "entry.authority-invalid": _rule("warning", "[Map]", "the uri authority is not an RFC 3986 reg-name"),
        "entry.frontmatter-missing": _rule("failure", "[FM]", "an entry has no frontmatter object"),
        "entry.name-missing": _rule("failure", "[Fmt]", "frontmatter.name is not a non-empty string"),
        "entry.name-invalid": _rule("failure", "[Map]", "the skill name breaks the Agent Skills naming rules"),
        "entry.name-not-ascii": _rule(
            "warning", "[Map]", "the skill name is not ASCII (the conformance suite requires it)"
        ),
        "entry.name-mismatch": _rule("failure", "[Map]", "the final skill-path segment differs from frontmatter.name"),
        "entry.description-missing": _rule("failure", "[Fmt]", "frontmatter.description is not a non-empty string"),
        "entry.description-too-long": _rule("failure", "[Fmt]", "frontmatter.description exceeds 1024 characters"),
        "entry.metadata-reserved-key": _rule("warning", "[Resv]", "frontmatter.metadata uses a reserved key"),
        "entry.metadata-invalid": _rule(
            "failure", "[Fmt]", "frontmatter.metadata is not a mapping of strings to strings"
        ),
        "entry.compatibility-invalid": _rule(
            "failure", "[Fmt]", "frontmatter.compatibility is not a string of 1-500 characters"
        ),
        "entry.field-advice": _rule(
            "warning", "[Fmt]", "license or allowed-tools is not a string, or compatibility is empty"
        ),
        "entry.resources-missing": _rule("failure", "[Res]", "an entry has no resources"),
        "entry.resources-invalid": _rule("failure", "[Res]", 'resources is neither an array nor "dynamic"'),
        "entry.resource-invalid": _rule("failure", "[Res]", "a resources item is not an object with a uri string"),
        "entry.resource-outside-skill": _rule("failure", "[Res]", "a resources item is not inside the skill"),
        "entry.resource-duplicate": _rule("failure", "[Res]", "a file is listed twice in resources"),
        "entry.skill-md-missing": _rule("failure", "[Res]", "resources does not list the skill's own SKILL.md"),
        "entry.digest-invalid": _rule("failure", "[Res]", "a digest is not sha256: + 64 lowercase hex characters"),
        "entry.size-invalid": _rule("failure", "[Res]", "a size is missing or not a non-negative integer"),
        "entry.dotfile": _rule(
            "warning", "[Res]", "a listed file is one skillwire serve never publishes (.env, .git, keys)"
        ),
        "entry.nested-file-missing": _rule(
            "failure", "[Res]", "a nested skill's file is missing from the enclosing skill"
        ),
        "entry.inner-file-missing": _rule(
            "failure", "[Res]", "the enclosing skill lists a file the nested skill omits"
        ),
        "limit.files": _rule("warning", "[Lim]", "more than 512 resources entries"),
        "limit.bytes": _rule("warning", "[Lim]", "more than 16 MiB in total size"),
        "names.duplicate": _rule("warning", "[Names]", "two listed skills share a name"),
        # skills/get
        "get.error": _rule("failure", "[Get]", "skills/get failed for a listed skill"),
        "get.result-type": _rule("failure", "[Get]", 'skills/get resultType is not "complete"', MODERN_ERA),
        "get.ttl-invalid": _rule("failure", "[Get]", "skills/get ttlMs missing or not an integer >= 0", MODERN_ERA),
        "get.cache-scope-invalid": _rule(
            "failure", "[Get]", "skills/get cacheScope missing or not public/private", MODERN_ERA
        ),
        "get.cursor-present": _rule("failure", "[Get]", "skills/get result carries a nextCursor"),
        "get.entry-invalid": _rule("failure", "[Get]", "skills/get result has no skill object"),
        "get.uri-mismatch": _rule("failure", "[Get]", "skills/get answered with another skill's entry"),
        "get.entry-differs": _rule("warning", "[Get]", "skills/get and skills/list disagree about an entry"),
        "get.unknown-uri-error-code": _rule("failure", "[Get]", "skills/get of an unknown skill is not error -32602"),
        # resources/read
        "file.read-error": _rule("failure", "[Read]", "a listed file cannot be read"),
        "file.contents-invalid": _rule("failure", "[Read]", "resources/read did not return one text or blob block"),
        "file.size-mismatch": _rule("failure", "[IV-read]", "a file's byte length differs from its size"),
        "file.digest-mismatch": _rule("failure", "[IV-read]", "a file's sha256 differs from its digest"),
        "file.frontmatter-invalid": _rule("failure", "[Fmt]", "SKILL.md has no valid YAML frontmatter"),
        "file.frontmatter-mismatch": _rule("failure", "[FM]", "the entry's frontmatter differs from SKILL.md"),
        "file.skill-md-not-text": _rule("warning", "[Read]", "SKILL.md is served as a blob, not text"),
        "file.skill-md-mime-type": _rule("warning", "[Meta]", "SKILL.md mimeType is not text/markdown"),
        "read.unknown-uri-error-code": _rule(
            "failure", "[Err]", "resources/read of an unserved URI is not error -32602"
        ),
        "resources.unlisted-file": _rule(
            "failure", "[Res]", "resources/list has a file inside a skill its manifest omits"
        ),
        "resources.list-error": _rule("warning", "[Read]", "resources/list failed, so it could not be compared"),
        # resources/directory/read
        "dir.error": _rule("failure", "[Dir]", "a directory the manifest implies cannot be read"),
        "dir.result-invalid": _rule("failure", "[Dir]", "a directory read result has no valid resources array"),
        "dir.result-type": _rule("failure", "[Dir]", 'directory read resultType is not "complete"', MODERN_ERA),
        "dir.cursor-repeated": _rule("failure", "[Dir]", "a directory read repeats a cursor (a pagination loop)"),
        "dir.unlisted-child": _rule("failure", "[Res]", "a directory holds a file the manifest does not list"),
        "dir.missing-child": _rule("failure", "[Dir]", "a manifest file or directory is missing from its directory"),
        "dir.mime-type": _rule("failure", "[Dir]", "a child's inode/directory mimeType contradicts the manifest"),
        "dir.not-direct-child": _rule(
            "failure", "[Dir]", "a directory read returns something that is not a direct child"
        ),
        "dir.unknown-uri-error-code": _rule(
            "failure", "[Dir]", "a directory read of a missing URI is not error -32602"
        ),
        "dir.file-uri-error-code": _rule("failure", "[Dir]", "a directory read of a file URI is not error -32602"),
    },
    record=("severity", "rule", "section", "skill", "uri", "message"),
)


#: The `skillwire check` rule of each entry and field rule of `core.fields` (None: not reported, because
#: SEP-2640 serves unknown frontmatter keys verbatim).
ENTRY_RULES: dict[FieldRule, str | None] = {
    FieldRule.NAME_MISSING: "entry.name-missing",
    FieldRule.NAME_NOT_STRING: "entry.name-missing",
    FieldRule.NAME_INVALID: "entry.name-invalid",
    FieldRule.NAME_NOT_ASCII: "entry.name-not-ascii",
    FieldRule.NAME_MISMATCH: "entry.name-mismatch",
    FieldRule.DESCRIPTION_MISSING: "entry.description-missing",
    FieldRule.DESCRIPTION_NOT_STRING: "entry.description-missing",
    FieldRule.DESCRIPTION_EMPTY: "entry.description-missing",
    FieldRule.DESCRIPTION_TOO_LONG: "entry.description-too-long",
    FieldRule.COMPATIBILITY_NOT_STRING: "entry.compatibility-invalid",
    FieldRule.COMPATIBILITY_TOO_LONG: "entry.compatibility-invalid",
    FieldRule.COMPATIBILITY_EMPTY: "entry.field-advice",
    FieldRule.LICENSE_NOT_STRING: "entry.field-advice",
    FieldRule.ALLOWED_TOOLS_NOT_STRING: "entry.field-advice",
    FieldRule.METADATA_NOT_MAPPING: "entry.metadata-invalid",
    FieldRule.METADATA_NOT_STRING: "entry.metadata-invalid",
    FieldRule.METADATA_RESERVED_KEY: "entry.metadata-reserved-key",
    FieldRule.UNKNOWN_KEY: None,
    FieldRule.ENTRY_NOT_OBJECT: "list.entry-not-object",
    FieldRule.URI_MISSING: "entry.uri-missing",
    FieldRule.URI_INVALID: "entry.uri-invalid",
    FieldRule.FRONTMATTER_NOT_OBJECT: "entry.frontmatter-missing",
    FieldRule.RESOURCES_MISSING: "entry.resources-missing",
    FieldRule.RESOURCES_INVALID: "entry.resources-invalid",
    FieldRule.RESOURCE_NOT_OBJECT: "entry.resource-invalid",
    FieldRule.RESOURCE_OUTSIDE: "entry.resource-outside-skill",
    FieldRule.RESOURCE_DUPLICATE: "entry.resource-duplicate",
    FieldRule.DIGEST_INVALID: "entry.digest-invalid",
    FieldRule.SIZE_INVALID: "entry.size-invalid",
    FieldRule.SKILL_MD_MISSING: "entry.skill-md-missing",
    FieldRule.TOO_MANY_FILES: "limit.files",
    FieldRule.TOO_LARGE: "limit.bytes",
}
# A `resources[]` item these rules reject is left out of the file checks.
_ITEM_DROPPED = frozenset({FieldRule.RESOURCE_NOT_OBJECT, FieldRule.RESOURCE_OUTSIDE, FieldRule.RESOURCE_DUPLICATE})


def _problem_uri(problem: Problem, resources: object) -> str | None:
    """The file a `resources[i]` problem is about (as listed), for the finding's `uri`."""
    if len(problem.path) < 2 or problem.path[0] != "resources" or not isinstance(resources, list):
        return None
    index = problem.path[1]
    item = resources[index] if isinstance(index, int) and index < len(resources) else None
    file_uri = item.get("uri") if isinstance(item, dict) else None
    return file_uri if isinstance(file_uri, str) and problem.rule is not FieldRule.RESOURCE_NOT_OBJECT else None


_GET_NOT_IMPLEMENTED = (
    f"skills/get answered error {METHOD_NOT_FOUND} (method not found); declaring the extension means skills/list "
    "and skills/get must be implemented"
)
_DIRECTORY_READ_NOT_IMPLEMENTED = (
    "the server declares directoryRead: true but resources/directory/read answered error "
    f"{METHOD_NOT_FOUND} (method not found)"
)

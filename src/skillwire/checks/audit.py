"""The audit behind `skillwire check`: what a skills server does on the wire, held against SEP-2640.

`audit(send, capabilities)` talks to one server through `send` (one raw request in, the raw result
object out, `MCPError` for a JSON-RPC error) and returns every `Finding`. It never trusts a client
wrapper: entries are validated here, field by field, so a broken entry is reported on its own skill
instead of being skipped. The steps:

1. Capabilities: the extension (an inline settings object), `directoryRead`, the `resources` capability.
2. `skills/list`, every page: `resultType`, `ttlMs`/`cacheScope`, the cursor chain, each entry's shape
   (URI, name rules, frontmatter, `resources`, digests, sizes, limits), entries split across pages.
3. Concurrently, at most `concurrency` requests in flight: `skills/get` of every listed skill; one
   `resources/read` of every listed file (size, digest, and the SKILL.md frontmatter compared with the
   entry's under YAML 1.2); `resources/list` (a resource inside a skill that its manifest omits);
   error codes for a skill and files that cannot exist.
4. With `directoryRead: true`: `resources/directory/read` of every skill root and every directory the
   manifest implies, plus any unexpected subdirectory, compared child by child with the manifest.

Every finding carries a stable rule id (`RULES`), its severity (a MUST broken is a failure, a SHOULD is a
warning), the skill URI (or `server`), the requirement's section tag and a message saying exactly what
differed.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types import (
    ListResourcesRequest,
    PaginatedRequestParams,
    ReadResourceRequest,
    ReadResourceRequestParams,
    Request,
)
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND
from pydantic import ValidationError

from skillwire.catalog.filesystem import is_ignored_name
from skillwire.checks.findings import Finding, Rule, RuleSet, Severity, blocking
from skillwire.client.requests import get_skill_request, list_skills_request, read_directory_request
from skillwire.core.errors import InvalidSkillURI, SizeMismatch
from skillwire.core.fields import Problem, entry_problems
from skillwire.core.fields import Rule as FieldRule
from skillwire.core.json import JSONValue
from skillwire.core.names import REG_NAME_RE
from skillwire.core.protocol import DIRECTORY_MIME_TYPE, DIRECTORY_READ_SETTING, EXTENSION_ID
from skillwire.core.uri import SKILL_MD, ParsedURI, SkillPath, canonical_uri, format_uri, parse_uri
from skillwire.core.verify import file_mismatches, skill_md_mismatch

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


@dataclass
class AuditStats:
    protocol_version: str | None = None
    directory_read: bool = False
    skills: int = 0
    pages: int = 0
    files_read: int = 0
    directories_read: int = 0
    requests: int = 0
    skill_uris: list[str] = field(default_factory=list)


@dataclass
class AuditResult:
    findings: list[Finding]
    stats: AuditStats

    @property
    def failures(self) -> list[Finding]:
        return [f for f in self.findings if blocking(f.severity)]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


# -- small helpers --------------------------------------------------------------------------------------------


def _canon(uri: str) -> str:
    try:
        return canonical_uri(uri)
    except InvalidSkillURI:
        return uri


def _show(value: object, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ignored_segment(path: SkillPath | None, file_uri: str) -> str | None:
    """The first segment of a listed file's path that is on serve's ignore list (`.env`, `.git`, ...)."""
    if path is None:
        return None
    try:
        relative = parse_uri(file_uri).relative_to(path.root) or ()
    except InvalidSkillURI:
        return None
    return next((part for part in relative if is_ignored_name(part)), None)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cache_problems(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(`ttl-invalid` | `cache-scope-invalid`, detail) for a result's cache attributes."""
    out: list[tuple[str, str]] = []
    if "ttlMs" not in result:
        out.append(("ttl-invalid", "ttlMs is missing"))
    elif not _is_int(result["ttlMs"]) or result["ttlMs"] < 0:
        out.append(("ttl-invalid", f"ttlMs is {_show(result['ttlMs'])}, not an integer >= 0"))
    if "cacheScope" not in result:
        out.append(("cache-scope-invalid", "cacheScope is missing"))
    elif result["cacheScope"] not in ("public", "private"):
        out.append(("cache-scope-invalid", f"cacheScope is {_show(result['cacheScope'])}, not 'public' or 'private'"))
    return out


def _result_type_problem(result: Mapping[str, Any]) -> str | None:
    if result.get("resultType") == "complete":
        return None
    if "resultType" not in result:
        return 'resultType is missing (must be "complete")'
    return f'resultType is {_show(result["resultType"])}, not "complete"'


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word[:-1]}ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else f"{n} {word}s"


def _examples(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _pages(numbers: Iterable[int]) -> str:
    ordered = [str(n) for n in sorted(set(numbers))]
    if len(ordered) == 1:
        return f"page {ordered[0]}"
    return "pages " + ", ".join(ordered[:-1]) + " and " + ordered[-1]


@dataclass(frozen=True)
class Reply:
    """What one request got: a result object, or a JSON-RPC error (or no answer)."""

    result: dict[str, Any] | None
    code: int | None = None
    error: str | None = None

    def describe_error(self) -> str:
        if self.code is None:
            return self.error or "no answer"
        return f"error {self.code} ({self.error})" if self.error else f"error {self.code}"


@dataclass(frozen=True)
class Item:
    """One `resources[]` item as listed; `digest`/`size` are None when the listed value is invalid."""

    uri: str
    canon: str
    digest: str | None
    size: int | None


@dataclass
class SkillRecord:
    label: str  # the entry's uri as listed: what findings name
    raw: dict[str, Any]  # the entry (fragments of a split entry merged)
    path: SkillPath | None = None
    frontmatter: dict[str, Any] | None = None
    items: list[Item] | None = None  # None: dynamic, or resources missing/invalid
    dynamic: bool = False

    @property
    def canon(self) -> str:
        return _canon(self.label)

    def item_canons(self) -> set[str]:
        return {i.canon for i in self.items or ()}


@dataclass
class FileRead:
    data: bytes | None = None
    is_text: bool = False
    mime_type: str | None = None
    failure: tuple[str, str] | None = None  # (rule, detail) when no bytes could be taken from the answer


@dataclass
class DirRead:
    children: dict[str, tuple[str, str | None]] | None = None  # canon -> (uri as sent, mimeType)
    reply: Reply | None = None  # the failing reply, when the read failed
    invalid: str | None = None  # why the result is not a valid directory listing
    result_type: str | None = None
    repeated_cursor: bool = False


class Auditor:
    def __init__(
        self,
        send: Send,
        capabilities: Mapping[str, Any],
        *,
        protocol_version: str | None = None,
        concurrency: int = 8,
        timeout: float = 30.0,
        max_pages: int = 1000,
        max_extra_directories: int = 1000,
        progress: Progress | None = None,
        nonce: str | None = None,
    ) -> None:
        self._send = send
        self.capabilities = dict(capabilities)
        self.timeout = timeout
        self.max_pages = max_pages
        self.max_extra_directories = max_extra_directories
        self._limiter = anyio.CapacityLimiter(max(1, concurrency))
        self._progress = progress
        self._done = 0
        self._total = 0
        self.nonce = nonce or secrets.token_hex(4)
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, str, str, str | None]] = set()
        self._reported: set[tuple[str, str]] = set()
        self.stats = AuditStats(protocol_version=protocol_version)
        self.skills: dict[str, SkillRecord] = {}  # canonical uri -> record, in listing order

    # -- bookkeeping ---------------------------------------------------------------------------------------

    def add(self, rule: str, skill: str, message: str, uri: str | None = None) -> None:
        if not RULES[rule].applies_to(self.stats.protocol_version):  # KeyError: not a check rule
            return
        key = (rule, skill, message, uri)
        if key not in self._seen:
            self._seen.add(key)
            self.findings.append(RULES.finding(rule, message, skill=skill, uri=uri))
            if uri is not None:
                self._reported.add((skill, _canon(uri)))

    def reported(self, skill: str, uri: str) -> bool:
        """Whether some finding on `skill` already names `uri` (one defect, one finding)."""
        return (skill, _canon(uri)) in self._reported

    def _expect(self, n: int) -> None:
        self._total += n
        self._tick()

    def _tick(self) -> None:
        if self._progress is not None:
            self._progress(self._done, max(self._total, self._done))

    async def request(self, request: Request[Any, Any]) -> Reply:
        async with self._limiter:
            self.stats.requests += 1
            try:
                with anyio.fail_after(self.timeout):
                    result = await self._send(request)
            except MCPError as exc:
                # One line, cut: the SDK's own messages can quote the server's bytes over several lines.
                reply = Reply(None, exc.code, " ".join(exc.message.split())[:300])
            except TimeoutError:
                reply = Reply(None, None, f"nothing within {self.timeout:g} s")
            except ValidationError as exc:
                reply = Reply(None, None, f"not a JSON object result ({exc.error_count()} validation errors)")
            else:
                reply = Reply(result if isinstance(result, dict) else None, None, None)
            finally:
                self._done += 1
                self._tick()
            return reply

    # -- the whole audit -------------------------------------------------------------------------------------

    async def run(self) -> AuditResult:
        settings = self._check_capabilities()
        if settings is not None:
            entries = await self._walk_list()
            if entries is not None:
                self._check_listing(entries)
                self.stats.skills = len(self.skills)
                self.stats.skill_uris = [s.label for s in self.skills.values()]
                await self._probe(directory_read=self.stats.directory_read)
        return AuditResult(self._sorted(), self.stats)

    def _sorted(self) -> list[Finding]:
        order = {uri: i for i, uri in enumerate(sorted({f.skill or "" for f in self.findings} - {SERVER}))}
        return sorted(
            self.findings,
            key=lambda f: (
                f.skill != SERVER,
                order.get(f.skill or "", -1),
                f.severity != "failure",
                f.rule,
                f.uri or "",
                f.message,
            ),
        )

    # -- 1. capabilities ---------------------------------------------------------------------------------------

    def _check_capabilities(self) -> dict[str, Any] | None:
        extensions = self.capabilities.get("extensions")
        settings = extensions.get(EXTENSION_ID) if isinstance(extensions, dict) else None
        if not isinstance(settings, dict):
            declared = "" if settings is None else f" (it is {_show(settings)}, not a settings object)"
            self.add(
                "cap.extension-missing",
                SERVER,
                f"capabilities.extensions has no {EXTENSION_ID} settings object{declared}; nothing else can be checked",
            )
            return None
        envelope = [k for k in ENVELOPE_KEYS if k in settings]
        if envelope:
            self.add(
                "cap.settings-envelope",
                SERVER,
                f"the {EXTENSION_ID} settings carry envelope key(s) {', '.join(envelope)}; "
                'settings are declared inline ({} or {"directoryRead": true})',
            )
        if DIRECTORY_READ_SETTING in settings and not isinstance(settings[DIRECTORY_READ_SETTING], bool):
            self.add(
                "cap.directory-read-invalid",
                SERVER,
                f"directoryRead is {_show(settings[DIRECTORY_READ_SETTING])}, not a boolean; treated as not declared",
            )
        self.stats.directory_read = settings.get(DIRECTORY_READ_SETTING) is True
        if not isinstance(self.capabilities.get("resources"), dict):
            self.add(
                "cap.resources-missing",
                SERVER,
                "the server declares the skills extension but not the resources capability",
            )
        return cast(dict[str, Any], settings)

    # -- 2. skills/list ------------------------------------------------------------------------------------------

    async def _walk_list(self) -> list[tuple[int, int, object]] | None:
        entries: list[tuple[int, int, object]] = []
        envelope: dict[tuple[str, str], list[int]] = defaultdict(list)
        cursor: str | None = None
        seen_cursors: set[str] = set()
        page = 0
        while True:
            page += 1
            self._expect(1)
            reply = await self.request(list_skills_request(cursor))
            if reply.result is None:
                if page == 1 and reply.code == METHOD_NOT_FOUND:
                    self.add(
                        "cap.list-not-implemented",
                        SERVER,
                        f"skills/list answered {reply.describe_error()}; declaring the extension means "
                        "skills/list and skills/get must be implemented",
                    )
                    return None
                self.add("list.error", SERVER, f"skills/list page {page} answered {reply.describe_error()}")
                if page == 1:
                    return None
                break
            result = reply.result
            self.stats.pages = page
            problem = _result_type_problem(result)
            if problem:
                envelope[("list.result-type", problem)].append(page)
            for suffix, detail in _cache_problems(result):
                envelope[(f"list.{suffix}", detail)].append(page)
            skills = result.get("skills")
            if not isinstance(skills, list):
                self.add(
                    "list.result-invalid",
                    SERVER,
                    f"skills/list page {page} has no 'skills' array (got {_show(skills)})",
                )
                if page == 1:
                    return None
                break
            entries.extend((page, index, raw) for index, raw in enumerate(cast(list[object], skills)))
            next_cursor = result.get("nextCursor")
            if next_cursor is None or next_cursor == "":
                break
            if not isinstance(next_cursor, str):
                self.add(
                    "list.cursor-invalid",
                    SERVER,
                    f"skills/list page {page} has nextCursor {_show(next_cursor)}, not a string; paging stopped",
                )
                break
            if next_cursor in seen_cursors:
                self.add(
                    "list.cursor-repeated",
                    SERVER,
                    f"skills/list page {page} returned a nextCursor it had already returned; paging stopped",
                )
                break
            if page >= self.max_pages:
                self.add(
                    "list.page-limit",
                    SERVER,
                    f"skills/list still had a nextCursor after {page} pages; only those were checked",
                )
                break
            seen_cursors.add(next_cursor)
            cursor = next_cursor
        for (rule, detail), pages in envelope.items():
            self.add(rule, SERVER, f"skills/list {_pages(pages)}: {detail}")
        return entries

    def _check_listing(self, entries: list[tuple[int, int, object]]) -> None:
        fragments: dict[str, list[tuple[int, int, dict[str, Any]]]] = {}
        for page, index, raw in entries:
            where = f"skills/list page {page} entry {index}"
            if not isinstance(raw, dict):
                self.add("list.entry-not-object", SERVER, f"{where} is {_show(raw)}, not an object")
                continue
            entry = cast(dict[str, Any], raw)
            uri = entry.get("uri")
            if not isinstance(uri, str) or not uri:
                self.add("entry.uri-missing", SERVER, f"{where} has no 'uri' string (got {_show(uri)})")
                continue
            fragments.setdefault(_canon(uri), []).append((page, index, entry))
        for parts in fragments.values():
            first = parts[0][2]
            label = cast(str, first["uri"])
            merged = dict(first)
            if len(parts) > 1:
                pages = [p for p, _, _ in parts]
                counts = [len(e["resources"]) if isinstance(e.get("resources"), list) else 0 for _, _, e in parts]
                if len(set(pages)) > 1:
                    self.add(
                        "list.split-entry",
                        label,
                        f"the entry appears {len(parts)} times, on {_pages(pages)} (with "
                        f"{' + '.join(map(str, counts))} resources items): an entry must never be split across "
                        "pages; the fragments were merged for the other checks",
                    )
                else:
                    self.add(
                        "list.duplicate-entry",
                        label,
                        f"the entry appears {len(parts)} times on {_pages(pages)}; the fragments were merged "
                        "for the other checks",
                    )
                if all(isinstance(e.get("resources"), list) for _, _, e in parts):
                    combined: list[object] = []
                    taken: set[str] = set()
                    for _, _, e in parts:
                        for item in e["resources"]:
                            key = json.dumps(item, sort_keys=True)
                            if key not in taken:
                                taken.add(key)
                                combined.append(item)
                    merged["resources"] = combined
            self.skills[_canon(label)] = self.check_entry(merged, label)
        self._check_nesting()
        self._check_names()

    def check_entry(self, entry: Mapping[str, Any], label: str, context: str = "") -> SkillRecord:
        """Validate one entry's shape; findings go on `label`; `context` prefixes messages (e.g. skills/get).

        The entry and field rules are `core.fields.entry_problems` (what a host refuses and a server
        does not publish); what is added here is advice about the URI and what the files are named.
        """
        record = SkillRecord(label, dict(entry))
        uri = cast(str, entry["uri"])
        problems = list(entry_problems(entry))
        resources = entry.get("resources")
        for problem in problems:
            rule = ENTRY_RULES[problem.rule]
            if rule is not None:
                self.add(rule, label, f"{context}{problem.message}", _problem_uri(problem, resources))
        try:
            path: SkillPath | None = SkillPath.from_skill_md_uri(uri)
        except InvalidSkillURI:
            path = None
        record.path = path
        if path is not None:
            if path.scheme != "skill":
                self.add(
                    "entry.scheme-not-skill", label, f"{context}uri uses {path.scheme}://; skill:// is recommended"
                )
            authority = uri.partition("://")[2].split("/", 1)[0]
            if not REG_NAME_RE.match(authority):
                self.add(
                    "entry.authority-invalid",
                    label,
                    f"{context}uri authority {authority!r} is not an RFC 3986 reg-name",
                )
        frontmatter = entry.get("frontmatter")
        if isinstance(frontmatter, dict):
            record.frontmatter = cast(dict[str, Any], frontmatter)
        if resources == "dynamic":
            record.dynamic = True
        elif isinstance(resources, list):
            record.items = self._items(cast(list[object], resources), problems, label, path, context)
        return record

    def _items(
        self, resources: list[object], problems: list[Problem], label: str, path: SkillPath | None, context: str
    ) -> list[Item]:
        """The listed files the other checks compare against; an invalid digest or size is None."""
        dropped = {p.path[1] for p in problems if p.rule in _ITEM_DROPPED and len(p.path) > 1}
        bad_digest = {p.path[1] for p in problems if p.rule is FieldRule.DIGEST_INVALID}
        bad_size = {p.path[1] for p in problems if p.rule is FieldRule.SIZE_INVALID}
        items: list[Item] = []
        for index, raw in enumerate(resources):
            if index in dropped or not isinstance(raw, dict):
                continue
            obj = cast(dict[str, Any], raw)
            file_uri = cast(str, obj["uri"])
            hidden = _ignored_segment(path, file_uri)
            if hidden is not None:
                self.add(
                    "entry.dotfile",
                    label,
                    f"{context}resources[{index}] {file_uri} publishes {hidden!r}, a name skillwire serve never "
                    "publishes (secrets, repository or editor state); take it out of the skill",
                    file_uri,
                )
            digest = None if index in bad_digest else cast(str, obj["digest"])
            size = None if index in bad_size else cast(int, obj["size"])
            items.append(Item(file_uri, _canon(file_uri), digest, size))
        return items

    def _roots(self) -> dict[ParsedURI, SkillRecord]:
        return {s.path.root: s for s in self.skills.values() if s.path is not None}

    def _ancestors(self, parsed: ParsedURI, roots: Mapping[ParsedURI, SkillRecord]) -> list[SkillRecord]:
        """The skills whose root contains `parsed` (strictly above it), innermost last."""
        out: list[SkillRecord] = []
        for depth in range(1, len(parsed.segments)):
            skill = roots.get(ParsedURI(parsed.scheme, parsed.segments[:depth]))
            if skill is not None:
                out.append(skill)
        return out

    def _check_nesting(self) -> None:
        roots = self._roots()
        for inner in self.skills.values():
            if inner.path is None or inner.items is None:
                continue
            for outer in self._ancestors(inner.path.root, roots):
                if outer.items is None:
                    continue
                outer_files = outer.item_canons()
                inner_files = inner.item_canons()
                for item in inner.items:
                    if item.canon not in outer_files:
                        self.add(
                            "entry.nested-file-missing",
                            outer.label,
                            f"{item.uri} belongs to the nested skill {inner.label} but is missing from this "
                            "skill's resources (nested skills' files are listed in the enclosing skill too)",
                            item.uri,
                        )
                for item in outer.items:
                    try:
                        inside = parse_uri(item.canon).relative_to(inner.path.root)
                    except InvalidSkillURI:
                        inside = None
                    if inside and item.canon not in inner_files:
                        self.add(
                            "entry.inner-file-missing",
                            inner.label,
                            f"the enclosing skill {outer.label} lists {item.uri}, inside this skill, but this "
                            "skill's resources do not",
                            item.uri,
                        )

    def _check_names(self) -> None:
        by_name: dict[str, list[SkillRecord]] = defaultdict(list)
        for skill in self.skills.values():
            if skill.path is not None:
                by_name[skill.path.name].append(skill)
        for name, skills in by_name.items():
            if len(skills) > 1:
                for skill in skills:
                    others = [s.label for s in skills if s is not skill]
                    self.add(
                        "names.duplicate",
                        skill.label,
                        f"the name {name!r} is also used by {_examples(others)}; names should be unique",
                    )

    # -- 3./4. everything else, concurrently -----------------------------------------------------------------------

    async def _probe(self, *, directory_read: bool) -> None:
        files: dict[str, list[tuple[SkillRecord, Item | None]]] = {}  # canon -> who lists it (None: SKILL.md only)
        for skill in self.skills.values():
            for item in skill.items or ():
                files.setdefault(item.canon, []).append((skill, item))
            if skill.path is not None and skill.canon not in skill.item_canons():
                files.setdefault(skill.canon, []).append((skill, None))  # its SKILL.md, for the frontmatter
        gets = [s for s in self.skills.values() if s.path is not None]
        first = next((s for s in self.skills.values() if s.path is not None and s.items is not None), None)
        self._expect(len(gets) + len(files) + 2 + (1 if first else 0))
        get_replies: dict[str, Reply] = {}
        reads: dict[str, tuple[str, Reply]] = {}

        async def get(skill: SkillRecord) -> None:
            get_replies[skill.canon] = await self.request(get_skill_request(skill.label))

        async def read(canon: str, uri: str) -> None:
            reads[canon] = (uri, await self.request(_read_request(uri)))

        async with anyio.create_task_group() as group:
            for skill in gets:
                group.start_soon(get, skill)
            for canon, owners in files.items():
                owner, listed = owners[0]
                group.start_soon(read, canon, listed.uri if listed is not None else owner.label)
            group.start_soon(self._probe_unknown_skill)
            group.start_soon(self._probe_unknown_files, first)
            group.start_soon(self._check_resources_list)
            if directory_read:
                group.start_soon(self._check_directories, first)
        self._check_gets(gets, get_replies)
        self.stats.files_read = len(reads)
        for canon, owners in files.items():
            uri, reply = reads[canon]
            self._check_file(uri, reply, owners)

    # skills/get ------------------------------------------------------------------------------------------------

    def _check_gets(self, skills: list[SkillRecord], replies: Mapping[str, Reply]) -> None:
        envelope: dict[tuple[str, str], list[str]] = defaultdict(list)
        for skill in skills:
            reply = replies[skill.canon]
            if reply.result is None:
                if reply.code == METHOD_NOT_FOUND:
                    self.add("cap.get-not-implemented", SERVER, _GET_NOT_IMPLEMENTED)
                else:
                    self.add(
                        "get.error",
                        skill.label,
                        f"skills/get of this listed skill answered {reply.describe_error()}; it must answer for "
                        "every served skill",
                    )
                continue
            result = reply.result
            problem = _result_type_problem(result)
            if problem:
                envelope[("get.result-type", problem)].append(skill.label)
            for suffix, detail in _cache_problems(result):
                envelope[(f"get.{suffix}", detail)].append(skill.label)
            if "nextCursor" in result:
                envelope[("get.cursor-present", f"the result has nextCursor {_show(result['nextCursor'])}")].append(
                    skill.label
                )
            entry = result.get("skill")
            if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str):
                self.add(
                    "get.entry-invalid",
                    skill.label,
                    f"skills/get result has no 'skill' entry with a uri (got {_show(entry)})",
                )
                continue
            got = cast(dict[str, Any], entry)
            if _canon(got["uri"]) != skill.canon:
                self.add(
                    "get.uri-mismatch",
                    skill.label,
                    f"skills/get of {skill.label} answered with the entry of {got['uri']}",
                )
                continue
            difference = _entry_difference(skill.raw, got)
            if difference:
                self.add(
                    "get.entry-differs",
                    skill.label,
                    f"skills/get returned a different entry than skills/list: {difference}",
                )
                self.check_entry(got, skill.label, context="skills/get: ")
        for (rule, detail), labels in envelope.items():
            if len(labels) == 1:
                self.add(rule, labels[0], f"skills/get: {detail}")
            else:
                self.add(
                    rule, SERVER, f"skills/get of {len(labels)} skills: {detail} (e.g. {_examples(sorted(labels), 2)})"
                )

    async def _probe_unknown_skill(self) -> None:
        uri = f"skill://{NONEXISTENT}-{self.nonce}/{SKILL_MD}"
        reply = await self.request(get_skill_request(uri))
        if reply.code == INVALID_PARAMS:
            return
        if reply.code == METHOD_NOT_FOUND:
            self.add("cap.get-not-implemented", SERVER, _GET_NOT_IMPLEMENTED)
            return
        got = "an entry" if reply.result is not None else reply.describe_error()
        self.add(
            "get.unknown-uri-error-code",
            SERVER,
            f"skills/get of a skill URI that cannot exist answered {got}; it must be error -32602",
            uri,
        )

    async def _probe_unknown_files(self, first: SkillRecord | None) -> None:
        targets = [(f"skill://{NONEXISTENT}-{self.nonce}/{SKILL_MD}", "a SKILL.md URI of a skill that cannot exist")]
        if first is not None and first.path is not None:
            name = f"{NONEXISTENT}-{self.nonce}.md"
            targets.append(
                (format_uri(first.path.scheme, (*first.path.segments, name)), f"a missing file in {first.label}")
            )

        async def probe(uri: str, what: str) -> None:
            reply = await self.request(_read_request(uri))
            if reply.code == INVALID_PARAMS:
                return
            if reply.result is not None:
                contents = reply.result.get("contents")
                got = "with empty contents" if not contents else "with content"
            else:
                got = reply.describe_error()
            self.add(
                "read.unknown-uri-error-code",
                SERVER,
                f"resources/read of {what} answered {got}; an unserved URI must get error -32602",
                uri,
            )

        async with anyio.create_task_group() as group:
            for uri, what in targets:
                group.start_soon(probe, uri, what)

    # resources/read ------------------------------------------------------------------------------------------

    def _check_file(self, uri: str, reply: Reply, owners: list[tuple[SkillRecord, Item | None]]) -> None:
        read = _decode_read(uri, reply)
        if read.data is None:
            rule, detail = read.failure or ("file.read-error", "no content")
            for skill, _ in owners:
                self.add(rule, skill.label, f"{uri}: {detail}", uri)
            return
        data = read.data
        for skill, item in owners:
            mismatches = file_mismatches(uri, item.size, item.digest, data) if item is not None else []
            for mismatch in mismatches:
                if isinstance(mismatch, SizeMismatch):
                    message = f"{uri}: the manifest says {mismatch.expected} bytes, {mismatch.actual} bytes were served"
                    self.add("file.size-mismatch", skill.label, message, uri)
                else:
                    message = (
                        f"{uri}: the manifest says {mismatch.expected}, the bytes served hash to {mismatch.actual}"
                    )
                    self.add("file.digest-mismatch", skill.label, message, uri)
            if _canon(uri) == skill.canon:
                self._check_skill_md(skill, uri, read)

    def _check_skill_md(self, skill: SkillRecord, uri: str, read: FileRead) -> None:
        assert read.data is not None
        if not read.is_text:
            self.add("file.skill-md-not-text", skill.label, f"{uri} is served as a base64 blob, not text", uri)
        if read.mime_type != "text/markdown":
            self.add(
                "file.skill-md-mime-type",
                skill.label,
                f"{uri} is served with mimeType {_show(read.mime_type)}; SKILL.md should be text/markdown",
                uri,
            )
        _, mismatch = skill_md_mismatch(cast(dict[str, JSONValue], skill.frontmatter or {}), read.data)
        if mismatch is not None and mismatch.parse_error is not None:
            self.add("file.frontmatter-invalid", skill.label, f"{uri}: {mismatch.parse_error}", uri)
        elif mismatch is not None and skill.frontmatter is not None:
            self.add(
                "file.frontmatter-mismatch",
                skill.label,
                f"the entry's frontmatter differs from {uri} (read as YAML 1.2): " + "; ".join(mismatch.details),
                uri,
            )

    # resources/list ------------------------------------------------------------------------------------------

    async def _check_resources_list(self) -> None:
        if not isinstance(self.capabilities.get("resources"), dict):
            return
        roots = self._roots()
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, self.max_pages + 1):
            self._expect(1)
            reply = await self.request(ListResourcesRequest(params=PaginatedRequestParams(cursor=cursor)))
            if reply.result is None:
                self.add(
                    "resources.list-error",
                    SERVER,
                    f"resources/list page {page} answered {reply.describe_error()}; manifests were not compared "
                    "with it",
                )
                return
            items = reply.result.get("resources")
            if not isinstance(items, list):
                self.add("resources.list-error", SERVER, f"resources/list page {page} has no 'resources' array")
                return
            for raw in items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    continue
                if raw.get("mimeType") == DIRECTORY_MIME_TYPE:
                    continue
                uri = cast(str, raw["uri"])
                try:
                    parsed = parse_uri(uri)
                except InvalidSkillURI:
                    continue
                canon = str(parsed)
                for skill in self._ancestors(parsed, roots):
                    if (
                        skill.items is not None
                        and canon not in skill.item_canons()
                        and canon != skill.canon
                        and not self.reported(skill.label, canon)
                    ):
                        self.add(
                            "resources.unlisted-file",
                            skill.label,
                            f"resources/list advertises {uri}, inside this skill's root, but the manifest does not "
                            "list it; a manifest must list every file served under the skill (a host holding the "
                            "entry must treat reading it as an unlisted-file verification failure)",
                            uri,
                        )
            next_cursor = reply.result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor or next_cursor in seen:
                return
            seen.add(next_cursor)
            cursor = next_cursor

    # resources/directory/read ----------------------------------------------------------------------------------

    async def _read_directory(self, uri: str) -> DirRead:
        out = DirRead(children={})
        cursor: str | None = None
        seen: set[str] = set()
        for page in range(1, self.max_pages + 1):
            if page > 1:
                self._expect(1)
            reply = await self.request(read_directory_request(uri, cursor))
            if reply.result is None:
                return DirRead(reply=reply)
            result = reply.result
            out.result_type = out.result_type or _result_type_problem(result)
            items = result.get("resources")
            if not isinstance(items, list):
                out.invalid = f"the result has no 'resources' array (got {_show(items)})"
                return out
            assert out.children is not None
            for raw in items:
                if not isinstance(raw, dict) or not isinstance(raw.get("uri"), str):
                    out.invalid = f"an item has no uri string (got {_show(raw)})"
                    continue
                mime = raw.get("mimeType")
                out.children[_canon(raw["uri"])] = (raw["uri"], mime if isinstance(mime, str) else None)
            next_cursor = result.get("nextCursor")
            if not isinstance(next_cursor, str) or not next_cursor:
                return out
            if next_cursor in seen:
                out.repeated_cursor = True
                return out
            seen.add(next_cursor)
            cursor = next_cursor
        return out

    async def _check_directories(self, first: SkillRecord | None) -> None:
        # What each skill's manifest implies: directory -> {child: is_directory}.
        expected: dict[str, dict[str, dict[str, bool]]] = {}
        for skill in self.skills.values():
            if skill.path is None or skill.items is None:
                continue
            root = skill.path.root
            dirs: dict[str, dict[str, bool]] = {str(root): {}}
            for item in skill.items:
                try:
                    rel = parse_uri(item.canon).relative_to(root)
                except InvalidSkillURI:
                    continue
                if not rel:
                    continue
                for depth in range(len(rel)):
                    parent = format_uri(root.scheme, root.segments + rel[:depth])
                    child = format_uri(root.scheme, root.segments + rel[: depth + 1])
                    dirs.setdefault(parent, {})[child] = depth < len(rel) - 1
            expected[skill.canon] = dirs
        cache: dict[str, DirRead] = {}
        todo: dict[str, set[str]] = {canon: set(dirs) for canon, dirs in expected.items()}
        extra_budget = self.max_extra_directories
        async with anyio.create_task_group() as group:
            group.start_soon(self._probe_directory_errors, first)
            while todo:
                wanted = sorted({d for dirs in todo.values() for d in dirs} - cache.keys())
                self._expect(len(wanted))
                results: dict[str, DirRead] = {}

                async def read(uri: str, into: dict[str, DirRead] = results) -> None:
                    into[uri] = await self._read_directory(uri)

                async with anyio.create_task_group() as reads:
                    for uri in wanted:
                        reads.start_soon(read, uri)
                cache.update(results)
                self.stats.directories_read = len(cache)
                if any(r.reply is not None and r.reply.code == METHOD_NOT_FOUND for r in cache.values()):
                    self.add("cap.directory-read-not-implemented", SERVER, _DIRECTORY_READ_NOT_IMPLEMENTED)
                    return
                follow: dict[str, set[str]] = {}
                for canon in sorted(todo):
                    skill = self.skills[canon]
                    for directory in sorted(todo[canon]):
                        implied = expected[canon].get(directory)
                        for child in self._compare_directory(skill, directory, implied, cache[directory]):
                            if extra_budget > 0 and child not in expected[canon]:
                                extra_budget -= 1
                                expected[canon][child] = {}
                                follow.setdefault(canon, set()).add(child)
                todo = follow
        result_types: dict[str, list[str]] = defaultdict(list)
        for uri, outcome in cache.items():
            if outcome.result_type:
                result_types[outcome.result_type].append(uri)
        for detail, uris in result_types.items():
            self.add(
                "dir.result-type",
                SERVER,
                f"resources/directory/read of {_plural(len(uris), 'directory')}: {detail} "
                f"(e.g. {_examples(sorted(uris), 2)})",
            )

    def _compare_directory(
        self, skill: SkillRecord, directory: str, implied: dict[str, bool] | None, outcome: DirRead
    ) -> list[str]:
        """Findings for one directory of one skill; returns unexpected subdirectories to look into."""
        label = skill.label
        if outcome.reply is not None:
            self.add(
                "dir.error",
                label,
                f"resources/directory/read of {directory} answered {outcome.reply.describe_error()}",
                directory,
            )
            return []
        if outcome.invalid:
            self.add(
                "dir.result-invalid", label, f"resources/directory/read of {directory}: {outcome.invalid}", directory
            )
        if outcome.repeated_cursor:
            self.add(
                "dir.cursor-repeated",
                label,
                f"resources/directory/read of {directory} repeated a nextCursor; paging stopped",
                directory,
            )
        children = outcome.children or {}
        implied = implied or {}
        parent = parse_uri(directory)
        follow: list[str] = []
        for child, is_dir in sorted(implied.items()):
            if child not in children:
                kind = "directory" if is_dir else "file"
                self.add(
                    "dir.missing-child",
                    label,
                    f"resources/directory/read of {directory} does not list {child}, a {kind} in the manifest",
                    child,
                )
                continue
            mime = children[child][1]
            if is_dir and mime != DIRECTORY_MIME_TYPE:
                self.add(
                    "dir.mime-type",
                    label,
                    f"resources/directory/read of {directory} lists {child} with mimeType {_show(mime)}; the "
                    f"manifest has files below it, so it is a directory ({DIRECTORY_MIME_TYPE})",
                    child,
                )
            elif not is_dir and mime == DIRECTORY_MIME_TYPE:
                self.add(
                    "dir.mime-type",
                    label,
                    f"resources/directory/read of {directory} lists {child} as a directory; the manifest lists it "
                    "as a file",
                    child,
                )
        for child, (raw_uri, mime) in sorted(children.items()):
            if child in implied:
                continue
            try:
                parsed = parse_uri(child)
            except InvalidSkillURI:
                parsed = None
            if parsed is None or parsed.relative_to(parent) is None or len(parsed.segments) != len(parent.segments) + 1:
                self.add(
                    "dir.not-direct-child",
                    label,
                    f"resources/directory/read of {directory} lists {raw_uri}, which is not a direct child",
                    raw_uri,
                )
            elif mime == DIRECTORY_MIME_TYPE:
                follow.append(child)
            elif not self.reported(label, child):
                self.add(
                    "dir.unlisted-child",
                    label,
                    f"resources/directory/read of {directory} lists {raw_uri}, which the manifest does not list "
                    "(a manifest must list every file of the skill)",
                    raw_uri,
                )
        return follow

    async def _probe_directory_errors(self, first: SkillRecord | None) -> None:
        missing = f"skill://{NONEXISTENT}-{self.nonce}"
        targets = [(missing, "dir.unknown-uri-error-code", "a directory URI that cannot exist")]
        if first is not None:
            targets.append((first.label, "dir.file-uri-error-code", f"the file {first.label}"))
        self._expect(len(targets))

        async def probe(uri: str, rule: str, what: str) -> None:
            reply = await self.request(read_directory_request(uri))
            if reply.code == INVALID_PARAMS:
                return
            if reply.code == METHOD_NOT_FOUND:
                self.add("cap.directory-read-not-implemented", SERVER, _DIRECTORY_READ_NOT_IMPLEMENTED)
                return
            got = "with a listing" if reply.result is not None else reply.describe_error()
            self.add(
                rule,
                SERVER,
                f"resources/directory/read of {what} answered {got}; it must be error -32602",
                uri,
            )

        async with anyio.create_task_group() as group:
            for uri, rule, what in targets:
                group.start_soon(probe, uri, rule, what)


def _read_request(uri: str) -> ReadResourceRequest:
    return ReadResourceRequest(params=ReadResourceRequestParams(uri=uri))


def _decode_read(uri: str, reply: Reply) -> FileRead:
    if reply.result is None:
        return FileRead(failure=("file.read-error", f"resources/read answered {reply.describe_error()}"))
    contents = reply.result.get("contents")
    if not isinstance(contents, list):
        return FileRead(failure=("file.contents-invalid", "the resources/read result has no 'contents' array"))
    canon = _canon(uri)
    blocks = [
        b for b in contents if isinstance(b, dict) and isinstance(b.get("uri"), str) and _canon(b["uri"]) == canon
    ]
    if len(blocks) != 1:
        others = [str(b.get("uri")) for b in contents if isinstance(b, dict)]
        detail = (
            f"resources/read returned {len(blocks)} content blocks for this URI (expected 1)"
            if blocks
            else "resources/read returned no content block for this URI"
            + (f" (blocks for {_examples(others, 2)})" if others else "")
        )
        return FileRead(failure=("file.contents-invalid", detail))
    block = cast(dict[str, Any], blocks[0])
    mime = block.get("mimeType")
    mime_type = mime if isinstance(mime, str) else None
    text, blob = block.get("text"), block.get("blob")
    if isinstance(text, str):
        try:
            return FileRead(text.encode("utf-8"), True, mime_type)
        except UnicodeEncodeError:
            return FileRead(failure=("file.contents-invalid", "the text block is not valid Unicode"))
    if isinstance(blob, str):
        try:
            return FileRead(base64.b64decode(blob, validate=True), False, mime_type)
        except (binascii.Error, ValueError):
            return FileRead(failure=("file.contents-invalid", "the blob block is not valid base64"))
    return FileRead(failure=("file.contents-invalid", "the content block has neither text nor blob"))


def _entry_difference(listed: Mapping[str, Any], got: Mapping[str, Any]) -> str:
    """How `got` (skills/get) differs from `listed` (skills/list), or "" when they are the same entry."""

    def resources(entry: Mapping[str, Any]) -> object:
        value = entry.get("resources", "<missing>")
        if isinstance(value, list):
            return sorted(json.dumps(v, sort_keys=True) for v in value)
        return value

    parts: list[str] = []
    fm_a, fm_b = listed.get("frontmatter"), got.get("frontmatter")
    if fm_a != fm_b:
        if isinstance(fm_a, dict) and isinstance(fm_b, dict):
            keys = sorted(
                k for k in {*fm_a, *fm_b} if fm_a.get(k, None) != fm_b.get(k, None) or (k in fm_a) != (k in fm_b)
            )
            parts.append("frontmatter field(s) " + ", ".join(keys) + " differ")
        else:
            parts.append("the frontmatter differs")
    ra, rb = listed.get("resources", "<missing>"), got.get("resources", "<missing>")
    if resources(listed) != resources(got):
        if isinstance(ra, list) and isinstance(rb, list):

            def index(items: list[object]) -> dict[str, str]:
                return {str(i.get("uri")): json.dumps(i, sort_keys=True) for i in items if isinstance(i, dict)}

            a, b = index(cast(list[object], ra)), index(cast(list[object], rb))
            added = sorted(b.keys() - a.keys())
            removed = sorted(a.keys() - b.keys())
            changed = sorted(u for u in a.keys() & b.keys() if a[u] != b[u])
            for word, uris in (("added", added), ("removed", removed), ("changed", changed)):
                if uris:
                    parts.append(f"{word} {_examples(uris)}")
            if not parts:
                parts.append("the resources arrays differ")
        else:
            parts.append(f"resources is {_show(rb, 30)} instead of {_show(ra, 30)}")
    other = sorted(k for k in {*listed, *got} - {"frontmatter", "resources"} if listed.get(k) != got.get(k))
    if other:
        parts.append("field(s) " + ", ".join(other) + " differ")
    return "; ".join(parts)


async def audit(
    send: Send,
    capabilities: Mapping[str, Any],
    *,
    protocol_version: str | None = None,
    concurrency: int = 8,
    request_timeout: float = 30.0,
    max_pages: int = 1000,
    progress: Progress | None = None,
    nonce: str | None = None,
) -> AuditResult:
    """Audit one server (see the module docstring); `send` sends one raw request."""
    auditor = Auditor(
        send,
        capabilities,
        protocol_version=protocol_version,
        concurrency=concurrency,
        timeout=request_timeout,
        max_pages=max_pages,
        progress=progress,
        nonce=nonce,
    )
    return await auditor.run()

"""One rule, one verdict: the server, the host, `skillwire lint` and `skillwire check` agree on bad entries.

The field and entry rules have one owner (`skillwire.core.fields`). Each case below is one bad skill
folder; the same folder is

- scanned by the server's catalog (it must be skipped, with the rule's message as the reason),
- linted (an error under the lint id of the same rule),
- and published, as the entry a careless server would build from it, by a hand-written SDK server
  in process, to which a `SkillHost` (the entry refused at listing, or the load declined for the
  limits) and the `skillwire check` audit (a finding under the check id of the same rule) connect.

A good skill beside them passes everywhere, so no verdict comes from a broken set-up.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, ReadResourceRequestParams, RequestParams
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import Ignored
from skillwire.checks import audit as check
from skillwire.checks import lint
from skillwire.client.requests import send_raw
from skillwire.core import fields
from skillwire.core.errors import FrontmatterError, LimitExceeded, NotASkill
from skillwire.core.fields import Rule
from skillwire.core.skill_md import parse_skill_md
from skillwire.host.host import SkillHost
from skillwire.host.policy import ApproveAll
from support import skills

pytestmark = pytest.mark.anyio

EXTENSION_ID = "io.modelcontextprotocol/skills"


def skill_md(name: str, description: str, extra: str = "") -> str:
    return skills.skill_md(name, description, extra, body="Body.\n")


#: folder -> (files, the rule every consumer must apply)
CASES: dict[str, tuple[dict[str, str], Rule]] = {
    "blank-description": ({"SKILL.md": skill_md("blank-description", "'   '")}, Rule.DESCRIPTION_EMPTY),
    "long-description": ({"SKILL.md": skill_md("long-description", "x" * 1025)}, Rule.DESCRIPTION_TOO_LONG),
    "name-mismatch": ({"SKILL.md": skill_md("other-name", "Named after another folder.")}, Rule.NAME_MISMATCH),
    "list-metadata": (
        {"SKILL.md": skill_md("list-metadata", "List metadata.", "metadata:\n  trigger-keywords: [pdf, forms]\n")},
        Rule.METADATA_NOT_STRING,
    ),
    "over-limit": (
        {"SKILL.md": skill_md("over-limit", "513 files."), **{f"files/f{i:03}.txt": f"{i}\n" for i in range(512)}},
        Rule.TOO_MANY_FILES,
    ),
}
GOOD = {"SKILL.md": skill_md("good", "A good skill.")}


def uri(folder: str, path: str = "SKILL.md") -> str:
    return f"skill://{folder}/{path}"


def expected_message(folder: str) -> str:
    files, rule = CASES[folder]
    [problem] = [p for p in fields.entry_problems(entry(folder, files)) if p.rule is rule]
    return problem.message


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for folder, files in [*((f, c[0]) for f, c in CASES.items()), ("good", GOOD)]:
        for path, text in files.items():
            (tmp_path / folder / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / path).write_text(text)
    return tmp_path


# -- a server that publishes what it should not -------------------------------------------------------------


def entry(folder: str, files: dict[str, str]) -> dict[str, Any]:
    """The entry a server that checks nothing builds from a folder: YAML 1.2 frontmatter, honest manifest."""
    resources = [
        {"uri": uri(folder, path), "digest": "sha256:" + hashlib.sha256(text.encode()).hexdigest(), "size": len(text)}
        for path, text in sorted(files.items())
    ]
    frontmatter = parse_skill_md(files["SKILL.md"].encode()).frontmatter
    return {"uri": uri(folder), "frontmatter": frontmatter, "resources": resources}


class GetSkillParams(RequestParams):
    uri: str


def lying_server() -> MCPServer:
    published = {folder: files for folder, (files, _) in CASES.items()} | {"good": GOOD}
    entries = {uri(folder): entry(folder, files) for folder, files in published.items()}
    content = {uri(folder, path): text for folder, files in published.items() for path, text in files.items()}
    cache = {"ttlMs": 0, "cacheScope": "private"}

    async def list_skills(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        return {"resultType": "complete", "skills": list(entries.values()), **cache}

    async def get_skill(ctx: ServerRequestContext[Any, Any], params: GetSkillParams) -> HandlerResult:
        if params.uri not in entries:
            raise MCPError(INVALID_PARAMS, f"Unknown skill: {params.uri}")
        return {"resultType": "complete", "skill": entries[params.uri], **cache}

    async def read(ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams) -> HandlerResult:
        target = str(params.uri)
        if target not in content:
            raise MCPError(INVALID_PARAMS, f"Resource not found: {target}", {"uri": target})
        mime = "text/markdown" if target.endswith(".md") else "text/plain"
        block = {"uri": target, "mimeType": mime, "text": content[target]}
        return {"resultType": "complete", "contents": [block], **cache}

    async def list_resources(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        return {"resultType": "complete", "resources": [], **cache}

    server = MCPServer("lying-skills")
    lowlevel = server._lowlevel_server
    lowlevel.add_request_handler("skills/list", PaginatedRequestParams, list_skills)
    lowlevel.add_request_handler("skills/get", GetSkillParams, get_skill)
    lowlevel.add_request_handler("resources/read", ReadResourceRequestParams, read)
    lowlevel.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    lowlevel.extensions[EXTENSION_ID] = {}
    return server


# -- the four verdicts ----------------------------------------------------------------------------------------


def server_verdicts(root: Path) -> dict[str, str]:
    """folder -> the reason the server's catalog skipped it."""
    snapshot = SkillCatalog([root]).snapshot
    assert uri("good") in snapshot.skill_by_uri
    return {Path(skip.location).name: skip.reason for skip in snapshot.skipped}


def lint_verdicts(root: Path) -> dict[str, set[tuple[str, str]]]:
    """folder -> {(lint rule, severity)} of its findings."""
    out: dict[str, set[tuple[str, str]]] = {}
    for finding in lint.lint_path(str(root)).findings:
        if finding.skill is not None:
            out.setdefault(Path(finding.skill).name, set()).add((finding.rule, finding.severity))
    return out


async def host_verdicts() -> dict[str, str]:
    """folder -> why the host refused the entry (at listing) or declined to load it."""
    out: dict[str, str] = {}
    async with Client(lying_server()) as client, SkillHost(policy=ApproveAll(), use_cache=False) as host:
        await host.attach_client("lying", client)
        listed = {skill.ref.uri for skill in await host.list_skills()}
        for folder in [*CASES, "good"]:
            if uri(folder) not in listed:
                [problem] = [p for p in host.registry.problems["lying"] if p.uri == uri(folder)]
                out[folder] = problem.reason
                continue
            try:
                await host.load("lying", uri(folder))
            except LimitExceeded as exc:
                out[folder] = str(exc)
    return out


async def check_verdicts() -> dict[str, set[tuple[str, str]]]:
    """folder -> {(check rule, severity)} of its findings."""
    async with Client(lying_server()) as client:
        capabilities = client.server_capabilities.model_dump(by_alias=True, exclude_none=True, mode="json")

        async def send(request: Any) -> dict[str, Any]:
            return await send_raw(client, request)

        result = await check.audit(send, capabilities, protocol_version=client.protocol_version)
    out: dict[str, set[tuple[str, str]]] = {}
    for finding in result.findings:
        if finding.skill is not None and finding.skill != check.SERVER:
            out.setdefault(finding.skill.split("/")[2], set()).add((finding.rule, finding.severity))
    return out


async def test_server_host_lint_and_check_agree_on_every_bad_entry(root: Path) -> None:
    server = server_verdicts(root)
    linted = lint_verdicts(root)
    hosted = await host_verdicts()
    checked = await check_verdicts()
    assert set(server) == set(hosted) == set(CASES)  # the good skill is served and loaded
    assert "good" not in linted
    assert "good" not in checked
    for folder, (_, rule) in CASES.items():
        message = expected_message(folder)
        assert message in server[folder], (folder, server[folder])
        assert message in hosted[folder], (folder, hosted[folder])
        if rule in lint.FIELD_RULES:
            assert linted[folder] == {(lint.FIELD_RULES[rule], "error")}, (folder, linted[folder])
        check_rule = check.ENTRY_RULES[rule]
        assert check_rule is not None
        severity = "failure" if fields.RULES[rule] == "refused" else "warning"
        assert checked[folder] == {(check_rule, severity)}, (folder, checked[folder])
    # The limits are lint's own finding (it names the largest files); the rule is the same one.
    assert linted["over-limit"] == {("too-many-files", "error")}


def test_severities_follow_the_weight_of_each_rule() -> None:
    """lint errors on what a server will not publish; check fails what a host refuses and warns on the rest."""
    for rule, lint_id in lint.FIELD_RULES.items():
        assert lint.RULES[lint_id][0] == ("warning" if fields.RULES[rule] == "advice" else "error"), rule
    for rule, check_id in check.ENTRY_RULES.items():
        if check_id is not None:
            want = "failure" if fields.RULES[rule] == "refused" else "warning"
            assert check.RULES[check_id].severity == want, rule
    assert set(check.ENTRY_RULES) == set(Rule)
    assert set(lint.FIELD_RULES) == {r for r in Rule if r.value.split("-")[0] in FIELD_PREFIXES}


FIELD_PREFIXES = {"name", "description", "compatibility", "license", "allowed", "metadata", "unknown"}


def test_every_reason_the_walk_leaves_a_path_out_has_a_lint_rule() -> None:
    """Lint maps the walk's reasons by kind (an enum), never by the wording of the sentence."""
    assert set(lint.IGNORED_RULES) == set(Ignored)
    assert all(rule in lint.RULES for rule, _ in lint.IGNORED_RULES.values())


@pytest.mark.parametrize(
    ("text", "kind", "lint_rule"),
    [
        ("---\nname: a\nname: b\n---\n", "duplicate-key", "duplicate-key"),
        ("---\n- a\n---\n", "not-a-mapping", "frontmatter-not-mapping"),
        ("---\n---\n", "not-a-mapping", "frontmatter-not-mapping"),
        ("---\nname: [\n---\n", "syntax", "yaml-syntax"),
    ],
)
def test_yaml_errors_carry_their_kind_and_lint_reads_the_kind(text: str, kind: str, lint_rule: str) -> None:
    with pytest.raises(FrontmatterError) as info:
        parse_skill_md(text.encode())
    assert info.value.kind == kind
    checked = lint.check_skill_md(text.encode(), file="SKILL.md", expected_name="a")
    assert [f.rule for f in checked.findings] == [lint_rule]


@pytest.mark.parametrize(
    ("data", "kind", "lint_rule"),
    [
        (b"# no frontmatter\n", "no-frontmatter", "no-frontmatter"),
        (b"---\nname: a\n", "unclosed", "unclosed-frontmatter"),
        (b"---\nname: caf\xe9\n---\n", "not-utf8", "not-utf8"),
    ],
)
def test_not_a_skill_carries_its_kind(data: bytes, kind: str, lint_rule: str) -> None:
    with pytest.raises(NotASkill) as info:
        parse_skill_md(data)
    assert info.value.kind == kind
    assert [f.rule for f in lint.check_skill_md(data, file="SKILL.md", expected_name="a").findings] == [lint_rule]

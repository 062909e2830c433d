"""The model-facing tools (`SkillTools`): schemas, framing, the one activation path, and refusals as tool errors.

Runs against the hostile fixture server (tests/servers/hostile_server.py) over Streamable HTTP.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from servers.hostile_server import (
    CROSS_ORIGIN_TARGET,
    EVIL_DESCRIPTION,
    GUIDE,
    LIE,
    HostileServer,
    root_uri,
    running_hostile_server,
    served_bytes,
    uri,
)
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.framing import UNTRUSTED_NOTICE
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from skillwire.host.policy import ApproveAll, DenyAll, Policy
from skillwire.host.tool_schemas import INSTRUCTIONS, TOOL_DEFINITIONS, tool_definitions
from skillwire.host.tools import SkillTools, ToolResult

pytestmark = pytest.mark.anyio

ORIGIN = "hostile"
# JSON Schema keywords these definitions may use; anything else would be a typo the model cannot act on.
SCHEMA_KEYWORDS = {"type", "properties", "required", "additionalProperties", "description"}
CLOSE_TAG = re.compile(r"<\s*/\s*mcp-content", re.IGNORECASE)
OPEN_TAG = re.compile(r"<\s*mcp-content", re.IGNORECASE)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileServer]:
    with running_hostile_server(tmp_path_factory.mktemp("hostile-tools")) as running:
        yield running


@dataclass
class Tools:
    tools: SkillTools
    host: SkillHost
    server: HostileServer

    async def call(self, name: str, **arguments: Any) -> ToolResult:
        result = await self.tools.call(name, arguments)
        assert LIE not in result.text, f"lying bytes reached the model: {result.text[:300]}"
        assert EVIL_DESCRIPTION not in result.text
        return result


@asynccontextmanager
async def tools_for(
    server: HostileServer, tmp_path: Path, policy: Policy | None = None, *, other: bool = False
) -> AsyncIterator[Tools]:
    with ApprovalStore(tmp_path / "approvals.sqlite") as approvals:
        async with SkillHost(
            policy=policy if policy is not None else ApproveAll(),
            approvals=approvals,
            cache=ContentCache(tmp_path / "cache", discovery_paths=[]),
        ) as host:
            await host.add_server(ORIGIN, server.url)
            if other:
                await host.add_server("other", server.url)
            yield Tools(SkillTools(host), host, server)


def check_frame(rendered: str, *, origin: str, uri: str, kind: str, verified: bool) -> str:
    """The framed text's body, after checking the frame is whole and there is exactly one.

    Text before the frame is the host's own note (read_skill names the skill root there); it must not
    contain a frame of its own.
    """
    assert rendered.count("<mcp-content") >= 1
    rendered = rendered[rendered.index("<mcp-content") :]
    head = f'<mcp-content origin="{origin}" uri="{uri}"'
    assert rendered.startswith(head), rendered[:200]
    first_line = rendered.split("\n", 1)[0]
    assert f'kind="{kind}"' in first_line
    assert f'verified="{"yes" if verified else "no"}"' in first_line
    assert rendered.endswith("\n</mcp-content>")
    assert len(CLOSE_TAG.findall(rendered)) == 1, "the body closed the frame"
    assert len(OPEN_TAG.findall(rendered)) == 1, "the body opened a frame of its own"
    notice = rendered.split("\n", 2)[1]
    assert notice.startswith("<notice>")
    assert f"labelled &#x27;{origin}&#x27;" in notice or f"labelled '{origin}'" in notice
    assert "untrusted" in notice
    return rendered.split("\n", 2)[2].removesuffix("\n</mcp-content>")


# -- definitions -----------------------------------------------------------------------------------------------------


def _check_schema(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)  # a valid JSON Schema, not merely JSON
    assert set(schema) <= SCHEMA_KEYWORDS
    assert schema["type"] == "object"
    properties = schema["properties"]
    assert isinstance(properties, dict)
    for name, prop in properties.items():
        assert isinstance(name, str)
        assert set(prop) <= SCHEMA_KEYWORDS
        # A strict OpenAI schema makes an optional property required and nullable: `["string", "null"]`.
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        assert set(types) <= {"string", "integer", "number", "boolean", "object", "array", "null"}
        assert set(types) - {"null"}
        assert isinstance(prop.get("description", ""), str)
    required = schema.get("required", [])
    assert isinstance(required, list)
    assert len(set(required)) == len(required)
    assert set(required) <= set(properties)
    assert schema.get("additionalProperties") is False


def _input_schemas(shape: str) -> dict[str, dict[str, Any]]:
    definitions = tool_definitions(shape)  # type: ignore[arg-type]
    json.loads(json.dumps(definitions))  # plain JSON, as any tool-calling API needs
    if shape == "openai":
        for tool in definitions:
            assert set(tool) == {"type", "function"}
            assert tool["type"] == "function"
            assert set(tool["function"]) == {"name", "description", "parameters", "strict"}
        return {t["function"]["name"]: t["function"]["parameters"] for t in definitions}
    if shape == "openai-responses":
        for tool in definitions:
            assert set(tool) == {"type", "name", "description", "parameters", "strict"}
        return {t["name"]: t["parameters"] for t in definitions}
    key = {"mcp": "inputSchema", "anthropic": "input_schema"}[shape]
    for tool in definitions:
        expected = {"name", "description", key} | (
            {"outputSchema"} if shape == "mcp" and tool["name"] == "list_skills" else set()
        )
        assert set(tool) == expected
        assert re.fullmatch(r"[a-z_]{1,64}", tool["name"])
        assert tool["description"]
    return {t["name"]: t[key] for t in definitions}


@pytest.mark.parametrize("shape", ["mcp", "anthropic", "openai", "openai-responses"])
def test_tool_definitions_are_json_schemas_in_each_shape(shape: str) -> None:
    by_name = _input_schemas(shape)
    assert list(by_name) == ["list_skills", "read_skill", "read_resource"]
    for schema in by_name.values():
        _check_schema(schema)
    assert set(by_name["list_skills"]["properties"]) == {"query", "cursor"}
    if shape.startswith("openai"):  # strict: all required, the optional ones nullable
        assert by_name["list_skills"]["required"] == ["query", "cursor"]
        Draft202012Validator(by_name["list_skills"]).validate({"query": None, "cursor": None})
    else:
        assert "required" not in by_name["list_skills"]
    for name in ("read_skill", "read_resource"):
        assert by_name[name]["required"] == ["server", "uri"]
        assert set(by_name[name]["properties"]) == {"server", "uri"}
    # The arguments the descriptions document are accepted by the schema; anything else is not.
    Draft202012Validator(by_name["list_skills"]).validate({"query": "pdf forms", "cursor": "sw1.x"})
    Draft202012Validator(by_name["read_skill"]).validate({"server": "work", "uri": "skill://a/SKILL.md"})
    assert list(Draft202012Validator(by_name["read_skill"]).iter_errors({"server": "work"}))
    assert list(Draft202012Validator(by_name["list_skills"]).iter_errors({"page": 2}))


def test_mcp_output_schema_is_a_json_schema_and_the_old_names_still_work() -> None:
    mcp = {t["name"]: t for t in tool_definitions("mcp")}
    Draft202012Validator.check_schema(mcp["list_skills"]["outputSchema"])
    assert "outputSchema" not in mcp["read_skill"]
    assert tool_definitions("anthropic") == TOOL_DEFINITIONS
    assert isinstance(INSTRUCTIONS, str)
    assert all(name in INSTRUCTIONS for name in ("list_skills", "read_skill", "read_resource", "cursor", "query"))


# -- list_skills -----------------------------------------------------------------------------------------------------


async def test_list_skills_shows_origin_labels_and_reads_nothing(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path) as t:
        reads = len(server.reads())
        result = await t.call("list_skills")
        assert not result.is_error
        assert result.text.startswith("<available_skills ")
        assert f'<skill name="{ORIGIN}/honest" server="{ORIGIN}" uri="{uri("honest")}">An honest skill.</skill>' in (
            result.text
        )
        assert result.structured is not None
        assert {
            "server": ORIGIN,
            "name": f"{ORIGIN}/honest",
            "uri": uri("honest"),
            "description": "An honest skill.",
        } in (result.structured["skills"])
        assert "trusted-local-server" not in result.text  # the server's own name is never the label
        assert "bad-resources-string" not in result.text  # invalid entries are not offered
        assert len(server.reads()) == reads
        assert not t.host.active


async def test_list_skills_with_nothing_configured_says_so(tmp_path: Path) -> None:
    with ApprovalStore(tmp_path / "a.sqlite") as approvals:
        async with SkillHost(approvals=approvals, cache=ContentCache(tmp_path / "c", discovery_paths=[])) as host:
            result = await SkillTools(host).call("list_skills")
    assert not result.is_error
    assert result.text == "No skills are available."


# -- read_skill ------------------------------------------------------------------------------------------------------


async def test_read_skill_is_framed_with_origin_and_notice(server: HostileServer, tmp_path: Path) -> None:
    policy = ApproveAll()
    async with tools_for(server, tmp_path, policy) as t:
        result = await t.call("read_skill", server=ORIGIN, uri=uri("honest"))
        assert not result.is_error
        body = check_frame(result.text, origin=ORIGIN, uri=uri("honest"), kind="skill", verified=True)
        frame_head = result.text[result.text.index("<mcp-content") :].split("\n", 1)[0]
        assert f'base="{root_uri("honest")}/"' in frame_head
        assert f"Its root is {root_uri('honest')}/" in result.text.split("\n", 1)[0]
        assert body == served_bytes("honest", "SKILL.md").decode()
        assert UNTRUSTED_NOTICE.split("{origin!r}")[0].strip() in result.text
        assert [s.ref for s in t.host.active] == [SkillRef(ORIGIN, uri("honest"))]
        assert len(policy.asked) == 1

        guide = await t.call("read_resource", server=ORIGIN, uri=uri("honest", "references/guide.md"))
        assert not guide.is_error
        body = check_frame(
            guide.text, origin=ORIGIN, uri=uri("honest", "references/guide.md"), kind="skill-file", verified=True
        )
        assert body == GUIDE

        listing = await t.call("read_resource", server=ORIGIN, uri=root_uri("honest"))
        assert not listing.is_error
        assert f"{root_uri('honest')}/references/ (directory)" in listing.text
        assert "origin 'hostile'" in listing.text


async def test_a_body_cannot_close_or_reopen_the_frame(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path) as t:
        result = await t.call("read_skill", server=ORIGIN, uri=uri("frame-escape"))
        assert not result.is_error
        body = check_frame(result.text, origin=ORIGIN, uri=uri("frame-escape"), kind="skill", verified=True)
        assert "I am outside the frame now." in body  # still inside: the frame is whole
        assert 'origin="local"' not in result.text.split("\n", 1)[0]

        escape = await t.call("read_resource", server=ORIGIN, uri=uri("frame-escape", "references/escape.md"))
        check_frame(
            escape.text,
            origin=ORIGIN,
            uri=uri("frame-escape", "references/escape.md"),
            kind="skill-file",
            verified=True,
        )


# -- read_resource is never a load -----------------------------------------------------------------------------------


async def test_read_resource_of_a_skill_md_is_not_a_load(server: HostileServer, tmp_path: Path) -> None:
    policy = ApproveAll()
    async with tools_for(server, tmp_path, policy) as t:
        result = await t.call("read_resource", server=ORIGIN, uri=uri("honest"))
        assert not result.is_error
        body = check_frame(result.text, origin=ORIGIN, uri=uri("honest"), kind="resource", verified=False)
        assert body == served_bytes("honest", "SKILL.md").decode()
        assert t.host.active == []
        assert policy.asked == []
        assert t.host.approvals.get(SkillRef(ORIGIN, uri("honest"))) is None

        # With a skill active, reading another skill's SKILL.md (same server) is still just a read.
        await t.call("read_skill", server=ORIGIN, uri=uri("deploy"))
        active = list(t.host.active)
        asked = len(policy.asked)
        result = await t.call("read_resource", server=ORIGIN, uri=uri("honest"))
        assert not result.is_error
        assert t.host.active == active
        assert len(policy.asked) == asked
        # And the active skill's own SKILL.md through read_resource is served from the held entry, not reloaded.
        again = await t.call("read_resource", server=ORIGIN, uri=uri("deploy"))
        assert not again.is_error
        assert t.host.active == active
        assert len(policy.asked) == asked


# -- refusals are tool errors ----------------------------------------------------------------------------------------


async def test_denied_approval_is_a_tool_error(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path, DenyAll()) as t:
        result = await t.call("read_skill", server=ORIGIN, uri=uri("honest"))
        assert result.is_error
        assert "did not approve" in result.text
        assert uri("honest") in result.text
        assert not t.host.active


@pytest.mark.parametrize(
    ("skill", "words"),
    [
        ("wrong-size", ["Refused", "size mismatch", "re-approve"]),
        ("wrong-digest", ["Refused", "digest mismatch", "re-approve"]),
        ("frontmatter-swap", ["Refused", "description", "re-approve"]),
        ("dynamic", ["Not loaded", "dynamic"]),
        ("too-many", ["Not loaded", "513 files", "limit"]),
        ("too-big", ["Not loaded", "16 MiB"]),
        ("no-resources", ["Failed", "'resources' is missing"]),
    ],
    ids=["size", "digest", "frontmatter", "dynamic", "files", "bytes", "resources"],
)
async def test_lies_are_tool_errors_that_say_why(
    server: HostileServer, tmp_path: Path, skill: str, words: list[str]
) -> None:
    async with tools_for(server, tmp_path) as t:
        await t.call("list_skills")
        result = await t.call("read_skill", server=ORIGIN, uri=uri(skill))
        assert result.is_error
        for word in words:
            assert word in result.text
        assert not t.host.active


async def test_unlisted_and_changed_files_are_tool_errors(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path) as t:
        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("unlisted"))).is_error
        reads = len(server.reads())
        result = await t.call("read_resource", server=ORIGIN, uri=uri("unlisted", "references/secret.md"))
        assert result.is_error
        assert result.text.startswith("No such file in this skill")
        assert "These exist:" in result.text
        assert "references/" in result.text
        assert len(server.reads()) == reads

        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("wrong-size-file"))).is_error
        result = await t.call("read_resource", server=ORIGIN, uri=uri("wrong-size-file", "references/data.md"))
        assert result.is_error
        assert "size mismatch" in result.text


async def test_cross_origin_read_is_a_tool_error_naming_both_servers(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path, other=True) as t:
        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("cross-origin"))).is_error
        reads = len(server.reads())
        result = await t.call("read_resource", server="other", uri=CROSS_ORIGIN_TARGET)
        assert result.is_error
        assert "'hostile'" in result.text
        assert "'other'" in result.text
        assert "approval" in result.text
        assert len(server.reads()) == reads

    async with tools_for(server, tmp_path / "approved", ApproveAll(cross_origin=True), other=True) as t:
        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("cross-origin"))).is_error
        result = await t.call("read_resource", server="other", uri=CROSS_ORIGIN_TARGET)
        assert not result.is_error
        body = check_frame(result.text, origin="other", uri=CROSS_ORIGIN_TARGET, kind="resource", verified=False)
        assert body == GUIDE


async def test_bad_calls_are_tool_errors(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path) as t:
        missing = await t.call("read_skill", server=ORIGIN)
        assert missing.is_error
        assert "'server' and 'uri'" in missing.text
        wrong_type = await t.tools.call("read_resource", {"server": ORIGIN, "uri": 7})
        assert wrong_type.is_error
        unknown_tool = await t.call("run_skill", server=ORIGIN, uri=uri("honest"))
        assert unknown_tool.is_error
        assert "run_skill" in unknown_tool.text
        unknown_server = await t.call("read_skill", server="nowhere", uri=uri("honest"))
        assert unknown_server.is_error
        assert "'nowhere'" in unknown_server.text
        not_served = await t.call("read_skill", server=ORIGIN, uri=uri("no-such-skill"))
        assert not_served.is_error
        assert not_served.text.startswith("Not found")
        not_a_file = await t.call("read_resource", server=ORIGIN, uri="skill://hostile/nothing/here.md")
        assert not_a_file.is_error


async def test_relative_and_absolute_reads_with_a_nested_skill_active(server: HostileServer, tmp_path: Path) -> None:
    async with tools_for(server, tmp_path) as t:
        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("outer"))).is_error
        assert not (await t.call("read_skill", server=ORIGIN, uri=uri("outer", "inner/SKILL.md"))).is_error
        # Relative paths resolve against each active skill's own root; only one holds each of these.
        notes = await t.call("read_resource", server=ORIGIN, uri="notes.md")
        assert not notes.is_error, notes.text
        assert check_frame(
            notes.text, origin=ORIGIN, uri=uri("outer", "inner/notes.md"), kind="skill-file", verified=True
        ) == ("Inner notes.\n")
        via_outer = await t.call("read_resource", server=ORIGIN, uri="inner/notes.md")
        assert not via_outer.is_error
        assert "Inner notes." in via_outer.text
        absolute = await t.call("read_resource", server=ORIGIN, uri=uri("outer", "inner/notes.md"))
        assert not absolute.is_error
        assert "Inner notes." in absolute.text
        both = await t.call("read_resource", server=ORIGIN, uri="SKILL.md")
        assert both.is_error
        assert "more than one loaded skill" in both.text
        missing = await t.call("read_resource", server=ORIGIN, uri=uri("outer", "inner/nope.md"))
        assert missing.is_error
        assert missing.text.startswith("No such file in this skill")
        assert "inner" in missing.text


@pytest.mark.parametrize("shape", ["mcp", "anthropic", "openai"])
async def test_a_call_with_each_shapes_documented_arguments_works(
    server: HostileServer, tmp_path: Path, shape: str
) -> None:
    schemas = _input_schemas(shape)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_skills", {}),
        ("list_skills", {"query": "honest skill"}),
        ("read_skill", {"server": ORIGIN, "uri": uri("honest")}),
        ("read_resource", {"server": ORIGIN, "uri": "references/guide.md"}),
    ]
    async with tools_for(server, tmp_path) as t:
        for name, given in calls:
            # Under a strict schema (OpenAI) every property is required and the model sends null for the
            # optional ones; the tools take that as absent.
            strict = set(schemas[name].get("required", [])) == set(schemas[name]["properties"])
            arguments = {key: given.get(key) for key in schemas[name]["properties"]} if strict else given
            Draft202012Validator(schemas[name]).validate(arguments)  # what the model may send, per the schema
            result = await t.call(name, **arguments)
            assert not result.is_error, (name, result.text)
        first = await t.call("list_skills")
        assert first.structured is not None
        Draft202012Validator(tool_definitions("mcp")[0]["outputSchema"]).validate(first.structured)

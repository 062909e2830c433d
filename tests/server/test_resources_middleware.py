"""`SkillsExtension` installed through the SDK's public extension points, beside a user's own resources and tools.

The documented way is `MCPServer(..., extensions=[skills], middleware=skills.middleware(),
subscriptions=skills.subscriptions)`: it needs neither private `MCPServer` attribute (the seam's accessors are
made to fail here to prove it), skill:// files are served by the extension, and everything the user registered
(resources, a resource template, a tool) still works, in both eras. Requests routed to the extension's internal
methods still pass the SDK's own gates, and those methods cannot be called directly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.client import Client
from mcp.server.extension import Extension, MethodBinding
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.shared.subscriptions import ResourcesListChanged
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

from skillwire.catalog.catalog import SkillCatalog
from skillwire.core.protocol import EXTENSION_ID
from skillwire.server import _sdk
from skillwire.server.extension import SkillsExtension
from skillwire.server.resources import ROUTED_LIST, ROUTED_READ
from support.calls import send

MODES = ["auto", "legacy"]
SKILL_MD = "---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n"
SKILLS = ["alpha", "beta", "gamma"]


async def listing(client: Client) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    for _ in range(20):
        page = await send(client, "resources/list", {"cursor": cursor} if cursor else {})
        uris += [item["uri"] for item in page["resources"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            return uris
    raise AssertionError("resources/list did not end")


@pytest.fixture
def catalog(tmp_path: Path) -> SkillCatalog:
    for name in SKILLS:
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL_MD.format(name=name), encoding="utf-8")
    (tmp_path / "skills" / "alpha" / "notes.txt").write_text("alpha notes\n", encoding="utf-8")
    return SkillCatalog([tmp_path / "skills"])


@pytest.fixture
def no_private_access(monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam's `MCPServer` accessors raise: what runs under this fixture needs neither. (`connection_of`
    stays: legacy sessions' change notifications need it on every path; see server/_sdk.py.)"""

    def refuse(server: Any) -> Any:
        raise AssertionError("the documented constructor path reached into MCPServer privately")

    monkeypatch.setattr(_sdk, "lowlevel_server", refuse)
    monkeypatch.setattr(_sdk, "subscription_bus", refuse)


def users_server(skills: SkillsExtension) -> MCPServer[Any]:
    """A server with the user's own resources, template and tool, and the skills extension, as documented."""
    server: MCPServer[Any] = MCPServer(
        "users-server",
        extensions=[skills],
        middleware=skills.middleware(),
        subscriptions=skills.subscriptions,
    )

    @server.resource("test://hello", mime_type="text/plain")
    def hello() -> str:
        return "hello from the user"

    @server.resource("notes://{name}", mime_type="text/plain")
    def note(name: str) -> str:
        return f"note {name}"

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_the_documented_constructor_composes_with_the_users_resources_and_tools(
    catalog: SkillCatalog, mode: str, no_private_access: None
) -> None:
    skills = SkillsExtension(catalog, page_size=2)  # pages mix the user's resources and SKILL.md files
    server = users_server(skills)
    async with Client(server, mode=mode) as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None
        assert capabilities.extensions == {EXTENSION_ID: {"directoryRead": True}}  # legacy: re-added
        assert capabilities.resources is not None
        assert capabilities.tools is not None

        uris = await listing(client)
        assert uris == ["test://hello", *[f"skill://{name}/SKILL.md" for name in SKILLS]]

        [own] = (await send(client, "resources/read", {"uri": "test://hello"}))["contents"]
        assert own == {"uri": "test://hello", "mimeType": "text/plain", "text": "hello from the user"}
        [templated] = (await send(client, "resources/read", {"uri": "notes://x"}))["contents"]
        assert templated["text"] == "note x"
        templates = (await send(client, "resources/templates/list", {}))["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["notes://{name}"]  # no skill:// template of ours

        [skill_md] = (await send(client, "resources/read", {"uri": "skill://alpha/SKILL.md"}))["contents"]
        assert skill_md["mimeType"] == "text/markdown"
        assert skill_md["text"] == SKILL_MD.format(name="alpha")
        [notes] = (await send(client, "resources/read", {"uri": "skill://alpha/notes.txt"}))["contents"]
        assert notes["text"] == "alpha notes\n"
        with pytest.raises(MCPError) as unknown:
            await send(client, "resources/read", {"uri": "skill://nowhere/SKILL.md"})
        assert unknown.value.error.code == INVALID_PARAMS  # the server's own "not found", as before

        tools = (await send(client, "tools/list", {}))["tools"]
        assert [t["name"] for t in tools] == ["add"]
        result = await send(client, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert result["content"][0]["text"] == "5"

        listed = await send(client, "skills/list", {})
        assert [s["uri"] for s in listed["skills"]] == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]


@pytest.mark.anyio
async def test_a_user_resource_under_skill_scheme_not_in_the_catalog_stays_the_users(catalog: SkillCatalog) -> None:
    skills = SkillsExtension(catalog)
    server = users_server(skills)

    @server.resource("skill://user-owned/readme", mime_type="text/plain")
    def user_owned() -> str:
        return "the user's own skill:// resource"

    async with Client(server) as client:
        [content] = (await send(client, "resources/read", {"uri": "skill://user-owned/readme"}))["contents"]
        assert content["text"] == "the user's own skill:// resource"
        # ... and listed among the user's resources.
        assert "skill://user-owned/readme" in await listing(client)


@pytest.mark.anyio
@pytest.mark.parametrize("method", [ROUTED_READ, ROUTED_LIST])
async def test_the_internal_methods_cannot_be_called_directly(catalog: SkillCatalog, method: str) -> None:
    server = users_server(SkillsExtension(catalog))
    async with Client(server) as client:
        with pytest.raises(MCPError) as info:
            await send(client, method, {"uri": "skill://alpha/SKILL.md"})
        assert info.value.error.code == METHOD_NOT_FOUND


@pytest.mark.anyio
async def test_without_its_middleware_the_extension_says_so(
    catalog: SkillCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    skills = SkillsExtension(catalog)
    server: MCPServer[Any] = MCPServer("forgot-middleware", extensions=[skills])
    async with Client(server) as client:
        await send(client, "skills/list", {})
        await send(client, "skills/list", {})
    warnings = [r.getMessage() for r in caplog.records if "without its middleware" in r.getMessage()]
    assert len(warnings) == 1  # once, not per request
    assert "middleware=skills.middleware()" in warnings[0]


async def exchange(server: Server[Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Raw JSON-RPC through the SDK's own serving loop (the one stdio uses): the answers, in order."""
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](16)
    answers: list[dict[str, Any]] = []
    async with anyio.create_task_group() as group:
        group.start_soon(server.run, server_reads, server_writes, server.create_initialization_options())
        for message in messages:
            await to_server.send(SessionMessage(mcp_types.jsonrpc_message_adapter.validate_python(message)))
            if "id" in message:
                with anyio.fail_after(10):
                    answer = await from_server.receive()
                answers.append(json.loads(answer.message.model_dump_json(by_alias=True, exclude_none=True)))
        await to_server.aclose()
    return answers


@pytest.mark.anyio
async def test_a_routed_read_still_passes_the_sdks_initialize_gate(catalog: SkillCatalog) -> None:
    server: Server[Any] = Server("gated")
    SkillsExtension(catalog).attach(server)
    read_skill = {"uri": "skill://alpha/SKILL.md"}
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "gate-test", "version": "0"},
    }
    answers = await exchange(
        server,
        [
            {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": read_skill},
            {"jsonrpc": "2.0", "id": 2, "method": "resources/list", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": initialize},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": read_skill},
        ],
    )
    # Before initialize: refused by the SDK exactly as any request is, though the middleware routed it.
    assert [a.get("error", {}).get("code") for a in answers[:2]] == [INVALID_PARAMS, INVALID_PARAMS]
    assert answers[0]["error"]["message"] == "Invalid request parameters"
    assert answers[2]["result"]["capabilities"]["extensions"] == {EXTENSION_ID: {"directoryRead": True}}
    # After: the 2025-11-25 shape of resources/read (no 2026 fields such as resultType or ttlMs).
    assert answers[3]["result"] == {
        "contents": [
            {"uri": "skill://alpha/SKILL.md", "mimeType": "text/markdown", "text": SKILL_MD.format(name="alpha")}
        ]
    }


class OtherSkills(Extension):
    """Stands for mcp's own `Skills` extension (python-sdk main, unreleased): same identifier, own handlers."""

    identifier = EXTENSION_ID

    async def answer(self, ctx: Any, params: Any) -> dict[str, Any]:
        return {"skills": []}

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", mcp_types.PaginatedRequestParams, self.answer),
            MethodBinding("skills/get", mcp_types.PaginatedRequestParams, self.answer),
        ]


def test_one_skills_extension_per_server(catalog: SkillCatalog) -> None:
    ours = SkillsExtension(catalog)
    # The SDK refuses a second extension with the same identifier in the constructor ...
    with pytest.raises(ValueError, match="already registered"):
        MCPServer("both", extensions=[OtherSkills(), ours])
    # ... and attach() refuses to put ours beside one that already answers skills/*, changing nothing.
    server: MCPServer[Any] = MCPServer("theirs", extensions=[OtherSkills()])
    before = list(server.middleware)
    with pytest.raises(ValueError, match=r"skills/list is already served on this server by .*install one"):
        ours.attach(server)
    assert server.middleware == before
    assert ours.notifier.buses == [ours.subscriptions]
    # Attaching our own extension again is not a conflict (the idempotent case).
    mine: MCPServer[Any] = MCPServer("mine", extensions=[ours], middleware=ours.middleware())
    ours.attach(mine)
    assert [m for m in mine.middleware if m in ours.middleware()] == ours.middleware()


@pytest.mark.anyio
async def test_one_extension_on_two_servers_tells_both_buses(catalog: SkillCatalog) -> None:
    skills = SkillsExtension(catalog)
    heard: dict[str, list[object]] = {"first": [], "second": []}
    for name in heard:
        bus = InMemorySubscriptionBus()
        bus.subscribe(heard[name].append)
        skills.attach(MCPServer(name, subscriptions=bus))  # each server's own bus, found by attach
    await skills.notifier.notify()
    assert [type(e) for e in heard["first"]] == [type(e) for e in heard["second"]] == [ResourcesListChanged]


@pytest.mark.anyio
async def test_the_readmes_own_server_snippet_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_private_access: None
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### In your own server", 1)[1]
    snippet = section.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "skills" / "alpha").mkdir(parents=True)
    (tmp_path / "skills" / "alpha" / "SKILL.md").write_text(SKILL_MD.format(name="alpha"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)  # the reader's copy-paste, as is
    async with Client(namespace["mcp"]) as client:
        [content] = (await send(client, "resources/read", {"uri": "skill://alpha/SKILL.md"}))["contents"]
        assert content["text"] == SKILL_MD.format(name="alpha")

"""`SkillsExtension` on the official SDK, driven by its in-memory client in both eras: the default
2026-07-28 direct dispatch (`mode="auto"`) and the 2025-11-25 handshake (`mode="legacy"`), attached to
an `MCPServer` and to a low-level `Server`."""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp.client import Client
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.catalog import SkillCatalog
from skillwire.core.json import JSONValue
from skillwire.core.protocol import DIRECTORY_MIME_TYPE, EXTENSION_ID
from skillwire.core.protocol import SPEC_META_PREFIX as META_PREFIX
from skillwire.server.extension import SkillsExtension
from support.calls import send, send_error
from support.skills import skill_md, write_file

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
HOST_TEXT = "hello from the host"
PDF_SKILL_MD = """---
name: pdf-processing
description: Extract text and tables from PDF files.
license: Apache-2.0
metadata:
  author: acme
  version: "1.0"
compatibility: Needs pdftotext.
---
# PDF processing

See [the forms guide](references/FORMS.md).
"""

MODES = ["auto", "legacy"]
KINDS = ["mcpserver", "lowlevel"]


async def all_pages(client: Client, method: str, key: str, params: Mapping[str, Any] | None = None) -> list[Any]:
    pages: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    while True:
        request = dict(params or {})
        if cursor is not None:
            request["cursor"] = cursor
        result = await send(client, method, request)
        pages.append(result)
        cursor = result.get("nextCursor")
        if cursor is None:
            return pages
        assert cursor not in seen, "a cursor repeated"
        seen.add(cursor)
        assert len(pages) < 50


def build_catalog(root: Path) -> SkillCatalog:
    write_file(root / "pdf-processing" / "SKILL.md", PDF_SKILL_MD)
    write_file(root / "pdf-processing" / "references" / "FORMS.md", "# Forms\n\nFill them in.\n")
    write_file(root / "pdf-processing" / "assets" / "logo.png", PNG)
    write_file(root / "pdf-processing" / "scripts" / "extract.py", "print('extract')\n")
    write_file(root / "acme" / "billing" / "refunds" / "SKILL.md", skill_md("refunds", "Process refunds."))
    write_file(root / "acme" / "billing" / "refunds" / "examples" / "email.md", "Dear customer,\n")
    write_file(root / "git-workflow" / "SKILL.md", skill_md("git-workflow", "Branch, commit, rebase."))
    write_file(root / "code-review" / "SKILL.md", skill_md("code-review", "Review a change."))
    write_file(root / "code-review" / "security-audit" / "SKILL.md", skill_md("security-audit", "Audit security."))
    catalog = SkillCatalog([root])
    catalog.add_files("acme/hello", {"SKILL.md": skill_md("hello", "Say hello."), "data.bin": b"\x00\x01\xff"})
    catalog.add_files("internal", {"SKILL.md": skill_md("internal", "Unlisted.")}, listed=False)
    return catalog


LISTED = sorted(
    [
        "skill://acme/billing/refunds/SKILL.md",
        "skill://acme/hello/SKILL.md",
        "skill://code-review/SKILL.md",
        "skill://code-review/security-audit/SKILL.md",
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
    ]
)


def make_server(kind: str, extension: SkillsExtension, *, own_resources: bool = True) -> MCPServer | Server[Any]:
    """A host server with one resource of its own (`test://hello`), plus the skills extension."""
    server: MCPServer | Server[Any]
    if kind == "mcpserver":
        server = MCPServer("host")
        if own_resources:

            @server.resource("test://hello", mime_type="text/plain")
            def hello() -> str:
                return HOST_TEXT

            @server.resource("skill://host-owned/note", mime_type="text/plain")
            def host_owned() -> str:
                return "the host serves this skill:// URI itself"

    else:

        async def own_list(ctx: Any, params: Any) -> mcp_types.ListResourcesResult:
            return mcp_types.ListResourcesResult(
                resources=[mcp_types.Resource(uri="test://hello", name="hello", mime_type="text/plain")]
            )

        async def own_read(ctx: Any, params: mcp_types.ReadResourceRequestParams) -> mcp_types.ReadResourceResult:
            if str(params.uri) == "test://hello":
                return mcp_types.ReadResourceResult(
                    contents=[
                        mcp_types.TextResourceContents(uri="test://hello", mime_type="text/plain", text=HOST_TEXT)
                    ]
                )
            raise MCPError(INVALID_PARAMS, f"Unknown resource: {params.uri}", {"uri": str(params.uri)})

        server = (
            Server("host-lowlevel", on_list_resources=own_list, on_read_resource=own_read)
            if own_resources
            else Server("host-lowlevel")
        )
    extension.attach(server)
    return server


@pytest.fixture
def catalog(tmp_path: Path) -> SkillCatalog:
    return build_catalog(tmp_path / "skills")


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def client(catalog: SkillCatalog, mode: str, kind: str) -> AsyncIterator[Client]:
    extension = SkillsExtension(catalog, ttl_ms=5, cache_scope="public", page_size=2, directory_page_size=2)
    async with Client(make_server(kind, extension), mode=mode) as connected:
        yield connected


def decoded(content: Mapping[str, Any]) -> bytes:
    if "text" in content:
        assert "blob" not in content
        return str(content["text"]).encode("utf-8")
    return base64.b64decode(content["blob"], validate=True)


# -- capabilities ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_capability_is_advertised_with_directory_read(client: Client) -> None:
    capabilities = client.session.server_capabilities
    assert capabilities is not None
    assert capabilities.extensions == {EXTENSION_ID: {"directoryRead": True}}
    assert capabilities.resources is not None  # the extension requires the resources capability


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
async def test_without_directory_read_the_method_is_unknown(catalog: SkillCatalog, mode: str, kind: str) -> None:
    server = make_server(kind, SkillsExtension(catalog, directory_read=False))
    async with Client(server, mode=mode) as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None
        assert capabilities.extensions == {EXTENSION_ID: {}}
        error = await send_error(client, "resources/directory/read", {"uri": "skill://pdf-processing"})
        assert error.code == -32601
        assert (await send(client, "skills/list", {}))["skills"]


# -- skills/list, skills/get --------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_skills_list_pages_carry_the_configured_cache_fields(client: Client, catalog: SkillCatalog) -> None:
    pages = await all_pages(client, "skills/list", "skills")
    assert len(pages) == math.ceil(len(LISTED) / 2)
    uris: list[str] = []
    for page in pages:
        assert page["resultType"] == "complete"
        assert page["ttlMs"] == 5
        assert page["cacheScope"] == "public"
        assert 1 <= len(page["skills"]) <= 2
        uris += [entry["uri"] for entry in page["skills"]]
    assert uris == LISTED  # complete, in order, no duplicates, unlisted skills absent
    by_uri = {entry["uri"]: entry for page in pages for entry in page["skills"]}
    for uri, entry in by_uri.items():
        assert entry == catalog.snapshot.skill_by_uri[uri].wire
    pdf = by_uri["skill://pdf-processing/SKILL.md"]
    assert pdf["frontmatter"] == {  # verbatim, every field
        "name": "pdf-processing",
        "description": "Extract text and tables from PDF files.",
        "license": "Apache-2.0",
        "metadata": {"author": "acme", "version": "1.0"},
        "compatibility": "Needs pdftotext.",
    }
    assert {r["uri"] for r in pdf["resources"]} == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
        "skill://pdf-processing/assets/logo.png",
        "skill://pdf-processing/scripts/extract.py",
    }
    outer = by_uri["skill://code-review/SKILL.md"]
    assert "skill://code-review/security-audit/SKILL.md" in {r["uri"] for r in outer["resources"]}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_default_cache_fields_are_private(catalog: SkillCatalog, mode: str) -> None:
    async with Client(make_server("mcpserver", SkillsExtension(catalog)), mode=mode) as client:
        page = await send(client, "skills/list", {})
        assert (page["ttlMs"], page["cacheScope"]) == (60_000, "private")
        assert "nextCursor" not in page  # 6 skills fit the default page of 100
        got = await send(client, "skills/get", {"uri": LISTED[0]})
        assert (got["ttlMs"], got["cacheScope"]) == (60_000, "private")


@pytest.mark.anyio
async def test_skills_get_returns_the_listed_entry(client: Client) -> None:
    listed = {e["uri"]: e for page in await all_pages(client, "skills/list", "skills") for e in page["skills"]}
    for uri, entry in listed.items():
        result = await send(client, "skills/get", {"uri": uri})
        assert result["resultType"] == "complete"
        assert result["skill"] == entry
        assert (result["ttlMs"], result["cacheScope"]) == (5, "public")
        assert "nextCursor" not in result
    # An unlisted skill is still answered; a non-canonical spelling names the same skill.
    hidden = await send(client, "skills/get", {"uri": "skill://internal/SKILL.md"})
    assert hidden["skill"]["frontmatter"]["name"] == "internal"
    encoded = await send(client, "skills/get", {"uri": "skill://git-workflow/SKILL%2Emd"})
    assert encoded["skill"]["uri"] == "skill://git-workflow/SKILL.md"
    error = await send_error(client, "skills/get", {"uri": "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md"})
    assert error.code == INVALID_PARAMS


# -- resources/read ---------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_every_listed_file_reads_back_to_its_digest_and_size(client: Client) -> None:
    entries = [e for page in await all_pages(client, "skills/list", "skills") for e in page["skills"]]
    kinds: dict[str, str] = {}
    for entry in entries:
        for item in entry["resources"]:
            result = await send(client, "resources/read", {"uri": item["uri"]})
            [content] = result["contents"]
            assert content["uri"] == item["uri"]
            data = decoded(content)
            assert "sha256:" + hashlib.sha256(data).hexdigest() == item["digest"]
            assert len(data) == item["size"]
            kinds[item["uri"]] = ("text:" if "text" in content else "blob:") + content["mimeType"]
    assert kinds["skill://pdf-processing/SKILL.md"] == "text:text/markdown"
    assert kinds["skill://pdf-processing/references/FORMS.md"] == "text:text/markdown"
    assert kinds["skill://pdf-processing/scripts/extract.py"] == "text:text/x-python"
    assert kinds["skill://pdf-processing/assets/logo.png"] == "blob:image/png"
    assert kinds["skill://acme/hello/data.bin"] == "blob:application/octet-stream"


@pytest.mark.anyio
async def test_skill_md_reads_back_verbatim(client: Client) -> None:
    result = await send(client, "resources/read", {"uri": "skill://pdf-processing/SKILL.md"})
    [content] = result["contents"]
    assert content == {"uri": "skill://pdf-processing/SKILL.md", "mimeType": "text/markdown", "text": PDF_SKILL_MD}


@pytest.mark.anyio
async def test_host_resources_still_work(client: Client, kind: str) -> None:
    [content] = (await send(client, "resources/read", {"uri": "test://hello"}))["contents"]
    assert content["text"] == HOST_TEXT
    if kind == "mcpserver":
        # A skill:// URI the catalog does not serve falls through to the host's own handler.
        [owned] = (await send(client, "resources/read", {"uri": "skill://host-owned/note"}))["contents"]
        assert owned["text"] == "the host serves this skill:// URI itself"
    for uri in ("test://missing", "skill://pdf-processing/missing.md"):
        error = await send_error(client, "resources/read", {"uri": uri})
        assert error.code == INVALID_PARAMS
        assert isinstance(error.data, dict)
        assert error.data["uri"] == uri


# -- resources/list -----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_resources_list_has_the_hosts_resources_and_every_skill_md(client: Client, kind: str) -> None:
    pages = await all_pages(client, "resources/list", "resources")
    assert len(pages) > 1
    assert pages[0]["resources"], "the first page must not be empty"
    items = [item for page in pages for item in page["resources"]]
    uris = [item["uri"] for item in items]
    assert len(uris) == len(set(uris))
    assert "test://hello" in uris
    skill_items = {item["uri"]: item for item in items if item["uri"].startswith("skill://")}
    skill_items.pop("skill://host-owned/note", None)
    assert sorted(skill_items) == LISTED  # SKILL.md only: no supporting files, no unlisted skills
    for uri, item in skill_items.items():
        name = uri.removesuffix("/SKILL.md").rsplit("/", 1)[-1]
        assert item["name"] == name
        assert item["mimeType"] == "text/markdown"
        assert isinstance(item["description"], str)
        assert item["description"]
    assert skill_items["skill://acme/billing/refunds/SKILL.md"]["description"] == "Process refunds."


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", KINDS)
async def test_resources_list_without_host_resources_starts_with_skills(
    catalog: SkillCatalog, mode: str, kind: str
) -> None:
    server = make_server(kind, SkillsExtension(catalog, page_size=4), own_resources=False)
    async with Client(server, mode=mode) as client:
        pages = await all_pages(client, "resources/list", "resources")
        assert [len(p["resources"]) for p in pages] == [4, 2]
        assert [i["uri"] for p in pages for i in p["resources"]] == LISTED


@pytest.mark.anyio
async def test_extra_frontmatter_is_in_the_skill_md_meta(client: Client) -> None:
    items = [item for page in await all_pages(client, "resources/list", "resources") for item in page["resources"]]
    pdf = next(item for item in items if item["uri"] == "skill://pdf-processing/SKILL.md")
    meta = pdf["_meta"]
    assert meta
    assert all(key.startswith(META_PREFIX) for key in meta)
    extra: dict[str, Any] = {}
    for value in meta.values():
        extra.update(value)
    assert extra == {
        "license": "Apache-2.0",
        "metadata": {"author": "acme", "version": "1.0"},
        "compatibility": "Needs pdftotext.",
    }
    plain = next(item for item in items if item["uri"] == "skill://git-workflow/SKILL.md")
    assert "_meta" not in plain  # nothing beyond name and description


# -- resources/directory/read ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_directory_read_over_the_wire(client: Client) -> None:
    pages = await all_pages(client, "resources/directory/read", "resources", {"uri": "skill://pdf-processing"})
    assert len(pages) == 2  # directory_page_size=2, four children
    for page in pages:
        assert page["resultType"] == "complete"
    children = {item["uri"]: item for page in pages for item in page["resources"]}
    assert set(children) == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets",
        "skill://pdf-processing/references",
        "skill://pdf-processing/scripts",
    }
    assert children["skill://pdf-processing/assets"]["mimeType"] == DIRECTORY_MIME_TYPE
    assert children["skill://pdf-processing/SKILL.md"]["mimeType"] == "text/markdown"
    [logo] = (await send(client, "resources/directory/read", {"uri": "skill://pdf-processing/assets"}))["resources"]
    assert logo == {
        "uri": "skill://pdf-processing/assets/logo.png",
        "name": "logo.png",
        "mimeType": "image/png",
        "size": len(PNG),
    }
    prefix = await send(client, "resources/directory/read", {"uri": "skill://acme"})
    assert [(i["uri"], i["mimeType"]) for i in prefix["resources"]] == [
        ("skill://acme/billing", DIRECTORY_MIME_TYPE),
        ("skill://acme/hello", DIRECTORY_MIME_TYPE),
    ]
    nested = await send(client, "resources/directory/read", {"uri": "skill://code-review"})
    assert [i["uri"] for i in nested["resources"]] == [
        "skill://code-review/SKILL.md",
        "skill://code-review/security-audit",
    ]


# -- dynamic skills ---------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_dynamic_skill_over_the_wire(tmp_path: Path, mode: str) -> None:
    state = {"skill_md": "---\nname: daily\ndescription: Today's report.\n---\nFresh numbers.\n"}

    def render(path: str) -> str | bytes | None:
        if path == "SKILL.md":
            return state["skill_md"]
        if path == "data/today.csv":
            return b"a,b\n1,2\n"
        return None

    catalog = SkillCatalog()
    catalog.add_dynamic("reports/daily", description="Today's report.", read=render)
    async with Client(make_server("mcpserver", SkillsExtension(catalog)), mode=mode) as client:
        got = await send(client, "skills/get", {"uri": "skill://reports/daily/SKILL.md"})
        assert got["skill"]["resources"] == "dynamic"
        [md] = (await send(client, "resources/read", {"uri": "skill://reports/daily/SKILL.md"}))["contents"]
        assert (md["mimeType"], md["text"]) == ("text/markdown", state["skill_md"])
        [csv] = (await send(client, "resources/read", {"uri": "skill://reports/daily/data/today.csv"}))["contents"]
        assert (csv["mimeType"], decoded(csv)) == ("text/csv", b"a,b\n1,2\n")
        error = await send_error(client, "resources/read", {"uri": "skill://reports/daily/nope.md"})
        assert error.code == INVALID_PARAMS
        # Generated SKILL.md that no longer carries the declared frontmatter is refused, not served.
        state["skill_md"] = "---\nname: daily\ndescription: Something else.\n---\n"
        with pytest.raises(MCPError) as info:
            await send(client, "resources/read", {"uri": "skill://reports/daily/SKILL.md"})
        assert "frontmatter" in info.value.error.message


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("declared", "written"),
    [(True, "1"), (1, "true"), (0, "false"), (1.5, "'1.5'")],
    ids=["true-vs-1", "1-vs-true", "0-vs-false", "number-vs-string"],
)
async def test_generated_skill_md_is_compared_with_json_equality(declared: JSONValue, written: str) -> None:
    """A host compares as JavaScript does (`true` is not `1`); the server must refuse what a host would."""
    skill_md = f"---\nname: flagged\ndescription: d\nflag: {written}\n---\n"
    catalog = SkillCatalog()
    catalog.add_dynamic("flagged", description="d", frontmatter={"flag": declared}, read=lambda path: skill_md)
    async with Client(make_server("mcpserver", SkillsExtension(catalog))) as client:
        with pytest.raises(MCPError) as info:
            await send(client, "resources/read", {"uri": "skill://flagged/SKILL.md"})
        assert (
            info.value.error.message
            == "generated skill://flagged/SKILL.md does not carry the frontmatter its entry declares"
        )


# -- attaching ----------------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_attach_after_mcpserver_extensions_argument(catalog: SkillCatalog, mode: str) -> None:
    extension = SkillsExtension(catalog)
    server = MCPServer("host", extensions=[extension])
    extension.attach(server)
    async with Client(server, mode=mode) as client:
        capabilities = client.session.server_capabilities
        assert capabilities is not None
        assert capabilities.extensions == {EXTENSION_ID: {"directoryRead": True}}
        assert [s["uri"] for s in (await send(client, "skills/list", {}))["skills"]] == LISTED
        [content] = (await send(client, "resources/read", {"uri": "skill://git-workflow/SKILL.md"}))["contents"]
        assert content["mimeType"] == "text/markdown"


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_attaching_twice_to_one_server_does_not_loop(catalog: SkillCatalog, mode: str) -> None:
    extension = SkillsExtension(catalog, page_size=100)
    server = make_server("mcpserver", extension)
    extension.attach(server)
    async with Client(server, mode=mode) as client:
        [content] = (await send(client, "resources/read", {"uri": "test://hello"}))["contents"]
        assert content["text"] == HOST_TEXT
        items = [i["uri"] for p in await all_pages(client, "resources/list", "resources") for i in p["resources"]]
        assert items.count("test://hello") == 1
        assert sorted(u for u in items if u.endswith("/SKILL.md")) == LISTED


@pytest.mark.anyio
@pytest.mark.parametrize("mode", MODES)
async def test_one_extension_on_two_servers_keeps_their_resources_apart(catalog: SkillCatalog, mode: str) -> None:
    extension = SkillsExtension(catalog)
    first, second = MCPServer("first"), MCPServer("second")

    @first.resource("test://first", mime_type="text/plain")
    def first_only() -> str:
        return "first"

    @second.resource("test://second", mime_type="text/plain")
    def second_only() -> str:
        return "second"

    extension.attach(first)
    extension.attach(second)
    async with Client(first, mode=mode) as client:
        [content] = (await send(client, "resources/read", {"uri": "test://first"}))["contents"]
        assert content["text"] == "first"
        error = await send_error(client, "resources/read", {"uri": "test://second"})
        assert error.code == INVALID_PARAMS
        listed = [i["uri"] for p in await all_pages(client, "resources/list", "resources") for i in p["resources"]]
        assert "test://first" in listed
        assert "test://second" not in listed
        [skill] = (await send(client, "resources/read", {"uri": "skill://git-workflow/SKILL.md"}))["contents"]
        assert skill["mimeType"] == "text/markdown"

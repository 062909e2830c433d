"""End to end over stdio: the official SDK client spawns `skillwire serve --stdio`.

Each test module run spawns the server twice, once per connection mode the SDK client offers:
`auto` (`server/discover`, then the stateless 2026-07-28 wire) and `legacy` (the 2025-11-25
`initialize` handshake). The SDK owns the subprocess (`stdio_client` closes stdin, then terminates
the process tree), and the fixture checks that it is gone afterwards. `skills/*` and
`resources/directory/read` are not SDK methods, so they are sent as typed custom requests.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "skillwire" / "examples" / "skills"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
PDF_SKILL = "skill://pdf-processing/SKILL.md"
LOGO = "skill://pdf-processing/assets/logo.png"
MODES = {"auto": "2026-07-28", "legacy": "2025-11-25"}


# -- the extension's wire types, as the SDK client sends and parses them ----------------------------


class SkillFile(BaseModel):
    uri: str
    digest: str
    size: int


class SkillEntry(BaseModel):
    uri: str
    frontmatter: dict[str, Any]
    resources: list[SkillFile] | Literal["dynamic"]


class ListSkillsRequest(types.PaginatedRequest[Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"


class ListSkillsResult(types.PaginatedResult, types.CacheableResult):
    skills: list[SkillEntry]


class GetSkillParams(types.RequestParams):
    uri: str


class GetSkillRequest(types.Request[GetSkillParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"


class GetSkillResult(types.CacheableResult):
    skill: SkillEntry


class ReadDirectoryParams(types.PaginatedRequestParams):
    uri: str


class ReadDirectoryRequest(types.Request[ReadDirectoryParams, Literal["resources/directory/read"]]):
    method: Literal["resources/directory/read"] = "resources/directory/read"


class ReadDirectoryResult(types.PaginatedResult):
    resources: list[types.Resource]


# -- fixtures -------------------------------------------------------------------------------------------


def _live_children() -> set[int]:
    """PIDs of this process's live (not zombie) children, from /proc."""
    me = str(os.getpid())
    children: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            children.add(int(stat.parent.name))
    return children


@pytest.fixture(scope="module", params=sorted(MODES))
async def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    mode: str = request.param
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", "--no-digest-cache"],
    )
    log = tmp_path_factory.mktemp(f"stdio-{mode}") / "stderr.log"
    before = _live_children()
    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=mode, cache=None) as connected:
            assert connected.protocol_version == MODES[mode], log.read_text()
            yield connected
    leaked = _live_children() - before
    assert not leaked, f"skillwire serve --stdio outlived its client: {leaked}"


async def list_all_skills(client: Client) -> list[SkillEntry]:
    entries: list[SkillEntry] = []
    cursor: str | None = None
    for _ in range(50):
        page = await client.session.send_request(
            ListSkillsRequest(params=types.PaginatedRequestParams(cursor=cursor)), ListSkillsResult
        )
        entries += page.skills
        cursor = page.next_cursor
        if cursor is None:
            return entries
    raise AssertionError("skills/list did not finish within 50 pages")


async def read_directory(client: Client, uri: str) -> list[types.Resource]:
    children: list[types.Resource] = []
    cursor: str | None = None
    for _ in range(50):
        page = await client.session.send_request(
            ReadDirectoryRequest(params=ReadDirectoryParams(uri=uri, cursor=cursor)), ReadDirectoryResult
        )
        children += page.resources
        cursor = page.next_cursor
        if cursor is None:
            return children
    raise AssertionError(f"resources/directory/read {uri} did not finish within 50 pages")


# -- tests -----------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_extension_is_advertised(client: Client) -> None:
    capabilities = client.server_capabilities
    assert capabilities.extensions is not None
    assert capabilities.extensions.get(SKILLS_EXTENSION) == {"directoryRead": True}
    assert capabilities.resources is not None


@pytest.mark.anyio
async def test_list_and_get(client: Client) -> None:
    entries = await list_all_skills(client)
    on_disk = sorted(
        "skill://" + path.parent.relative_to(EXAMPLES).as_posix() + "/SKILL.md" for path in EXAMPLES.rglob("SKILL.md")
    )
    assert sorted(entry.uri for entry in entries) == on_disk

    listed = next(entry for entry in entries if entry.uri == PDF_SKILL)
    got = await client.session.send_request(GetSkillRequest(params=GetSkillParams(uri=PDF_SKILL)), GetSkillResult)
    assert got.skill == listed
    assert got.skill.frontmatter["name"] == "pdf-processing"
    assert (got.ttl_ms, got.cache_scope) == (60_000, "private")

    with pytest.raises(MCPError) as caught:
        await client.session.send_request(
            GetSkillRequest(params=GetSkillParams(uri="skill://no-such-skill/SKILL.md")), GetSkillResult
        )
    assert caught.value.error.code == types.INVALID_PARAMS


@pytest.mark.anyio
async def test_read_skill_md_and_binary_match_the_manifest(client: Client) -> None:
    got = await client.session.send_request(GetSkillRequest(params=GetSkillParams(uri=PDF_SKILL)), GetSkillResult)
    assert isinstance(got.skill.resources, list)
    manifest = {ref.uri: ref for ref in got.skill.resources}

    skill_md = (await client.read_resource(PDF_SKILL)).contents
    assert len(skill_md) == 1
    assert isinstance(skill_md[0], types.TextResourceContents)
    assert skill_md[0].mime_type == "text/markdown"
    data = skill_md[0].text.encode("utf-8")
    assert data == (EXAMPLES / "pdf-processing" / "SKILL.md").read_bytes()
    assert (len(data), f"sha256:{hashlib.sha256(data).hexdigest()}") == (
        manifest[PDF_SKILL].size,
        manifest[PDF_SKILL].digest,
    )

    logo = (await client.read_resource(LOGO)).contents
    assert len(logo) == 1
    assert isinstance(logo[0], types.BlobResourceContents)
    assert logo[0].mime_type == "image/png"
    blob = base64.b64decode(logo[0].blob)
    assert blob == (EXAMPLES / "pdf-processing" / "assets" / "logo.png").read_bytes()
    assert (len(blob), f"sha256:{hashlib.sha256(blob).hexdigest()}") == (
        manifest[LOGO].size,
        manifest[LOGO].digest,
    )


@pytest.mark.anyio
async def test_directory_reads(client: Client) -> None:
    templates = {str(r.uri): r for r in await read_directory(client, "skill://pdf-processing/templates")}
    assert set(templates) == {
        "skill://pdf-processing/templates/invoice.md",
        "skill://pdf-processing/templates/regional",
    }
    regional = templates["skill://pdf-processing/templates/regional"]
    assert (regional.name, regional.mime_type) == ("regional", "inode/directory")
    assert templates["skill://pdf-processing/templates/invoice.md"].mime_type != "inode/directory"

    # A prefix above any skill root is a directory too: its children lead down to the skills.
    acme = await read_directory(client, "skill://acme")
    assert [(str(r.uri), r.name, r.mime_type) for r in acme] == [("skill://acme/billing", "billing", "inode/directory")]

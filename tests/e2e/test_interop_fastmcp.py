"""Interop: FastMCP 4.2's skills client loads and verifies every skill `skillwire serve` lists.

`skillwire serve` (the bundled examples) runs as a real subprocess over Streamable HTTP. FastMCP's
`Client.read_skill` fetches the entry with `skills/get`, reads every file with `resources/read`,
and rejects the skill unless each file matches the size and sha256 digest the entry promised, the
parsed SKILL.md frontmatter equals the entry's, and the name equals the URI's final segment. Every
accepted file must then be byte-for-byte the file on disk.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.skills import SkillsClientExtension

from servers import free_port, running_http_server

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "skillwire" / "examples" / "skills"
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def skill_root(uri: str) -> Path:
    """The folder on disk that `skill://<path>/SKILL.md` publishes."""
    assert uri.startswith("skill://"), uri
    assert uri.endswith("/SKILL.md"), uri
    return EXAMPLES / uri.removeprefix("skill://").removesuffix("/SKILL.md")


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("fastmcp-interop") / "serve.log"
    argv = [
        sys.executable,
        "-m",
        "skillwire.cli.main",
        "serve",
        "--no-watch",
        "--no-digest-cache",
        "--http",
        f"127.0.0.1:{port}",
    ]
    with running_http_server(argv, port, log):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.anyio
async def test_fastmcp_reads_and_verifies_every_listed_skill(server_url: str) -> None:
    on_disk = sorted(
        "skill://" + path.parent.relative_to(EXAMPLES).as_posix() + "/SKILL.md" for path in EXAMPLES.rglob("SKILL.md")
    )
    async with Client(server_url, extensions=[SkillsClientExtension()]) as client:
        assert client.protocol_version == "2026-07-28"
        extensions = client.server_capabilities.extensions
        assert extensions is not None
        assert SKILLS_EXTENSION in extensions

        listed = await client.list_skills()
        uris = [entry.uri for entry in listed]
        assert sorted(uris) == on_disk
        assert len(set(uris)) == len(uris)

        rejected: dict[str, str] = {}
        for entry in listed:
            try:
                skill = await client.read_skill(entry.uri)
            except Exception as exc:  # report every skill FastMCP refuses, not only the first
                rejected[entry.uri] = f"{type(exc).__name__}: {exc}"
                continue
            root = skill_root(entry.uri)
            assert skill.name == root.name
            assert isinstance(entry.resources, list)
            expected_paths = sorted(ref.uri.removeprefix(entry.uri.removesuffix("SKILL.md")) for ref in entry.resources)
            assert sorted(skill.files) == expected_paths, entry.uri
            for relative, data in skill.files.items():
                assert data == (root / relative).read_bytes(), f"{entry.uri}: {relative} differs from disk"
        assert not rejected, "FastMCP's skills client rejected:\n" + "\n".join(
            f"  {uri}: {why}" for uri, why in rejected.items()
        )


@pytest.mark.anyio
async def test_fastmcp_get_skill_matches_the_listing(server_url: str) -> None:
    async with Client(server_url, extensions=[SkillsClientExtension()]) as client:
        listed = await client.list_skills()
        for entry in listed:
            fetched = await client.get_skill_mcp(entry.uri, cache_mode="bypass")
            assert fetched.skill == entry
            # `skillwire serve` defaults: --ttl-ms 60000 --cache-scope private.
            assert (fetched.ttl_ms, fetched.cache_scope) == (60_000, "private")
        first = await client.list_skills_mcp(cache_mode="bypass")
        assert (first.ttl_ms, first.cache_scope) == (60_000, "private")

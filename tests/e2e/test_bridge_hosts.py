"""The bridge where real hosts differ from the test client (issue 20): a client that starts a new bridge
per call (langchain-mcp-adapters' default `get_tools()`), a full URI of a `--local` skill before it is
loaded, and the tool names a deferred-tool search (Claude Code's ToolSearch) must find.

A real `skillwire serve` upstream and real bridges over stdio, one per session as such a client runs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.host.tools import tool_definitions
from support.bridge import Elicitor, bridge_client, text_of, write_skill
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio

PDF = "skill://pdf-forms/SKILL.md"
ZEBRA = "skill://zebra-care/SKILL.md"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("hosts-upstream")
    write_skill(
        root,
        "pdf-forms",
        "Fill PDF forms from a spreadsheet.",
        "Read references/FORMS.md for the field names.",
        {"references/FORMS.md": "Field names: name, date.\n"},
    )
    write_skill(root, "zebra-care", "Grooming advice.", "See references/STRIPES.md.", {"references/STRIPES.md": "s\n"})
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server


async def test_a_new_bridge_per_call_reads_a_relative_path_of_an_approved_skill(
    upstream: RunningServer, tmp_path: Path
) -> None:
    approvals = tmp_path / "approvals.sqlite"
    args = ["--server", f"b={upstream.url}", "--approvals", str(approvals)]
    async with bridge_client(args, elicitor=Elicitor()) as client:  # the call that loads (and is approved)
        loaded = await client.call_tool("read_skill", {"server": "b", "uri": PDF})
        assert not loaded.is_error, text_of(loaded)
    async with bridge_client(args) as client:  # the next call, in a new bridge: nothing is loaded there
        forms = await client.call_tool("read_resource", {"server": "b", "uri": "references/FORMS.md"})
        assert not forms.is_error, text_of(forms)
        assert "Field names: name, date." in text_of(forms)
    async with bridge_client(args) as client:  # a skill never approved is not loaded by reading its file
        stripes = await client.call_tool("read_resource", {"server": "b", "uri": "references/STRIPES.md"})
        assert stripes.is_error
        text = text_of(stripes)
        assert "skill://zebra-care/references/STRIPES.md" in text  # the refusal names the file's full URI
        assert f"read_skill(server='b', uri='{ZEBRA}')" in text
        assert "s\n" not in text


async def test_a_full_uri_of_a_local_skill_before_it_is_loaded(tmp_path: Path) -> None:
    local = tmp_path / "mine"
    write_skill(local, "notes", "My notes.", "See refs/a.md.", {"refs/a.md": "local file\n"})
    args = ["--local", str(local), "--approvals", str(tmp_path / "approvals.sqlite")]
    async with bridge_client(args) as client:
        read = await client.call_tool("read_resource", {"server": "local", "uri": "skill://notes/refs/a.md"})
        assert not read.is_error, text_of(read)
        assert "local file" in text_of(read)
        assert "no MCP server is configured" not in text_of(read)
    async with bridge_client(args) as client:
        missing = await client.call_tool("read_resource", {"server": "local", "uri": "skill://elsewhere/x.md"})
        assert missing.is_error
        assert "no MCP server is configured" not in text_of(missing)
        assert "local skill folders" in text_of(missing)
        relative = await client.call_tool("read_resource", {"server": "local", "uri": "refs/a.md"})
        assert not relative.is_error, text_of(relative)


async def test_a_search_for_skill_finds_every_bridge_tool(tmp_path: Path) -> None:
    """Claude Code defers MCP tools behind ToolSearch: a search for "skill" must reach all three."""
    async with bridge_client(["--local", str(tmp_path), "--approvals", str(tmp_path / "a.sqlite")]) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == {d["name"] for d in tool_definitions("mcp")}
    for tool in tools:  # the name, or the first sentence of the description (what a search result shows)
        first_sentence = (tool.description or "").split(". ")[0].lower()
        assert "skill" in tool.name or "skill" in first_sentence, tool.name

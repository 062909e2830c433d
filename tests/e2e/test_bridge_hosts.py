"""The bridge where real hosts differ from the test client (issue 20): a client that starts a new bridge
per call (langchain-mcp-adapters' default `get_tools()`), a full URI of a `--local` skill before it is
loaded, and the tool names a deferred-tool search (Claude Code's ToolSearch) must find.

A real `skillwire serve` upstream and real bridges over stdio, one per session as such a client runs them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.host.tool_schemas import tool_definitions
from support.bridge import Elicitor, bridge_client, generate_skills, text_of, write_skill
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


async def test_a_new_bridge_per_call_continues_a_listing_from_the_cursor_of_the_last(tmp_path: Path) -> None:
    """langchain-mcp-adapters' default `get_tools()` brings page 1's cursor to a new bridge, which has listed
    nothing yet: it must list and continue, not answer "no skills" (the model would think the catalog ended)."""
    generate_skills(tmp_path / "served", "many", 120)
    seen: list[str] = []
    with serve_http([str(tmp_path / "served"), "--no-digest-cache", "--no-watch"]) as server:
        args = ["--server", f"b={server.url}", "--approvals", str(tmp_path / "a.sqlite")]
        cursor: str | None = None
        for _ in range(10):
            async with bridge_client(args) as client:  # one bridge process per call
                page = await client.call_tool("list_skills", {"cursor": cursor} if cursor else {})
            assert not page.is_error, text_of(page)
            assert page.structured_content is not None
            seen += [s["uri"] for s in page.structured_content["skills"]]
            cursor = page.structured_content.get("nextCursor")
            if cursor is None:
                break
    assert len(seen) == len(set(seen)) == 120, f"{len(seen)} listed"


async def test_a_search_for_skill_finds_every_bridge_tool(tmp_path: Path) -> None:
    """Claude Code defers MCP tools behind ToolSearch: a search for "skill" must reach all three."""
    async with bridge_client(["--local", str(tmp_path), "--approvals", str(tmp_path / "a.sqlite")]) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools} == {d["name"] for d in tool_definitions("mcp")}
    for tool in tools:  # the name, or the first sentence of the description (what a search result shows)
        first_sentence = (tool.description or "").split(". ")[0].lower()
        assert "skill" in tool.name or "skill" in first_sentence, tool.name


ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_cancelled_question_is_not_a_refusal(upstream: RunningServer, tmp_path: Path, mode: str) -> None:
    """Claude Code in print mode answers the approval elicitation with `cancel` (nobody there to ask)."""
    local = tmp_path / "mine"
    write_skill(local, "notes", "My notes.", "Notes.", {"refs/a.md": "local file\n"})
    approvals = tmp_path / "approvals.sqlite"
    args = ["--server", f"b={upstream.url}", "--local", str(local), "--approvals", str(approvals)]
    async with bridge_client(args, mode=mode, elicitor=Elicitor(cancel=True)) as client:
        result = await client.call_tool("read_skill", {"server": "b", "uri": PDF})
        assert result.is_error
        text = text_of(result)
        assert "declined" not in text
        assert "Do not retry" not in text
        assert "did not decline" in text
        command = text.splitlines()[-1].strip()  # the exact way forward
        assert command.startswith("skillwire approve ")
        assert command.endswith(f"--server b={upstream.url} b {PDF}")
        assert "Field names" not in text
    async with bridge_client(args, mode=mode, elicitor=Elicitor(accept=False)) as client:
        declined = await client.call_tool("read_skill", {"server": "b", "uri": PDF})
        assert declined.is_error
        assert "the user declined" in text_of(declined)
    async with bridge_client(args, mode=mode, elicitor=Elicitor(answers={"wants to read": True})) as client:
        assert not (await client.call_tool("read_skill", {"server": "b", "uri": PDF})).is_error
    async with bridge_client(args, mode=mode, elicitor=Elicitor(cancel=True)) as client:
        assert not (await client.call_tool("read_skill", {"server": "b", "uri": PDF})).is_error  # approved now
        cross = await client.call_tool("read_resource", {"server": "local", "uri": "skill://notes/refs/a.md"})
        assert cross.is_error
        text = text_of(cross)
        assert "did not refuse" in text
        assert "did not allow" not in text
        assert "local file" not in text


async def test_the_approval_request_has_a_stable_id(upstream: RunningServer, tmp_path: Path) -> None:
    import mcp_types as types

    args = ["--server", f"b={upstream.url}", "--approvals", str(tmp_path / "approvals.sqlite")]
    async with bridge_client(args, mode="auto", elicitor=Elicitor()) as client:
        raw = await client.session.call_tool("read_skill", {"server": "b", "uri": PDF}, allow_input_required=True)
        assert isinstance(raw, types.InputRequiredResult)
        assert raw.input_requests is not None
        assert list(raw.input_requests) == ["skillwire:approve-skill"]


def _closed_port_url() -> str:
    import socket

    with socket.socket() as probe:  # bound, then closed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"


def test_bridge_check_exits_non_zero_for_an_unreachable_upstream(upstream: RunningServer, tmp_path: Path) -> None:
    import subprocess

    from support.bridge import SKILLWIRE

    dead = _closed_port_url()
    approvals = ["--approvals", str(tmp_path / "approvals.sqlite"), "--upstream-timeout", "15"]
    bad = subprocess.run(
        [*SKILLWIRE, "bridge", "--server", f"work={dead}", "--server", f"b={upstream.url}", *approvals, "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 1, bad.stderr
    lines = bad.stderr.splitlines()
    assert [line for line in lines if "work" in line] == [
        next(line for line in lines if line.startswith(f"skillwire bridge: upstream 'work' ({dead}) is unavailable: "))
    ]
    assert "b: ok, 2 skills" in bad.stdout
    good = subprocess.run(
        [*SKILLWIRE, "bridge", "--server", f"b={upstream.url}", *approvals, "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == "b: ok, 2 skills"


def test_a_served_bridge_reports_an_unreachable_upstream_on_stderr_at_start(tmp_path: Path) -> None:
    import subprocess
    import time

    from support.bridge import SKILLWIRE

    dead = _closed_port_url()
    log = tmp_path / "stderr.txt"
    with log.open("wb") as errors:
        bridge = subprocess.Popen(
            [*SKILLWIRE, "bridge", "--server", f"work={dead}", "--approvals", str(tmp_path / "a.sqlite")],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        try:
            deadline = time.monotonic() + 60
            while "is unavailable" not in log.read_text() and time.monotonic() < deadline:
                assert bridge.poll() is None, log.read_text()  # still serving: the check runs in the background
                time.sleep(0.1)
        finally:
            assert bridge.stdin is not None
            bridge.stdin.close()
            bridge.wait(timeout=30)
    reported = [line for line in log.read_text().splitlines() if "is unavailable" in line]
    assert len(reported) == 1
    assert reported[0].startswith(f"skillwire bridge: upstream 'work' ({dead}) is unavailable: ")

"""`skillwire bridge` as hosts run it: an independent client (the MCP Inspector CLI), the TOML config with
HTTP, stdio and local upstreams, and the bridge's own Streamable HTTP with DNS-rebinding protection."""

from __future__ import annotations

import json
import os
import pty
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client

from servers import free_port, running_http_server
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from support.bridge import BRIDGE, SKILLWIRE, Elicitor, bridge_client, text_of, write_skill
from support.conformance import ConformanceToolsMissingError, node_binary, tools_dir
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio
HANGING_SERVER = Path(__file__).resolve().parents[1] / "servers" / "hanging_skills_server.py"


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    root = tmp_path_factory.mktemp("bridge-web") / "skills"
    write_skill(root, "web-skill", "Served over Streamable HTTP.", files={"guide.md": "web guide\n"})
    write_skill(root, "second-web-skill", "Also over HTTP.")
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server, root


def _inspector() -> tuple[Path, Path]:
    try:
        node = node_binary()
        entry = tools_dir() / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
    except ConformanceToolsMissingError as exc:
        pytest.skip(str(exc))
    launcher = entry / "build" / "index.js"
    if not launcher.is_file():
        pytest.skip(f"the MCP Inspector is not installed at {launcher}; run scripts/install-tools")
    return node, launcher


def test_inspector_cli_lists_the_tools_and_calls_list_skills(web: tuple[RunningServer, Path], tmp_path: Path) -> None:
    node, launcher = _inspector()
    server, _ = web
    bridge = [*BRIDGE, "--server", f"web={server.url}", "--approvals", str(tmp_path / "approvals.sqlite")]
    # The Inspector keeps a catalog under $HOME; give it a scratch home. `--` ends its own options, so the
    # bridge's --server is not taken for the Inspector's.
    env = {**os.environ, "HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}

    def inspector(*options: str) -> dict[str, object]:
        done = subprocess.run(
            [str(node), str(launcher), "--cli", *options, "--", *bridge],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        return result

    listed = inspector("--method", "tools/list")
    tools = listed["tools"]
    assert isinstance(tools, list)
    assert [t["name"] for t in tools] == ["list_skills", "read_skill", "read_resource"]
    assert all("inputSchema" in t for t in tools)
    called = inspector("--method", "tools/call", "--tool-name", "list_skills", "--tool-arg", "query=http")
    assert called["isError"] is False
    structured = called["structuredContent"]
    assert isinstance(structured, dict)
    assert {s["uri"] for s in structured["skills"]} == {
        "skill://web-skill/SKILL.md",
        "skill://second-web-skill/SKILL.md",
    }


async def test_config_file_with_http_stdio_and_local_upstreams(web: tuple[RunningServer, Path], tmp_path: Path) -> None:
    server, _ = web
    piped = tmp_path / "piped"
    write_skill(piped, "piped-skill", "Served over stdio.", files={"notes.md": "piped notes\n"})
    mine = tmp_path / "mine"
    write_skill(mine, "my-local-skill", "On this machine.")
    config_home = tmp_path / "config"
    (config_home / "skillwire").mkdir(parents=True)
    command = [*SKILLWIRE, "serve", "--stdio", "--quiet", "--no-watch", "--no-digest-cache", str(piped)]
    (config_home / "skillwire" / "bridge.toml").write_text(
        f"[servers.web]\nurl = {json.dumps(server.url)}\n\n"
        f"[servers.pipe]\ncommand = {json.dumps(command)}\n\n"
        f"[servers.mine]\nlocal = [{json.dumps(str(mine))}]\n"
    )
    elicitor = Elicitor()
    # No arguments at all: the bridge reads <user config dir>/skillwire/bridge.toml.
    async with bridge_client([], elicitor=elicitor, env={"XDG_CONFIG_HOME": str(config_home)}) as client:
        listing = await client.call_tool("list_skills", {})
        assert listing.structured_content is not None
        seen = {(s["server"], s["uri"]) for s in listing.structured_content["skills"]}
        assert seen == {
            ("web", "skill://web-skill/SKILL.md"),
            ("web", "skill://second-web-skill/SKILL.md"),
            ("pipe", "skill://piped-skill/SKILL.md"),
            ("mine", "skill://my-local-skill/SKILL.md"),
        }
        piped_skill = await client.call_tool("read_skill", {"server": "pipe", "uri": "skill://piped-skill/SKILL.md"})
        assert not piped_skill.is_error, text_of(piped_skill)
        assert "'pipe'" in elicitor.messages[-1]
        notes = await client.call_tool("read_resource", {"server": "pipe", "uri": "notes.md"})
        assert "piped notes" in text_of(notes)
    approvals = config_home / "skillwire" / "bridge-approvals.sqlite"
    assert approvals.is_file()  # the bridge's own store, beside its config; not the user-wide approvals file
    assert not (config_home / "skillwire" / "approvals.sqlite").exists()


async def test_http_bridge_binds_loopback_and_refuses_a_foreign_host(
    web: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, _ = web
    port = free_port()
    argv = [
        *BRIDGE,
        "--http",
        f"127.0.0.1:{port}",
        "--server",
        f"web={server.url}",
        "--approvals",
        str(tmp_path / "approvals.sqlite"),
    ]
    with running_http_server(argv, port, tmp_path / "bridge.log"):
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url) as client:
            tools = await client.list_tools()
            assert [t.name for t in tools.tools] == ["list_skills", "read_skill", "read_resource"]
            result = await client.call_tool("list_skills", {"query": "http"})
            assert not result.is_error, text_of(result)
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                url,
                headers={"Host": "attacker.example", "Content-Type": "application/json", "Accept": "application/json"},
                content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            )
        assert response.status_code in (403, 421), response.text


async def test_a_killed_stdio_upstream_is_started_again_on_the_next_call(tmp_path: Path) -> None:
    piped = tmp_path / "piped"
    write_skill(piped, "piped-skill", "Served over stdio.")
    pid_file = tmp_path / "upstream.pid"
    serve = shlex.join([*SKILLWIRE, "serve", "--stdio", "--quiet", "--no-watch", "--no-digest-cache"])
    script = f"echo $$ > {shlex.quote(str(pid_file))}; exec {serve} {shlex.quote(str(piped))}"
    args = ["--server", "pipe", "--approvals", str(tmp_path / "approvals.sqlite"), "--", "sh", "-c", script]
    async with bridge_client(args) as client:
        first = await client.call_tool("list_skills", {})
        assert first.structured_content is not None
        assert [s["uri"] for s in first.structured_content["skills"]] == ["skill://piped-skill/SKILL.md"]
        old_pid = int(pid_file.read_text())
        os.kill(old_pid, signal.SIGKILL)

        again = await client.call_tool("list_skills", {})
        assert not again.is_error, text_of(again)
        assert again.structured_content is not None
        assert "unavailable" not in again.structured_content
        assert [s["uri"] for s in again.structured_content["skills"]] == ["skill://piped-skill/SKILL.md"]
        assert int(pid_file.read_text()) != old_pid  # a new upstream process answered


async def test_a_hung_upstream_does_not_stall_the_others(web: tuple[RunningServer, Path], tmp_path: Path) -> None:
    server, _ = web
    hung = tmp_path / "hung"
    write_skill(hung, "never-listed", "Behind a server that never answers skills/list.")
    command = shlex.join([sys.executable, str(HANGING_SERVER), str(hung)])
    args = ["--server", f"web={server.url}", "--server-command", f"stuck={command}", "--upstream-timeout", "2"]
    args += ["--approvals", str(tmp_path / "approvals.sqlite")]
    async with bridge_client(args) as client:
        started = time.monotonic()
        listing = await client.call_tool("list_skills", {})
        assert time.monotonic() - started < 15
        assert not listing.is_error, text_of(listing)
        assert listing.structured_content is not None
        assert {s["server"] for s in listing.structured_content["skills"]} == {"web"}
        (stuck,) = listing.structured_content["unavailable"]
        assert stuck["server"] == "stuck"
        assert "did not answer skills/list within 2 s" in stuck["reason"]
        loaded = await client.call_tool("read_resource", {"server": "web", "uri": "skill://web-skill/guide.md"})
        assert "web guide" in text_of(loaded)


@pytest.mark.parametrize(("answer", "approved"), [("n\n", False), ("y\n", True)])
def test_approve_asks_on_a_terminal(
    web: tuple[RunningServer, Path], tmp_path: Path, answer: str, approved: bool
) -> None:
    server, _ = web
    store = tmp_path / "approvals.sqlite"
    uri = "skill://web-skill/SKILL.md"
    primary, secondary = pty.openpty()  # stdin is a terminal, so the command asks instead of refusing
    try:
        os.write(primary, answer.encode())
        done = subprocess.run(
            [*SKILLWIRE, "approve", "--approvals", str(store), "--server", f"web={server.url}", "web", uri],
            stdin=secondary,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert "Approve loading this skill through skillwire bridge? [y/N]" in done.stderr
    assert "skill://web-skill/guide.md" in done.stdout  # what is approved is shown first
    assert done.returncode == (0 if approved else 1), done.stderr
    with ApprovalStore(store) as approvals:
        assert (approvals.get(SkillRef("web", uri)) is not None) is approved

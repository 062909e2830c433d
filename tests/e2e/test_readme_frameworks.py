"""The README's one-line snippet for each agent framework, run as written (issue 20 item 9).

Each snippet is taken from the README's "Agent frameworks" list (so a wrong edit there fails here), with only the
placeholder upstream `work=…` pointed at a real `skillwire serve` on 127.0.0.1; `skillwire` is the project's,
found on PATH as the README assumes. The framework's client built by the snippet then connects (it starts the
bridge) and must list the bridge's three tools. langchain-mcp-adapters and mcp-use run from `.tools/frameworks`
(they need `mcp<2`), the others from the project's venv.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.bridge import write_skill
from support.conformance import absent_tool_reason
from support.servers import REPO_ROOT, RunningServer, serve_http

README = REPO_ROOT / "README.md"
FRAMEWORKS_PYTHON = REPO_ROOT / ".tools" / "frameworks" / "bin" / "python"

# The README's bullet name -> (the imports the snippet's names come from, how to list tools with what it builds).
HOW = {
    "FastMCP": (
        "import fastmcp",
        "async with SNIPPET as client:\n    names = [t.name for t in await client.list_tools()]",
    ),
    "pydantic-ai": (
        "from pydantic_ai.mcp import MCPToolset\nfrom fastmcp.client.transports import StdioTransport",
        "async with SNIPPET as toolset:\n    names = [t.name for t in await toolset.list_tools()]",
    ),
    "openai-agents": (
        "from agents.mcp import MCPServerStdio",
        "async with SNIPPET as server:\n    names = [t.name for t in await server.list_tools()]",
    ),
    "langchain-mcp-adapters": (
        "from langchain_mcp_adapters.client import MultiServerMCPClient",
        "names = [t.name for t in await (SNIPPET).get_tools()]",
    ),
    "mcp-use": (
        "from mcp_use import MCPClient",
        "client = SNIPPET\nsession = await client.create_session('skills')\n"
        "names = [t.name for t in await session.list_tools()]\nawait client.close_all_sessions()",
    ),
}
OWN_VENV = {"langchain-mcp-adapters", "mcp-use"}


def snippets() -> dict[str, str]:
    """Each framework bullet's first inline code (the constructor), joined where the README wraps it."""
    text = README.read_text(encoding="utf-8")
    start = text.index("**Agent frameworks**")
    section = text[start : text.index("\n\n**", start)]
    found: dict[str, str] = {}
    for bullet in re.split(r"\n- ", section)[1:]:
        match = re.match(r"([\w-]+)[^:]*?: `([^`]+)`", bullet.replace("\n  ", " "))
        if match and match.group(1) in HOW:
            found[match.group(1)] = match.group(2)
    return found


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("readme-frameworks")
    write_skill(root, "pdf-forms", "Fill PDF forms from a spreadsheet.")
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server


def test_the_readme_has_a_snippet_for_each_framework() -> None:
    assert set(snippets()) == set(HOW)


@pytest.mark.parametrize("framework", sorted(HOW))
def test_a_readme_framework_snippet_connects_to_the_bridge_as_written(
    upstream: RunningServer, tmp_path: Path, framework: str
) -> None:
    snippet = snippets()[framework]
    assert "work=…" in snippet
    imports, use = HOW[framework]
    program = "\n".join(
        [
            "import asyncio",
            imports,
            "async def main() -> None:",
            textwrap.indent(use.replace("SNIPPET", snippet.replace("work=…", f"work={upstream.url}")), "    "),
            "    print(sorted(names))",
            "asyncio.run(main())",
        ]
    )
    python = FRAMEWORKS_PYTHON if framework in OWN_VENV else Path(sys.executable)
    if not python.exists():
        pytest.skip(absent_tool_reason(framework, "frameworks"))
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "MCP_USE_ANONYMIZED_TELEMETRY": "false",
    }
    done = subprocess.run(
        [str(python), "-c", program],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"{program}\n{done.stderr[-4000:]}"
    assert done.stdout.strip().splitlines()[-1] == "['list_skills', 'read_resource', 'read_skill']", done.stdout

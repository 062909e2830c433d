"""Real agent frameworks' own MCP clients on `skillwire bridge` (issue 20): no model, no network beyond 127.0.0.1.

Each framework drives the bridge as an agent loop would (`tests/support/framework_driver.py`, run as a
subprocess): it spawns the bridge over stdio (or connects to `bridge --http`), discovers the three tools, pages a
303-skill catalog from a real `skillwire serve` to the end, finds a skill by query, loads it after approval and
reads one of its files. Approval is asked by elicitation where the framework can be asked (fastmcp, pydantic-ai,
langchain-mcp-adapters, mcp-use); openai-agents' MCP client cannot be asked, so the bridge must name the exact
`skillwire approve` command, and the skill loads once that command has run.

fastmcp, pydantic-ai and openai-agents accept the project's `mcp` 2.x and are dev dependencies;
langchain-mcp-adapters 0.3.2 and mcp-use 1.7.1 require `mcp<2`, so they run from their own venv,
`.tools/frameworks/` (`scripts/install-tools`), which is what a user of those frameworks has: a bridge in
another process, whatever their own `mcp` is.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servers import free_port, running_http_server
from support.bridge import BRIDGE, SKILLWIRE, generate_skills, write_skill
from support.conformance import absent_tool_reason
from support.servers import REPO_ROOT, RunningServer, serve_http

DRIVER = Path(__file__).resolve().parents[1] / "support" / "framework_driver.py"
FRAMEWORKS_PYTHON = REPO_ROOT / ".tools" / "frameworks" / "bin" / "python"
PDF = "skill://pdf-forms/SKILL.md"
CATALOG = 303
# The frameworks that run in the project's own venv, and those that need `mcp<2` (`.tools/frameworks`).
IN_PROJECT = ("fastmcp", "pydantic-ai", "openai-agents")
OWN_VENV = ("langchain-mcp-adapters", "mcp-use")
CANNOT_ELICIT = {"openai-agents"}
# Where a framework keeps no session between calls (langchain-mcp-adapters' default get_tools()), every call
# over stdio is a new bridge: the read of a file after read_skill must still work (item 2).
QUIET = {
    "MCP_USE_ANONYMIZED_TELEMETRY": "false",  # mcp-use otherwise reports usage to its vendor
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "LANGCHAIN_TRACING_V2": "false",
}


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, set[tuple[str, str]]]]:
    root = tmp_path_factory.mktemp("framework-catalog")
    generate_skills(root, "cat", CATALOG - 1)
    write_skill(
        root,
        "pdf-forms",
        "Fill PDF forms from a spreadsheet.",
        "Read references/FORMS.md for the field names.",
        {"references/FORMS.md": "Field names: name, date.\n"},
    )
    expected = {("b", f"skill://{p.name}/SKILL.md") for p in root.iterdir() if (p / "SKILL.md").is_file()}
    assert len(expected) == CATALOG
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server, expected


def interpreter(framework: str) -> Path:
    if framework in IN_PROJECT:
        return Path(sys.executable)
    if not FRAMEWORKS_PYTHON.exists():
        pytest.skip(absent_tool_reason(framework, "frameworks"))
    return FRAMEWORKS_PYTHON


def environment(tmp_path: Path) -> dict[str, str]:
    # The whole environment reaches the bridge, with the test's own XDG folders (no cache in the real user's).
    return {
        **os.environ,
        **QUIET,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }


def drive(framework: str, plan: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    full = {"framework": framework, "query": "fill pdf form", "approve_name": "pdf-forms", **plan}
    full.setdefault("skill", {"server": "b", "uri": PDF})
    full.setdefault("resource", "references/FORMS.md")
    done = subprocess.run(
        [str(interpreter(framework)), str(DRIVER), json.dumps(full)],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
        env=environment(tmp_path),
        check=False,
    )
    assert done.returncode == 0, f"{framework} driver failed:\n{done.stderr[-6000:]}"
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def approve(refusal: str, tmp_path: Path) -> None:
    """Run the `skillwire approve …` command the bridge named (its last line), as the person would, with --yes."""
    command = shlex.split(refusal.strip().splitlines()[-1])
    assert command[:2] == ["skillwire", "approve"], refusal
    done = subprocess.run(
        [*SKILLWIRE, "approve", "--yes", *command[2:]],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=environment(tmp_path),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


FRAMEWORK_RUNS = [
    pytest.param(framework, transport, id=f"{framework}-{transport}")
    for framework in (*IN_PROJECT, *OWN_VENV)
    for transport in ("stdio", "http")
]


@pytest.mark.parametrize(("framework", "transport"), FRAMEWORK_RUNS)
def test_a_framework_pages_the_catalog_finds_and_loads_a_skill_through_the_bridge(
    upstream: tuple[RunningServer, set[tuple[str, str]]], tmp_path: Path, framework: str, transport: str
) -> None:
    server, expected = upstream
    approvals = tmp_path / "approvals.sqlite"
    args = ["--server", f"b={server.url}", "--approvals", str(approvals)]
    if transport == "stdio":
        plan: dict[str, Any] = {"transport": "stdio", "command": [*BRIDGE, *args], "env": environment(tmp_path)}
        report = drive(framework, {**plan, "mode": "walk"}, tmp_path)
        reload = lambda: drive(framework, {**plan, "mode": "load"}, tmp_path)  # noqa: E731
        check(framework, report, expected, reload, tmp_path)
    else:
        port = free_port()
        argv = [*BRIDGE, "--http", f"127.0.0.1:{port}", *args]
        with running_http_server(argv, port, tmp_path / "bridge.log", env=environment(tmp_path)):
            plan = {"transport": "http", "url": f"http://127.0.0.1:{port}/mcp"}
            report = drive(framework, {**plan, "mode": "walk"}, tmp_path)
            reload = lambda: drive(framework, {**plan, "mode": "load"}, tmp_path)  # noqa: E731
            check(framework, report, expected, reload, tmp_path)


def check(
    framework: str,
    report: dict[str, Any],
    expected: set[tuple[str, str]],
    reload: Any,
    tmp_path: Path,
) -> None:
    assert sorted(report["tools"]) == ["list_skills", "read_resource", "read_skill"]

    pages = report["pages"]
    assert not any(page["error"] for page in pages), pages[-1]
    listed = [tuple(item) for page in pages for item in page["items"]]
    assert len(listed) == CATALOG, f"{len(listed)} skills over {len(pages)} pages"
    assert set(listed) == expected  # every skill once, to the end of the catalog
    # Item 5: where the framework hands the model structuredContent, the untrusted-content notice is in it.
    for page in pages:
        if page["source"] == "structured":
            assert "untrusted" in (page["notice"] or "")

    assert not report["query"]["error"]
    assert report["query"]["items"][0] == ["b", PDF], report["query"]["items"][:3]

    loaded = report["read_skill"]
    if framework in CANNOT_ELICIT:
        # Nobody could be asked: nothing is loaded, and the way forward is the exact command (item 1).
        assert report["elicited"] == []
        assert loaded["error"], loaded["text"]
        assert "Read references/FORMS.md" not in loaded["text"]
        assert "declined" not in loaded["text"]
        approve(loaded["text"], tmp_path)
        report = reload()
        loaded = report["read_skill"]
    else:
        assert len(report["elicited"]) == 1, report["elicited"]
        assert '"pdf-forms"' in report["elicited"][0]
    assert not loaded["error"], loaded["text"]
    assert "Read references/FORMS.md for the field names." in loaded["text"]
    assert "untrusted" in loaded["text"]  # framed with its origin, for a model that reads only text
    resource = report["read_resource"]
    assert not resource["error"], resource["text"]
    assert "Field names: name, date." in resource["text"]

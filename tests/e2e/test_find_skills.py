"""`find_skills` on a real `skillwire serve`, over stdio and Streamable HTTP (issue 36, build item 1).

A 300-skill catalog, of which a host with Claude Code's limits lists the first 100: the native client
(`tests/support/native_client.py`) finds a skill past position 100 with the tool, loads it by its address
with `skills/get`, and reads its SKILL.md verified byte for byte. `--no-search-tool` offers no tool. With
`--tokens` and an audience rule, a caller outside the audience never sees the hidden skill in any answer,
count or cursor, and the index file survives a restart.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.calls import call
from support.native_client import NativeClient, native_client
from support.servers import RunningServer, serve_http

TARGET = "skill-250"
TARGET_URI = f"skill://{TARGET}/SKILL.md"
TASK = "glaze and fire my stoneware pottery in the kiln with a slow cool"
TEAM = "team-token-5b2e"
OUTSIDER = "outsider-token-9c41"
HIDDEN = "skill://secret/kiln-secrets/SKILL.md"


def write_skill(root: Path, path: str, name: str, description: str, body: str) -> None:
    folder = root / path
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("catalog")
    topics = ["invoices", "deploys", "schemas", "diagrams", "tickets", "audits"]
    for i in range(1, 301):
        name = f"skill-{i:03d}"
        if name == TARGET:
            write_skill(root, name, name, "Glazes and fires stoneware.", "# Kiln schedule\n\nCone 6, a slow cool.\n")
        else:
            topic = topics[i % 6]
            write_skill(root, name, name, f"Helps with {topic}.", f"# {topic}\n\nSteps for {topic}.\n")
    return root


async def find(client: NativeClient, **arguments: Any) -> dict[str, Any]:
    result = await client.client.call_tool("find_skills", arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def find_and_load(client: NativeClient, tree: Path) -> None:
    tools = [tool.name for tool in (await client.client.list_tools()).tools]
    assert tools == ["find_skills"]
    listed, _ = await client.list_skills()
    kept = [entry["uri"] for entry in listed][:100]  # what a host with Claude Code's limits keeps
    assert TARGET_URI not in kept
    found = await find(client, query=TASK, limit=5)
    first = found["skills"][0]
    assert first == {"uri": TARGET_URI, "name": TARGET, "description": "Glazes and fires stoneware.", "listed": True}
    entry = await client.get_skill(first["uri"])  # loaded by its address
    data = await client.read_verified(TARGET_URI, entry)
    assert data == (tree / TARGET / "SKILL.md").read_bytes()


@pytest.mark.anyio
async def test_find_a_skill_past_100_and_load_it_over_http(tree: Path) -> None:
    with serve_http([str(tree), "--no-watch", "--no-digest-cache"]) as running:
        async with native_client(url=running.url) as client:
            await find_and_load(client, tree)


@pytest.mark.anyio
async def test_find_a_skill_past_100_and_load_it_over_stdio(tree: Path) -> None:
    command = [sys.executable, "-m", "skillwire.cli.main", "serve", str(tree), "--stdio", "--no-digest-cache"]
    # The whole environment: the SDK's default for a stdio server drops PYTHONPATH (this checkout's sources).
    async with native_client(command=command, env=dict(os.environ)) as client:
        await find_and_load(client, tree)


@pytest.mark.anyio
async def test_no_search_tool_offers_no_tool(tree: Path) -> None:
    with serve_http([str(tree), "--no-watch", "--no-digest-cache", "--no-search-tool"]) as running:
        async with native_client(url=running.url) as client:
            assert (await client.client.list_tools()).tools == []


@pytest.fixture(scope="module")
def guarded(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    folder = tmp_path_factory.mktemp("guarded")
    secret = folder / "secret-skills"
    write_skill(secret, "secret/kiln-secrets", "kiln-secrets", "Secret kiln glaze recipes.", "# Glaze\n\nKiln.\n")
    tokens = folder / "tokens.json"
    entries = [
        {"client": "team", "sha256": hashlib.sha256(TEAM.encode()).hexdigest(), "audiences": ["team"]},
        {"client": "outsider", "token": OUTSIDER, "audiences": []},
    ]
    tokens.write_text(json.dumps({"tokens": entries}))
    digests = folder / "cache" / "digests.sqlite"
    args = [str(tree), str(secret), "--no-watch", "--tokens", str(tokens), "--audience", "skill://secret=team"]
    with serve_http([*args, "--digest-cache", str(digests)]) as running:
        yield running, digests.parent


def find_over_http(url: str, token: str, **arguments: Any) -> dict[str, Any]:
    result = call(url, "tools/call", {"name": "find_skills", "arguments": arguments}, token=token)
    assert not result.get("isError"), result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def every_page(url: str, token: str, query: str) -> tuple[list[str], int, list[str]]:
    uris: list[str] = []
    cursors: list[str] = []
    cursor: str | None = None
    total = -1
    while True:
        arguments: dict[str, Any] = {"query": query, "limit": 1}
        if cursor is not None:
            arguments["cursor"] = cursor
        page = find_over_http(url, token, **arguments)
        uris += [item["uri"] for item in page["skills"]]
        total = page["total"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return uris, total, cursors
        cursors.append(cursor)


def test_a_hidden_skill_is_in_no_answer_count_or_cursor(guarded: tuple[RunningServer, Path]) -> None:
    running, _ = guarded
    uris, total, cursors = every_page(running.url, OUTSIDER, "kiln glaze")
    assert uris == [TARGET_URI]
    assert total == 1
    assert cursors == []
    only_hidden = find_over_http(running.url, OUTSIDER, query="secret recipes")
    assert only_hidden == {"skills": [], "total": 0, "notice": only_hidden["notice"]}

    uris, total, cursors = every_page(running.url, TEAM, "kiln glaze")
    assert sorted(uris) == sorted([TARGET_URI, HIDDEN])
    assert total == 2
    assert len(cursors) == 1


def test_the_index_lives_beside_the_digest_cache(guarded: tuple[RunningServer, Path]) -> None:
    running, cache = guarded
    find_over_http(running.url, TEAM, query="kiln")
    (index,) = (cache / "search").glob("serve-*.sqlite")
    assert index.stat().st_size > 0

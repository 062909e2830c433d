"""A native host with Claude Code 2.1.337's limits against `skillwire serve` (issue 36 items 2 and 4).

The test client (tests/support/native_client.py) lists as that host does: at most 100 skills, 20 pages and 512 KiB
of entries per server, stopping with the rest pending (`core/host_limits.py`, the arithmetic `serve` and `check`
use), and adopts at most 100 more skills by address. Over stdio and HTTP, on a generated 2,000-skill catalog and on
`../shared/corpora/awesome-copilot` (skipped without it): the host keeps exactly the first 100 listed skills in URI
order; a skill past position 100 (skill 1,500 of 2,000) loads by address (`skills/get`) and its files verify byte
for byte against the disk; `--list` / `--unlist` choose which 100 the host sees (folders, and a git root); the 101st
load by address is refused in the host's words; a `$` in the server's configured name and a result without
`resultType` are refused with no skill loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from support.gitserver import WorkRepo
from support.native_client import NativeClient, NativeRefused, native_client
from support.servers import CORPUS, serve_http

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

LARGE = 2000
SERVERS = Path(__file__).resolve().parents[1] / "servers"
WORDS = [
    "ledger",
    "invoice",
    "refund",
    "payroll",
    "audit",
    "budget",
    "forecast",
    "ticket",
    "incident",
    "deploy",
    "rollback",
    "schema",
    "migration",
    "index",
    "cache",
    "queue",
    "webhook",
    "token",
    "secret",
    "certificate",
    "backup",
    "restore",
    "archive",
    "report",
    "chart",
    "dashboard",
    "metric",
    "alert",
    "trace",
    "span",
    "log",
    "parser",
    "lexer",
    "compiler",
    "linter",
    "formatter",
    "bundle",
    "release",
    "changelog",
    "license",
]


def skill_path(i: int) -> str:
    return f"team-{i % 10}/skill-{i:05d}"


def skill_uri(i: int) -> str:
    return f"skill://{skill_path(i)}/SKILL.md"


def task_of(i: int) -> str:
    """Three words that name skill `i`'s task, distinct for every `i` below 40**3."""
    return f"{WORDS[i % 40]} {WORDS[(i // 40) % 40]} {WORDS[(i // 1600) % 40]}"


TARGET = 1500  # past position 100 of 2,000: a host never lists it unless the operator does
TARGET_DESCRIPTION = "Reconciles a ship's cargo manifest with the harbour customs declaration."
TASK = "check the cargo manifest of my ship against what customs declared at the harbour"


def description_of(i: int) -> str:
    return TARGET_DESCRIPTION if i == TARGET else f"Skill {i} of the generated catalog, for the {task_of(i)} task."


def write_catalog(root: Path, count: int) -> Path:
    for i in range(count):
        folder = root / skill_path(i)
        (folder / "references").mkdir(parents=True)
        name = f"skill-{i:05d}"
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description_of(i)}\n---\nRead references/guide.md first.\n"
        )
        (folder / "references" / "guide.md").write_text(f"# Guide {i}\n\nStep one of {task_of(i)}.\n")
    return root


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", *args]


# The whole environment for a stdio server: the SDK's default environment drops PYTHONPATH (this checkout).
ENV = dict(os.environ)


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_catalog(tmp_path_factory.mktemp("host-limits") / "skills", LARGE)


def expected_first(count: int, listed: list[int] | None = None) -> list[str]:
    return sorted(skill_uri(i) for i in (listed if listed is not None else range(LARGE)))[:count]


async def assert_loads_by_address(native: NativeClient, root: Path, i: int) -> None:
    """Skill `i`, not listed, loaded by its address and every file verified byte for byte against the disk."""
    uri = skill_uri(i)
    assert uri not in native.kept
    entry, skill_md = await native.load_by_address(uri)
    assert skill_md == (root / skill_path(i) / "SKILL.md").read_bytes()
    guide = f"skill://{skill_path(i)}/references/guide.md"
    assert await native.read_verified(guide, entry) == (root / skill_path(i) / "references" / "guide.md").read_bytes()
    assert uri in native.by_address


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_host_keeps_the_first_100_and_loads_skill_1500_by_address(large: Path, transport: str) -> None:
    args = [str(large), "--no-digest-cache"]
    if transport == "stdio":
        async with native_client(command=serve_command(*args), env=ENV) as native:
            await _keeps_the_first_100(native, large)
    else:
        with serve_http([*args, "--no-watch"]) as server:
            async with native_client(url=server.url) as native:
                await _keeps_the_first_100(native, large)


async def _keeps_the_first_100(native: NativeClient, root: Path) -> None:
    listing = await native.list_as_host()
    assert listing.uris == expected_first(100)
    assert (listing.pages, listing.stopped, listing.invalid) == (1, "skills", 0)
    assert listing.why == "it keeps at most 100 skills"
    assert native.methods_sent().count("skills/list") == 1  # one page of 2,000 entries; nothing more asked
    await assert_loads_by_address(native, root, 1500)


async def test_the_operator_chooses_the_100_the_host_lists(large: Path) -> None:
    # The recipe: the hundred most useful listed (skill-01500 .. skill-01599 here), every other one unlisted.
    chosen = ["--unlist", "**", "--list", "*/skill-015??"]
    with serve_http([str(large), "--no-digest-cache", "--no-watch", *chosen]) as server:
        assert "lists the first" not in server.startup_log  # no warning: the listed set fits
        assert "serving 2000 skills, 4000 files (1900 unlisted: served by address, not in skills/list)" in (
            server.startup_log
        )
        async with native_client(url=server.url) as native:
            listing = await native.list_as_host()
            assert listing.uris == expected_first(100, list(range(1500, 1600)))
            assert listing.stopped is None
            entry, _ = await native.load_by_address(skill_uri(1500))  # listed: not a load by address
            assert native.by_address == set()
            assert entry["uri"] == skill_uri(1500)
            await assert_loads_by_address(native, large, 7)  # unlisted, and still served


async def test_the_101st_load_by_address_is_refused(large: Path) -> None:
    with serve_http([str(large), "--no-digest-cache", "--no-watch"]) as server:
        async with native_client(url=server.url) as native:
            await native.list_as_host()
            past = [i for i in range(LARGE) if skill_uri(i) not in native.kept]
            for i in past[:100]:
                await native.load_by_address(skill_uri(i))
            gets = native.methods_sent().count("skills/get")
            with pytest.raises(NativeRefused, match="already found 100 skills on that server by address"):
                await native.load_by_address(skill_uri(past[100]))
            assert native.methods_sent().count("skills/get") == gets  # refused before anything is sent
            await native.load_by_address(skill_uri(past[0]))  # one it holds already loads again


async def test_a_git_root_lists_what_the_operator_chooses(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git")
    write_catalog(repo.work / "skills", 150)
    commit = repo.commit("catalog")
    repo.push()
    spec = f"git+file://{repo.bare}@{commit}#skills"
    with serve_http([spec, "--no-watch", "--unlist", "team-[0-4]/**"], env=own_cache_env) as server:
        async with native_client(url=server.url) as native:
            listing = await native.list_as_host()
            assert listing.uris == sorted(skill_uri(i) for i in range(150) if i % 10 >= 5)  # 75: all kept
            assert listing.stopped is None
            entry, _ = await native.load_by_address(skill_uri(3))
            assert entry["frontmatter"]["name"] == "skill-00003"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no corpus at {CORPUS} (../shared is absent)")
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_awesome_copilot_the_host_keeps_the_first_100_of_400(transport: str) -> None:
    listed = sorted(s.uri for s in SkillCatalog([CORPUS], digest_cache=DigestCache()).snapshot.listed)
    assert len(listed) > 100
    args = [str(CORPUS), "--no-digest-cache"]
    if transport == "stdio":
        async with native_client(command=serve_command(*args), env=ENV) as native:
            listing = await native.list_as_host()
            last, _ = await native.load_by_address(listed[-1])
    else:
        with serve_http([*args, "--no-watch"]) as server:
            assert f"lists the first 100 of the {len(listed)} listed skills" in server.startup_log
            async with native_client(url=server.url) as native:
                listing = await native.list_as_host()
                last, _ = await native.load_by_address(listed[-1])
    assert listing.uris == listed[:100]
    assert listing.stopped == "skills"
    assert last["uri"] == listed[-1]


async def test_a_dollar_in_the_servers_name_loads_no_skills(tmp_path: Path) -> None:
    write_catalog(tmp_path / "skills", 3)
    async with native_client(command=serve_command(str(tmp_path / "skills")), env=ENV, name="sw$prod") as native:
        for attempt in (native.list_as_host(), native.load_by_address(skill_uri(0))):
            with pytest.raises(NativeRefused, match=r"name holds '\$'"):
                await attempt
        assert not [m for m in native.methods_sent() if m.startswith("skills/")]


async def test_a_result_without_result_type_is_refused() -> None:
    command = [sys.executable, str(SERVERS / "no_result_type_server.py")]
    async with native_client(command=command, env=ENV) as native:
        with pytest.raises(NativeRefused, match="skills/list: the 2026-07-28 result has no resultType"):
            await native.list_as_host()
        with pytest.raises(NativeRefused, match="skills/get: the 2026-07-28 result has no resultType"):
            await native.load_by_address("skill://hello/SKILL.md")


# -- the whole path: found by the server's search tool, loaded by address (issue 36 items 1 and 4) -----------------


async def find_skills(native: NativeClient, **arguments: Any) -> dict[str, Any]:
    """One `find_skills` call; its structured answer, with its text under `text` (the model reads both)."""
    result = await native.client.call_tool("find_skills", arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    text = "\n".join(block.text for block in result.content if block.type == "text")
    return {**result.structured_content, "text": text}


async def find_and_load(native: NativeClient, root: Path) -> None:
    listing = await native.list_as_host()
    assert skill_uri(TARGET) not in listing.uris  # the host never shows it to its model
    found = await find_skills(native, query=TASK, limit=5)
    assert found["skills"][0] == {
        "uri": skill_uri(TARGET),
        "name": f"skill-{TARGET:05d}",
        "description": TARGET_DESCRIPTION,
        "listed": True,  # in skills/list, past the host's cut
    }
    assert "skills/get" in found["text"]  # the answer says how to load by address
    await assert_loads_by_address(native, root, TARGET)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_host_finds_skill_1500_by_search_and_loads_it_by_address(large: Path, transport: str) -> None:
    args = [str(large), "--no-digest-cache"]
    if transport == "stdio":
        async with native_client(command=serve_command(*args), env=ENV) as native:
            await find_and_load(native, large)
    else:
        with serve_http([*args, "--no-watch"]) as server:
            async with native_client(url=server.url) as native:
                await find_and_load(native, large)


PAGE = 10  # find_skills results a page in the per-caller test
OUTSIDER = "outsider-token-3f9a"
INSIDER = "insider-token-71c2"
HIDDEN = skill_uri(TARGET)


async def every_answer(native: NativeClient, query: str) -> list[dict[str, Any]]:
    """Every page of one query, `PAGE` results a page, as the model would walk them."""
    pages: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"query": query, "limit": PAGE}
    while True:
        page = await find_skills(native, **arguments)
        pages.append(page)
        if "nextCursor" not in page:
            return pages
        arguments = {**arguments, "cursor": page["nextCursor"]}


async def test_with_per_caller_catalogs_a_hidden_skill_is_in_no_tool_answer(large: Path, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    entries = [
        {"client": "outsider", "sha256": hashlib.sha256(OUTSIDER.encode()).hexdigest(), "audiences": []},
        {"client": "insider", "sha256": hashlib.sha256(INSIDER.encode()).hexdigest(), "audiences": ["customs"]},
    ]
    tokens.write_text(json.dumps({"tokens": entries}))
    hidden_scope = f"skill://{skill_path(TARGET)}=customs"
    args = [str(large), "--no-digest-cache", "--no-watch", "--tokens", str(tokens), "--audience", hidden_scope]
    # Each matches the hidden skill; the last also about a hundred others (webhook), so it pages.
    queries = (TASK, TARGET_DESCRIPTION, "cargo manifest", "cargo manifest webhook")
    with serve_http(args) as server:
        async with native_client(url=server.url, token=INSIDER) as native:
            insider_totals = [(await find_skills(native, query=query))["total"] for query in queries]
            await find_and_load(native, large)  # a caller who may see it finds and loads it
        assert insider_totals[0] == 1  # the task finds the one skill
        assert insider_totals[-1] > 2 * PAGE  # and the last query pages past it
        async with native_client(url=server.url, token=OUTSIDER) as native:
            listing = await native.list_as_host()
            assert HIDDEN not in listing.uris
            for query, insider_total in zip(queries, insider_totals, strict=True):
                pages = await every_answer(native, query)
                for page in pages:
                    assert HIDDEN not in json.dumps(page)  # no item, text, notice or cursor names it
                    assert all(item["name"] != f"skill-{TARGET:05d}" for item in page["skills"])
                    assert page["total"] == insider_total - 1  # not counted either
                assert len(pages) == max(-(-(insider_total - 1) // PAGE), 1)  # no page, so no cursor, for it
            with pytest.raises(Exception, match="Unknown skill"):
                await native.load_by_address(HIDDEN)

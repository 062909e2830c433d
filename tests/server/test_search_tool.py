"""`find_skills` (`server/search_tool.py`) in-process: the bridge's ranking, pages and bounds, catalog swaps, a
restart over the index file, and per-caller catalogs (a hidden skill is in no answer, count or cursor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client

from skillwire.catalog.audiences import audience_rules, parse_audience_rule
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET, encode_cursor
from skillwire.host.host import SkillHost
from skillwire.host.search import SkillSearch
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from skillwire.server.search_tool import MAX_QUERY_CHARS, SkillFinder
from skillwire.server.visibility import PerCallerSkills

WORDS = ["deploy", "invoice", "schema", "render", "audit", "billing", "cluster", "lint", "diagram", "ticket"]
pytestmark = pytest.mark.anyio

QUERIES = [
    "render the invoice diagram",
    "audit the cluster billing before every deploy of the schema",
    "lint",
    "ticket",
    "kiln glaze",
    "skill-017",
]


def write_skill(root: Path, name: str, description: str, body: str) -> None:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}", encoding="utf-8")


def make_catalog(root: Path, count: int = 60) -> None:
    for i in range(count):
        name = f"skill-{i:03d}"
        body = f"# {WORDS[i % 10]} steps\n\nUse it for {WORDS[(i * 3) % 10]} and {WORDS[(i * 7) % 10]} work.\n" * (
            1 + i % 4
        )
        write_skill(root, name, f"Helps with {WORDS[i % 10]} for team {i % 7}.", body)
    write_skill(root, "pottery", "Glazes and fires pottery.", "# Kiln schedule\n\nCone 6, a slow cool.\n")


async def find(client: Client, **arguments: Any) -> tuple[dict[str, Any], str, bool]:
    result = await client.call_tool("find_skills", arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    return result.structured_content or {}, text, bool(result.is_error)


async def every_page(client: Client, query: str, limit: int) -> tuple[list[str], int]:
    uris: list[str] = []
    cursor: str | None = None
    total = -1
    for _ in range(200):
        arguments: dict[str, Any] = {"query": query, "limit": limit}
        if cursor is not None:
            arguments["cursor"] = cursor
        structured, _, failed = await find(client, **arguments)
        assert not failed
        uris += [item["uri"] for item in structured["skills"]]
        total = structured["total"]
        cursor = structured.get("nextCursor")
        if cursor is None:
            return uris, total
    raise AssertionError("find_skills did not end")


def test_the_tool_is_offered_only_when_asked_for(tmp_path: Path) -> None:
    make_catalog(tmp_path / "skills", 3)
    catalog = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    assert SkillsExtension(catalog).tools() == []
    (binding,) = SkillsExtension(catalog, search_tool=True).tools()
    assert binding.kwargs["name"] == "find_skills"
    assert 'Skill("<server>:skill://…/SKILL.md")' in binding.kwargs["description"]
    assert "cannot know it" in binding.kwargs["description"]


def test_pages_and_totals_are_the_bridges(tmp_path: Path) -> None:
    """The same folder through the bridge's list_skills engine (a local origin) and through find_skills
    (the same label): every page and every total are the same."""
    root = tmp_path / "skills"
    make_catalog(root)
    host = SkillHost(use_cache=False)
    host.add_local("work", [root])
    bridge = SkillSearch(host.indexable_body)
    catalog = SkillCatalog([root], digest_cache=DigestCache())
    skills = SkillsExtension(catalog)
    finder = SkillFinder(lambda: catalog.snapshot, skills.request_snapshot, group="work")
    for query in QUERIES:
        for size in (5, 50):
            expected = bridge.ranked(host.registry, query, limit=size * 3)
            offset = 0
            cursor: str | None = None
            while True:
                page = finder.answer(catalog.snapshot, query, cursor, size).structured_content
                want = [s.ref.uri for s in expected.skills[offset : offset + size]]
                assert [item["uri"] for item in page["skills"]] == want, (query, size, offset)
                assert page["total"] == expected.total, query
                cursor = page.get("nextCursor")
                offset += size
                if cursor is None or offset >= size * 3:
                    break


async def test_paging_covers_the_ranking_once_and_bounds_hold(tmp_path: Path) -> None:
    make_catalog(tmp_path / "skills")
    catalog = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    async with Client(build_server(SkillsExtension(catalog, search_tool=True))) as client:
        whole, total = await every_page(client, "render the invoice diagram", 50)
        paged, paged_total = await every_page(client, "render the invoice diagram", 7)
        assert paged == whole
        assert len(whole) == total == paged_total
        assert len(set(whole)) == len(whole)

        structured, text, failed = await find(client, query="glaze pottery in a kiln", limit=1)
        assert not failed
        assert structured["skills"][0] == {
            "uri": "skill://pottery/SKILL.md",
            "name": "pottery",
            "description": "Glazes and fires pottery.",
            "listed": True,
        }
        assert "address: skill://pottery/SKILL.md" in text
        assert 'Skill("<server>:skill://…/SKILL.md")' in text

        _, text, failed = await find(client, query="x" * (MAX_QUERY_CHARS + 1))
        assert failed
        assert text == f"find_skills: the query is {MAX_QUERY_CHARS + 1} characters; use at most {MAX_QUERY_CHARS}."
        for limit in (0, 51):
            _, text, failed = await find(client, query="lint", limit=limit)
            assert failed
            assert text == "find_skills: 'limit' is 1 to 50."
        _, text, failed = await find(client, query=" ?! ")
        assert failed
        assert "no words" in text

        first, _, _ = await find(client, query="lint", limit=2)
        cursor = first["nextCursor"]
        _, text, failed = await find(client, query="deploy", cursor=cursor)
        assert failed
        assert "continues another query" in text
        _, text, failed = await find(client, query="lint", cursor=cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB"))
        assert failed
        assert "not one this server issued" in text
        # A cursor MAC'd with the right secret still carries no more than a call may.
        forged = encode_cursor(
            "find_skills", {"q": "x" * 2900, "at": 0, "cat": "whatever"}, secret=DEFAULT_CURSOR_SECRET
        )
        _, text, failed = await find(client, query="x" * 2900, cursor=forged)
        assert failed
        beyond = encode_cursor("find_skills", {"q": "lint", "at": 10**9, "cat": "x"}, secret=DEFAULT_CURSOR_SECRET)
        _, text, failed = await find(client, query="lint", cursor=beyond)
        assert failed
        assert "not one this server issued" in text


async def test_the_index_follows_a_catalog_change_and_reindexes_only_what_changed(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_catalog(root)
    catalog = SkillCatalog([root], digest_cache=DigestCache())
    skills = SkillsExtension(catalog, search_tool=True)
    assert skills.finder is not None
    async with Client(build_server(skills)) as client:
        structured, _, _ = await find(client, query="ceramics")
        assert structured["total"] == 0
        first = skills.finder.index.indexed
        stale, _, _ = await find(client, query="lint", limit=1)
        write_skill(root, "ceramics", "Throws ceramics on the wheel.", "# Wheel\n")
        catalog.refresh()
        structured, _, _ = await find(client, query="ceramics")
        assert [item["uri"] for item in structured["skills"]] == ["skill://ceramics/SKILL.md"]
        assert skills.finder.index.indexed == first + 1
        _, text, failed = await find(client, query="lint", cursor=stale["nextCursor"])
        assert failed
        assert "changed since this cursor was issued" in text


def test_a_restart_over_the_index_file_indexes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_catalog(root)
    path = tmp_path / "search.sqlite"
    catalog = SkillCatalog([root], digest_cache=DigestCache())
    skills = SkillsExtension(catalog)
    before = SkillFinder(lambda: catalog.snapshot, skills.request_snapshot, index_path=path)
    answer = before.answer(catalog.snapshot, "audit the cluster", None, 20).structured_content
    assert before.index.indexed == 61
    before.index.close()
    again = SkillCatalog([root], digest_cache=DigestCache())
    after = SkillFinder(lambda: again.snapshot, skills.request_snapshot, index_path=path)
    assert after.answer(again.snapshot, "audit the cluster", None, 20).structured_content["skills"] == answer["skills"]
    assert after.index.indexed == 0


@pytest.fixture
def guarded(tmp_path: Path) -> SkillCatalog:
    root = tmp_path / "skills"
    make_catalog(root, 20)
    write_skill(
        root / "secret", "kiln-secrets", "Secret kiln glaze recipes.", "# Glaze\n\nThe kiln glaze of the team.\n"
    )
    return SkillCatalog([root], digest_cache=DigestCache())


def per_caller(catalog: SkillCatalog, audiences: frozenset[str]) -> PerCallerSkills:
    rules = audience_rules([parse_audience_rule("skill://secret=team")])
    return PerCallerSkills(catalog, rules=rules, audiences_of=lambda _: audiences, search_tool=True)


async def test_a_hidden_skill_is_in_no_answer_count_or_cursor(guarded: SkillCatalog) -> None:
    hidden = "skill://secret/kiln-secrets/SKILL.md"
    async with Client(build_server(per_caller(guarded, frozenset()))) as client:
        uris, total = await every_page(client, "kiln glaze", 1)
        assert uris == ["skill://pottery/SKILL.md"]
        assert total == 1
        structured, text, _ = await find(client, query="recipes of the team")
        assert hidden not in str(structured)
        assert "kiln-secrets" not in text
        structured, _, _ = await find(client, query="kiln-secrets")  # its exact name: not put first
        assert [item["uri"] for item in structured["skills"]] == ["skill://pottery/SKILL.md"]
        structured, _, _ = await find(client, query="secret recipes")  # words only it has
        assert structured["skills"] == []
        assert structured["total"] == 0
        assert "nextCursor" not in structured
    async with Client(build_server(per_caller(guarded, frozenset({"team"})))) as client:
        uris, total = await every_page(client, "kiln glaze", 1)
        assert set(uris) == {hidden, "skill://pottery/SKILL.md"}
        assert total == 2


def test_the_search_evals_queries_rank_alike_on_the_server_and_the_bridge() -> None:
    """`bench.search_eval`'s 422 queries over its corpus: every find_skills page and total is the bridge's."""
    from bench import search_eval

    if not search_eval.CORPUS.is_dir():
        pytest.skip(f"the corpus {search_eval.CORPUS} is absent (it lives in ../shared beside the repo)")
    texts = [
        text
        for name in ("tune", "heldout")
        for item in search_eval.load_items(name)
        for text in (item.query, item.task)
    ]
    assert len(texts) == 422
    assert search_eval.server_matches_bridge(search_eval.corpus_host(), texts) == []


async def test_a_published_index_swap_reindexes_only_what_changed(tmp_path: Path) -> None:
    from skillwire.catalog.published import PublishedCatalog, publish
    from skillwire.catalog.store import parse_location

    root = tmp_path / "skills"
    make_catalog(root, 30)
    location = parse_location(f"file://{tmp_path / 'store'}")
    await publish(SkillCatalog([root], digest_cache=DigestCache()).snapshot, location)
    replica = PublishedCatalog(str(location), poll_seconds=0)
    replica.refresh()
    skills = SkillsExtension(replica, search_tool=True)
    assert skills.finder is not None
    async with Client(build_server(skills)) as client:
        structured, _, _ = await find(client, query="kiln glaze")
        assert [item["uri"] for item in structured["skills"]] == ["skill://pottery/SKILL.md"]
        made = skills.finder.index.indexed
        write_skill(root, "skill-003", "Now about ceramics wheels.", "# Wheel\n")
        await publish(SkillCatalog([root], digest_cache=DigestCache()).snapshot, location)
        replica.refresh()
        structured, _, _ = await find(client, query="ceramics wheels")
        assert [item["uri"] for item in structured["skills"]] == ["skill://skill-003/SKILL.md"]
        assert skills.finder.index.indexed == made + 1  # the swap re-indexed the one skill it changed


async def test_an_answer_before_the_bodies_are_in_says_it_is_partial(tmp_path: Path) -> None:
    make_catalog(tmp_path / "skills", 1_050)  # past BODIES_AT_ONCE: names and descriptions first
    catalog = SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache())
    skills = SkillsExtension(catalog, search_tool=True)
    assert skills.finder is not None
    async with Client(build_server(skills)) as client:
        structured, text, _ = await find(client, query="kiln schedule")
        pending = structured.get("partial")
        assert pending is not None
        assert pending.startswith("The search index is still adding skill bodies (")
        assert pending in text
        assert skills.finder.index.wait_for_bodies(timeout=120)
        structured, text, _ = await find(client, query="kiln schedule")
        assert "partial" not in structured
        assert structured["skills"][0]["uri"] == "skill://pottery/SKILL.md"  # "schedule" is in its body only


async def test_attach_adds_the_tool_beside_the_servers_own(tmp_path: Path) -> None:
    from mcp.server.mcpserver import MCPServer

    make_catalog(tmp_path / "skills", 3)
    server = MCPServer("mine")

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    SkillsExtension(SkillCatalog([tmp_path / "skills"], digest_cache=DigestCache()), search_tool=True).attach(server)
    async with Client(server) as client:
        assert sorted(tool.name for tool in (await client.list_tools()).tools) == ["add", "find_skills"]
        structured, _, failed = await find(client, query="kiln")
        assert not failed
        assert structured["total"] == 1

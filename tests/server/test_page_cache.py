"""`skills/list` pages built once per snapshot and reused (server/pages.py), through the real SDK in memory.

A page is a pure function of the snapshot and the cursor, so a second walk of the same snapshot must
answer from the pages the first one built; a changed catalog, another caller's view or a page over the
budget must never be answered from them.
"""

from __future__ import annotations

import gc
import hashlib
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.audiences import audience_rules
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.published import build_index, encode_index, snapshot_from_index
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, CatalogSnapshot, MemoryContent
from skillwire.catalog.store import BlobReader, parse_location
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import sha256_digest
from skillwire.server import pages as page_cache
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from skillwire.server.visibility import PerCallerSkills
from support.calls import send
from support.index_builds import count_index_builds
from support.skills import skill_md, write_file

SKILLS = 7
PAGE = 2


def make_catalog(root: Path) -> SkillCatalog:
    for n in range(SKILLS):
        folder = root / f"s{n}"
        write_file(folder / "SKILL.md", skill_md(f"s{n}", f"Skill {n}."))
        write_file(folder / "notes.md", f"notes {n}\n")
    return SkillCatalog([root])


def items_of(catalog: SkillCatalog) -> int:
    """What a whole listing of the catalog costs in the cache: each skill and each of its files."""
    return sum(1 + len(s.entry.files) for s in catalog.snapshot.listed)


async def walk(client: Client) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = await send(client, "skills/list", {"cursor": cursor} if cursor else None)
        pages.append(page)
        cursor = page.get("nextCursor")
        if not cursor:
            return pages


def uris(pages: list[dict[str, Any]]) -> list[str]:
    return [entry["uri"] for page in pages for entry in page["skills"]]


async def handler_page(skills: SkillsExtension, cursor: str | None) -> dict[str, Any]:
    # The handler reads nothing from the context but the snapshot, which SkillsExtension takes from its catalog.
    result = await skills.handle_list(cast(Any, None), PaginatedRequestParams(cursor=cursor))
    assert isinstance(result, dict)
    return result


def test_a_second_walk_of_one_snapshot_reuses_the_pages_the_first_built(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "skills")
    skills = SkillsExtension(catalog, page_size=PAGE)

    async def body() -> None:
        first = await handler_page(skills, None)
        again = await handler_page(skills, None)
        # The same entries, not rebuilt: building them was skillwire's own cost in a listing.
        assert again["skills"] is first["skills"]
        async with Client(build_server(skills)) as client:
            one, two = await walk(client), await walk(client)
        assert one == two
        assert len(uris(one)) == SKILLS
        assert skills.pages.held_items() == items_of(catalog)

    anyio.run(body)


def test_a_changed_catalog_is_listed_from_its_new_snapshot_and_the_old_pages_are_freed(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "skills")
    skills = SkillsExtension(catalog, page_size=PAGE)

    async def body() -> None:
        async with Client(build_server(skills)) as client:
            before = await walk(client)
            write_file(tmp_path / "skills" / "s3" / "extra.md", "a new file\n")
            write_file(tmp_path / "skills" / "zz" / "SKILL.md", skill_md("zz", "Added later."))
            catalog.refresh()
            after = await walk(client)
        assert "skill://zz/SKILL.md" not in uris(before)
        assert uris(after) == [*uris(before), "skill://zz/SKILL.md"]
        s3 = next(e for page in after for e in page["skills"] if e["uri"] == "skill://s3/SKILL.md")
        assert "skill://s3/extra.md" in [r["uri"] for r in s3["resources"]]
        gc.collect()
        assert skills.pages.held_items() == items_of(catalog)  # only the current snapshot's pages

    anyio.run(body)


def test_pages_over_the_budget_are_built_per_request_and_still_right(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "skills")
    page_cost = PAGE * 3  # two skills, each with SKILL.md and notes.md
    skills = SkillsExtension(catalog, page_size=PAGE, page_cache_items=page_cost)

    async def body() -> None:
        async with Client(build_server(skills)) as client:
            one, two = await walk(client), await walk(client)
        assert one == two
        assert len(uris(one)) == SKILLS
        assert skills.pages.held_items() == page_cost  # the first page only, never evicted by later ones
        second_cursor = one[0]["nextCursor"]
        assert (await handler_page(skills, second_cursor))["skills"] is not (await handler_page(skills, second_cursor))[
            "skills"
        ]

    anyio.run(body)
    unbounded = SkillsExtension(catalog, page_size=PAGE, page_cache_items=0)

    async def none_kept() -> None:
        async with Client(build_server(unbounded)) as client:
            await walk(client)
        assert unbounded.pages.held_items() == 0

    anyio.run(none_kept)


def test_a_cursor_this_server_did_not_issue_is_refused_after_pages_are_cached(tmp_path: Path) -> None:
    skills = SkillsExtension(make_catalog(tmp_path / "skills"), page_size=PAGE)

    async def body() -> None:
        async with Client(build_server(skills)) as client:
            pages = await walk(client)
            issued = pages[0]["nextCursor"]
            forged = issued[:-1] + ("B" if issued.endswith("A") else "A")
            with pytest.raises(MCPError) as refused:
                await send(client, "skills/list", {"cursor": forged})
            assert refused.value.error.code == INVALID_PARAMS

    anyio.run(body)


def test_one_callers_pages_are_never_another_callers(tmp_path: Path) -> None:
    catalog = make_catalog(tmp_path / "skills")
    write_file(tmp_path / "skills" / "a-team" / "SKILL.md", skill_md("a-team", "For the team only."))
    catalog.refresh()
    caller: dict[str, frozenset[str]] = {}
    skills = PerCallerSkills(
        catalog,
        rules=audience_rules([("skill://a-team", ["team"])]),
        audiences_of=lambda _: caller["audiences"],
        page_size=PAGE,
    )

    async def listed(audiences: frozenset[str]) -> list[str]:
        caller["audiences"] = audiences
        async with Client(build_server(skills)) as client:
            return uris(await walk(client))

    async def body() -> None:
        team = await listed(frozenset({"team"}))
        outsider = await listed(frozenset({"someone-else"}))
        team_again = await listed(frozenset({"team"}))
        assert "skill://a-team/SKILL.md" in team
        assert "skill://a-team/SKILL.md" not in outsider
        assert len(outsider) == SKILLS
        assert team_again == team

    anyio.run(body)


def test_the_default_budget_is_one_whole_walk_of_the_catalog_however_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The floor (22,000 items) would hide the rule on a catalog a test can write: lowered to one item,
    # the budget left is the walk of the snapshot being listed, which grows with the catalog.
    monkeypatch.setattr(page_cache, "MIN_AUTO_ITEMS", 1)
    catalog = make_catalog(tmp_path / "skills")
    skills = SkillsExtension(catalog, page_size=PAGE)

    async def body() -> None:
        async with Client(build_server(skills)) as client:
            await walk(client)
            assert skills.pages.held_items() == items_of(catalog)  # every page, the last one included
            for n in range(SKILLS, SKILLS + 3):
                write_file(tmp_path / "skills" / f"s{n}" / "SKILL.md", skill_md(f"s{n}", f"Skill {n}."))
            catalog.refresh()
            gc.collect()
            await walk(client)
        assert skills.pages.held_items() == items_of(catalog) == (SKILLS + 3) * 3 - 3
        last = cast(str, (await handler_page(skills, None))["nextCursor"])
        while True:  # the last page too is the one object built for the walk
            page = await handler_page(skills, last)
            assert page["skills"] is (await handler_page(skills, last))["skills"]
            if "nextCursor" not in page:
                break
            last = page["nextCursor"]

    anyio.run(body)


def test_the_budget_of_a_published_catalog_builds_none_of_its_skills(monkeypatch: pytest.MonkeyPatch) -> None:
    # A replica builds a skill from its index line only when a page asks for it (catalog.indexed): sizing
    # the budget by summing manifests would build all 3,000 on the first page of the first listing.
    built = count_index_builds(monkeypatch)
    skills = []
    for n in range(3_000):
        data = b"---\nname: s%d\ndescription: d\n---\n" % n
        uri = f"skill://f/s{n:05d}/SKILL.md"
        manifest = (CatalogFile(uri, sha256_digest(data), len(data), "text/markdown", True, MemoryContent(data)),)
        skills.append(CatalogSkill(SkillEntry(uri, {"name": f"s{n:05d}", "description": "d"}, manifest), uri))
    source = CatalogSnapshot(skills, [s.entry.files[0] for s in skills if isinstance(s.entry.files[0], CatalogFile)])
    body = encode_index(build_index(source))
    snapshot = snapshot_from_index(body, hashlib.sha256(body).hexdigest(), BlobReader(None, parse_location("s3://b")))  # type: ignore[arg-type]
    assert page_cache.walk_items(snapshot) == 6_000  # 3,000 skills and their 3,000 files, by two lengths
    cache = page_cache.PageCache()
    page, _ = snapshot.list_page(None, 50)
    cache.put(snapshot, None, {"skills": page}, 100)
    assert len(built) == 50  # the page's own skills, nothing for the budget
    assert cache.held_items() == 100

"""Property: browsing `list_skills` page by page never repeats a skill, and never skips one that existed
throughout, however the catalog changes between pages (skills added and removed, origins dropped).

Real `SkillHost` and `Registry` (no servers: the registry is set the way a listing sets it), real
`SkillTools` paging; hypothesis picks catalogs, page sizes and the changes between pages.
"""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.host import SkillHost
from skillwire.host.tools import SkillTools

DIGEST = "sha256:" + "1" * 64
ORIGINS = ["a", "b", "c"]
NAMES = [f"s{i:02d}" for i in range(40)]


def entry(name: str) -> SkillEntry:
    uri = f"skill://{name}/SKILL.md"
    return SkillEntry(uri, {"name": name, "description": f"Skill {name}."}, (ManifestFile(uri, DIGEST, 1),))


Catalog = dict[str, frozenset[str]]
catalogs = st.fixed_dictionaries({o: st.frozensets(st.sampled_from(NAMES), max_size=25) for o in ORIGINS})


def apply(host: SkillHost, catalog: Catalog) -> None:
    for origin, names in catalog.items():
        if names:
            host.registry.set_origin(origin, "mcp", [entry(n) for n in sorted(names)])
        else:
            host.registry.remove_origin(origin)


def keys(catalog: Catalog) -> set[tuple[str, str]]:
    return {(o, f"skill://{n}/SKILL.md") for o, names in catalog.items() for n in names}


async def browse(initial: Catalog, changes: list[Catalog], page_size: int) -> tuple[list[Any], list[Catalog]]:
    async with SkillHost() as host:
        tools = SkillTools(host, page_size=page_size)
        apply(host, initial)
        seen: list[Any] = []
        states = [initial]
        cursor: str | None = None
        for step in range(200):
            result = await tools.call("list_skills", {"cursor": cursor} if cursor else {})
            assert not result.is_error, result.text
            assert result.structured is not None
            seen += [(s["server"], s["uri"]) for s in result.structured["skills"]]
            cursor = result.structured.get("nextCursor")
            if cursor is None:
                return seen, states
            if step < len(changes):
                apply(host, changes[step])
                states.append(changes[step])
        raise AssertionError("paging did not end")


@settings(max_examples=120, deadline=None)
@given(initial=catalogs, changes=st.lists(catalogs, max_size=6), page_size=st.integers(1, 9))
def test_browsing_never_repeats_and_never_skips_a_skill_that_stayed(
    initial: Catalog, changes: list[Catalog], page_size: int
) -> None:
    seen, states = anyio.run(browse, initial, changes, page_size)
    assert len(seen) == len(set(seen)), "a skill was listed twice"
    stayed = set.intersection(*(keys(s) for s in states))
    assert stayed <= set(seen), f"skipped: {sorted(stayed - set(seen))}"
    ever = set.union(*(keys(s) for s in states))
    assert set(seen) <= ever  # nothing invented

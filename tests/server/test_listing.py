"""The operator chooses what `skills/list` lists (issue 36 item 2; `catalog/listing.py`).

`--list GLOB` / `--unlist GLOB` (the last matching rule decides; a skill no rule matches keeps its source's
choice) for every kind of source: folders, skills in code, a published index (the flag travels in the index, so a
replica lists what its publisher chose and takes no rules of its own), git roots (through the same `SkillCatalog`
build: tests/e2e/test_native_host_limits.py). An unlisted skill is absent from `skills/list` and from
`resources/list`'s SKILL.md pages, and still answers `skills/get`, `resources/read` and directory reads; the
listing's keyset cursors keep working; per-caller views keep the operator's choice (visible AND listed).
Run over the real SDK in memory (`build_server`), as a client sees it.
"""

from __future__ import annotations

import argparse
import fnmatch
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.client import Client

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.listing import ListingRule, ListingRules
from skillwire.catalog.persist import SnapshotStore
from skillwire.catalog.published import PublishedCatalog, build_index, publish, scan_for_publish
from skillwire.catalog.store import parse_location
from skillwire.cli.args import add_listing_arguments
from skillwire.core.errors import InvalidListingRule
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from skillwire.server.options import ServeOptions
from skillwire.server.visibility import PerCallerSkills
from support.calls import send, send_error
from support.skills import skill_md, write_file

pytestmark = pytest.mark.anyio

SKILLS = ("core/git-workflow", "core/code-review", "team-a/refunds", "team-a/deep/ledger", "team-b/refunds", "solo")


def write_catalog(root: Path) -> Path:
    for path in SKILLS:
        name = path.rsplit("/", 1)[-1]
        write_file(root / path / "SKILL.md", skill_md(name, f"The {name} skill."))
        write_file(root / path / "notes" / "guide.md", f"# {name}\n")
    return root


def rules(*flags: str) -> ListingRules:
    """`rules("-**", "+core/**")`: `--unlist '**' --list 'core/**'`."""
    return ListingRules([ListingRule(flag[0] == "+", flag[1:]) for flag in flags])


def uri(path: str) -> str:
    return f"skill://{path}/SKILL.md"


async def listed_uris(client: Client) -> list[str]:
    uris: list[str] = []
    params: dict[str, object] = {}
    while True:
        page = await send(client, "skills/list", params)
        uris += [entry["uri"] for entry in page["skills"]]
        if "nextCursor" not in page:
            return uris
        params = {"cursor": page["nextCursor"]}


async def resource_uris(client: Client) -> list[str]:
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        uris += [str(r.uri) for r in page.resources]
        cursor = page.next_cursor
        if not cursor:
            return uris


# -- the rule: globs, order, defaults --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("glob", "matching", "not_matching"),
    [
        ("core/**", ["core", "core/git-workflow", "core/a/b"], ["corex/a", "x/core"]),
        ("core/*", ["core/git-workflow"], ["core", "core/a/b"]),
        ("**/refunds", ["refunds", "team-a/refunds", "a/b/refunds"], ["team-a/refunds-2", "refunds/x"]),
        ("team-?/refunds", ["team-a/refunds", "team-b/refunds"], ["team-ab/refunds"]),
        ("team-[!a]/*", ["team-b/refunds"], ["team-a/refunds"]),
        ("team-[ab]/*", ["team-a/x", "team-b/x"], ["team-c/x"]),
        ("team[/]a", [], ["team/a"]),  # a class stays inside a segment
        ("**", ["solo", "a/b/c"], []),
        ("skill://core/**", ["core/git-workflow"], []),
        ("skill://solo/SKILL.md", ["solo"], ["solo/x"]),
        ("solo/SKILL.md", ["solo"], []),
        ("github://core/**", [], ["core/git-workflow"]),  # a URI glob names its scheme
    ],
)
def test_a_glob_matches_skill_paths_and_uris(glob: str, matching: list[str], not_matching: list[str]) -> None:
    rule = ListingRule(True, glob)
    assert [p for p in matching if rule.matches(f"skill://{p}")] == matching
    assert [p for p in not_matching if rule.matches(f"skill://{p}")] == []


def test_the_last_matching_rule_decides_and_no_rule_keeps_the_source_choice() -> None:
    chosen = rules("-**", "+core/**", "-core/code-review")
    assert chosen.listed("skill://core/git-workflow", False) is True
    assert chosen.listed("skill://core/code-review", True) is False
    assert chosen.listed("skill://solo", True) is False
    assert rules("+core/**").listed("skill://solo", False) is False  # unmatched: the source's own flag
    assert rules("+core/**").listed("skill://solo", True) is True
    assert not ListingRules()


@pytest.mark.parametrize("glob", ["", "  ", "/abs/path", "/SKILL.md"])
def test_an_unusable_glob_is_one_line(glob: str) -> None:
    with pytest.raises(InvalidListingRule, match=r"^--unlist .*: write a skill path glob"):
        ListingRule(False, glob)


def test_the_command_line_keeps_the_order_of_list_and_unlist() -> None:
    parser = argparse.ArgumentParser()
    add_listing_arguments(parser)
    args = parser.parse_args(["--unlist", "**", "--list", "core/**", "--unlist", "core/code-review"])
    assert [(r.listed, r.glob) for r in args.listing] == [(False, "**"), (True, "core/**"), (False, "core/code-review")]
    assert parser.parse_args([]).listing == []


# -- folders, skills in code, per-caller views -------------------------------------------------------------------


async def test_unlisted_folder_skills_are_served_but_not_listed(tmp_path: Path) -> None:
    catalog = SkillCatalog([write_catalog(tmp_path / "skills")], listing=rules("-**", "+core/**", "+solo"))
    async with Client(build_server(SkillsExtension(catalog, page_size=1))) as client:
        shown = [uri("core/code-review"), uri("core/git-workflow"), uri("solo")]
        assert await listed_uris(client) == shown  # one a page: the keyset cursors walk the listed set only
        assert [u for u in await resource_uris(client) if u.endswith("/SKILL.md")] == shown
        hidden = uri("team-a/deep/ledger")
        got = await send(client, "skills/get", {"uri": hidden})
        assert got["skill"]["frontmatter"]["name"] == "ledger"
        read = await client.read_resource(hidden)
        assert "The ledger skill." in read.contents[0].text  # type: ignore[union-attr]
        guide = await client.read_resource("skill://team-a/deep/ledger/notes/guide.md")
        assert guide.contents[0].text == "# ledger\n"  # type: ignore[union-attr]
        folder = await send(client, "resources/directory/read", {"uri": "skill://team-a/deep/ledger"})
        assert sorted(item["uri"] for item in folder["resources"]) == [
            "skill://team-a/deep/ledger/SKILL.md",
            "skill://team-a/deep/ledger/notes",
        ]
        error = await send_error(client, "skills/get", {"uri": uri("team-a/nothing")})
        assert error.code == -32602  # an unlisted skill is not an unknown one, and an unknown one is still unknown


async def test_rules_override_a_skill_in_code_and_leave_the_rest_as_written(tmp_path: Path) -> None:
    catalog = SkillCatalog(listing=rules("+code/shown-by-rule", "-code/hidden-by-rule"))
    for name, listed in (("shown-by-rule", False), ("hidden-by-rule", True), ("as-written", False), ("plain", True)):
        catalog.add_files(f"code/{name}", {"SKILL.md": skill_md(name, "In code.")}, listed=listed)
    async with Client(build_server(SkillsExtension(catalog))) as client:
        assert await listed_uris(client) == [uri("code/plain"), uri("code/shown-by-rule")]
        assert (await send(client, "skills/get", {"uri": uri("code/as-written")}))["skill"]["uri"]


async def test_a_caller_sees_what_it_may_see_and_what_the_operator_lists(tmp_path: Path) -> None:
    catalog = SkillCatalog([write_catalog(tmp_path / "skills")], listing=rules("-team-a/**"))
    audience_rules = (("skill://team-b", frozenset({"b"})),)
    outsider = PerCallerSkills(catalog, rules=audience_rules, audiences_of=lambda _: frozenset())
    async with Client(build_server(outsider)) as client:
        assert await listed_uris(client) == [uri("core/code-review"), uri("core/git-workflow"), uri("solo")]
        # Unlisted but visible: loadable by address; hidden: unknown, listed or not.
        assert (await send(client, "skills/get", {"uri": uri("team-a/refunds")}))["skill"]
        assert (await send_error(client, "skills/get", {"uri": uri("team-b/refunds")})).code == -32602
    insider = PerCallerSkills(catalog, rules=audience_rules, audiences_of=lambda _: frozenset({"b"}))
    async with Client(build_server(insider)) as client:
        assert uri("team-b/refunds") in await listed_uris(client)
        assert uri("team-a/refunds") not in await listed_uris(client)


async def test_a_restart_lists_by_its_own_rules_not_the_saved_snapshot(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "skills")
    store = tmp_path / "snapshot"
    first = SkillCatalog([root], snapshot_store=SnapshotStore(store), listing=rules("-**"))
    assert len(first.snapshot.listed) == 0
    first.wait_for_save()
    warm = SkillCatalog([root], snapshot_store=SnapshotStore(store), listing=rules("-**", "+solo"))
    listed = [s.uri for s in warm.snapshot.listed]
    assert not warm.validated  # served from the saved snapshot...
    assert listed == [uri("solo")]  # ...listed by today's rules


# -- a published index: the flag is in the index ----------------------------------------------------------------


async def test_publish_writes_the_choice_into_the_index_and_every_replica_lists_it(tmp_path: Path) -> None:
    root = write_catalog(tmp_path / "skills")
    snapshot = scan_for_publish([SkillRoot(root)], listing=rules("-**", "+team-b/**"))
    index = build_index(snapshot)
    flags = {record["uri"]: record.get("listed", True) for record in index["skills"]}
    assert flags == {uri(path): path.startswith("team-b/") for path in SKILLS}
    location = parse_location(f"file://{tmp_path / 'store'}")
    published = await publish(snapshot, location)
    assert "published 6 skills, 12 files" in published.summary()
    assert published.summary().endswith("; 5 unlisted (served by address, not in skills/list)")
    replicas = [
        PublishedCatalog(str(location), poll_seconds=0, replica_state=tmp_path / f"{state}.json")
        for state in ("one", "two")  # each with its own state: the index alone decides
    ]
    for replica in replicas:
        async with Client(build_server(SkillsExtension(replica, page_size=1))) as client:
            assert await listed_uris(client) == [uri("team-b/refunds")]
            assert (await send(client, "skills/get", {"uri": uri("core/git-workflow")}))["skill"]
    # A listing begun on one replica continues on the other (behind a load balancer): the same keyset.
    many = scan_for_publish([SkillRoot(root)], listing=rules("-team-b/**"))
    await publish(many, location)
    for replica in replicas:
        replica.refresh()
    one, two = (build_server(SkillsExtension(r, page_size=2)) for r in replicas)
    async with Client(one) as first, Client(two) as second:
        page = await send(first, "skills/list")
        rest = await send(second, "skills/list", {"cursor": page["nextCursor"]})
        walked = [e["uri"] for e in page["skills"] + rest["skills"]]
        assert walked == sorted(uri(p) for p in SKILLS if not p.startswith("team-b/"))[:4]


def test_a_replica_takes_no_listing_rules(tmp_path: Path) -> None:
    options = ServeOptions(listing=rules("-**"), digest_cache=tmp_path / "d.sqlite")
    with pytest.raises(InvalidListingRule, match="lists what its publisher chose"):
        options.published_catalog(f"file://{tmp_path / 'store'}")
    catalog = options.folder_catalog([])
    assert catalog.listing == rules("-**")


def test_a_catalog_without_rules_is_unchanged(tmp_path: Path) -> None:
    catalog = SkillCatalog([write_catalog(tmp_path / "skills")], digest_cache=DigestCache())
    assert [s.uri for s in catalog.snapshot.listed] == sorted(uri(p) for p in SKILLS)


def _reference(glob: list[str], path: list[str]) -> bool:
    """The glob rule written segment by segment: `**` is any number of segments, any other segment is
    `fnmatchcase` on one segment (whose `*`, `?` and `[...]` cannot meet a `/`, since a segment has none)."""
    if not glob:
        return not path
    if glob[0] == "**":
        return any(_reference(glob[1:], path[at:]) for at in range(len(path) + 1))
    return bool(path) and fnmatch.fnmatchcase(path[0], glob[0]) and _reference(glob[1:], path[1:])


_SEGMENTS = st.sampled_from(["a", "b", "ab", "a-b", "x.y", "*", "?", "a*", "*b", "[ab]", "[!a]", "**"])


@settings(max_examples=500, deadline=None)
@given(
    st.lists(_SEGMENTS, min_size=1, max_size=4),
    st.lists(st.sampled_from(["a", "b", "ab", "a-b", "x.y", "ba"]), min_size=1, max_size=5),
)
def test_globs_match_as_the_segment_by_segment_rule_says(glob: list[str], path: list[str]) -> None:
    rule = ListingRule(True, "/".join(glob))
    assert rule.matches("skill://" + "/".join(path)) == _reference(glob, path)

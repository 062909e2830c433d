"""`SkillsClient.list_skills` and `ClientLimits` without a process: every cap that ends a listing says why in
`Listing.stopped_early`, a bad or repeated entry is a problem beside the good ones, a later page that fails
keeps what was read, and only a whole listing is cached for the server's `ttlMs`.

The server is scripted by hand over the SDK's in-memory `Client` (no skillwire server code), so each test
chooses exactly the pages a misbehaving server would send. The e2e tests (`tests/e2e/test_client_*.py`)
run the same rules over real transports.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, cast

import pytest
from mcp.client import Client
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ErrorData, PaginatedRequestParams

from skillwire.client.limits import ClientLimits, Refusal, ResponseBudget
from skillwire.client.skills import SkillsClient
from skillwire.core.errors import ServerError
from skillwire.core.protocol import EXTENSION_ID, INDEX_META_KEY, METHOD_LIST, METHOD_RESOURCES_READ
from skillwire.core.published_index import PublishedIndex

pytestmark = pytest.mark.anyio

Page = Callable[[str | None], HandlerResult]


def entry(name: str) -> dict[str, Any]:
    body = f"---\nname: {name}\ndescription: The {name} skill.\n---\n".encode()
    uri = f"skill://acme/{name}/SKILL.md"
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    return {
        "uri": uri,
        "frontmatter": {"name": name, "description": f"The {name} skill."},
        "resources": [{"uri": uri, "digest": digest, "size": len(body)}],
    }


def scripted(page_of: Page) -> MCPServer:
    """A server whose `skills/list` answers `page_of(cursor)` (a dict, or raises for an error)."""
    server = MCPServer("scripted")
    lowlevel = server._lowlevel_server  # a test server written by hand: no skillwire server code
    asked: list[str | None] = []

    async def list_skills(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        asked.append(params.cursor)
        return page_of(params.cursor)

    lowlevel.add_request_handler(METHOD_LIST, PaginatedRequestParams, list_skills)
    lowlevel.extensions[EXTENSION_ID] = {}
    server.asked = asked  # type: ignore[attr-defined]  # what the client asked for, for the assertions
    return server


def pages_of(*pages: list[dict[str, Any]], ttl: int | None = None) -> Page:
    """Pages served in order, each pointing at the next by cursor `p<N>`."""

    def page_of(cursor: str | None) -> HandlerResult:
        at = 0 if cursor is None else int(cursor[1:])
        result: dict[str, Any] = {"resultType": "complete", "skills": pages[at]}
        if at + 1 < len(pages):
            result["nextCursor"] = f"p{at + 1}"
        if ttl is not None:
            result["ttlMs"] = ttl
        return result

    return page_of


async def listing_of(page_of: Page, limits: ClientLimits | None = None) -> Any:
    async with Client(scripted(page_of)) as client:
        return await SkillsClient(client, origin="acme", limits=limits).list_skills()


async def test_a_whole_listing_reads_every_page_and_says_nothing_stopped_it() -> None:
    listing = await listing_of(pages_of([entry("a"), entry("b")], [entry("c")]))
    assert [e.name for e in listing.entries] == ["a", "b", "c"]
    assert (listing.pages, listing.stopped_early, listing.problems) == (2, None, ())


async def test_the_page_cap_stops_the_listing_and_says_so() -> None:
    listing = await listing_of(pages_of([entry("a")], [entry("b")], [entry("c")]), ClientLimits(max_pages=2))
    assert [e.name for e in listing.entries] == ["a", "b"]
    assert listing.stopped_early == "stopped after 2 pages"


async def test_a_page_over_the_per_page_cap_is_not_read() -> None:
    listing = await listing_of(
        pages_of([entry("a")], [entry("b"), entry("c"), entry("d")]), ClientLimits(max_page_entries=2)
    )
    assert [e.name for e in listing.entries] == ["a"]
    assert listing.stopped_early == "page 2 has 3 entries, over the cap of 2 per page; not read"


async def test_the_entry_cap_keeps_exactly_that_many_and_says_so() -> None:
    two_pages = pages_of([entry("a"), entry("b")], [entry("c"), entry("d")])
    listing = await listing_of(two_pages, ClientLimits(max_entries=3))
    assert [e.name for e in listing.entries] == ["a", "b", "c"]
    assert listing.stopped_early == "stopped at the cap of 3 entries in one listing"


async def test_a_bad_entry_and_a_repeated_one_are_problems_beside_the_good_ones() -> None:
    broken = {**entry("b"), "frontmatter": {"name": "b"}}  # no description
    listing = await listing_of(pages_of([entry("a"), broken], [entry("a"), entry("c")]))
    assert [e.name for e in listing.entries] == ["a", "c"]
    assert [(p.page, p.index, p.uri) for p in listing.problems] == [
        (1, 1, "skill://acme/b/SKILL.md"),
        (2, 0, "skill://acme/a/SKILL.md"),
    ]
    assert "description" in listing.problems[0].reason
    assert listing.problems[1].reason == "listed twice (an entry split or repeated)"
    assert listing.stopped_early is None


async def test_a_later_page_that_fails_keeps_what_was_read() -> None:
    def page_of(cursor: str | None) -> HandlerResult:
        if cursor is None:
            return {"resultType": "complete", "skills": [entry("a")], "nextCursor": "next"}
        raise MCPError.from_error_data(ErrorData(code=-32603, message="backend down"))

    listing = await listing_of(page_of)
    assert [e.name for e in listing.entries] == ["a"]
    assert listing.stopped_early is not None
    assert listing.stopped_early.startswith("page 2 failed: ")
    assert "backend down" in listing.stopped_early


async def test_a_first_page_that_fails_is_an_error_not_an_empty_listing() -> None:
    def page_of(cursor: str | None) -> HandlerResult:
        raise MCPError.from_error_data(ErrorData(code=-32603, message="backend down"))

    failure: ServerError | None = None
    async with Client(scripted(page_of)) as client:
        try:  # caught inside the client's task group, which would wrap it in a group
            await SkillsClient(client, origin="acme").list_skills()
        except ServerError as exc:
            failure = exc
    assert failure is not None
    assert str(failure) == "acme: backend down (JSON-RPC -32603)"


async def test_a_whole_listing_is_reused_within_its_ttl_and_a_cut_one_never_is() -> None:
    for limits, reused in ((ClientLimits(), True), (ClientLimits(max_pages=1), False)):
        server = scripted(pages_of([entry("a")], [entry("b")], ttl=60_000))
        async with Client(server) as client:
            skills = SkillsClient(client, origin="acme", limits=limits)
            first = await skills.list_skills()
            again = await skills.list_skills()
            fresh = await skills.list_skills(use_cache=False)
        asked_per_listing = 2 if limits.max_pages > 1 else 1
        assert (again is first) == reused, limits
        expected = asked_per_listing * (2 if reused else 3)
        assert len(server.asked) == expected, (limits, server.asked)  # type: ignore[attr-defined]
        assert [e.name for e in fresh.entries] == [e.name for e in first.entries]


# -- ClientLimits and the per-connection budget ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("timeout", 0, "timeout must be positive, got 0"),
        ("max_response_bytes", 0, "max_response_bytes must be at least 1, got 0"),
        ("max_page_entries", 0, "max_page_entries must be at least 1, got 0"),
        ("max_pages", 0, "max_pages must be at least 1, got 0"),
        ("max_entries", -1, "max_entries must be at least 1, got -1"),
        ("listing_seconds", 0, "listing_seconds must be positive, got 0"),
    ],
)
async def test_limits_refuse_a_bound_that_lets_nothing_through(field: str, value: float, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        ClientLimits(**cast(dict[str, Any], {field: value}))


async def test_a_listed_file_may_take_its_worst_json_escaping_plus_the_envelope() -> None:
    limits = ClientLimits(max_response_bytes=1000)
    assert limits.read_allowance(10) == 10 * 6 + 64 * 1024
    assert limits.read_allowance(None) == 1000  # an unlisted read: the ordinary answer bound
    assert limits.largest_answer == limits.read_allowance(16 * 1024 * 1024)  # the per-skill size limit


async def test_the_budget_gives_a_read_its_allowance_only_while_it_is_pending() -> None:
    budget = ResponseBudget(ClientLimits(max_response_bytes=1000))
    uri = "skill://acme/a/big.md"
    params = {"uri": uri}
    assert budget.limit_for(METHOD_RESOURCES_READ, params) == 1000
    with budget.expect_read(uri, 10):
        with budget.expect_read(uri, 100):  # two reads of one URI at once: the larger allowance
            assert budget.limit_for(METHOD_RESOURCES_READ, params) == 100 * 6 + 64 * 1024
        assert budget.limit_for(METHOD_RESOURCES_READ, params) == 10 * 6 + 64 * 1024
        assert budget.limit_for(METHOD_LIST, params) == 1000  # only a read of that URI
    assert budget.limit_for(METHOD_RESOURCES_READ, params) == 1000


async def test_a_refusal_is_taken_once_by_the_request_it_belongs_to() -> None:
    budget = ResponseBudget()
    refusal = Refusal("too-large", "answer over 1000 bytes")
    budget.refuse(METHOD_RESOURCES_READ, {"uri": "skill://acme/a/x.md"}, refusal)
    assert budget.take_refusal(METHOD_RESOURCES_READ, "skill://acme/a/other.md") is None
    assert budget.take_refusal(METHOD_RESOURCES_READ, "skill://acme/a/x.md") is refusal
    assert budget.take_refusal(METHOD_RESOURCES_READ, "skill://acme/a/x.md") is None


# -- which published index the pages came from (`_meta[INDEX_META_KEY]`) -----------------------------------

OLD_ID, NEW_ID = "0a" * 32, "0b" * 32


def index_pages(*claims: object) -> Page:
    """One entry a page, page N claiming `claims[N]` in its `_meta` (`...`: no `_meta` at all)."""

    def page_of(cursor: str | None) -> HandlerResult:
        at = 0 if cursor is None else int(cursor[1:])
        result: dict[str, Any] = {"resultType": "complete", "skills": [entry(f"s{at}")]}
        if claims[at] is not ...:
            result["_meta"] = {INDEX_META_KEY: claims[at], "other.vendor/key": 1}
        if at + 1 < len(claims):
            result["nextCursor"] = f"p{at + 1}"
        return result

    return page_of


async def test_the_published_index_a_listing_came_from_is_read_from_its_meta() -> None:
    listing = await listing_of(index_pages({"id": NEW_ID, "sequence": 5}, {"id": NEW_ID, "sequence": 5}))
    assert listing.index == PublishedIndex(NEW_ID, 5)
    assert listing.index_problem is None


async def test_a_server_that_names_no_index_gives_none_and_no_problem() -> None:
    listing = await listing_of(index_pages(..., ...))
    assert (listing.index, listing.index_problem) == (None, None)
    assert [e.name for e in listing.entries] == ["s0", "s1"]


async def test_pages_from_different_indexes_give_the_oldest() -> None:
    # Behind a load balancer the second page may come from a replica still on the older index.
    listing = await listing_of(index_pages({"id": NEW_ID, "sequence": 5}, {"id": OLD_ID, "sequence": 4}, ...))
    assert listing.index == PublishedIndex(OLD_ID, 4)
    listing = await listing_of(index_pages({"id": OLD_ID, "sequence": 4}, {"id": NEW_ID, "sequence": 5}))
    assert listing.index == PublishedIndex(OLD_ID, 4)


@pytest.mark.parametrize(
    "claim", ["5", {"id": NEW_ID}, {"id": "x" * 64, "sequence": 5}, {"id": NEW_ID, "sequence": -1}, None]
)
async def test_garbage_in_the_meta_is_a_one_line_problem_and_the_entries_still_list(claim: object) -> None:
    listing = await listing_of(index_pages({"id": NEW_ID, "sequence": 5}, claim))
    assert listing.index == PublishedIndex(NEW_ID, 5)  # what the good page said
    assert listing.index_problem is not None
    assert listing.index_problem.startswith(f"page 2's _meta {INDEX_META_KEY} is ")
    assert "\n" not in listing.index_problem
    assert [e.name for e in listing.entries] == ["s0", "s1"]

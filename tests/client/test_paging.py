"""The client's one paging loop (`client/paging.pages`) and the calls built on it, without a process.

Each stop rule once on scripted pages, then `SkillsClient.read_directory` against an in-process server
(the SDK's in-memory `Client`) that repeats a cursor: the listing it returns says it was cut short,
where it used to hand back the partial list as if it were whole.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import PaginatedRequestParams

from skillwire.client.paging import PageWalk, pages
from skillwire.client.skills import SkillsClient
from skillwire.core.params import ReadDirectoryParams
from skillwire.core.protocol import DIRECTORY_READ_SETTING, EXTENSION_ID, METHOD_LIST, METHOD_READ_DIRECTORY

pytestmark = pytest.mark.anyio


async def walk_of(results: list[dict[str, Any]], max_pages: int = 10) -> tuple[list[str | None], PageWalk]:
    asked: list[str | None] = []

    async def fetch(cursor: str | None) -> dict[str, Any]:
        asked.append(cursor)
        return results[len(asked) - 1]

    walk = PageWalk(max_pages)
    async for _ in pages(fetch, walk):
        pass
    return asked, walk


async def test_a_walk_follows_cursors_to_the_last_page() -> None:
    asked, walk = await walk_of([{"nextCursor": "a"}, {"nextCursor": "b"}, {"nextCursor": ""}])
    assert (asked, walk.pages, walk.stopped) == ([None, "a", "b"], 3, None)


@pytest.mark.parametrize(
    ("results", "max_pages", "stopped"),
    [
        ([{"nextCursor": "a"}, {"nextCursor": "a"}], 10, "the server repeated a cursor (a pagination loop)"),
        ([{"nextCursor": 7}], 10, "nextCursor is not a string: 7"),
        ([{"nextCursor": "a"}, {"nextCursor": "b"}, {"nextCursor": "c"}], 2, "stopped after 2 pages"),
    ],
)
async def test_every_early_stop_is_said(results: list[dict[str, Any]], max_pages: int, stopped: str) -> None:
    _, walk = await walk_of(results, max_pages)
    assert walk.stopped == stopped


async def test_a_callers_own_cap_ends_the_walk_after_that_page() -> None:
    fetched: list[str | None] = []

    async def fetch(cursor: str | None) -> dict[str, Any]:
        fetched.append(cursor)
        return {"nextCursor": f"after-{len(fetched)}"}

    walk = PageWalk(100)
    async for _ in pages(fetch, walk):
        if walk.pages == 2:
            walk.stop("entry cap")
    assert (fetched, walk.stopped) == ([None, "after-1"], "entry cap")


def looping_directory_server() -> MCPServer:
    """A server whose directory read hands back the same cursor forever (one item a page)."""
    server = MCPServer("looping")
    lowlevel = server._lowlevel_server  # a test server written by hand: no skillwire server code

    async def list_skills(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        return {"resultType": "complete", "skills": []}

    async def read_directory(ctx: ServerRequestContext[Any, Any], params: ReadDirectoryParams) -> HandlerResult:
        n = 0 if params.cursor is None else 1
        item = {"uri": f"skill://loop/x/f{n}.md", "name": f"f{n}.md", "mimeType": "text/markdown"}
        return {"resultType": "complete", "resources": [item], "nextCursor": "again"}

    lowlevel.add_request_handler(METHOD_LIST, PaginatedRequestParams, list_skills)
    lowlevel.add_request_handler(METHOD_READ_DIRECTORY, ReadDirectoryParams, read_directory)
    lowlevel.extensions[EXTENSION_ID] = {DIRECTORY_READ_SETTING: True}
    return server


async def test_read_directory_reports_a_repeated_cursor_instead_of_a_silent_partial_list() -> None:
    async with Client(looping_directory_server()) as client:
        skills = SkillsClient(client, origin="loop")
        listing = await skills.read_directory("skill://loop/x")
    assert [item.name for item in listing] == ["f0.md", "f1.md"]
    assert listing.stopped == "the server repeated a cursor (a pagination loop)"

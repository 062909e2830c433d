"""Raw MCP requests: over an open client (`send`, `send_error`: in-process servers too), or to a server at
a URL, one connection per call (as a stateless client would). The one place tests write a request the SDK
has no typed model for (`skills/*`, directory reads, hostile params)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any
from urllib.request import urlopen

import anyio
import mcp_types
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict


class RawRequest(mcp_types.Request[dict[str, Any] | None, str]):
    """Any request, sent as written: the SDK has no typed `skills/*` requests."""


class RawResult(BaseModel):
    """Any result, kept as the wire dict."""

    model_config = ConfigDict(extra="allow")


async def send(client: Client, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """One request, sent as written over an open client; its result as the wire dict."""
    result = await client.session.send_request(RawRequest(method=method, params=params), RawResult)
    return result.model_dump()


async def send_error(client: Client, method: str, params: dict[str, Any] | None = None) -> mcp_types.ErrorData:
    """The error a request sent as written must fail with (the test fails if it succeeds)."""
    try:
        await send(client, method, params)
    except MCPError as exc:
        return exc.error
    raise AssertionError(f"{method} {params} succeeded; an error was expected")


async def call_async(
    url: str, method: str, params: dict[str, Any] | None = None, token: str | None = None
) -> dict[str, Any]:
    failure: MCPError | None = None
    headers = {"Authorization": f"Bearer {token}"} if token is not None else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        try:
            result = await send(client, method, params)
        except MCPError as exc:  # re-raised outside the client's task group, which would wrap it in a group
            failure = exc
    if failure is not None:
        raise failure
    return result


def call(url: str, method: str, params: dict[str, Any] | None = None, *, token: str | None = None) -> dict[str, Any]:
    return anyio.run(call_async, url, method, params, token)


def call_error(url: str, method: str, params: dict[str, Any] | None = None, *, token: str | None = None) -> MCPError:
    try:
        call(url, method, params, token=token)
    except MCPError as exc:
        return exc
    raise AssertionError(f"{method} {params} succeeded; an error was expected")


def list_uris(url: str, *, token: str | None = None) -> list[str]:
    """Every skill URI of `skills/list`, page by page."""
    uris: list[str] = []
    cursor: str | None = None
    while True:
        page = call(url, "skills/list", {"cursor": cursor} if cursor else None, token=token)
        uris += [s["uri"] for s in page["skills"]]
        cursor = page.get("nextCursor")
        if not cursor:
            return uris


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def healthz(mcp_url: str) -> dict[str, Any]:
    """`GET /healthz` beside the server's `/mcp` endpoint (must answer 200, never cached)."""
    with urlopen(mcp_url.removesuffix("/mcp") + "/healthz", timeout=5) as response:
        assert response.status == 200
        assert response.headers["Cache-Control"] == "no-store"
        data: dict[str, Any] = json.loads(response.read())
    return data

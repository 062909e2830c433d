"""Opening a `SkillsClient` on a server (a Streamable HTTP URL or a stdio command) with every bound on.

    async with open_skills_client(url="https://skills.example.com/mcp", limits=ClientLimits(timeout=10)) as skills:
        listing = await skills.list_skills()

The SDK's `Client` runs over the guarded transports of `skillwire.client.transport`, with the
per-request deadline of `ClientLimits.timeout` (the handshake included), so a server that never
answers, answers without end, or breaks mid-answer costs one bounded request and a `ServerError`.
Errors while connecting (refused, not MCP, a command that does not start) propagate as they come,
for the caller to explain.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from skillwire.client.limits import ClientLimits, ResponseBudget
from skillwire.client.skills import SkillsClient
from skillwire.client.transport import bounded_stdio_client, guarded_http_client

ResponseHook = Callable[[httpx2.Response], Awaitable[None]]


@asynccontextmanager
async def open_skills_client(
    *,
    url: str | None = None,
    command: Sequence[str] | None = None,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    limits: ClientLimits | None = None,
    origin: str | None = None,
    on_http_response: ResponseHook | None = None,
) -> AsyncIterator[SkillsClient]:
    """A connected `SkillsClient`: give exactly one of `url` and `command`.

    `on_http_response` sees every HTTP response (e.g. to tell "HTTP 401" from a generic error).
    """
    if (url is None) == (command is None):
        raise ValueError("give exactly one of url and command")
    budget = ResponseBudget(limits if limits is not None else ClientLimits())
    if url is not None:
        async with guarded_http_client(budget, headers, url=url) as http:
            if on_http_response is not None:
                http.event_hooks["response"].append(on_http_response)
            transport = streamable_http_client(url, http_client=http, max_sse_event_size=budget.limits.largest_answer)
            async with _closing_quietly(), Client(transport, read_timeout_seconds=budget.limits.timeout) as client:
                budget.connected = True
                yield SkillsClient(client, origin=origin, budget=budget)
        return
    assert command is not None
    if not command:
        raise ValueError("the server command is empty")
    stdio = bounded_stdio_client(command, budget, env=env)
    async with _closing_quietly(), Client(stdio, read_timeout_seconds=budget.limits.timeout) as client:
        budget.connected = True
        yield SkillsClient(client, origin=origin, budget=budget)


@asynccontextmanager
async def _closing_quietly() -> AsyncIterator[None]:
    """Drop the SDK's teardown noise: an answer that arrives after its request timed out finds the session's
    stream closed, and the SDK's HTTP task fails the whole task group with `BrokenResourceError` on the way
    out. Nobody waits for that answer any more; any other error still propagates."""
    try:
        yield
    except BaseExceptionGroup as group:
        _, rest = group.split((anyio.BrokenResourceError, anyio.ClosedResourceError))
        if rest is not None:
            raise rest from group.__cause__


def plain_http_answer(exc: BaseException, url: str | None) -> str | None:
    """What a TLS handshake that failed on the server's first bytes means for an https:// URL: the server
    speaks plain HTTP (the bytes were an HTTP response, not a TLS record: OpenSSL's "wrong version number"
    or "record layer failure"). One clause, to follow the server's name; None for anything else."""
    if url is None or not url.lower().startswith("https://"):
        return None
    text = str(exc)
    if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text or "RECORD_LAYER_FAILURE" in text:
        return f"speaks plain HTTP, not HTTPS; use http://{url[len('https://') :]}"
    return None


def refused_credentials(status: int, headers: Iterable[tuple[str, str]]) -> str | None:
    """What an HTTP 401 or 403 means when the request carried an `Authorization` header (one clause, to
    follow the server's name), or None when it carried none (then the server wants one). The header's
    value is never part of it: it is a secret."""
    if status not in (401, 403):
        return None
    sent = next((value for name, value in headers if name.strip().lower() == "authorization"), None)
    if sent is None:
        return None
    scheme = sent.strip().partition(" ")[0].lower()
    what = "the bearer token" if scheme == "bearer" else "the credentials in the Authorization header"
    if status == 401:
        return f"refused {what} (HTTP 401); check that the token is the right one for this server and still valid"
    return f"refused the request (HTTP 403) with {what} given; it may not be allowed this request"

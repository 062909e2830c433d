"""The wire byte bounds of skillwire's transports, for an `mcp` `Client` you build yourself.

`SkillHost.add_server` and `open_skills_client` build the SDK client over guarded transports
(`skillwire.client.transport`) that bound every answer's bytes before anything is parsed. A client
handed to `SkillHost.attach_client` was built by the caller: its bytes never pass through skillwire,
and the SDK has no public hook to wrap the transport of a `Client` once it exists, so nothing can be
bounded after the fact. The one public seam is where the client is built: the SDK's
`streamable_http_client(url, http_client=...)` takes any `httpx2.AsyncClient`, and `Client(...)`
takes any transport. `WireBounds` gives both, bounded, and `attach_client(..., bounds=)` connects
the answers the transports refuse to the `ResponseTooLarge`/`ConnectionLost` the caller sees:

    bounds = WireBounds(ClientLimits(timeout=10))
    async with bounds.http_client(url) as http:
        transport = streamable_http_client(url, http_client=http, max_sse_event_size=bounds.largest_answer)
        async with Client(transport) as client:
            skills = await host.attach_client("work", client, bounds=bounds)

or, over stdio, `Client(bounds.stdio(["my-server", "--stdio"]))`. One `WireBounds` per connection:
it keeps that connection's pending reads and refusals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager

import httpx2

from skillwire.client.limits import ClientLimits, ResponseBudget
from skillwire.client.transport import StdioStreams, bounded_stdio_client, guarded_http_client

__all__ = ["WireBounds"]


class WireBounds:
    """Guarded transports for one `mcp` `Client`, and the budget that ties their refusals to requests."""

    def __init__(self, limits: ClientLimits | None = None) -> None:
        self.budget = ResponseBudget(limits if limits is not None else ClientLimits())
        self.transports = 0  # how many transports were made from these bounds
        self.attached = False

    @property
    def limits(self) -> ClientLimits:
        return self.budget.limits

    @property
    def largest_answer(self) -> int:
        """For `streamable_http_client(max_sse_event_size=...)`: the SDK's own cap on one event."""
        return self.budget.limits.largest_answer

    def http_client(self, url: str | None = None, headers: Mapping[str, str] | None = None) -> httpx2.AsyncClient:
        """An `httpx2.AsyncClient` for the SDK's `streamable_http_client`: every answer bounded, the
        limits' timeout, and the environment's proxy for `url` (as httpx2 would choose it)."""
        self.transports += 1
        return guarded_http_client(self.budget, headers, url=url)

    def stdio(
        self, command: Sequence[str], env: Mapping[str, str] | None = None
    ) -> AbstractAsyncContextManager[StdioStreams]:
        """A transport for `Client(...)` running `command`, every line of its stdout bounded."""
        if not command:
            raise ValueError("the server command is empty")
        self.transports += 1
        return bounded_stdio_client(command, self.budget, env=env)

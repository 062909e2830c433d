"""skillwire's own OpenTelemetry spans, through the API only.

`span(name, **attributes)` opens a span on the `skillwire` tracer. Without an SDK configured the API's
tracer is a no-op (a span costs a function call), so a server pays nothing unless its operator installs
`opentelemetry-sdk` and sets a tracer provider; the `mcp` SDK's own request spans (one per MCP message)
are then the parents of these. Attributes are what an operator needs to find the slow step (a skill's
URI, a store location, an upstream's configured name) and never a token, a body or file bytes.

Spans: `skillwire.scan` (a folder scan), `skillwire.verify` (a host checking what it loaded),
`skillwire.store.fetch` (a look at a published catalog's pointer and index), `skillwire.bridge.upstream`
(a bridge call to an upstream server), `skillwire.approval` (asking the user to approve a load).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span

__all__: list[str] = []  # internal (see the module docstring)

_tracer = trace.get_tracer("skillwire")


@contextmanager
def span(name: str, **attributes: str | int | float | bool) -> Iterator[Span]:
    """A span around the block; an exception leaving it is recorded and marks the span as an error."""
    with _tracer.start_as_current_span(name, attributes=attributes) as current:
        yield current

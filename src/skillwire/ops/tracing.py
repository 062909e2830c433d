"""skillwire's own OpenTelemetry spans, through the API only.

`span(name, **attributes)` opens a span on the `skillwire` tracer. Without an SDK configured the API's
tracer is a no-op (a span costs a function call), so a server pays nothing unless its operator installs
`opentelemetry-sdk` and sets a tracer provider; the `mcp` SDK's own request spans (one per MCP message)
are then the parents of these.

Attributes carry what an operator configured or counted, never what a server or a client sent: an
upstream's or origin's label, a store location (`s3://bucket/prefix`), a tool name, sizes and counts,
fixed outcome words. No URI, skill name, body, header or token: a server's text is unbounded and
untrusted, and a trace backend is the wrong place for it. An exception leaving a span marks it as an
error with the exception's type (`error.type`) only; its message, which may quote a server, is not kept.

Spans (each opened in exactly one place):

| span | opened in | attributes |
|---|---|---|
| `skillwire.scan` | `SkillCatalog.reload` (a folder scan) | roots, incremental, skills, files, skipped |
| `skillwire.store.fetch` | `PublishedCatalog.reload` (pointer and index) | store, index.changed |
| `skillwire.verify` | `OriginReader.fetch_verified` (a file checked against its manifest) | origin, source, bytes |
| `skillwire.approval` | `SkillHost` (its policy asked about a load or a cross-origin read) | origin, kind, outcome |
| `skillwire.bridge.upstream` | the bridge's read tools and first-page listings | upstream, tool, outcome |
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import Span, StatusCode

__all__: list[str] = []  # internal (see the module docstring)

_tracer = trace.get_tracer("skillwire")


@contextmanager
def span(name: str, **attributes: str | int | float | bool) -> Iterator[Span]:
    """A span around the block; an exception leaving it marks the span as an error, by type only."""
    with _tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as current:
        try:
            yield current
        except BaseException as exc:
            if current.is_recording():
                current.set_attribute("error.type", type(exc).__qualname__)
                current.set_status(StatusCode.ERROR)
            raise

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

import importlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

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


# -- the standard OTEL_* environment, for the command line ------------------------------------------------
# The variables and names are OpenTelemetry's own (its SDK environment specification), so a deployment's
# existing settings work unchanged. Only what the CLI needs: which exporter, where it sends, and on/off.
_EXPORTER_ENV = "OTEL_TRACES_EXPORTER"
_ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_shutdown: list[Callable[[], object]] = []


def configure_from_environment(environ: Mapping[str, str] | None = None) -> str | None:
    """Install a tracer provider from the standard variables when they ask for traces and nobody else has
    (`opentelemetry-instrument` sets its own first): `OTEL_TRACES_EXPORTER` (`console`: spans as JSON on
    stderr, never stdout, which `serve --stdio` speaks on; `otlp`: the OTLP exporter, to
    `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`; `none`), an OTLP endpoint alone meaning `otlp`, and
    `OTEL_SDK_DISABLED=true`. Returns a one-line problem to print (a package missing, an exporter this
    does not know), else None. Without any of these variables it imports nothing."""
    env = os.environ if environ is None else environ
    names = [n.strip().lower() for n in env.get(_EXPORTER_ENV, "").split(",") if n.strip()]
    if not names and any(env.get(variable) for variable in _ENDPOINT_ENVS):
        names = ["otlp"]
    if not names or names == ["none"] or env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None  # a provider is already set (opentelemetry-instrument, or the embedding program)
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor
    except ImportError:
        return (
            f"{_EXPORTER_ENV} asks for traces, but opentelemetry-sdk is not installed (pip install opentelemetry-sdk)"
        )
    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES are read by Resource.create; "skillwire" when unset.
    resource = Resource.create({} if env.get("OTEL_SERVICE_NAME") else {"service.name": "skillwire"})
    provider = TracerProvider(resource=resource)
    for name in names:
        if name == "console":
            # One span a write, as it ends: a command may leave through os._exit (see cli.main.entry).
            provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
        elif name == "otlp":
            exporter = _otlp_exporter(env)
            if isinstance(exporter, str):
                return exporter
            provider.add_span_processor(BatchSpanProcessor(exporter))
        elif name != "none":
            return f"{_EXPORTER_ENV}: unknown exporter {name!r} (skillwire knows console, otlp and none)"
    trace.set_tracer_provider(provider)
    _shutdown.append(provider.shutdown)
    return None


def _otlp_exporter(env: Mapping[str, str]) -> Any:
    """The OTLP span exporter of `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` (http/protobuf by default, as the
    specification says), which reads its endpoint and headers from the environment itself; or the line
    naming the package to install."""
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    grpc = protocol.strip().lower() == "grpc"
    package = "opentelemetry-exporter-otlp-proto-" + ("grpc" if grpc else "http")
    try:  # optional packages, not dependencies: imported by name
        module = importlib.import_module(
            f"opentelemetry.exporter.otlp.proto.{'grpc' if grpc else 'http'}.trace_exporter"
        )
    except ImportError:
        return f"{_EXPORTER_ENV}=otlp needs {package} (pip install {package})"
    return module.OTLPSpanExporter()


def shutdown() -> None:
    """Send what the configured exporters still hold (a command ending, before any os._exit)."""
    while _shutdown:
        _shutdown.pop()()

"""skillwire's own OpenTelemetry spans (issue 23), recorded by the OpenTelemetry SDK's in-memory exporter.

The code under test runs in this process (the exporter sees only this process's spans): a `Bridge` driven
by the SDK's in-memory `Client` with a real elicitation answer, in front of a real `skillwire serve`
subprocess; a folder `SkillCatalog` scanned; a `PublishedCatalog` polling a real SeaweedFS. Each span's
name, its parent where the parent says something (approval and verification inside the bridge's upstream
call, that inside the SDK's own `tools/call` span) and its attributes are checked, and no attribute or
event carries a URI, a skill's name or body, or a secret.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from skillwire.bridge.config import BridgeConfig
from skillwire.bridge.server import Bridge
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.published import PublishedCatalog
from skillwire.core.errors import VerificationFailed
from skillwire.host.origins import ServerOrigin
from support.bridge import Elicitor, text_of, write_skill
from support.seaweed import SeaweedS3, env_without_aws
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]
_EXPORTER = InMemorySpanExporter()
SKILL_MD = b"---\nname: traced-skill\ndescription: Traced.\n---\nTRACED-BODY\n"  # what write_skill writes


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The process's tracer provider (set once: OpenTelemetry allows one) with the in-memory exporter."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def named(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in finished if s.name == name]


def parent_of(finished: tuple[ReadableSpan, ...], child: ReadableSpan) -> ReadableSpan | None:
    wanted = child.parent.span_id if child.parent is not None else None
    return next((s for s in finished if s.context is not None and s.context.span_id == wanted), None)


def everything_said(finished: tuple[ReadableSpan, ...]) -> str:
    """Every attribute and event of every skillwire span, as text."""
    said: list[str] = []
    for one in finished:
        if one.instrumentation_scope is None or one.instrumentation_scope.name != "skillwire":
            continue
        said += [f"{k}={v!s}" for k, v in (one.attributes or {}).items()]
        said += [f"{e.name} {dict(e.attributes or {})}" for e in one.events]
        said.append(one.status.description or "")
    return "\n".join(said)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[RunningServer]:
    root = tmp_path / "skills"
    write_skill(root, "traced-skill", "Traced.", body="TRACED-BODY", files={"guide.md": "guide\n"})
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server


async def test_bridge_spans_nest_under_the_sdk_call_and_carry_no_server_text(
    spans: InMemorySpanExporter, upstream: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    secret = "hdr-" + secrets.token_hex(16)
    origin = ServerOrigin("web", url=upstream.url, headers=(("X-Api-Key", secret),))
    config = BridgeConfig(servers=(origin,), approvals=tmp_path / "approvals.sqlite")
    async with Bridge(config) as bridge, Client(bridge.build_server(), elicitation_callback=Elicitor()) as client:
        loaded = await client.call_tool("read_skill", {"server": "web", "uri": "skill://traced-skill/SKILL.md"})
        assert not loaded.is_error, text_of(loaded)
        read = await client.call_tool("read_resource", {"server": "web", "uri": "guide.md"})
        assert not read.is_error, text_of(read)
        listed = await client.call_tool("list_skills", {})
        assert not listed.is_error, text_of(listed)
    finished = spans.get_finished_spans()

    calls = named(finished, "skillwire.bridge.upstream")
    assert [dict(s.attributes or {}) for s in calls] == [
        {"skillwire.upstream": "web", "skillwire.tool": "read_skill", "skillwire.outcome": "ok"},
        {"skillwire.upstream": "web", "skillwire.tool": "read_resource", "skillwire.outcome": "ok"},
        {"skillwire.upstream": "web", "skillwire.tool": "list_skills"},
    ]
    load_call = calls[0]
    sdk_call = parent_of(finished, load_call)
    assert sdk_call is not None
    assert sdk_call.instrumentation_scope is not None
    assert sdk_call.instrumentation_scope.name == "mcp-python-sdk"  # the SDK's tools/call span is the parent
    assert "tools/call" in sdk_call.name

    (approval,) = named(finished, "skillwire.approval")
    assert dict(approval.attributes or {}) == {
        "skillwire.origin": "web",
        "skillwire.kind": "skill",
        "skillwire.outcome": "granted",
    }
    assert parent_of(finished, approval) is load_call

    verified = named(finished, "skillwire.verify")
    # SKILL.md at the load (from the server), then guide.md (from the server: first read).
    assert [dict(s.attributes or {}) for s in verified] == [
        {
            "skillwire.origin": "web",
            "skillwire.bytes": len(SKILL_MD),
            "skillwire.source": "server",
        },
        {"skillwire.origin": "web", "skillwire.bytes": len(b"guide\n"), "skillwire.source": "server"},
    ]
    assert parent_of(finished, verified[0]) is load_call
    assert parent_of(finished, verified[1]) is calls[1]

    said = everything_said(finished)
    for text in ("skill://", "traced-skill", "TRACED-BODY", "guide.md", secret, upstream.url):
        assert text not in said, text


async def test_a_failed_verification_marks_the_span_by_error_type_only(
    spans: InMemorySpanExporter, upstream: RunningServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusal inside a span keeps the error's type, not its message (which quotes the server)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = BridgeConfig(servers=(ServerOrigin("web", url=upstream.url),), approvals=tmp_path / "approvals.sqlite")
    async with Bridge(config) as bridge, Client(bridge.build_server(), elicitation_callback=Elicitor()) as client:
        assert not (
            await client.call_tool("read_skill", {"server": "web", "uri": "skill://traced-skill/SKILL.md"})
        ).is_error
        entry = bridge.host.active[-1].entry
        listed = entry.file("skill://traced-skill/guide.md")
        assert listed is not None
        wrong = type(listed)(listed.uri, "sha256:" + "0" * 64, listed.size)
        with pytest.raises(VerificationFailed) as raised:
            await bridge.host.reader.fetch_verified("web", wrong)
    (failed,) = [
        s for s in named(spans.get_finished_spans(), "skillwire.verify") if s.status.status_code.name == "ERROR"
    ]
    assert (failed.attributes or {})["error.type"] == type(raised.value).__qualname__
    assert failed.status.description is None
    assert not failed.events  # no exception event: its message would carry the URI


def test_a_folder_scan_is_one_span_with_its_counts(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "one", "One.")
    write_skill(root, "two", "Two.", files={"x.md": "x\n"})
    (root / "bad").mkdir()
    (root / "bad" / "SKILL.md").write_text("no frontmatter\n")
    catalog = SkillCatalog([root])
    catalog.refresh()
    (scan,) = named(spans.get_finished_spans(), "skillwire.scan")
    assert dict(scan.attributes or {}) == {
        "skillwire.roots": 1,
        "skillwire.incremental": False,
        "skillwire.skills": 2,
        "skillwire.files": 3,
        "skillwire.skipped": 1,
    }
    assert scan.parent is None  # a scan is its own trace (at start, or the watcher's)


def test_a_store_poll_is_one_span_saying_whether_the_index_changed(
    spans: InMemorySpanExporter, seaweedfs: SeaweedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "stored", "Stored.")
    url = seaweedfs.url("traced-" + secrets.token_hex(4))
    env = env_without_aws() | seaweedfs.env
    published = subprocess.run([*SKILLWIRE, "publish", str(root), url], env=env, capture_output=True, timeout=120)
    assert published.returncode == 0, published.stderr
    for key in [k for k in os.environ if k.startswith("AWS_")]:
        monkeypatch.delenv(key)
    for key, value in seaweedfs.env.items():
        monkeypatch.setenv(key, value)
    catalog = PublishedCatalog(url)
    catalog.refresh()
    catalog.refresh()  # the same pointer: nothing loaded
    fetches = named(spans.get_finished_spans(), "skillwire.store.fetch")
    assert [dict(s.attributes or {}) for s in fetches] == [
        {"skillwire.store": url, "skillwire.index.changed": True},
        {"skillwire.store": url, "skillwire.index.changed": False},
    ]
    assert seaweedfs.secret_key not in everything_said(spans.get_finished_spans())

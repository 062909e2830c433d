"""The bridge's own numbers (issue 23): a real `skillwire bridge --http` in front of a real `skillwire serve`,
driven by the SDK's client with real elicitation answers, then its `/metrics` scraped over HTTP.

Each counter is checked against exactly the calls made: tool calls by tool and outcome, approval questions
by outcome (granted, refused, dismissed, and one a client could not be asked), upstream health for a live
upstream, a dead one, and the live one once it stops. The scrape names no URI, skill, body or header value.
"""

from __future__ import annotations

import json
import secrets
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from servers import free_port, running_http_server
from support.bridge import BRIDGE, Elicitor, text_of, write_skill
from support.calls import wait_for
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(base: str) -> tuple[str, Samples]:
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        assert response.status == 200
        text = response.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[tuple[RunningServer, Path]]:
    root = tmp_path / "skills"
    for name in ("granted-skill", "refused-skill", "dismissed-skill", "unasked-skill"):
        write_skill(root, name, f"The {name} of the metrics test.", body=f"SECRET-BODY-{name}", files={"a.md": "a\n"})
    with serve_http([str(root), "--no-digest-cache", "--no-watch"]) as server:
        yield server, root


async def test_bridge_metrics_count_tool_calls_approvals_and_upstream_health(
    upstream: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, _ = upstream
    port = free_port()
    header_secret = "hdr-" + secrets.token_hex(16)
    argv = [
        *BRIDGE,
        "--http",
        f"127.0.0.1:{port}",
        "--server",
        f"web={server.url}",
        "--header",
        f"web:X-Api-Key: {header_secret}",
        "--server",
        f"dead=http://127.0.0.1:{free_port()}/mcp",  # nothing listens there
        "--approvals",
        str(tmp_path / "approvals.sqlite"),
    ]
    base = f"http://127.0.0.1:{port}"
    url = base + "/mcp"
    with running_http_server(argv, port, tmp_path / "bridge.log"):
        _, before = scrape(base)
        # Every configured upstream has its series from the start, down until connected.
        assert ("skillwire_bridge_upstream_up", frozenset({("upstream", "web")})) in before
        answers = Elicitor(answers={"granted-skill": True, "refused-skill": False})
        async with Client(url, elicitation_callback=answers) as client:
            listing = await client.call_tool("list_skills", {})
            assert not listing.is_error, text_of(listing)
            granted = await client.call_tool("read_skill", {"server": "web", "uri": "skill://granted-skill/SKILL.md"})
            assert not granted.is_error, text_of(granted)
            refused = await client.call_tool("read_skill", {"server": "web", "uri": "skill://refused-skill/SKILL.md"})
            assert refused.is_error
            assert "declined" in text_of(refused)
            read = await client.call_tool("read_resource", {"server": "web", "uri": "a.md"})
            assert not read.is_error, text_of(read)
            unknown = await client.call_tool("read_skill", {"server": "nowhere", "uri": "skill://x/SKILL.md"})
            assert unknown.is_error
        async with Client(url, elicitation_callback=Elicitor(cancel=True)) as client:
            dismissed = await client.call_tool(
                "read_skill", {"server": "web", "uri": "skill://dismissed-skill/SKILL.md"}
            )
            assert dismissed.is_error
            assert "dismissed" in text_of(dismissed)
        async with Client(url) as client:  # no elicitation: the question cannot be shown
            unasked = await client.call_tool("read_skill", {"server": "web", "uri": "skill://unasked-skill/SKILL.md"})
            assert unasked.is_error
            assert "skillwire approve" in text_of(unasked)
        assert [m for m in answers.messages if "granted-skill" in m or "refused-skill" in m]

        text, samples = scrape(base)
        calls = "skillwire_bridge_tool_calls_total"
        assert value(samples, calls, tool="list_skills", outcome="ok") == 1
        assert value(samples, calls, tool="read_skill", outcome="ok") == 1
        assert value(samples, calls, tool="read_skill", outcome="error") == 4  # refused, unknown, dismissed, unasked
        assert value(samples, calls, tool="read_resource", outcome="ok") == 1
        assert value(samples, calls, tool="read_skill", outcome="failed") == 0
        approvals = "skillwire_bridge_approvals_total"
        assert value(samples, approvals, kind="skill", outcome="asked") == 3
        assert value(samples, approvals, kind="skill", outcome="granted") == 1
        assert value(samples, approvals, kind="skill", outcome="refused") == 1
        assert value(samples, approvals, kind="skill", outcome="dismissed") == 1
        assert value(samples, approvals, kind="skill", outcome="unasked") == 1
        up = "skillwire_bridge_upstream_up"
        assert value(samples, up, upstream="web") == 1
        assert ("skillwire_bridge_upstream_up", frozenset({("upstream", "dead")})) in samples
        assert value(samples, up, upstream="dead") == 0
        # The bridge's MCP requests are counted as `serve` counts its own.
        assert value(samples, "skillwire_requests_total", method="tools/call", outcome="ok", code="") >= 8
        assert value(samples, "skillwire_response_bytes_total") > 0
        # Nothing a client, a server or the operator's headers chose reaches a label.
        for secret in (header_secret, "skill://", "granted-skill", "SECRET-BODY", "a.md", "nowhere", server.url):
            assert secret not in text, secret

        # The upstream stops: the next call notices, and its health says so.
        server.process.terminate()
        server.process.wait(timeout=30)
        async with Client(url) as client:
            after = await client.call_tool("list_skills", {})
            assert not after.is_error, text_of(after)
            assert isinstance(after.structured_content, dict)
            assert {u["server"] for u in after.structured_content.get("unavailable", [])} == {"web", "dead"}
        wait_for(lambda: value(scrape(base)[1], up, upstream="web") == 0, 10, "the stopped upstream to read down")
        _, final = scrape(base)
        assert value(final, calls, tool="list_skills", outcome="ok") == 2


async def test_bridge_json_logs_parse_line_by_line_and_never_carry_a_header_secret(
    upstream: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    server, _ = upstream
    port = free_port()
    secret = "hdr-" + secrets.token_hex(16)
    argv = [
        *BRIDGE,
        "--http",
        f"127.0.0.1:{port}",
        "--log-format",
        "json",
        "--log-requests",
        "--server",
        f"web={server.url}",
        "--header",
        f"web:X-Api-Key: {secret}",
        "--header",
        f"web:Authorization: Bearer {secret}-bearer",
        "--server",
        f"dead=http://127.0.0.1:{free_port()}/mcp",
        "--approvals",
        str(tmp_path / "approvals.sqlite"),
    ]
    log = tmp_path / "bridge.log"
    with running_http_server(argv, port, log):
        async with Client(f"http://127.0.0.1:{port}/mcp", elicitation_callback=Elicitor()) as client:
            listing = await client.call_tool("list_skills", {})
            assert not listing.is_error, text_of(listing)
            loaded = await client.call_tool("read_skill", {"server": "web", "uri": "skill://granted-skill/SKILL.md"})
            assert not loaded.is_error, text_of(loaded)
        wait_for(lambda: "upstream_unavailable" in log.read_text(), 30, "the dead upstream's line")
    text = log.read_text()
    entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    events = [entry["event"] for entry in entries]
    assert {"serving", "listening", "upstream_unavailable", "request"} <= set(events), events
    (dead,) = [e for e in entries if e["event"] == "upstream_unavailable"]
    assert "'dead'" in dead["message"]
    assert dead["level"] == "warning"
    requests = [e for e in entries if e["event"] == "request"]
    assert any(e["method"] == "tools/call" and e["outcome"] == "ok" for e in requests), requests
    assert all({"method", "outcome", "duration_ms"} <= set(e) for e in requests)
    assert secret not in text


class ErrorAnswers:
    """An elicitation callback answering every question with a JSON-RPC error whose code the client chose."""

    def __init__(self, code: int) -> None:
        self.code = code
        self.asked = 0

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        self.asked += 1
        return types.ErrorData(code=self.code, message="the client's own error")


async def test_a_client_chosen_error_code_is_counted_as_other(
    upstream: tuple[RunningServer, Path], tmp_path: Path
) -> None:
    """A client answers the approval question with an error of a code it made up (issue 35, defect 6). Before,
    that code became a `code` label value: any client could mint series on the open `/metrics` at will."""
    server, _ = upstream
    port = free_port()
    argv = [*BRIDGE, "--http", f"127.0.0.1:{port}", "--server", f"web={server.url}"]
    argv += ["--approvals", str(tmp_path / "approvals.sqlite")]
    base = f"http://127.0.0.1:{port}"
    with running_http_server(argv, port, tmp_path / "bridge.log"):
        for code in (424242, -31999):
            answers = ErrorAnswers(code)
            async with Client(base + "/mcp", mode="legacy", elicitation_callback=answers) as client:
                with pytest.raises(MCPError) as refused:  # the SDK passes the client's error on as the call's
                    await client.call_tool("read_skill", {"server": "web", "uri": "skill://granted-skill/SKILL.md"})
                assert refused.value.error.code == code
            assert answers.asked == 1
        text, samples = scrape(base)
        codes = {dict(labels)["code"] for (name, labels) in samples if name == "skillwire_requests_total"}
        assert "424242" not in codes
        assert "-31999" not in codes
        assert "424242" not in text
        assert value(samples, "skillwire_requests_total", method="tools/call", outcome="error", code="other") == 2

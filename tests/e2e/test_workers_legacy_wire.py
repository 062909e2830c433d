"""`serve --workers N` with clients of the legacy 2025-11-25 wire (the `initialize` handshake).

A legacy session lives in the memory of the worker that answered `initialize`; the kernel hands each
new TCP connection to whichever worker is waiting in `accept`, so with sessions a client whose next
request arrives on a fresh connection (no keep-alive, or any per-request load balancer) reached the
other worker about half the time and got "Session not found". In workers mode the legacy wire is
served statelessly instead. These tests use the real mcp SDK client and the conformance suite, over
connections that are never reused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from support.calls import RawRequest, RawResult, healthz, list_uris
from support.cli import run_cli
from support.conformance import missing_tools_reason, run_server_scenario
from support.rawhttp import RawSession
from support.servers import EXAMPLES, RunningServer, serve_http

SKILLS_SCENARIOS = ["sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"]
CALLS = 40


@pytest.fixture(scope="module")
def two_workers() -> Iterator[RunningServer]:
    with serve_http([str(EXAMPLES), "--workers", "2", "--no-watch", "--no-digest-cache"]) as server:
        pids = {healthz(server.url)["pid"] for _ in range(100)}
        assert len(pids) == 2, pids  # both workers take connections, or the tests below prove nothing
        yield server


async def legacy_calls(
    url: str, count: int
) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], dict[str, Any]]]]:
    """One legacy session of the SDK's own client, every request on a new TCP connection: the listing,
    then `count` calls alternating `skills/get` and `resources/read`, each paired with its skill."""
    fresh_connections = httpx2.Limits(max_keepalive_connections=0)
    http = httpx2.AsyncClient(limits=fresh_connections, timeout=httpx2.Timeout(30, read=300))
    answers: list[tuple[dict[str, Any], dict[str, Any]]] = []
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        listing = await client.session.send_request(RawRequest(method="skills/list", params=None), RawResult)
        skills: list[dict[str, Any]] = listing.model_dump()["skills"]
        for index in range(count):
            skill = skills[index % len(skills)]
            method = "skills/get" if index % 2 else "resources/read"
            answer = await client.session.send_request(
                RawRequest(method=method, params={"uri": skill["uri"]}), RawResult
            )
            answers.append((skill, answer.model_dump()))
    return skills, answers


def test_a_legacy_client_on_fresh_connections_gets_every_call_answered(two_workers: RunningServer) -> None:
    skills, answers = anyio.run(legacy_calls, two_workers.url, CALLS)
    assert len(skills) == 5
    assert len(answers) == CALLS
    for skill, answer in answers:
        if "contents" in answer:  # resources/read: the bytes of the listed SKILL.md
            (content,) = answer["contents"]
            listed = next(r for r in skill["resources"] if r["uri"] == skill["uri"])
            assert "sha256:" + hashlib.sha256(content["text"].encode()).hexdigest() == listed["digest"]
        else:
            assert answer["skill"]["uri"] == skill["uri"]


def test_workers_serve_the_legacy_wire_without_sessions(two_workers: RunningServer) -> None:
    session = RawSession(two_workers.url)  # urllib: one connection per request
    assert "mcp-session-id" not in {key.lower() for key in session.headers}
    for _ in range(20):
        answer = session.call("skills/list")
        assert "result" in answer, answer


def test_one_process_keeps_legacy_sessions() -> None:
    """Without --workers nothing changes: sessions (and with them notifications) stay on."""
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as server:
        session = RawSession(server.url)
        assert "mcp-session-id" in session.headers
        assert "result" in session.call("skills/list")


def test_the_modern_wire_is_unaffected(two_workers: RunningServer) -> None:
    expected = sorted(p.parent.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("SKILL.md"))
    for _ in range(10):
        uris = list_uris(two_workers.url)
        assert sorted(u.removeprefix("skill://").removesuffix("/SKILL.md") for u in uris) == expected


@pytest.mark.conformance
@pytest.mark.parametrize("spec_version", ["2025-11-25", None], ids=["legacy", "modern"])
@pytest.mark.parametrize("scenario", SKILLS_SCENARIOS)
def test_conformance_scenarios_pass_behind_workers(
    two_workers: RunningServer, scenario: str, spec_version: str | None
) -> None:
    reason = missing_tools_reason()
    if reason:
        pytest.skip(reason)
    run = run_server_scenario(two_workers.url, scenario, spec_version=spec_version, force=spec_version is not None)
    assert not run.not_applicable, run.summary()
    assert run.checks, run.summary()
    assert not run.failures(), run.summary()
    assert not run.warnings(), run.summary()


@pytest.mark.parametrize("count", ["0", "-3"])
def test_workers_below_one_is_a_usage_error(count: str) -> None:
    result = run_cli("serve", str(EXAMPLES), "--workers", count, "--http", "127.0.0.1:1")
    assert result.code == 2
    assert result.err.strip() == f"skillwire: --workers wants a number of processes, 1 or more; got {count}"

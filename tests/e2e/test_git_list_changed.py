"""Clients of `skillwire serve git+…@BRANCH --poll` hear that the list changed when a new commit lands,
and hear nothing while the branch stays put.

A real repository served over smart HTTP by `git http-backend` on 127.0.0.1 (tests/support/gitserver.py),
a real `skillwire serve` subprocess, and the `mcp` SDK's client over Streamable HTTP on both wires the
server speaks (server/notify.py): a 2026-07-28 client's `subscriptions/listen` stream gets a
`ResourcesListChanged` event, a legacy (2025-11-25) session gets `notifications/resources/list_changed`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from support.calls import call_async, healthz
from support.gitserver import GitHTTPServer, WorkRepo, skill_md
from support.servers import serve_http

pytestmark = pytest.mark.anyio

POLL = 0.3
QUIET_SECONDS = 3.0  # ten polls that find the same commit
SOURCE = "io.skillwire/source"


async def _healthz(url: str) -> dict[str, Any]:
    return await anyio.to_thread.run_sync(healthz, url)


async def test_a_new_commit_notifies_both_wires_and_an_unmoved_branch_notifies_none(
    tmp_path: Path, git_server: GitHTTPServer, own_cache_env: dict[str, str]
) -> None:
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git")
    repo.write("one/SKILL.md", skill_md("one", "First"))
    first = repo.commit("first")
    repo.push()
    spec = f"git+{git_server.url('skills.git')}@main"
    with serve_http([spec, "--poll", str(POLL)], env=own_cache_env) as running:
        modern: list[str] = []
        legacy: list[str] = []
        heard_modern, heard_legacy = anyio.Event(), anyio.Event()

        async def on_message(message: Any) -> None:
            method = str(getattr(getattr(message, "root", message), "method", ""))
            if method == "notifications/resources/list_changed":
                legacy.append(method)
                heard_legacy.set()

        async def listen(client: Client) -> None:
            async with client.listen(resources_list_changed=True) as subscription:
                async for event in subscription:
                    modern.append(type(event).__name__)
                    heard_modern.set()

        async with (
            Client(streamable_http_client(running.url)) as new_client,
            Client(streamable_http_client(running.url), mode="legacy", message_handler=on_message) as old_client,
            anyio.create_task_group() as group,
        ):
            assert new_client.protocol_version == "2026-07-28"
            assert old_client.protocol_version == "2025-11-25"
            caps = old_client.server_capabilities
            assert caps is not None
            assert caps.resources is not None
            assert caps.resources.list_changed
            await old_client.list_resources()  # a request: the server now knows this legacy session
            group.start_soon(listen, new_client)
            await anyio.sleep(0.5)  # the listen stream is acknowledged

            # The branch stays put: polls keep looking (checked recently), nothing is loaded, no one is told.
            await anyio.sleep(QUIET_SECONDS)
            report = await _healthz(running.url)
            assert report["index"] == first
            assert report["checkedSecondsAgo"] < QUIET_SECONDS / 2, report
            assert report["loadedSecondsAgo"] >= QUIET_SECONDS, report
            assert (modern, legacy) == ([], [])

            repo.write("two/SKILL.md", skill_md("two", "Second"))
            second = repo.commit("second")
            pushed = time.monotonic()
            repo.push()
            with anyio.fail_after(30):
                await heard_modern.wait()
                await heard_legacy.wait()
            took = time.monotonic() - pushed
            # Told after the swap: what a client fetches on hearing it is the new commit's catalog.
            listed = await call_async(running.url, "skills/list")
            assert sorted(e["uri"] for e in listed["skills"]) == ["skill://one/SKILL.md", "skill://two/SKILL.md"]
            assert {e["_meta"][SOURCE]["commit"] for e in listed["skills"]} == {second}
            assert (await _healthz(running.url))["index"] == second

            # One commit, one notification on each wire; and quiet again afterwards.
            await anyio.sleep(QUIET_SECONDS)
            assert modern == ["ResourcesListChanged"], modern
            assert legacy == ["notifications/resources/list_changed"], legacy
            assert took < 30
            group.cancel_scope.cancel()

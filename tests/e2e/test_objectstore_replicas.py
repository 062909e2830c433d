"""Replicas: several `skillwire serve s3://…` processes on one published index, as behind a load balancer.

Cursors are keysets on URIs, MAC'd with the shared `SKILLWIRE_CURSOR_SECRET`, and hold no replica
state, so a client may send every page to another replica, and a cursor issued before a publish
continues on the new index after the key it names. `/healthz` says which index each replica serves.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types.jsonrpc import INVALID_PARAMS

from support import skills
from support.calls import call, call_error, list_uris, wait_for
from support.calls import healthz as health_of
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import RunningServer, serve_http

POLL = 0.5
SECRET = "replica-test-" + secrets.token_hex(8)


def make_skill(root: Path, name: str) -> None:
    files = {"notes.txt": f"notes for {name}\n"}
    skills.write_skill(root, name, files, description=f"Skill {name}.", body=f"Body of {name}.\n")


def publish(seaweedfs: SeaweedS3, source: Path, prefix: str) -> None:
    result = run_cli("publish", str(source), seaweedfs.url(prefix), env=seaweedfs.env)
    assert result.code == 0, result.err


def healthz(server: RunningServer) -> dict[str, Any]:
    return health_of(server.url)


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for index in range(12):
        make_skill(root, f"skill-{index:02d}")
    return root


@pytest.fixture
def replicas(seaweedfs: SeaweedS3, catalog: Path) -> Iterator[tuple[str, RunningServer, RunningServer]]:
    prefix = "replicas-" + secrets.token_hex(4)
    publish(seaweedfs, catalog, prefix)
    env = {**seaweedfs.env, "SKILLWIRE_CURSOR_SECRET": SECRET}
    args = [seaweedfs.url(prefix), "--page-size", "2", "--poll", str(POLL)]
    with serve_http(args, env=env) as first, serve_http(args, env=env) as second:
        yield prefix, first, second


def test_alternating_replicas_page_by_page_list_everything_once(
    replicas: tuple[str, RunningServer, RunningServer], catalog: Path
) -> None:
    _, first, second = replicas
    expected = sorted(f"skill://{p.name}/SKILL.md" for p in catalog.iterdir())
    seen: list[str] = []
    cursor: str | None = None
    turn = 0
    while True:
        server = (first, second)[turn % 2]
        page = call(server.url, "skills/list", {"cursor": cursor} if cursor else None)
        seen += [s["uri"] for s in page["skills"]]
        cursor = page.get("nextCursor")
        turn += 1
        if not cursor:
            break
    assert seen == expected
    assert turn == 6  # 12 skills, 2 per page: every page after the first came from the other replica
    # resources/list and directory reads continue across replicas too.
    page = call(first.url, "resources/list")
    rest = call(second.url, "resources/list", {"cursor": page["nextCursor"]})
    assert [r["uri"] for r in page["resources"] + rest["resources"]][:4] == expected[:4]
    assert healthz(first)["index"] == healthz(second)["index"]


def test_a_replica_with_another_secret_refuses_the_cursor(
    seaweedfs: SeaweedS3, replicas: tuple[str, RunningServer, RunningServer]
) -> None:
    prefix, first, _ = replicas
    cursor = call(first.url, "skills/list")["nextCursor"]
    env = {**seaweedfs.env, "SKILLWIRE_CURSOR_SECRET": "another-secret"}
    with serve_http([seaweedfs.url(prefix), "--page-size", "2", "--no-watch"], env=env) as stranger:
        error = call_error(stranger.url, "skills/list", {"cursor": cursor})
    assert error.error.code == INVALID_PARAMS
    assert "not issued by this server" in error.error.message


def test_publish_mid_listing_never_repeats_or_skips_and_both_replicas_switch_within_a_poll(
    seaweedfs: SeaweedS3, replicas: tuple[str, RunningServer, RunningServer], catalog: Path
) -> None:
    prefix, first, second = replicas
    old_index = healthz(first)["index"]
    seen: list[str] = []
    page = call(first.url, "skills/list")
    seen += [s["uri"] for s in page["skills"]]
    page = call(second.url, "skills/list", {"cursor": page["nextCursor"]})
    seen += [s["uri"] for s in page["skills"]]
    cursor = page["nextCursor"]  # issued by the old index, after skill-03

    # A new catalog: one skill removed behind the cursor, one ahead of it, one added on each side.
    shutil.rmtree(catalog / "skill-01")
    shutil.rmtree(catalog / "skill-07")
    make_skill(catalog, "skill-00a")
    make_skill(catalog, "skill-08a")
    publish(seaweedfs, catalog, prefix)
    wait_for(
        lambda: healthz(first)["index"] != old_index and healthz(second)["index"] != old_index,
        4 * POLL + 5,
        "both replicas to load the new index",
    )
    assert healthz(first)["index"] == healthz(second)["index"]
    assert healthz(first)["checkedSecondsAgo"] < 2 * POLL + 1

    turn = 0
    while cursor:
        server = (first, second)[turn % 2]
        page = call(server.url, "skills/list", {"cursor": cursor})
        seen += [s["uri"] for s in page["skills"]]
        cursor = page.get("nextCursor")
        turn += 1
    assert len(seen) == len(set(seen)), seen  # nothing twice
    throughout = {f"skill://skill-{i:02d}/SKILL.md" for i in range(12)} - {
        "skill://skill-01/SKILL.md",
        "skill://skill-07/SKILL.md",
    }
    assert throughout <= set(seen)  # nothing that existed throughout was skipped
    assert "skill://skill-07/SKILL.md" not in seen  # removed before its page was read
    assert "skill://skill-08a/SKILL.md" in seen  # added ahead of the cursor
    assert sorted(list_uris(second.url)) == sorted(
        f"skill://{p.name}/SKILL.md" for p in catalog.iterdir()
    )  # the new catalog, whole


def test_healthz_reports_the_snapshot(replicas: tuple[str, RunningServer, RunningServer]) -> None:
    _, first, _ = replicas
    report = healthz(first)
    assert report["ready"] is True
    assert report["skills"] == 12
    assert report["files"] == 24
    assert len(report["index"]) == 64
    assert report["stale"] is False
    assert report["lastError"] is None
    assert report["source"].startswith("s3://")


def test_workers_share_one_port_and_stop_together(seaweedfs: SeaweedS3, catalog: Path) -> None:
    prefix = "workers-" + secrets.token_hex(4)
    publish(seaweedfs, catalog, prefix)
    with serve_http([seaweedfs.url(prefix), "--workers", "2", "--no-watch"], env=seaweedfs.env) as server:
        pids: set[int] = set()

        def both_answered() -> bool:
            pids.add(healthz(server)["pid"])  # each request a new connection; the kernel spreads them over both
            return len(pids) == 2

        # A readiness wait, not a count of tries: "listening on" is the first worker's line, and under load the
        # second can still be loading the index, so 200 quick requests all reached the first (flaky).
        wait_for(both_answered, 60, "both workers to answer /healthz")
        assert server.process.pid not in pids  # the parent only supervises
        expected = sorted(f"skill://{p.name}/SKILL.md" for p in catalog.iterdir())
        for _ in range(4):
            assert list_uris(server.url) == expected
        assert server.log().count("listening on") == 1
        server.process.terminate()
        assert server.process.wait(timeout=15) == 0
        wait_for(lambda: not any(alive(pid) for pid in pids), 10, "the workers to exit")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

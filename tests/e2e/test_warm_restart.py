"""`skillwire serve` restarted over the same folders: real server processes on 127.0.0.1 and real files.

A restart serves the previous run's snapshot (catalog/persist.py) before it has looked at the disk:
its listing must be the very JSON a scanning start sends, what changed while no server ran must show
after the background validation (and a changed file is refused until then, never served under its
old digest), a damaged snapshot file costs one warning line and a scan, two servers may share one
root and cache, and `--no-snapshot-cache` / `SKILLWIRE_SNAPSHOT_CACHE=0` turn it off.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client

from skillwire.client.requests import get_skill_request, list_skills_request, send_raw
from support import skills
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio

PAST = 1_600_000_000


def make_skills(root: Path, names: list[str]) -> None:
    for name in names:
        files = {"references/guide.md": f"the guide to {name}\n"}
        description = f"The {name} skill, served again after a restart."
        skills.write_skill(root, name, files, description=description, body=f"\n# {name}\n")
    for path in [root, *root.rglob("*")]:
        os.utime(path, (PAST, PAST))


def snapshot_files(state: Path) -> list[Path]:
    return sorted(state.glob("digests.sqlite.snapshot-*"))


@contextmanager
def serve(root: Path, state: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[RunningServer]:
    args = [str(root), "--digest-cache", str(state / "digests.sqlite"), "--page-size", "2", *extra]
    with serve_http(args, env=env) as server:
        yield server


def wait_for_snapshot(state: Path, previous: float = 0.0) -> Path:
    """The snapshot file, once a save newer than `previous` (an mtime) has landed."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        files = snapshot_files(state)
        if files and files[0].stat().st_mtime > previous:
            return files[0]
        time.sleep(0.05)
    raise AssertionError(f"no snapshot saved in {state}")


async def listing(url: str) -> list[dict[str, Any]]:
    """Every skills/list page's result, as sent."""
    pages: list[dict[str, Any]] = []
    cursor = None
    async with Client(url) as client:
        while True:
            page = await send_raw(client, list_skills_request(cursor))
            pages.append(page)
            cursor = page.get("nextCursor")
            if cursor is None:
                return pages


async def listed_uris(url: str) -> list[str]:
    return [s["uri"] for page in await listing(url) for s in page["skills"]]


async def test_a_restart_lists_byte_for_byte_what_a_scanning_start_lists(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha", "beta", "gamma", "delta", "epsilon"])
    with serve(root, state, "--no-snapshot-cache") as scanning:
        expected = json.dumps(await listing(scanning.url), sort_keys=True)
    assert not snapshot_files(state)  # the flag: nothing saved
    with serve(root, state):
        # Saved before it listens: a server stopped right after its first answer still leaves one.
        assert snapshot_files(state)
    with serve(root, state) as warm:
        assert "from the last run's snapshot" in warm.startup_log
        assert json.dumps(await listing(warm.url), sort_keys=True) == expected


async def test_changes_made_while_down_show_after_validation_and_are_never_served_stale(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha", "beta", "gamma"])
    with serve(root, state):
        saved = wait_for_snapshot(state).stat().st_mtime
    guide = root / "beta" / "references" / "guide.md"
    guide.write_text("the guide to beta, rewritten while no server ran\n")
    (root / "gamma" / "SKILL.md").unlink()
    make_skills(root / "new", ["zeta"])

    with serve(root, state) as warm:
        assert "from the last run's snapshot" in warm.startup_log
        async with Client(warm.url) as client:
            with anyio.fail_after(30):
                while (uris := await listed_uris(warm.url)) != ["skill://alpha/SKILL.md", "skill://beta/SKILL.md",
                                                                "skill://new/zeta/SKILL.md"]:  # fmt: skip
                    await anyio.sleep(0.05)
            assert "skill://gamma/SKILL.md" not in uris
            entry = (await send_raw(client, get_skill_request("skill://beta/SKILL.md")))["skill"]
            listed = next(f for f in entry["resources"] if f["uri"] == "skill://beta/references/guide.md")
            assert listed["digest"] == "sha256:" + hashlib.sha256(guide.read_bytes()).hexdigest()
            read = await client.read_resource("skill://beta/references/guide.md")
            assert read.contents[0].text == guide.read_text()  # type: ignore[union-attr]
        # The validation's rescan saved the corrected snapshot for the next start.
        wait_for_snapshot(state, saved)


async def test_without_a_watcher_the_snapshot_is_validated_before_serving(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha", "beta"])
    with serve(root, state):
        wait_for_snapshot(state)
    (root / "beta" / "SKILL.md").unlink()  # nothing would ever notice it later: no watcher
    with serve(root, state, "--no-watch") as server:
        assert "from the last run's snapshot" not in server.startup_log
        assert await listed_uris(server.url) == ["skill://alpha/SKILL.md"]


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda path: path.write_bytes(path.read_bytes()[:1000]), id="truncated"),
        pytest.param(lambda path: path.write_bytes(b"\x00" * 4096), id="garbage"),
    ],
)
async def test_a_damaged_snapshot_file_is_one_warning_line_and_a_scan(tmp_path: Path, damage: Any) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha", "beta"])
    with serve(root, state):
        damage(wait_for_snapshot(state))
    with serve(root, state) as server:
        warnings = [line for line in server.startup_log.splitlines() if "catalog snapshot" in line]
        assert len(warnings) == 1, server.startup_log
        assert "scanning the folders instead" in warnings[0]
        assert "Traceback" not in server.startup_log
        assert "from the last run's snapshot" not in server.startup_log
        assert await listed_uris(server.url) == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]


async def test_two_servers_on_one_root_share_the_cache(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha", "beta", "gamma"])
    expected = ["skill://alpha/SKILL.md", "skill://beta/SKILL.md", "skill://gamma/SKILL.md"]
    with serve(root, state) as first, serve(root, state) as second:
        assert await listed_uris(first.url) == expected
        assert await listed_uris(second.url) == expected
        wait_for_snapshot(state)
        await anyio.sleep(1.0)  # both scanned at start (no file yet), so both save: the last rename wins
    assert len(snapshot_files(state)) == 1  # one file per root and settings, whichever saved last
    assert not list(state.glob(".*.tmp"))  # no temporary file left behind
    with serve(root, state) as third:
        assert "catalog snapshot" not in third.startup_log  # whole, whoever wrote it
        assert await listed_uris(third.url) == expected


async def test_the_environment_variable_turns_the_snapshot_cache_off(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, ["alpha"])
    with serve(root, state):
        wait_for_snapshot(state)
    with serve(root, state, env={"SKILLWIRE_SNAPSHOT_CACHE": "0"}) as server:
        assert "from the last run's snapshot" not in server.startup_log
        assert await listed_uris(server.url) == ["skill://alpha/SKILL.md"]
    with serve(root, state, "--no-snapshot-cache") as server:
        assert "from the last run's snapshot" not in server.startup_log

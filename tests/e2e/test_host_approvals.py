"""Approvals across processes, against a real `skillwire serve` subprocess that watches its folder.

Each step is a separate host process (tests/servers/host_probe.py) sharing one approvals database:
the first is asked and approves, the second loads without being asked, and after one file of the
skill changes on disk (picked up by the server's watcher) the third is asked again, with a diff
naming exactly that file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client

from skillwire.client.skills import SkillsClient
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from support.policies import PersonSaysYes
from support.servers import RunningServer, serve_http

PROBE = Path(__file__).resolve().parents[1] / "servers" / "host_probe.py"
SKILL = "skill://e2e-skill/SKILL.md"
FILE_A = "skill://e2e-skill/references/a.md"
FILE_B = "skill://e2e-skill/references/b.md"
pytestmark = pytest.mark.anyio
SKILL_MD = "---\nname: e2e-skill\ndescription: A skill approved once.\n---\nRead references/a.md.\n"


@dataclass
class World:
    server: RunningServer
    folder: Path
    approvals: Path
    cache: Path

    def probe(self, *reads: str, deny: bool = False) -> dict[str, Any]:
        argv = [
            sys.executable,
            str(PROBE),
            "--url",
            self.server.url,
            "--approvals",
            str(self.approvals),
            "--cache",
            str(self.cache),
            "--uri",
            SKILL,
        ]
        argv += [arg for path in reads for arg in ("--read", path)]
        argv += ["--deny"] if deny else []
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return report


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    folder = tmp_path_factory.mktemp("approvals-e2e") / "skills"
    (folder / "e2e-skill" / "references").mkdir(parents=True)
    (folder / "e2e-skill" / "SKILL.md").write_text(SKILL_MD)
    (folder / "e2e-skill" / "references" / "a.md").write_text("Version one of a.\n")
    (folder / "e2e-skill" / "references" / "b.md").write_text("b never changes.\n")
    with serve_http([str(folder), "--no-digest-cache"]) as server:  # watching its folder (no --no-watch)
        yield server, folder


@pytest.fixture
def world(served: tuple[RunningServer, Path], tmp_path: Path) -> World:
    server, folder = served
    return World(server, folder, tmp_path / "host" / "approvals.sqlite", tmp_path / "host" / "cache")


async def _digest_of(url: str, file_uri: str) -> str | None:
    async with Client(url) as client:
        entry = await SkillsClient(client).get_skill(SKILL, use_cache=False)
    listed = entry.file(file_uri)
    return None if listed is None else listed.digest


def wait_for_new_digest(url: str, file_uri: str, old: str | None, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        digest = anyio.run(_digest_of, url, file_uri)
        if digest is not None and digest != old:
            return digest
        time.sleep(0.2)
    raise AssertionError(f"the server did not pick up the change to {file_uri} within {timeout}s")


def test_approval_persists_across_processes_and_a_changed_file_asks_again(world: World) -> None:
    first = world.probe("references/a.md")
    assert first["error"] is None
    assert first["loaded"]
    assert len(first["questions"]) == 1
    assert first["questions"][0]["origin"] == "work"
    assert first["questions"][0]["uri"] == SKILL
    assert first["questions"][0]["diff"] is None
    assert first["questions"][0]["files"] == sorted([SKILL, FILE_A, FILE_B])
    assert first["files"]["references/a.md"] == "Version one of a.\n"
    assert first["approved_files"] == sorted([SKILL, FILE_A, FILE_B])

    second = world.probe()
    assert second["error"] is None
    assert second["loaded"]
    assert second["questions"] == []  # approved in another process: no prompt
    assert second["skill_md"] == SKILL_MD
    assert ["resources/read", SKILL] not in second["requests"]  # and SKILL.md came from the shared cache

    old = anyio.run(_digest_of, world.server.url, FILE_A)
    (world.folder / "e2e-skill" / "references" / "a.md").write_text("Version two of a, rather longer.\n")
    new_digest = wait_for_new_digest(world.server.url, FILE_A, old)

    third = world.probe("references/a.md")
    assert third["error"] is None
    assert third["loaded"]
    assert len(third["questions"]) == 1
    assert third["questions"][0]["diff"] == {"added": [], "removed": [], "changed": [FILE_A]}
    assert third["files"]["references/a.md"] == "Version two of a, rather longer.\n"

    with ApprovalStore(world.approvals) as store:  # the re-approval is bound to the new set
        approval = store.get(SkillRef("work", SKILL))
    assert approval is not None
    assert {f.uri: f.digest for f in approval.files}[FILE_A] == new_digest


async def test_a_denied_reapproval_keeps_the_skill_unloaded(world: World) -> None:
    ref = SkillRef("work", SKILL)
    with ApprovalStore(world.approvals) as store:
        async with SkillHost(
            policy=PersonSaysYes(), approvals=store, cache=ContentCache(world.cache, discovery_paths=[])
        ) as host:
            await host.add_server("work", world.server.url)
            await host.load("work", SKILL)
        assert store.get(ref) is not None
    old = await _digest_of(world.server.url, FILE_B)
    (world.folder / "e2e-skill" / "references" / "b.md").write_text(f"b changed after all ({old}).\n")
    await anyio.to_thread.run_sync(wait_for_new_digest, world.server.url, FILE_B, old)

    denied = await anyio.to_thread.run_sync(lambda: world.probe(deny=True))
    assert not denied["loaded"]
    assert denied["error"] is not None
    assert denied["error"].startswith("ApprovalDenied")
    assert f"changed {FILE_B}" in denied["error"]
    assert denied["questions"][0]["diff"] == {"added": [], "removed": [], "changed": [FILE_B]}
    assert not any(method == "resources/read" for method, _ in denied["requests"])
    assert denied["approved_files"] is None  # the old approval was revoked, nothing new stored
    with ApprovalStore(world.approvals) as store:
        assert store.get(ref) is None

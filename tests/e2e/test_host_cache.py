"""The content cache end to end, against a real `skillwire serve` subprocess over Streamable HTTP.

A second host with the same cache and approvals loads a skill without a single `resources/read`; a
supporting file read twice is fetched once; a cached file altered on disk is detected, fetched again
from the server and never used.
"""

from __future__ import annotations

import stat
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillwire.client.skills import SkillsClient
from skillwire.core.manifest import sha256_digest
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.host import SkillHost
from support.policies import PersonSaysYes
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio

LABEL = "work"
SKILL = "skill://cached/SKILL.md"
GUIDE = "skill://cached/references/guide.md"
SKILL_MD = b"---\nname: cached\ndescription: A skill that is fetched once.\n---\nSee references/guide.md.\n"
GUIDE_MD = b"# Guide\n\nThe honest guide, as the server has it.\n"


@dataclass
class Served:
    server: RunningServer
    files: dict[str, bytes]  # uri -> the bytes on the server


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("cache-e2e") / "skills"
    (folder / "cached" / "references").mkdir(parents=True)
    (folder / "cached" / "SKILL.md").write_bytes(SKILL_MD)
    (folder / "cached" / "references" / "guide.md").write_bytes(GUIDE_MD)
    with serve_http([str(folder), "--no-digest-cache", "--no-watch"]) as server:
        yield Served(server, {SKILL: SKILL_MD, GUIDE: GUIDE_MD})


@dataclass
class Host:
    host: SkillHost
    client: SkillsClient
    policy: PersonSaysYes

    @property
    def reads(self) -> list[str | None]:
        return [target for method, target in self.client.requests if method == "resources/read"]

    @property
    def cache(self) -> ContentCache:
        assert self.host.cache is not None
        return self.host.cache


@asynccontextmanager
async def host_for(served: Served, state: Path) -> AsyncIterator[Host]:
    """A fresh host (new process state) on the given cache directory and approvals database."""
    policy = PersonSaysYes()  # the same person in both hosts: their approval carries over
    with ApprovalStore(state / "approvals.sqlite") as approvals:
        async with SkillHost(
            policy=policy, approvals=approvals, cache=ContentCache(state / "cache", discovery_paths=[])
        ) as host:
            client = await host.add_server(LABEL, served.server.url)
            yield Host(host, client, policy)


async def test_a_second_host_loads_from_the_cache_without_reading(served: Served, tmp_path: Path) -> None:
    async with host_for(served, tmp_path) as first:
        skill = await first.host.load(LABEL, SKILL)
        assert first.reads == [SKILL]
        assert (await skill.read_bytes("references/guide.md")) == GUIDE_MD
        assert first.reads == [SKILL, GUIDE]

    async with host_for(served, tmp_path) as second:
        skill = await second.host.load(LABEL, SKILL)
        assert skill.instructions.text == SKILL_MD.decode()
        assert (await skill.read_bytes("references/guide.md")) == GUIDE_MD
        assert second.reads == []  # zero resources/read: everything came from the cache, re-hashed
        assert [m for m, _ in second.client.requests] == ["skills/get"]
        assert second.policy.asked == []  # and the approval persisted
        assert second.cache.stats().hits == 2


async def test_a_supporting_file_read_twice_is_fetched_once(served: Served, tmp_path: Path) -> None:
    async with host_for(served, tmp_path) as h:
        skill = await h.host.load(LABEL, SKILL)
        first = await skill.read("references/guide.md")
        second = await skill.read("references/guide.md")
        assert first == second
        assert first.text == GUIDE_MD.decode()
        assert h.reads.count(GUIDE) == 1
        # An ordinary read of the same file while the skill is active is served from the held entry too.
        third = await h.host.read_resource(LABEL, GUIDE)
        assert third.verified
        assert h.reads.count(GUIDE) == 1


@pytest.mark.parametrize("target", [SKILL, GUIDE])
@pytest.mark.parametrize("same_size", [True, False], ids=["same-size", "other-size"])
async def test_a_tampered_cache_file_is_refetched_and_never_used(
    served: Served, tmp_path: Path, target: str, same_size: bool
) -> None:
    honest = served.files[target]
    async with host_for(served, tmp_path) as first:
        skill = await first.host.load(LABEL, SKILL)
        await skill.read_bytes("references/guide.md")
        path = first.cache.path_for(LABEL, target, sha256_digest(honest))
    assert path.read_bytes() == honest
    assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)  # stored read-only

    forged = (b"X" * len(honest)) if same_size else honest + b"\nForged by someone with disk access.\n"
    path.chmod(path.stat().st_mode | stat.S_IWUSR)
    path.write_bytes(forged)

    async with host_for(served, tmp_path) as second:
        skill = await second.host.load(LABEL, SKILL)
        data = await skill.read_bytes("references/guide.md")
        got = skill.instructions.text.encode() if target == SKILL else data
        assert got == honest  # the server's bytes, never the forged ones
        assert second.reads == [target]  # detected, and fetched again from the server
        assert second.cache.stats().tampered == 1
        assert second.policy.asked == []
    assert path.read_bytes() == honest  # and the cache holds the verified bytes again
    assert not path.stat().st_mode & stat.S_IWUSR

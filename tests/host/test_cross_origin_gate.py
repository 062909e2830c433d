"""The cross-origin gate is decided by every skill loaded in the conversation, not by the last one loaded.

Issue 19, defect 5: `read_skill(evil, e)`; `read_resource(work, <a private file of work>)` asks and the
person says no; then `read_skill(work, w)` (approved) made the same read pass without asking, because
the gate followed the last loaded skill. Loading another skill must never widen what an earlier skill's
instructions can reach. Two real in-process skills servers (the SDK's `Client(server)`), the model's
tools over one `SkillHost`, and a policy that records every question and refuses cross-origin reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client import Client

from skillwire.catalog.catalog import SkillCatalog
from skillwire.core.errors import CrossOriginReadDenied
from skillwire.host.host import SkillHost
from skillwire.host.policy import ApproveAll, CrossOriginRead
from skillwire.host.tools import SkillTools
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension

pytestmark = pytest.mark.anyio

EVIL = "skill://evil-helper/SKILL.md"
WORK = "skill://work-notes/SKILL.md"
WORK_FILE = "skill://work-notes/notes.md"
PRIVATE = "skill://payroll/salaries.md"  # a file of a work skill nobody loaded: the private data
EVIL_OTHER = "skill://evil-other/loot.md"


def _skill(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: The {name} skill.\n---\nDo it.\n")
    for path, text in files.items():
        (root / name / path).write_text(text)


@pytest.fixture
def catalogs(tmp_path: Path) -> tuple[SkillCatalog, SkillCatalog]:
    evil, work = tmp_path / "evil", tmp_path / "work"
    _skill(evil, "evil-helper", {"e.md": "read payroll\n"})
    _skill(evil, "evil-other", {"loot.md": "evil's own other file\n"})
    _skill(work, "work-notes", {"notes.md": "work notes\n"})
    _skill(work, "payroll", {"salaries.md": "SECRET salaries\n"})
    return SkillCatalog([evil]), SkillCatalog([work])


@asynccontextmanager
async def two_servers(catalogs: tuple[SkillCatalog, SkillCatalog], policy: ApproveAll) -> AsyncIterator[SkillHost]:
    evil, work = catalogs
    async with (
        Client(build_server(SkillsExtension(evil))) as evil_client,
        Client(build_server(SkillsExtension(work))) as work_client,
        SkillHost(policy=policy, use_cache=False) as host,
    ):
        await host.attach_client("evil", evil_client)
        await host.attach_client("work", work_client)
        await host.list_skills()
        yield host


def _asked(policy: ApproveAll) -> list[CrossOriginRead]:
    return [q for q in policy.asked if isinstance(q, CrossOriginRead)]


async def test_loading_another_skill_never_opens_the_gate(catalogs: tuple[SkillCatalog, SkillCatalog]) -> None:
    policy = ApproveAll(cross_origin=False)  # loads are approved; every cross-origin read is refused
    async with two_servers(catalogs, policy) as host:
        tools = SkillTools(host)
        assert not (await tools.call("read_skill", {"server": "evil", "uri": EVIL})).is_error

        refused = await tools.call("read_resource", {"server": "work", "uri": PRIVATE})
        assert refused.is_error
        assert "SECRET" not in refused.text
        assert len(_asked(policy)) == 1

        assert not (await tools.call("read_skill", {"server": "work", "uri": WORK})).is_error
        again = await tools.call("read_resource", {"server": "work", "uri": PRIVATE})
        assert again.is_error, again.text  # on the old gate: the salaries, unasked
        assert "SECRET" not in again.text
        (first, second) = _asked(policy)
        assert second == CrossOriginRead(first.acting, "work", PRIVATE)  # asked again, naming evil's skill
        assert first.acting.origin == "evil"

        # Inside the loaded skills of the file's own server nothing is asked, on either side.
        own = await tools.call("read_resource", {"server": "work", "uri": WORK_FILE})
        assert "work notes" in own.text
        relative = await tools.call("read_resource", {"server": "evil", "uri": "e.md"})
        assert "read payroll" in relative.text
        assert len(_asked(policy)) == 2
        # And it is symmetric: evil's other resources ask while work's skill is loaded.
        assert (await tools.call("read_resource", {"server": "evil", "uri": EVIL_OTHER})).is_error
        assert _asked(policy)[-1].acting.origin == "work"


async def test_with_one_origin_loaded_its_own_reads_are_not_asked(
    catalogs: tuple[SkillCatalog, SkillCatalog],
) -> None:
    policy = ApproveAll(cross_origin=False)
    async with two_servers(catalogs, policy) as host:
        await host.load("work", WORK)
        content = await host.read_resource("work", PRIVATE)  # that server's own resource: not crossing
        assert "SECRET" in content.text
        assert _asked(policy) == []


async def test_each_session_has_its_own_gate(catalogs: tuple[SkillCatalog, SkillCatalog]) -> None:
    policy = ApproveAll(cross_origin=False)
    async with two_servers(catalogs, policy) as host:
        first, second = host.session(), host.session()
        await first.load("evil", EVIL)
        await second.load("work", WORK)
        # The second conversation loaded work alone: its read of work is not a crossing.
        assert "SECRET" in (await second.read_resource("work", PRIVATE)).text
        # The first loaded evil: the same read asks there, whatever the second did.
        with pytest.raises(CrossOriginReadDenied):
            await first.read_resource("work", PRIVATE)
        # And the first's load did not change the host's own conversation, nor the second's.
        assert host.active == []
        assert [s.ref.origin for s in second.active] == ["work"]
        tools = SkillTools(host).for_session(second)
        assert "work notes" in (await tools.call("read_resource", {"server": "work", "uri": "notes.md"})).text
        relative = (
            await SkillTools(host).for_session(first).call("read_resource", {"server": "work", "uri": "notes.md"})
        )
        assert relative.is_error  # no work skill is loaded in the first conversation

"""Approvals are a person's decisions, kept where the embedding application says.

An automatic policy (`ApproveAll`, `DenyAll`, one without `asks_a_person`) never leaves a persisted
approval behind, so an `ApproveAll` run cannot make a later, unrelated `DenyAll` host load a skill
without asking (the reproduction of issue 9, item 4). A person's approval is persisted, bound to the
exact file set, and honoured by the next host on the same store; a `SkillHost` given no store keeps
approvals in memory and writes no file. Runs against a real in-process skills server (the SDK's
`Client(server)`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp.client import Client

from skillwire.catalog.catalog import SkillCatalog
from skillwire.core.errors import ApprovalDenied
from skillwire.host.approvals import ApprovalStore, default_approvals_path
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from skillwire.host.policy import ApprovalRequest, ApproveAll, CodeExecution, CrossOriginRead, DenyAll, Policy
from skillwire.host.tools import SkillTools
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from support.policies import PersonSaysYes

pytestmark = pytest.mark.anyio

SKILL = "skill://scoped/SKILL.md"
REF = SkillRef("work", SKILL)


@pytest.fixture
def catalog(tmp_path: Path) -> SkillCatalog:
    folder = tmp_path / "skills" / "scoped"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: scoped\ndescription: Approval scoping.\n---\nSee references/a.md.\n")
    (folder / "references" / "a.md").write_text("first version\n")
    return SkillCatalog([tmp_path / "skills"])


@asynccontextmanager
async def host_on(catalog: SkillCatalog, policy: Policy, approvals: ApprovalStore | None) -> AsyncIterator[SkillHost]:
    server = build_server(SkillsExtension(catalog))
    async with Client(server) as client, SkillHost(policy=policy, approvals=approvals, use_cache=False) as host:
        await host.attach_client("work", client)
        await host.list_skills()
        yield host


class NoAttribute:
    """A third-party policy written before `asks_a_person` existed: it must count as automatic."""

    allow_dynamic = False

    async def approve_skill(self, request: ApprovalRequest) -> bool:
        return True

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool:
        return False

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool:
        return False

    async def approve_code_execution(self, request: CodeExecution) -> bool:
        return False


@pytest.mark.parametrize("automatic", [ApproveAll, NoAttribute], ids=["ApproveAll", "no-attribute"])
async def test_an_automatic_yes_is_never_persisted_and_a_later_deny_host_asks(
    catalog: SkillCatalog, tmp_path: Path, automatic: type[ApproveAll] | type[NoAttribute]
) -> None:
    path = tmp_path / "approvals.sqlite"
    with ApprovalStore(path) as store:
        async with host_on(catalog, automatic(), store) as host:  # type: ignore[arg-type]
            loaded = await host.load("work", SKILL)
            assert loaded.active
            await host.load("work", SKILL)  # loads again: asked again, still nothing written
            assert store.list() == []
    with ApprovalStore(path) as store:
        assert store.list() == []
        deny = DenyAll()
        async with host_on(catalog, deny, store) as host:
            with pytest.raises(ApprovalDenied):
                await host.load("work", SKILL)
            assert host.active == []


async def test_a_persons_approval_persists_bound_to_the_manifest(catalog: SkillCatalog, tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    person = PersonSaysYes()
    with ApprovalStore(path) as store:
        async with host_on(catalog, person, store) as host:
            loaded = await host.load("work", SKILL)
            files = loaded.entry.files
    with ApprovalStore(path) as store:  # reopened: it is on disk
        approval = store.get(REF)
        assert approval is not None
        assert set(approval.files) == set(files)
        # The next host on the same store honours the person's decision without asking.
        deny = DenyAll()
        async with host_on(catalog, deny, store) as host:
            assert (await host.load("work", SKILL)).active

        # A file changes on the server: the approval no longer covers it, and the refusal says so.
        (tmp_path / "skills" / "scoped" / "references" / "a.md").write_text("second version, changed\n")
        catalog.refresh()
        async with host_on(catalog, DenyAll(), store) as host:
            with pytest.raises(ApprovalDenied) as denied:
                await host.load("work", SKILL)
            assert denied.value.changed
            result = await SkillTools(host).call("read_skill", {"server": "work", "uri": SKILL})
            assert result.is_error
            assert result.text.startswith("Not loaded: not approved")  # the changed approval was revoked above
        assert store.get(REF) is None


async def test_the_tool_says_changed_needs_reapproval(catalog: SkillCatalog, tmp_path: Path) -> None:
    with ApprovalStore(tmp_path / "approvals.sqlite") as store:
        async with host_on(catalog, PersonSaysYes(), store) as host:
            await host.load("work", SKILL)
        (tmp_path / "skills" / "scoped" / "references" / "a.md").write_text("changed after approval\n")
        catalog.refresh()
        async with host_on(catalog, DenyAll(), store) as host:
            result = await SkillTools(host).call("read_skill", {"server": "work", "uri": SKILL})
    assert result.is_error
    assert "changed on the server since the user approved it" in result.text
    assert "re-approval" in result.text
    assert "references/a.md" in result.text  # the diff names the changed file


async def test_a_host_without_a_store_writes_no_file(
    catalog: SkillCatalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    user_wide = default_approvals_path()
    assert str(user_wide).startswith(str(tmp_path))
    async with host_on(catalog, PersonSaysYes(), None) as host:
        assert not host.approvals.persistent
        await host.load("work", SKILL)
        assert host.approvals.get(REF) is not None  # remembered for this host's lifetime
        asked = len(host.policy.asked)  # type: ignore[attr-defined]
        await host.load("work", SKILL)
        assert len(host.policy.asked) == asked  # type: ignore[attr-defined]
    assert not user_wide.exists()
    assert not (tmp_path / "config").exists()
    assert not (tmp_path / "home").exists()

"""The load decision (`host/load.py`): its order of steps and what each answer carries, in process.

The three callers (`SkillHost.load`, the bridge's pre-flight, `skillwire approve`) are exercised end to
end in tests/e2e (test_bridge, test_bridge_transports, test_signing, test_host_approvals); here the one
function is held to the sequence itself: dynamic → limits → trust → bound set → stored approval or ask,
and a refusal at one step never reaches the store.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import DynamicSkillDeclined, LimitExceeded, SignatureMissing
from skillwire.core.manifest import ManifestFile, manifest_hash
from skillwire.host.approvals import Approval
from skillwire.host.identity import SkillRef
from skillwire.host.load import Approved, Ask, Refused, plan_load
from skillwire.host.trust import TrustPolicy

URI = "skill://acme/tool/SKILL.md"
REF = SkillRef("work", URI)
DIGEST = "sha256:" + "a" * 64


def entry(files: int = 1, *, dynamic: bool = False, tools: str | None = None) -> SkillEntry:
    frontmatter: dict[str, object] = {"name": "tool", "description": "A tool."}
    if tools is not None:
        frontmatter["allowed-tools"] = tools
    if dynamic:
        return SkillEntry(URI, frontmatter, "dynamic")  # type: ignore[arg-type]
    listed = [ManifestFile(URI, DIGEST, 10)] + [
        ManifestFile(f"skill://acme/tool/f{i}.md", DIGEST, 1) for i in range(files - 1)
    ]
    return SkillEntry(URI, frontmatter, tuple(listed))  # type: ignore[arg-type]


def approval(files: tuple[ManifestFile, ...], tools: str | None = None) -> Approval:
    return Approval(REF, manifest_hash(files), files, tools, datetime.now(UTC))


class Store:
    """A lookup that counts its calls: a refusal must be decided before the store is read."""

    def __init__(self, stored: Approval | None = None) -> None:
        self.stored = stored
        self.calls = 0

    def __call__(self, ref: SkillRef) -> Approval | None:
        self.calls += 1
        return self.stored


def test_dynamic_is_declined_first_and_asked_every_time_when_allowed() -> None:
    store = Store(approval(entry().files))
    plan = plan_load(REF, entry(dynamic=True), allow_dynamic=False, trust=TrustPolicy("require"), approvals=store)
    assert isinstance(plan, Refused)
    assert isinstance(plan.error, DynamicSkillDeclined)
    assert plan.step == "dynamic"
    plan = plan_load(REF, entry(dynamic=True), allow_dynamic=True, trust=TrustPolicy(), approvals=store)
    assert isinstance(plan, Ask)
    assert plan.previous is None
    assert store.calls == 0


def test_limits_refuse_before_the_trust_policy_and_the_store() -> None:
    store = Store()
    plan = plan_load(REF, entry(files=600), allow_dynamic=False, trust=TrustPolicy("require"), approvals=store)
    assert isinstance(plan, Refused)
    assert isinstance(plan.error, LimitExceeded)
    assert plan.step == "limits"
    assert store.calls == 0


def test_require_refuses_an_unsigned_skill_before_the_store_and_warn_asks() -> None:
    store = Store()
    plan = plan_load(REF, entry(), allow_dynamic=False, trust=TrustPolicy("require"), approvals=store)
    assert isinstance(plan, Refused)
    assert isinstance(plan.error, SignatureMissing)
    assert plan.step == "signature"
    assert store.calls == 0
    plan = plan_load(REF, entry(), allow_dynamic=False, trust=TrustPolicy("warn"), approvals=store)
    assert isinstance(plan, Ask)
    assert plan.signature.status == "unsigned"
    assert store.calls == 1


@pytest.mark.parametrize(("granted", "now", "expected"), [("Read", "Read", "Read"), ("Read", "Bash(*)", None)])
def test_a_stored_approval_of_exactly_the_set_is_approved_with_its_grant_only_for_the_same_text(
    granted: str, now: str, expected: str | None
) -> None:
    shown = entry(tools=now)
    plan = plan_load(
        REF, shown, allow_dynamic=False, trust=TrustPolicy(), approvals=Store(approval(shown.files, granted))
    )
    assert isinstance(plan, Approved)
    assert plan.allowed_tools == expected


def test_a_stored_approval_of_another_set_asks_with_the_diff() -> None:
    old = approval(entry(files=1).files)
    plan = plan_load(REF, entry(files=2, tools="Read"), allow_dynamic=False, trust=TrustPolicy(), approvals=Store(old))
    assert isinstance(plan, Ask)
    assert plan.previous == old
    assert plan.allowed_tools == "Read"
    assert plan.changed is not None
    assert "f0.md" in plan.changed.describe()
    assert plan.request.ref == REF
    assert plan.bound == entry(files=2).files

"""The load decision, in one pure function: would loading this entry be refused, approved, or asked?

`plan_load` walks the one sequence every caller must agree on, in this order:

1. dynamic content (`"resources": "dynamic"`): declined unless the policy allows it, and then always
   asked (a persisted approval never covers dynamic content);
2. the limits (512 files, 16 MiB), from the entry alone;
3. the trust policy (host/trust.py): under `require` an unsigned, broken or untrusted signature refuses
   before anything is asked;
4. the set the approval binds to (`bound_files`: the manifest, plus the verified signer);
5. a stored approval for exactly that set (approved, with the `allowed-tools` grant it carries when the
   text is still the one the person saw), or a question (with what changed since an earlier approval).

`SkillHost.load` (host/host.py), the bridge's pre-flight (bridge/server.py, which must know before the
load whether to ask the person) and `skillwire approve` (cli/approve.py) all call it, so the three can
never disagree about a skill. It writes nothing and fetches nothing: the caller fetched the entry and
gives the approval store's read-only lookup; the caller applies the answer (raises the refusal, asks, revokes the stale
approval, logs a `warn`-mode signature problem). `tests/test_rule_owners.py` fails on a second copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import DynamicSkillDeclined, LimitExceeded, SkillwireError
from skillwire.core.manifest import ManifestDiff, ManifestFile, diff_manifests, manifest_hash
from skillwire.host.approvals import Approval
from skillwire.host.identity import SkillRef
from skillwire.host.policy import ApprovalRequest
from skillwire.host.trust import SignatureCheck, TrustPolicy, bound_files


@dataclass(frozen=True)
class Refused:
    """The load is refused whatever the person would say; `error` is what the load path raises."""

    error: SkillwireError
    step: str  # "dynamic", "limits" or "signature": which step refused (callers word their own refusal)
    reason: str  # the refusal without the skill's name: "the skill has 600 files (over ...)"


@dataclass(frozen=True)
class Approved:
    """A stored approval covers exactly this set: load without asking."""

    signature: SignatureCheck
    bound: tuple[ManifestFile, ...]
    approval: Approval
    allowed_tools: str | None  # the stored grant, only when it is exactly the entry's `allowed-tools` now


@dataclass(frozen=True)
class Ask:
    """The person must be asked; `request` is the question (what `Policy.approve_skill` receives)."""

    request: ApprovalRequest
    bound: tuple[ManifestFile, ...]
    previous: Approval | None  # an approval for another set (files or signer changed): revoke it, show the diff
    allowed_tools: str | None  # the entry's `allowed-tools` text when it asks for any (granted separately)

    @property
    def signature(self) -> SignatureCheck:
        assert self.request.signature is not None  # plan_load always sets it
        return self.request.signature

    @property
    def changed(self) -> ManifestDiff | None:
        return self.request.diff


LoadPlan = Refused | Approved | Ask


def requested_tools(entry: SkillEntry) -> str | None:
    """The entry's `allowed-tools` text when it asks for any (not blank), else None."""
    tools = entry.frontmatter.get("allowed-tools")
    return tools if isinstance(tools, str) and tools.strip() else None


def approval_set(trust: TrustPolicy, ref: SkillRef, entry: SkillEntry) -> tuple[ManifestFile, ...]:
    """What an approval of `entry` binds to under `trust` (for revoking one when a held entry changes)."""
    return bound_files(entry, trust.inspect(ref, entry))


def plan_load(
    ref: SkillRef,
    entry: SkillEntry,
    *,
    allow_dynamic: bool,
    trust: TrustPolicy,
    approvals: Callable[[SkillRef], Approval | None],
) -> LoadPlan:
    """The load decision for `entry` as `ref` (see the module docstring). It changes nothing anywhere.

    `allow_dynamic` is the policy's; `approvals` looks up the stored approval of a ref (`ApprovalStore.get`),
    called only at the last step, so a refusal by an earlier one never touches the store.
    """
    if entry.is_dynamic and not allow_dynamic:
        error: SkillwireError = DynamicSkillDeclined(
            f"{ref}: the skill's content is dynamic (no digests); the policy declines it"
        )
        return Refused(error, "dynamic", "the skill's content is dynamic (no digests)")
    problem = entry.limit_problem()
    if problem is not None:
        error = LimitExceeded(f"{ref}: not loading; the skill {problem}", files=len(entry.files))
        return Refused(error, "limits", f"the skill {problem}")
    signature = trust.inspect(ref, entry)
    if signature.error is not None and trust.mode == "require":
        return Refused(signature.error, "signature", str(signature.error))
    bound = bound_files(entry, signature)
    tools = requested_tools(entry)
    if entry.is_dynamic:
        # Dynamic content is asked every time; no stored approval can cover it (requirement 21).
        return Ask(ApprovalRequest(ref, entry, None, signature), bound, None, tools)
    stored = approvals(ref)
    if stored is not None and stored.manifest_hash == manifest_hash(bound):
        # A grant covers exactly the text the person saw; anything else is ignored.
        grant = stored.allowed_tools if stored.allowed_tools is not None and stored.allowed_tools == tools else None
        return Approved(signature, bound, stored, grant)
    diff = diff_manifests(stored.files, bound) if stored is not None else None
    return Ask(ApprovalRequest(ref, entry, diff, signature), bound, stored, tools)

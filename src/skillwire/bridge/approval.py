"""Approval that reaches the person: the bridge's `Policy`, and the questions it asks through MCP elicitation.

The host decides approval inside its load path (`SkillHost.load`), but an MCP server can ask its client
only from the tool call itself, before or around that path. So each call runs in two steps:

1. A pre-flight, side-effect free, computes what the load would need: the entry it would use, and
   whether the bridge's approval store already covers that exact file set. When it does not, it
   writes the question: origin, skill, file count and total size, any `allowed-tools`, and what
   changed since an earlier approval. (For `read_resource`, whether the read leaves the acting
   skill's server, and a question naming both servers.)
2. The tool asks the person (the SDK sends `elicitation/create` on a 2025-11-25 session, or an
   input-required result on 2026-07-28), records the answer for this call only (`decided`), and runs
   the load with `BridgePolicy`, which returns exactly that answer, bound to the manifest that was
   shown: if the entry changed in between, the answer does not cover it.

An approval given this way is a person's decision, and the host persists it bound to the manifest.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from skillwire.core.display import escape, server_field
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestDiff, ManifestFile, diff_manifests, human_size, manifest_hash
from skillwire.host.identity import SkillRef
from skillwire.host.policy import ApprovalRequest, CodeExecution, CrossOriginRead
from skillwire.host.trust import SignatureCheck

NAME_LIMIT = 200  # characters of a server string shown in a question; the rest is counted, not shown
URI_LIMIT = 500
CHANGE_LIMIT = 1000


class SkillApproval(BaseModel):
    """The form of a skill prompt: accepting it with `approve` true loads the skill."""

    approve: bool = Field(default=True, title="Load this skill", description="Load the skill described above.")


class SkillApprovalWithTools(SkillApproval):
    """The form when the skill asks for `allowed-tools`: granting them is a separate, default-off choice."""

    allow_tools: bool = Field(
        default=False,
        title="Also grant its allowed-tools",
        description="Let the skill use the tools it lists in allowed-tools without asking each time.",
    )


class ReadApproval(BaseModel):
    """The form of a cross-origin read prompt: accepting it with `allow` true allows this one read."""

    allow: bool = Field(default=True, title="Allow this read", description="Allow this one read.")


@dataclass(frozen=True)
class LoadQuestion:
    """What the person is asked before a skill loads."""

    ref: SkillRef
    files_hash: str  # manifest_hash of the entry shown: the answer covers exactly this file set
    message: str
    allowed_tools: str | None
    changed: ManifestDiff | None = None

    @property
    def schema(self) -> type[SkillApproval]:
        return SkillApprovalWithTools if self.allowed_tools else SkillApproval


@dataclass(frozen=True)
class ReadQuestion:
    """What the person is asked before a skill of one server reads from another."""

    request: CrossOriginRead
    message: str


def load_question(
    ref: SkillRef,
    entry: SkillEntry,
    approved_files: Sequence[ManifestFile] | None,
    *,
    bound: Sequence[ManifestFile] | None = None,
    signature: SignatureCheck | None = None,
) -> LoadQuestion:
    """The prompt for loading `entry`; `approved_files` is the set of an earlier approval, if any, and
    `bound` what this approval would bind (the files, plus the verified signer: host/trust.py)."""
    total = sum(f.size for f in entry.files)
    tools = entry.frontmatter.get("allowed-tools")
    allowed_tools = str(tools).strip() if isinstance(tools, str) and tools.strip() else None
    files_hash = manifest_hash(entry.files)
    # Every string the server chose is one quoted field under a label saying so (core/display.py); the
    # lines in the host's own voice (the publisher, the change, what approving does) hold none of them raw.
    lines = [
        f"Load a skill from the server {ref.origin!r}?",
        server_field("Name", entry.name, NAME_LIMIT),
        server_field("URI", ref.uri, URI_LIMIT),
        f"Contents: {len(entry.files)} file{'s' if len(entry.files) != 1 else ''}, {human_size(total)} in all "
        f"(fingerprint {files_hash.removeprefix('sha256:')[:16]}).",
    ]
    if signature is not None and signature.status != "not checked":
        lines.append(f"Publisher: {signature.describe()}.")  # from this host's own verification
    changed: ManifestDiff | None = None
    if approved_files is not None:
        changed = diff_manifests(approved_files, bound if bound is not None else entry.files)
        lines.append(
            "You approved an earlier version; it changed since (file names from the server): "
            f"{escape(changed.describe() or 'its files differ', CHANGE_LIMIT)}."
        )
    if allowed_tools:
        lines.append(server_field("Tools it asks to use without asking, granted only if you tick it", allowed_tools))
    lines.append(
        f"Its instructions go to the model as untrusted content from {ref.origin!r}; approving is remembered "
        "for exactly these files."
    )
    return LoadQuestion(ref, files_hash, "\n".join(lines), allowed_tools, changed)


def read_question(request: CrossOriginRead) -> ReadQuestion:
    message = "\n".join(
        [
            f"A skill from the server {request.acting.origin!r} wants to read from a different server, "
            f"{request.target_origin!r}. Allow this one read?",
            server_field("The skill", request.acting.uri, URI_LIMIT),
            server_field("The file it wants to read", request.uri, URI_LIMIT),
        ]
    )
    return ReadQuestion(request, message)


@dataclass
class Decisions:
    """What the person answered during one tool call (never shared between calls)."""

    skills: dict[tuple[SkillRef, str], bool] = field(default_factory=dict)  # (ref, files hash) -> grant tools
    reads: set[tuple[SkillRef, str, str]] = field(default_factory=set)  # (acting, target origin, uri)


_current: contextvars.ContextVar[Decisions | None] = contextvars.ContextVar("skillwire_bridge_decisions", default=None)


@contextlib.contextmanager
def decided(decisions: Decisions) -> Iterator[None]:
    """Run the host with `decisions` as the person's answers for this call."""
    token = _current.set(decisions)
    try:
        yield
    finally:
        _current.reset(token)


class BridgePolicy:
    """Answers the host's gates with what the person said in this call, and nothing else.

    Outside a call that asked (or for a manifest other than the one shown) every answer is no, so an
    unasked load is refused and the refusal says how to approve it.
    """

    allow_dynamic = False  # unverifiable content cannot be bound to an approval; it is declined
    asks_a_person = True  # every yes here is what a person answered, so the host persists approved loads

    async def approve_skill(self, request: ApprovalRequest) -> bool:
        decisions = _current.get()
        return decisions is not None and (request.ref, manifest_hash(request.entry.files)) in decisions.skills

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool:
        decisions = _current.get()
        return decisions is not None and any(grant for (r, _), grant in decisions.skills.items() if r == ref)

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool:
        decisions = _current.get()
        return decisions is not None and (request.acting, request.target_origin, request.uri) in decisions.reads

    async def approve_code_execution(self, request: CodeExecution) -> bool:
        return False  # the bridge runs no code; a host that does asks its own person

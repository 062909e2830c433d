"""The decisions a person makes, behind a small interface the embedding application implements.

Every gate in the host asks the policy: loading a skill (new, or changed with a diff), granting a
skill's `allowed-tools`, a read aimed at another server on behalf of a skill, running a
code-execution tool while acting on an MCP skill, and whether unverifiable (`"dynamic"`) skills may
load at all. `DenyAll` is the safe default; `ApproveAll` exists for tests and for a person who has
already said yes out of band (for example the conformance client).

Only a person's decision outlives the load it was made for. A policy says whether its answers are a
person's with `asks_a_person`: True when it puts the question to someone (a prompt, an MCP
elicitation) and returns their answer. Then an approved skill load is persisted in the host's
`ApprovalStore`, bound to the exact file set, and later loads of that set are not asked again.
An automatic policy (`DenyAll`, `ApproveAll`, an allowlist) has `asks_a_person = False`: its yes lets
this one load proceed and is never written down, so an `ApproveAll` test or agent run can never leave
behind an approval that a later, unrelated host would honour. A policy without the attribute counts
as automatic (the safe reading).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from skillwire.core.display import quoted
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestDiff
from skillwire.host.identity import SkillRef
from skillwire.host.trust import SignatureCheck

__all__ = ["ApprovalRequest", "ApproveAll", "CodeExecution", "CrossOriginRead", "DenyAll", "Policy"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What the person is asked to approve: this exact entry from this origin."""

    ref: SkillRef
    entry: SkillEntry
    diff: ManifestDiff | None = None  # set when an earlier approval was revoked because files changed
    signature: SignatureCheck | None = None  # who signed it, when the host's trust policy looked (host/trust.py)

    @property
    def is_change(self) -> bool:
        return self.diff is not None

    def describe(self) -> str:
        files = "dynamic content" if self.entry.is_dynamic else f"{len(self.entry.files)} files"
        # The name and URI are the server's: quoted, one line (core/display.py); the signer line is the host's.
        head = f"Load skill {quoted(self.entry.name)} from server {self.ref.origin!r} ({quoted(self.ref.uri)}, {files})"
        if self.signature is not None and self.signature.status != "not checked":
            head += f"; {self.signature.describe()}"
        return head + (f"; it changed since you approved it: {self.diff.describe()}" if self.diff else "")


@dataclass(frozen=True)
class CrossOriginRead:
    acting: SkillRef  # the skill being acted on
    target_origin: str  # the other server
    uri: str

    def describe(self) -> str:
        return (
            f"Skill {quoted(self.acting.uri)} from server {self.acting.origin!r} wants to read {quoted(self.uri)} "
            f"from a different server, {self.target_origin!r}"
        )


@dataclass(frozen=True)
class CodeExecution:
    acting: SkillRef
    tool: str
    arguments: dict[str, Any]


class Policy(Protocol):
    allow_dynamic: bool
    asks_a_person: bool  # its answers are a person's decisions, so an approved load is persisted

    async def approve_skill(self, request: ApprovalRequest) -> bool: ...

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool: ...

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool: ...

    async def approve_code_execution(self, request: CodeExecution) -> bool: ...


class DenyAll:
    """Refuses everything: nothing from a server loads until the application asks a person."""

    allow_dynamic = False
    asks_a_person = False

    async def approve_skill(self, request: ApprovalRequest) -> bool:
        return False

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool:
        return False

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool:
        return False

    async def approve_code_execution(self, request: CodeExecution) -> bool:
        return False


class ApproveAll:
    """Says yes to skill loads (and, if asked to, to the other gates); records what it was asked.

    Automatic (`asks_a_person = False`): its yeses are never persisted. A test standing in for a person
    subclasses it with `asks_a_person = True`.
    """

    asks_a_person = False

    def __init__(
        self,
        *,
        allow_dynamic: bool = False,
        allowed_tools: bool = False,
        cross_origin: bool = False,
        code_execution: bool = False,
    ) -> None:
        self.allow_dynamic = allow_dynamic
        self._allowed_tools = allowed_tools
        self._cross_origin = cross_origin
        self._code_execution = code_execution
        self.asked: list[object] = []

    async def approve_skill(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        return True

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool:
        self.asked.append(("allowed-tools", ref, allowed_tools))
        return self._allowed_tools

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool:
        self.asked.append(request)
        return self._cross_origin

    async def approve_code_execution(self, request: CodeExecution) -> bool:
        self.asked.append(request)
        return self._code_execution

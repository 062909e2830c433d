"""`ActiveSkill`: a loaded skill holding its entry for the whole acting window.

Every read resolves against the skill root and must land on a file listed in the held entry, on the
same origin; the bytes are verified (size, then digest) before anyone sees them. An unlisted file or a
mismatch raises a `SkillChanged` subclass (`UnlistedFile`, `SizeMismatch`, `DigestMismatch`), and
`refresh()` fetches a new entry, reports the manifest diff and, when the file set changed, revokes the
approval: the skill is inactive until it is loaded (and approved) again. A nested `SKILL.md` read
here is plain content; its frontmatter is never acted on. Directory questions are answered from the
manifest; the server's own directory listing can be consulted, but a child it shows that the manifest
does not list is never surfaced as a skill file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    CodeExecutionDenied,
    InvalidResponse,
    InvalidSkillURI,
    LimitExceeded,
    SkillChanged,
    SkillNotActive,
    UnlistedFile,
)
from skillwire.core.manifest import MAX_BYTES_PER_SKILL, ManifestDiff, ManifestFile, diff_manifests
from skillwire.core.uri import SKILL_MD, SkillPath, in_scope, is_absolute
from skillwire.host.framing import TaggedContent
from skillwire.host.identity import SkillRef
from skillwire.host.policy import CodeExecution, Policy
from skillwire.host.reader import OriginReader
from skillwire.host.registry import OriginKind

__all__ = ["ActiveSkill", "DirectoryView"]


@dataclass(frozen=True)
class DirectoryView:
    """A directory of the held skill, from the manifest."""

    uri: str
    files: tuple[ManifestFile, ...]
    directories: tuple[str, ...]  # child directory URIs


class ActiveSkill:
    """A loaded skill: what `SkillHost.load` returns. It holds the skill's entry for as long as you act
    on it, and every read is checked against that entry's manifest.

    `instructions` is the verified SKILL.md as a `TaggedContent`; `read(path)` returns another file
    of the skill (relative to its root, or its absolute URI) as a `TaggedContent`, `read_bytes(path)`
    its verified bytes. A file the manifest does not list raises `UnlistedFile` without being
    fetched; bytes that do not match raise `SizeMismatch` or `DigestMismatch`. `refresh()` fetches
    the entry again and, if the files changed, deactivates the skill (`SkillNotActive` afterwards)
    until it is loaded and approved again. `allowed_tools` is the skill's `allowed-tools` only if
    the person approved that grant; call `gate_code_execution(tool)` before running code for it.

    Created by `SkillHost.load`, not directly.

    Parameters
    ----------
    reader:
        Where its bytes come from, verified: the loading host's `OriginReader` (its connections, its
        local folders, its cache).
    ref:
        Its identity: (origin label, SKILL.md URI).
    entry:
        The entry it was approved and verified against.
    skill_md:
        The verified text of its SKILL.md.
    kind:
        `"mcp"` (from a server) or `"local"` (from a local skills folder).
    allowed_tools:
        The approved `allowed-tools` grant, or None.
    policy:
        Asked before code runs for it (`gate_code_execution`).
    on_revoke:
        Called with the new entry when `refresh()` finds the skill changed: the host revokes the
        approval bound to the old file set and registers the new entry.
    refused:
        Words a refusal's message (the host adds why when no policy was given at all).
    """

    def __init__(
        self,
        reader: OriginReader,
        ref: SkillRef,
        entry: SkillEntry,
        skill_md: str,
        *,
        kind: OriginKind,
        allowed_tools: str | None,
        policy: Policy,
        on_revoke: Callable[[SkillRef, SkillEntry], None],
        refused: Callable[[str], str],
    ) -> None:
        self._reader = reader
        self._policy = policy
        self._on_revoke = on_revoke
        self._refused = refused
        self.ref = ref
        self.entry = entry
        self.path: SkillPath = entry.path
        self.kind = kind
        self._skill_md = skill_md
        self._allowed_tools = allowed_tools
        self._files = {f.uri: f for f in entry.files}
        self._dynamic_bytes = len(skill_md.encode("utf-8")) if entry.is_dynamic else 0
        self.active = True

    # -- what the model sees ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def root_uri(self) -> str:
        return self.path.root_uri

    @property
    def instructions(self) -> TaggedContent:
        """The verified SKILL.md, tagged with its origin and base URI."""
        return TaggedContent(
            self.ref.origin,
            self.ref.uri,
            self._skill_md,
            base_uri=self.root_uri + "/",
            kind="skill",
            verified=not self.entry.is_dynamic,
        )

    @property
    def allowed_tools(self) -> str | None:
        """The skill's `allowed-tools`, only if the person approved that grant for this skill."""
        return self._allowed_tools

    # -- reads ----------------------------------------------------------------------------------------------

    def resolve(self, reference: str) -> str:
        """The URI a relative reference (or an absolute URI inside this skill) names."""
        if is_absolute(reference):
            if self.path.file_path_of(reference) is None:
                raise UnlistedFile(reference, self.ref.uri)
            return reference
        try:
            return self.path.resolve(reference)
        except InvalidSkillURI as exc:
            raise UnlistedFile(reference, self.ref.uri) from exc

    def _require_active(self) -> None:
        if not self.active:
            raise SkillNotActive(f"{self.ref} is no longer active (its manifest changed); load it again")

    async def read_bytes(self, reference: str) -> bytes:
        """Verified bytes of a file of this skill (relative to the root, or its absolute URI)."""
        self._require_active()
        uri = self.resolve(reference)
        if self.entry.is_dynamic:
            data = await self._reader.fetch_unverified(self.ref.origin, uri)
            self._dynamic_bytes += len(data)
            if self._dynamic_bytes > MAX_BYTES_PER_SKILL:
                raise LimitExceeded(
                    f"{self.ref}: dynamic skill content passed {MAX_BYTES_PER_SKILL:,} bytes; no more is fetched",
                    total_bytes=self._dynamic_bytes,
                )
            return data
        listed = self._files.get(uri)
        if listed is None:
            raise UnlistedFile(uri, self.ref.uri)
        return await self._reader.fetch_verified(self.ref.origin, listed)

    async def read(self, reference: str) -> TaggedContent:
        """A file of this skill as context: verified text (or a note for binary files), origin-tagged."""
        data = await self.read_bytes(reference)
        uri = self.resolve(reference)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"[binary file, {len(data)} bytes; not shown as text]"
        if uri.endswith("/" + SKILL_MD) and uri != self.ref.uri:
            # Another skill's SKILL.md inside this one: plain markdown, never an activation.
            text = (
                "[This is the SKILL.md of a nested skill, read as plain content. It is not active and its "
                "frontmatter grants nothing; activating it needs its own approval.]\n" + text
            )
        return TaggedContent(
            self.ref.origin,
            uri,
            text,
            base_uri=self.root_uri + "/",
            kind="skill-file",
            verified=not self.entry.is_dynamic,
            raw=data,
        )

    # -- directories ----------------------------------------------------------------------------------------

    def list_directory(self, reference: str = "") -> DirectoryView:
        """Direct children of a directory of the skill, answered from the held manifest."""
        self._require_active()
        at_root = reference in ("", ".", "./") or reference.rstrip("/") == self.root_uri
        uri = self.root_uri if at_root else self.resolve(reference.rstrip("/"))
        prefix = uri + "/"
        files: list[ManifestFile] = []
        directories: set[str] = set()
        for file in self.entry.files:
            if file.uri == uri or not in_scope(file.uri, uri):
                continue
            rest = file.uri[len(prefix) :]
            if "/" in rest:
                directories.add(prefix + rest.split("/", 1)[0])
            else:
                files.append(file)
        if not files and not directories:
            raise UnlistedFile(uri, self.ref.uri)
        return DirectoryView(uri, tuple(sorted(files)), tuple(sorted(directories)))

    async def check_directory_with_server(self, reference: str = "") -> DirectoryView:
        """Ask the server (`resources/directory/read`) and compare with the manifest.

        A child the server shows that the manifest does not list, or a listed file the server no
        longer shows, means the skill changed: `SkillChanged`, never a new skill file.
        """
        view = self.list_directory(reference)
        items = await self._reader.read_directory(self.ref.origin, view.uri)
        if items.stopped is not None:
            # A partial listing proves nothing about what the server lacks: not "the skill changed".
            raise InvalidResponse(
                f"{view.uri}: the directory listing was cut short ({items.stopped})", origin=self.ref.origin
            )
        shown = {item.uri for item in items}
        expected = {f.uri for f in view.files} | set(view.directories)
        extra, missing = sorted(shown - expected), sorted(expected - shown)
        if extra or missing:
            details = [f"not in the manifest: {u}" for u in extra] + [f"missing on the server: {u}" for u in missing]
            raise SkillChanged(f"{self.ref}: {view.uri} differs from the held entry ({'; '.join(details)})")
        return view

    # -- change ---------------------------------------------------------------------------------------------

    async def refresh(self) -> ManifestDiff:
        """Fetch the entry again; if its file set changed, the approval is revoked and this skill deactivated."""
        self._require_active()
        new_entry = await self._reader.get_entry(self.ref, use_cache=False)
        diff = diff_manifests(self.entry.files, new_entry.files)
        if diff or new_entry.frontmatter != self.entry.frontmatter or new_entry.is_dynamic != self.entry.is_dynamic:
            self._on_revoke(self.ref, new_entry)
            self.active = False
        return diff

    # -- gates ------------------------------------------------------------------------------------------------

    async def gate_code_execution(self, tool: str, arguments: dict[str, Any] | None = None) -> None:
        """Call before running any code-execution tool while acting on this skill; raises if not approved."""
        self._require_active()
        if self.kind == "local":
            return
        approved = await self._policy.approve_code_execution(CodeExecution(self.ref, tool, dict(arguments or {})))
        if not approved:
            raise CodeExecutionDenied(self._refused(f"running {tool!r} while acting on {self.ref} was not approved"))

    def close(self) -> None:
        self.active = False

"""The host's registry: every known skill keyed by (origin label, uri), with names made unambiguous.

Names are never identity. Local filesystem skills keep their bare names; an MCP skill is always
shown inside its origin's namespace (`<origin>/<name>`), so no server can take a bare name, shadow a
local skill, or shadow another server's skill. Same-name skills within one listing are told apart by
the shortest distinguishing suffix of their skill paths (`work/billing/refunds`,
`work/legal/refunds`). Every collision is kept and reported; nothing is dropped or preferred.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillwire.client.skills import EntryProblem
from skillwire.core.entry import SkillEntry
from skillwire.host.identity import SkillRef

__all__ = ["Collision", "RegisteredSkill"]

OriginKind = Literal["mcp", "local"]


@dataclass(frozen=True)
class RegisteredSkill:
    ref: SkillRef
    kind: OriginKind
    entry: SkillEntry
    display_name: str = ""
    local_dir: Path | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.entry.name

    @property
    def description(self) -> str:
        return self.entry.description


@dataclass(frozen=True)
class Collision:
    """Skills that share a name. `kind` says where: one listing, several servers, or server vs local."""

    kind: Literal["same-listing", "across-origins", "local-name"]
    name: str
    refs: tuple[SkillRef, ...]

    def describe(self) -> str:
        where = {
            "same-listing": "appears more than once in one listing",
            "across-origins": "is served by more than one server",
            "local-name": "is served by a server and also exists as a local skill (the local one keeps the name)",
        }[self.kind]
        return f"skill name {self.name!r} {where}: " + ", ".join(str(r) for r in self.refs)


def _distinguishing_names(entries: list[SkillEntry]) -> dict[str, str]:
    """uri -> the shortest skill-path suffix that tells same-name entries apart."""
    paths = {e.uri: e.path for e in entries}
    longest = max(len(p.segments) for p in paths.values())
    for k in range(1, longest + 1):
        suffixes = {uri: "/".join(p.segments[-k:]) for uri, p in paths.items()}
        if len(set(suffixes.values())) == len(suffixes):
            return suffixes
    # Same segments under different schemes: the scheme is what differs.
    return {uri: f"{p.scheme}:{'/'.join(p.segments)}" for uri, p in paths.items()}


class Registry:
    def __init__(self) -> None:
        self._origins: dict[str, tuple[OriginKind, dict[str, RegisteredSkill]]] = {}
        self.problems: dict[str, tuple[EntryProblem, ...]] = {}
        self.collisions: tuple[Collision, ...] = ()
        # Bumped on every change that can alter what is listed or how it is named, so derived views (the
        # model tools' sorted pages and search index) know when to rebuild; a relisting that brings the
        # same entries does not bump it.
        self.version = 0

    def set_origin(
        self,
        label: str,
        kind: OriginKind,
        entries: Iterable[SkillEntry],
        *,
        problems: Iterable[EntryProblem] = (),
        local_dirs: dict[str, Path] | None = None,
    ) -> None:
        """Replace everything known about one origin (a fresh listing) and recompute names."""
        entries = tuple(entries)
        problems = tuple(problems)
        current = self._origins.get(label)
        if (
            current is not None
            and current[0] == kind
            and self.problems.get(label) == problems
            and tuple(s.entry for s in current[1].values()) == entries
            and all(s.local_dir == (local_dirs or {}).get(s.ref.uri) for s in current[1].values())
        ):
            return  # the same listing again (a cached relist): nothing to rename, nothing to rebuild
        skills = {
            e.uri: RegisteredSkill(SkillRef(label, e.uri), kind, e, local_dir=(local_dirs or {}).get(e.uri))
            for e in entries
        }
        self._origins[label] = (kind, skills)
        self.problems[label] = problems
        self._rename()

    def add(self, skill: RegisteredSkill) -> RegisteredSkill:
        """Register one skill learned outside a listing (via `skills/get`)."""
        _, skills = self._origins.setdefault(skill.ref.origin, (skill.kind, {}))
        skills[skill.ref.uri] = skill
        self._rename()
        return self.get(skill.ref) or skill

    def remove_origin(self, label: str) -> None:
        self._origins.pop(label, None)
        self.problems.pop(label, None)
        self._rename()

    def origins(self) -> list[str]:
        return list(self._origins)

    def get(self, ref: SkillRef) -> RegisteredSkill | None:
        origin = self._origins.get(ref.origin)
        return None if origin is None else origin[1].get(ref.uri)

    def by_display_name(self, name: str) -> RegisteredSkill | None:
        return next((s for s in self if s.display_name == name), None)

    def __iter__(self) -> Iterator[RegisteredSkill]:
        for _, skills in self._origins.values():
            yield from skills.values()

    def __len__(self) -> int:
        return sum(len(skills) for _, skills in self._origins.values())

    def _rename(self) -> None:
        collisions: list[Collision] = []
        local_names: dict[str, list[SkillRef]] = defaultdict(list)
        mcp_names: dict[str, list[SkillRef]] = defaultdict(list)
        for label, (kind, skills) in self._origins.items():
            by_name: dict[str, list[SkillEntry]] = defaultdict(list)
            for skill in skills.values():
                by_name[skill.name].append(skill.entry)
            for name, group in by_name.items():
                names = _distinguishing_names(group) if len(group) > 1 else {group[0].uri: name}
                if len(group) > 1:
                    collisions.append(Collision("same-listing", name, tuple(SkillRef(label, e.uri) for e in group)))
                for entry in group:
                    shown = names[entry.uri]
                    display = shown if kind == "local" and len(group) == 1 else f"{label}/{shown}"
                    skills[entry.uri] = RegisteredSkill(
                        SkillRef(label, entry.uri), kind, entry, display, skills[entry.uri].local_dir
                    )
                    (local_names if kind == "local" else mcp_names)[name].append(SkillRef(label, entry.uri))
        for name, refs in mcp_names.items():
            if len({r.origin for r in refs}) > 1:
                collisions.append(Collision("across-origins", name, tuple(refs)))
            if name in local_names:
                collisions.append(Collision("local-name", name, (*local_names[name], *refs)))
        self.collisions = tuple(collisions)
        self.version += 1

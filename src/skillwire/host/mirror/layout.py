"""Where a skill's files go in a mirror directory, or why they cannot be written there.

The default layout is the skill's path: `DIR/<skill-path segments, decoded>/<file path>`, so
`skill://acme/billing/refunds/SKILL.md` lands in `DIR/acme/billing/refunds/SKILL.md` and `skillwire serve
DIR` publishes the same URIs again. A host's skills folder wants one level instead (`<folder>/<name>/`):
the caller passes those segments.

Refused, per skill: dynamic skills (no digests: nothing to verify or lock), skills over the limits, names
longer than a file system takes, a file that is also a folder, two files differing only in case, a path
clashing with the lock or skillwire's temporary files, and two skills planned into one folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.core.uri import SKILL_MD
from skillwire.host.mirror.lock import LOCK_NAME, TEMP_PREFIX

MAX_NAME_BYTES = 255  # a file name on the common file systems
DYNAMIC_REASON = "dynamic skill: the server publishes no digests, so nothing can be verified or locked"


@dataclass(frozen=True)
class Plan:
    entry: SkillEntry
    segments: tuple[str, ...]
    files: tuple[tuple[str, ManifestFile], ...]  # (relative path, manifest item), SKILL.md first

    @property
    def path(self) -> str:
        return "/".join(self.segments)

    @property
    def size(self) -> int:
        return sum(item.size for _, item in self.files)


@dataclass(frozen=True)
class Unplanned:
    """A skill that cannot be written, and why (`dynamic` ones are skipped rather than failed when the
    caller took every listed skill)."""

    entry: SkillEntry
    reason: str
    dynamic: bool = False


def _name_problem(segment: str) -> str | None:
    if len(segment.encode("utf-8")) > MAX_NAME_BYTES:
        return f"the name {segment[:40]!r}... is longer than {MAX_NAME_BYTES} bytes, too long for a file system"
    return None


def plan_skill(entry: SkillEntry, segments: tuple[str, ...] | None = None) -> Plan | str:
    """Where the skill's files go (relative to DIR; default: the skill path), or why they cannot be written."""
    segments = entry.path.segments if segments is None else segments
    if segments[0] == LOCK_NAME or segments[0].startswith(TEMP_PREFIX):
        return f"its path {segments[0]!r} clashes with {LOCK_NAME} or skillwire's temporary files in DIR"
    for segment in segments:
        problem = _name_problem(segment)
        if problem:
            return problem
    files: list[tuple[str, ManifestFile]] = []
    for item in entry.files:
        relative = entry.path.file_path_of(item.uri)
        if relative is None:  # `SkillEntry.from_wire` refuses this already
            return f"{item.uri} is not inside the skill"
        for part in relative.split("/"):
            problem = _name_problem(part)
            if problem:
                return problem
        files.append((relative, item))
    paths = {relative for relative, _ in files}
    folded: dict[str, str] = {}
    for relative in sorted(paths):
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in paths:
                return f"{'/'.join(parts[:depth])!r} is listed as a file and also holds {relative!r}"
        other = folded.setdefault(relative.casefold(), relative)
        if other != relative:
            return f"{other!r} and {relative!r} differ only in case, so they collide on many file systems"
    files.sort(key=lambda pair: (pair[0] != SKILL_MD, pair[0]))
    return Plan(entry, segments, tuple(files))


def plan_entries(
    entries: Iterable[SkillEntry],
    segments_of: Iterable[tuple[str, ...] | None] | None = None,
) -> list[Plan | Unplanned]:
    """A plan or the reason against it for each entry, in order; a second skill planned into the same
    folder as an earlier one is refused. `segments_of` gives each entry's folder (default: its path)."""
    out: list[Plan | Unplanned] = []
    seen: dict[tuple[str, ...], str] = {}
    layouts = iter(segments_of) if segments_of is not None else None
    for entry in entries:
        segments = next(layouts) if layouts is not None else None
        if entry.is_dynamic:
            out.append(Unplanned(entry, DYNAMIC_REASON, dynamic=True))
            continue
        limits = entry.limit_problem()
        planned = f"the skill {limits}" if limits else plan_skill(entry, segments)
        if isinstance(planned, str):
            out.append(Unplanned(entry, planned))
            continue
        other = seen.setdefault(planned.segments, entry.uri)
        if other != entry.uri:
            out.append(Unplanned(entry, f"it would be written to the same directory as {other}"))
            continue
        out.append(planned)
    return out

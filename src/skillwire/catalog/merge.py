"""The overlap rule between a catalog's sources (folders on disk, each skill defined in Python): a skill
that overlaps another source's skill (the same root, or one inside or around it) is skipped with a
reason, never merged file by file. `SkillCatalog` applies it between its sources, and `InlineSkills`
between its items, which are sources of their own.
"""

from __future__ import annotations

from skillwire.catalog.filesystem import ScanResult
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, SkippedSkill


def merge_sources(
    results: list[ScanResult],
) -> tuple[list[CatalogSkill], list[CatalogFile], list[SkippedSkill], list[tuple[str, str]]]:
    """Combine sources; a skill overlapping another source's skill is skipped, never merged."""
    skill_roots: dict[tuple[str, tuple[str, ...]], int] = {}
    occupied: dict[tuple[str, tuple[str, ...]], int] = {}  # every directory at or above a served root
    skills: list[CatalogSkill] = []
    files: list[CatalogFile] = []
    skipped: list[SkippedSkill] = []
    ignored: list[tuple[str, str]] = []
    if len(results) == 1:
        # One source cannot overlap itself (a scan never publishes into another skill's folder).
        only = results[0]
        return only.skills, only.files, only.skipped, only.ignored  # read, never changed, by the caller
    for index, result in enumerate(results):
        skipped += result.skipped
        ignored += result.ignored
        kept: list[CatalogSkill] = []
        for skill in result.skills:
            path = skill.entry.path
            key = (path.scheme, path.segments)
            clash = _clash(key, index, skill_roots, occupied)
            if clash is not None:
                skipped.append(
                    SkippedSkill(skill.source, f"{path.root_uri} overlaps a skill from another source: {clash}")
                )
                continue
            kept.append(skill)
        for skill in kept:
            path = skill.entry.path
            skill_roots[(path.scheme, path.segments)] = index
            for depth in range(1, len(path.segments) + 1):
                occupied.setdefault((path.scheme, path.segments[:depth]), index)
        if len(kept) == len(result.skills):
            files += result.files  # nothing dropped: every file belongs to a kept skill
        else:
            wanted = {f.uri for s in kept for f in s.entry.files}
            files += [f for f in result.files if f.uri in wanted]
        skills += kept
    return skills, files, skipped, ignored


def _clash(
    key: tuple[str, tuple[str, ...]],
    index: int,
    skill_roots: dict[tuple[str, tuple[str, ...]], int],
    occupied: dict[tuple[str, tuple[str, ...]], int],
) -> str | None:
    scheme, segments = key
    for depth in range(1, len(segments) + 1):
        owner = skill_roots.get((scheme, segments[:depth]))
        if owner is not None and owner != index:
            return f"another source already serves the skill at {'/'.join(segments[:depth])}"
    owner = occupied.get(key)
    if owner is not None and owner != index:
        return "another source already serves skills below this path"
    return None

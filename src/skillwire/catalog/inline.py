"""Skills defined in Python: a folder returned by a decorated function, a dict of files, or a
generated skill whose content has no stable digest (published with `"resources": "dynamic"`).

    skills = SkillCatalog()

    @skills.skill("acme/billing/refunds")
    def refunds() -> Path:
        return Path(__file__).parent / "refunds"

    skills.add_files("acme/hello", {"SKILL.md": "---\\nname: hello\\n...", "notes.md": "..."})
    skills.add_dynamic("reports/daily", description="Today's report", read=render_report)

The same rules apply as to skills on disk: the frontmatter name must equal the last path segment,
the description must be 1–1024 characters, limits hold. A broken one is skipped with its reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import ScanResult, SkillRoot, scan_root
from skillwire.catalog.merge import merge_sources
from skillwire.catalog.mime import guess_mime_type, is_utf8_text
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, DynamicReader, MemoryContent, SkippedSkill
from skillwire.catalog.source import ScanRequest, SourceScan, SourceStatus
from skillwire.core.entry import DYNAMIC, SkillEntry
from skillwire.core.errors import SkillwireError
from skillwire.core.fields import publish_problem
from skillwire.core.json import JSONValue
from skillwire.core.manifest import limit_problem, sha256_digest
from skillwire.core.skill_md import parse_skill_md
from skillwire.core.uri import DEFAULT_SCHEME, SKILL_MD, SkillPath, split_relative_path

FolderOrFiles = str | os.PathLike[str] | Mapping[str, bytes | str]
F = TypeVar("F", bound=Callable[[], FolderOrFiles])


@dataclass(frozen=True)
class _FolderSkill:
    path: SkillPath
    produce: Callable[[], FolderOrFiles]
    listed: bool


@dataclass(frozen=True)
class _DynamicSkill:
    path: SkillPath
    frontmatter: dict[str, JSONValue]
    read: DynamicReader
    listed: bool


class InlineSkills:
    """The skills defined in Python for one catalog: folders from decorated functions, dicts of files,
    generated (dynamic) skills."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self._items: list[_FolderSkill | _DynamicSkill] = []
        # Told after every addition (the catalog drops its cached snapshot), so no caller can forget to.
        self._on_change = on_change
        self._last: ScanResult | None = None  # the last scan, until an addition

    def _add(self, item: _FolderSkill | _DynamicSkill) -> None:
        self._items.append(item)
        self._last = None
        if self._on_change is not None:
            self._on_change()

    def skill(self, path: str, *, listed: bool = True, scheme: str = DEFAULT_SCHEME) -> Callable[[F], F]:
        """Decorate a function returning the skill's folder (or a mapping of file path to content)."""

        def register(fn: F) -> F:
            self._add(_FolderSkill(SkillPath.parse(path, scheme=scheme), fn, listed))
            return fn

        return register

    def add_folder(
        self, path: str, folder: str | os.PathLike[str], *, listed: bool = True, scheme: str = DEFAULT_SCHEME
    ) -> None:
        """Publish a folder under `path` (as `serve DIR=PREFIX` would, for one skill)."""
        self._add(_FolderSkill(SkillPath.parse(path, scheme=scheme), lambda: folder, listed))

    def add_files(
        self, path: str, files: Mapping[str, bytes | str], *, listed: bool = True, scheme: str = DEFAULT_SCHEME
    ) -> None:
        """Publish a skill from a mapping of file path to content (`str` is encoded as UTF-8)."""
        frozen = dict(files)
        self._add(_FolderSkill(SkillPath.parse(path, scheme=scheme), lambda: frozen, listed))

    def add_dynamic(
        self,
        path: str,
        *,
        description: str,
        read: DynamicReader,
        frontmatter: Mapping[str, JSONValue] | None = None,
        listed: bool = True,
        scheme: str = DEFAULT_SCHEME,
    ) -> None:
        """A generated skill: `read(file_path)` returns the current bytes (or None when absent).

        The SKILL.md it renders must carry exactly this frontmatter (`name` is the last segment);
        hosts compare the two field by field, so the server checks it on every read too.
        """
        skill_path = SkillPath.parse(path, scheme=scheme)
        fm: dict[str, JSONValue] = {
            "name": skill_path.name,
            "description": description,
            **(frontmatter or {}),
        }
        self._add(_DynamicSkill(skill_path, fm, read, listed))

    def __len__(self) -> int:
        return len(self._items)

    # -- the `SkillSource` protocol (catalog/source.py) ---------------------------------------------

    poll_seconds: float = 0.0  # nothing to look at elsewhere: an addition tells the catalog (`on_change`)

    def scan(self, request: ScanRequest) -> SourceScan:
        """Every item's scan; a folder watcher's refresh (`request.changed`) keeps the last one, as the
        watcher sees folders on disk only and an addition drops the catalog's snapshot (`on_change`)."""
        if request.changed is None or self._last is None:
            self._last = self.scan_items(request.digests, request.enforce_limits, request.executor)
        return SourceScan(self._last)

    def watch_paths(self) -> list[str]:
        return []

    def poll(self) -> bool:
        return False

    def status(self) -> SourceStatus | None:
        return None

    def scan_items(self, cache: DigestCache, enforce_limits: bool, executor: ThreadPoolExecutor | None) -> ScanResult:
        # Each item is its own source: two items publishing into the same skill (the same path twice,
        # or a folder whose nested skill another item also defines) must not be merged file by file,
        # so the later one is skipped with a reason, exactly as between folders on disk.
        results = [self._scan_item(item, cache, enforce_limits, executor) for item in self._items]
        skills, files, skipped, ignored = merge_sources(results)
        return ScanResult(skills, files, skipped, ignored)

    def _scan_item(
        self,
        item: _FolderSkill | _DynamicSkill,
        cache: DigestCache,
        enforce_limits: bool,
        executor: ThreadPoolExecutor | None,
    ) -> ScanResult:
        result = ScanResult()
        location = f"code:{item.path.root_uri}"
        if isinstance(item, _DynamicSkill):
            unpublishable = publish_problem(item.frontmatter, item.path.name)
            if unpublishable is not None:
                result.skipped.append(SkippedSkill(location, unpublishable.message))
                return result
            entry = SkillEntry(item.path.skill_md_uri, item.frontmatter, DYNAMIC)
            result.skills.append(CatalogSkill(entry, location, item.listed, item.read))
            return result
        try:
            produced = item.produce()
        except Exception as exc:  # the author's function: one failure must not stop the catalog
            result.skipped.append(SkippedSkill(location, f"the skill's function raised {exc!r}"))
            return result
        if isinstance(produced, Mapping):
            _add_memory_skill(result, item, produced, location, enforce_limits)
            return result
        root = SkillRoot(Path(produced), item.path.segments, item.path.scheme)
        sub = scan_root(root, cache, enforce_limits=enforce_limits, executor=executor)
        for skill in sub.skills:
            result.skills.append(CatalogSkill(skill.entry, skill.source, item.listed))
        result.files += sub.files
        result.skipped += sub.skipped
        result.ignored += sub.ignored
        top = str(root.path)
        if not any(s.entry.path == item.path for s in sub.skills) and not any(s.location == top for s in sub.skipped):
            result.skipped.append(SkippedSkill(location, f"the folder {top} has no {SKILL_MD} at its top"))
        return result


def _add_memory_skill(
    result: ScanResult, item: _FolderSkill, files: Mapping[str, Any], location: str, enforce_limits: bool
) -> None:
    try:
        encoded = {
            "/".join(split_relative_path(name)): (c.encode("utf-8") if isinstance(c, str) else bytes(c))
            for name, c in files.items()
        }
        if SKILL_MD not in encoded:
            raise SkillwireError("no SKILL.md among the files")
        document = parse_skill_md(encoded[SKILL_MD])
        unpublishable = publish_problem(document.frontmatter, item.path.name)
        problem = None if unpublishable is None else unpublishable.message
        if problem is None and enforce_limits:
            over = limit_problem(len(encoded), sum(len(b) for b in encoded.values()))
            problem = None if over is None else f"over the SEP-2640 limits: skill {over}"
        if problem is not None:
            raise SkillwireError(problem)
    except SkillwireError as exc:
        result.skipped.append(SkippedSkill(location, str(exc)))
        return
    catalog_files = []
    for name, data in sorted(encoded.items()):
        text = is_utf8_text(data)
        mime = "text/markdown" if name == SKILL_MD else guess_mime_type(name, is_text=text)
        catalog_files.append(
            CatalogFile(item.path.file_uri(name), sha256_digest(data), len(data), mime, text, MemoryContent(data))
        )
    manifest = tuple(sorted(catalog_files, key=lambda f: f.uri))
    entry = SkillEntry(item.path.skill_md_uri, dict(document.frontmatter), manifest)
    result.skills.append(CatalogSkill(entry, location, item.listed))
    result.files += catalog_files

"""The skill entry, as `skills/list` and `skills/get` carry it, in both directions.

`SkillEntry.to_wire()` is what we emit; `SkillEntry.from_wire()` is what we accept from any server and
is strict: a missing or malformed `resources`, a file outside the skill, a duplicate, a bad digest or
size, or a URI whose last segment is not `frontmatter.name` is an `InvalidEntry` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal, cast

from skillwire.core.errors import InvalidEntry, InvalidSkillURI
from skillwire.core.frontmatter import JSONValue
from skillwire.core.manifest import DIGEST_RE, ManifestFile, limit_problem
from skillwire.core.names import metadata_problem, name_problem
from skillwire.core.uri import SkillPath, canonical_uri

DYNAMIC: Literal["dynamic"] = "dynamic"


@dataclass(frozen=True)
class SkillEntry:
    uri: str
    frontmatter: dict[str, JSONValue]
    resources: tuple[ManifestFile, ...] | Literal["dynamic"]

    @cached_property
    def path(self) -> SkillPath:
        # Parsed once per entry: catalogs ask for it several times per skill per scan.
        return SkillPath.from_skill_md_uri(self.uri)

    @property
    def name(self) -> str:
        value = self.frontmatter.get("name")
        return value if isinstance(value, str) else self.path.name

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""

    @property
    def is_dynamic(self) -> bool:
        return self.resources == DYNAMIC

    @property
    def files(self) -> tuple[ManifestFile, ...]:
        """The manifest (empty for a dynamic skill)."""
        return () if isinstance(self.resources, str) else self.resources

    @property
    def total_size(self) -> int:
        return sum(f.size for f in self.files)

    def file(self, uri: str) -> ManifestFile | None:
        for item in self.files:
            if item.uri == uri:
                return item
        return None

    def limit_problem(self) -> str | None:
        return None if self.is_dynamic else limit_problem(len(self.files), self.total_size)

    def to_wire(self) -> dict[str, Any]:
        # Inline rather than `f.to_wire()`: built for every entry of every skills/list page.
        resources: object = (
            DYNAMIC if self.is_dynamic else [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in self.files]
        )
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    @classmethod
    def from_wire(cls, data: object, *, allow_unicode_names: bool = True) -> SkillEntry:
        """Validate an entry received from a server (hosts accept Unicode names; see core.names)."""
        if not isinstance(data, Mapping):
            raise InvalidEntry(f"an entry must be an object, got {type(data).__name__}")
        raw = cast(Mapping[str, Any], data)
        uri = raw.get("uri")
        if not isinstance(uri, str) or not uri:
            raise InvalidEntry("entry has no 'uri' string")
        try:
            path = SkillPath.from_skill_md_uri(uri)
        except InvalidSkillURI as exc:
            raise InvalidEntry(f"entry uri {uri!r}: {exc.reason}") from None
        frontmatter = raw.get("frontmatter")
        if not isinstance(frontmatter, Mapping):
            raise InvalidEntry(f"{uri}: 'frontmatter' must be an object")
        fm = cast(dict[str, JSONValue], dict(frontmatter))
        name = fm.get("name")
        problem = name_problem(name, allow_unicode=allow_unicode_names)
        if problem is not None:
            raise InvalidEntry(f"{uri}: frontmatter.name {problem}")
        if name != path.name:
            raise InvalidEntry(f"{uri}: final skill-path segment {path.name!r} != frontmatter.name {name!r}")
        if not isinstance(fm.get("description"), str) or not fm.get("description"):
            raise InvalidEntry(f"{uri}: frontmatter.description must be a non-empty string")
        problem = metadata_problem(fm)
        if problem is not None:
            raise InvalidEntry(f"{uri}: frontmatter.{problem}")
        if "resources" not in raw:
            raise InvalidEntry(f"{uri}: 'resources' is missing (an array or \"dynamic\" is required)")
        resources_raw = raw["resources"]
        if resources_raw == DYNAMIC:
            return cls(uri, fm, DYNAMIC)
        if not isinstance(resources_raw, list):
            raise InvalidEntry(f"{uri}: 'resources' must be an array or \"dynamic\", got {resources_raw!r:.60}")
        files: list[ManifestFile] = []
        seen: set[str] = set()  # canonical URIs: `x.md` and `%78.md` are the same file
        for index, item in enumerate(cast(list[object], resources_raw)):
            files.append(_manifest_file(uri, path, index, item, seen))
        if uri not in {f.uri for f in files}:
            raise InvalidEntry(f"{uri}: 'resources' does not list the skill's own SKILL.md")
        return cls(uri, fm, tuple(files))


def _manifest_file(skill_uri: str, path: SkillPath, index: int, item: object, seen: set[str]) -> ManifestFile:
    where = f"{skill_uri}: resources[{index}]"
    if not isinstance(item, Mapping):
        raise InvalidEntry(f"{where} must be an object")
    obj = cast(Mapping[str, Any], item)
    file_uri, digest, size = obj.get("uri"), obj.get("digest"), obj.get("size")
    if not isinstance(file_uri, str) or path.file_path_of(file_uri) is None:
        raise InvalidEntry(f"{where}: uri {file_uri!r} is not a file inside {path.root_uri}")
    canonical = canonical_uri(file_uri)
    if canonical in seen:
        raise InvalidEntry(f"{where}: {file_uri} is listed twice")
    seen.add(canonical)
    if not isinstance(digest, str) or not DIGEST_RE.match(digest):
        raise InvalidEntry(f"{where}: digest {digest!r} is not 'sha256:' + 64 lowercase hex characters")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise InvalidEntry(f"{where}: size {size!r} is not a non-negative integer")
    return ManifestFile(file_uri, digest, size)

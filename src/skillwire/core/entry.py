"""The skill entry, as `skills/list` and `skills/get` carry it, in both directions.

`SkillEntry.to_wire()` is what we emit; `SkillEntry.from_wire()` is what we accept from any server and
is strict: the first rule of `core.fields` the entry breaks (a malformed `resources`, a file outside
the skill, a duplicate, a bad digest or size, a name that is not the final segment, a blank or
over-long description, metadata that is not a map of strings, ...) is an `InvalidEntry` naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast

from skillwire.core.errors import InvalidEntry
from skillwire.core.fields import DYNAMIC as DYNAMIC  # re-exported: the entry is where callers look
from skillwire.core.fields import Rule, entry_refusal
from skillwire.core.json import JSONValue
from skillwire.core.manifest import ManifestFile, limit_problem
from skillwire.core.uri import SkillPath

__all__ = ["SkillEntry"]


@dataclass(frozen=True)
class SkillEntry:
    uri: str
    frontmatter: dict[str, JSONValue]
    resources: tuple[ManifestFile, ...] | Literal["dynamic"]
    # The entry's `_meta` annotations (e.g. a publisher signature, core/signing.py), passed through as sent.
    # Not part of the entry's identity: two entries with the same manifest are the same skill.
    meta: Mapping[str, JSONValue] | None = field(default=None, compare=False)

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
        wire = {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}
        if self.meta:
            wire["_meta"] = self.meta
        return wire

    @classmethod
    def from_wire(cls, data: object, *, allow_unicode_names: bool = True) -> SkillEntry:
        """Validate an entry received from a server: the first rule it breaks (`core.fields`) is an
        `InvalidEntry` naming the field (hosts accept Unicode names; see core.names)."""
        problem = entry_refusal(data, allow_unicode_names=allow_unicode_names)
        if problem is not None:
            if problem.rule in _UNLOCATED:
                raise InvalidEntry(problem.message)
            uri = cast(Mapping[str, Any], data)["uri"]
            raise InvalidEntry(f"{uri}: {problem.message}")
        raw = cast(Mapping[str, Any], data)
        fm = cast(dict[str, JSONValue], dict(raw["frontmatter"]))
        meta = raw.get("_meta")
        kept = cast(dict[str, JSONValue], dict(meta)) if isinstance(meta, Mapping) else None
        if raw["resources"] == DYNAMIC:
            return cls(raw["uri"], fm, DYNAMIC, meta=kept)
        items = cast(list[dict[str, Any]], raw["resources"])
        files = tuple(ManifestFile(item["uri"], item["digest"], item["size"]) for item in items)
        return cls(raw["uri"], fm, files, meta=kept)


# The entry itself is what is wrong: there is no URI to name it by.
_UNLOCATED = frozenset({Rule.ENTRY_NOT_OBJECT, Rule.URI_MISSING, Rule.URI_INVALID})

"""Everything about manifests lives here: file digests, sizes, the per-skill limits, a canonical hash
of a manifest (what approvals bind to) and the diff between two manifests (what a re-approval shows).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from skillwire.core.display import escape
from skillwire.core.errors import LimitExceeded

__all__ = ["ManifestDiff", "ManifestFile"]

MAX_FILES_PER_SKILL = 512
MAX_BYTES_PER_SKILL = 16 * 1024 * 1024  # 16 MiB, as the sum of `size`
DIGEST_PREFIX = "sha256:"
DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")  # `\Z`: `$` allows a trailing "\n"


def sha256_digest(data: bytes) -> str:
    """The SEP's digest form: `sha256:` and 64 lowercase hex characters over the raw bytes."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, order=True, slots=True)
class ManifestFile:
    """One `resources[]` item: a file of the skill, its digest and its byte length."""

    uri: str
    digest: str
    size: int

    def to_wire(self) -> dict[str, object]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


def human_size(size: int) -> str:
    """`379 B`, `1.4 KiB`, `2.0 MiB`: a size for a person, stable so piped output does not change between
    runs (here, below every layer that prints one: the bridge's approval prompt and the command line)."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def over_limit(file_count: int, total_bytes: int) -> Literal["files", "bytes"] | None:
    """Which of the SEP's per-skill limits a skill of this shape exceeds (files first), or None."""
    if file_count > MAX_FILES_PER_SKILL:
        return "files"
    if total_bytes > MAX_BYTES_PER_SKILL:
        return "bytes"
    return None


def limit_problem(file_count: int, total_bytes: int) -> str | None:
    """Why a skill of this shape exceeds the SEP's limits, or None when it fits."""
    kind = over_limit(file_count, total_bytes)
    if kind == "files":
        return f"has {file_count} files; the limit is {MAX_FILES_PER_SKILL} per skill (SKILL.md included)"
    if kind == "bytes":
        return f"totals {total_bytes:,} bytes; the limit is {MAX_BYTES_PER_SKILL:,} bytes (16 MiB) per skill"
    return None


def check_limits(files: Iterable[ManifestFile]) -> None:
    listed = list(files)
    problem = limit_problem(len(listed), sum(f.size for f in listed))
    if problem is not None:
        raise LimitExceeded(f"skill {problem}", files=len(listed), total_bytes=sum(f.size for f in listed))


def manifest_hash(files: Iterable[ManifestFile]) -> str:
    """A digest of the `{uri, digest}` set: equal exactly when the sets are equal.

    Sizes are included too (a size change with an unchanged digest cannot happen honestly, but a
    lying server could send one). Order-independent: the set is sorted before hashing.
    """
    canonical = sorted((f.uri, f.digest, f.size) for f in files)
    return sha256_digest(json.dumps(canonical, separators=(",", ":"), ensure_ascii=False).encode())


@dataclass(frozen=True)
class ManifestDiff:
    """What changed between two file sets of one skill, by file URI (or path inside the skill)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def describe(self) -> str:
        # File URIs are the server's: each escaped onto one line (core/display.py), since this text reaches
        # approval prompts and refusals outside the content frame.
        parts = [f"added {escape(u)}" for u in self.added]
        parts += [f"removed {escape(u)}" for u in self.removed]
        parts += [f"changed {escape(u)}" for u in self.changed]
        return "; ".join(parts) if parts else "no change"


def diff_manifests(old: Iterable[ManifestFile], new: Iterable[ManifestFile]) -> ManifestDiff:
    return diff_file_sets({f.uri: (f.digest, f.size) for f in old}, {f.uri: (f.digest, f.size) for f in new})


def diff_file_sets(before: Mapping[str, tuple[str, int]], after: Mapping[str, tuple[str, int]]) -> ManifestDiff:
    """How two file sets of one skill differ: each maps a file (its URI, or its path inside the skill, as
    long as both use the same) to its digest and size. The one comparison of file sets: approvals, pull's
    lock against the server, a sync record against the server."""
    return ManifestDiff(
        added=tuple(sorted(after.keys() - before.keys())),
        removed=tuple(sorted(before.keys() - after.keys())),
        changed=tuple(sorted(k for k in before.keys() & after.keys() if before[k] != after[k])),
    )

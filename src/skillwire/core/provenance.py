"""Where an entry came from: the repository and commit a server read it from (`catalog/git_catalog.py`).

Carried in the entry's `_meta` under `io.skillwire/source` as `{"repository", "commit", "ref", "path"}`
(`"signedBy"` too when the commit's SSH signature was required and verified). A host or a command shows it
and `pull` records it; it is the server's word, so it is read here with the same distrust as any
other server text: strings only, bounded, and a commit that is a full git object id (40 lowercase hex
digits, or 64 in a SHA-256 repository: `COMMIT_ID`, the one spelling of a commit id); anything else is
no provenance at all (`read_provenance` says why, for a command that reports it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from skillwire.core.entry import SkillEntry
from skillwire.core.protocol import SKILLWIRE_META_PREFIX

PROVENANCE_META_KEY = SKILLWIRE_META_PREFIX + "source"
_FIELDS = ("repository", "commit", "ref", "path", "signedBy")
_MAX_CHARS = 2048
# A full object id as git prints it: SHA-1 (40) or SHA-256 (64), lowercase. An abbreviated, upper-case or
# padded id is refused rather than normalised: a lock and a cache key compare the text byte for byte.
COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_commit_id(text: str) -> bool:
    """Whether `text` is a full git object id (`COMMIT_ID`)."""
    return COMMIT_ID.fullmatch(text) is not None


@dataclass(frozen=True)
class Provenance:
    repository: str
    commit: str
    ref: str | None = None
    path: str = ""
    signed_by: str | None = None

    def to_json(self) -> dict[str, str | None]:
        return {
            "repository": self.repository,
            "commit": self.commit,
            "ref": self.ref,
            "path": self.path,
            "signedBy": self.signed_by,
        }

    def describe(self) -> str:
        at = f"{self.ref} = {self.commit}" if self.ref and self.ref != self.commit else self.commit
        where = f" ({self.path})" if self.path else ""
        signed = f", commit signed by {self.signed_by}" if self.signed_by else ""
        return f"{self.repository} @ {at}{where}{signed}"


def provenance_of(entry: SkillEntry) -> Provenance | None:
    """The provenance an entry carries, or None when it has none (or something that is not one)."""
    found = read_provenance(entry)
    return found if isinstance(found, Provenance) else None


def read_provenance(entry: SkillEntry) -> Provenance | str | None:
    """The provenance an entry carries; None when it carries none; else why what it carries is not one
    (a reason of our own words, never quoting the server's value)."""
    meta = entry.meta or {}
    if PROVENANCE_META_KEY not in meta:
        return None
    raw = meta[PROVENANCE_META_KEY]
    if not isinstance(raw, Mapping):
        return "it is not an object"
    values: dict[str, str | None] = {}
    for name in _FIELDS:
        value = raw.get(name)
        if value is not None and not isinstance(value, str):
            return f"its {name} is not a string"
        if value is not None and len(value) > _MAX_CHARS:
            return f"its {name} is longer than {_MAX_CHARS} characters"
        values[name] = value
    repository, commit = values["repository"], values["commit"]
    if not repository:
        return "it names no repository"
    if not commit or not is_commit_id(commit):
        return "its commit is not a full git object id (40 or 64 lowercase hex digits)"
    return Provenance(repository, commit, values["ref"], values["path"] or "", values["signedBy"])

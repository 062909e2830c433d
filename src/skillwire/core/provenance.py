"""Where an entry came from: the repository and commit a server read it from (`catalog/git_catalog.py`).

Carried in the entry's `_meta` under `io.skillwire/source` as `{"repository", "commit", "ref", "path"}`
(`"signedBy"` too when the commit's SSH signature was required and verified). A host or a command shows it
and `pull` records it; it is the server's word, so it is read here with the same distrust as any
other server text: strings only, bounded, anything else is no provenance at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skillwire.core.entry import SkillEntry
from skillwire.core.protocol import SKILLWIRE_META_PREFIX

PROVENANCE_META_KEY = SKILLWIRE_META_PREFIX + "source"
_FIELDS = ("repository", "commit", "ref", "path", "signedBy")
_MAX_CHARS = 2048


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
    raw = (entry.meta or {}).get(PROVENANCE_META_KEY)
    if not isinstance(raw, Mapping):
        return None
    values: dict[str, str | None] = {}
    for name in _FIELDS:
        value = raw.get(name)
        if value is not None and (not isinstance(value, str) or len(value) > _MAX_CHARS):
            return None
        values[name] = value
    repository, commit = values["repository"], values["commit"]
    if not repository or not commit:
        return None
    return Provenance(repository, commit, values["ref"], values["path"] or "", values["signedBy"])

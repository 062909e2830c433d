"""`skills.lock`: what a mirror (`skillwire pull`) wrote into a directory, from which server, with every digest.

The file is JSON, written atomically, with a fixed key order, skills sorted by uri and files by
path, two-space indentation and a final newline, so the same pull always writes the same bytes:

    {
      "version": 1,
      "origin": "http://127.0.0.1:8765/mcp",
      "selection": "all",
      "skills": [
        {
          "uri": "skill://acme/billing/refunds/SKILL.md",
          "name": "refunds",
          "path": "acme/billing/refunds",
          "files": [
            {"path": "SKILL.md", "uri": "skill://acme/billing/refunds/SKILL.md",
             "digest": "sha256:...", "size": 379},
            ...
          ]
        }
      ]
    }

`origin` is the server as given on the command line (the URL, or the stdio command joined with
spaces); one directory holds skills from one origin. `selection` is `all` once any pull into the
directory named no skill (then `pull --check` also reports skills that are new on the server), else
`named`. `path` is the skill's directory relative to the lock (its decoded skill-path segments); a
file's `path` is relative to that directory. A skill whose entry carried a publisher signature keeps it under
`signature`, exactly as served (core/signing.py); `pull --check` verifies it over the locked manifest
and the pulled SKILL.md.

When the server answered from a published index (`skillwire serve s3://...`: its `skills/list` names it,
core/published_index.py), the lock records the newest one a pull into the directory took skills from,
after `selection`:

    "index": {"id": "<the index's SHA-256>", "sequence": 1796226683}

A server's number more than a day ahead of the clock is refused (`core/published_index.past_clock`), and a
lock holding one (written before that bound) is not held to it. A later pull from a server serving a
lower sequence is refused before anything is written (a pointer
rolled back, a replica left behind); `--allow-older` takes it and records it. The id names one index
(every publish has a new one), so only the sequence orders two: an index from another bucket or
publisher is compared by its number too (publish numbers by the clock, so a lower one was published
earlier), and `--allow-older` once moves the lock to it. A server that names no index (folders,
another implementation) leaves the record as it was: nothing is refused, and the newest index seen is
still the one a published server is held to.

A skill served from a git root (its entry's provenance, core/provenance.py) also has, after `path`:

    "source": {"repository": "https://git.example.com/team/skills.git",
               "commit": "<40 or 64 hex digits>", "ref": "main", "path": "billing/refunds"}

the repository, the ref the server followed (null: the remote's HEAD), the skill's folder in the repository
and a commit at which that folder holds exactly the locked files. The commit is the server's word, kept
only when it is a full object id; the three strings are kept escaped (`core/display.escape`), so the
lock never carries a server's control, bidi or invisible character. A later pull that finds the same
repository, ref, folder and files keeps the locked commit even when the server now serves a newer one, so
a new commit changes the lines of exactly the skills it changed (`carried_source`); `pull --check`
reports a skill whose source moved. A skill from anything but a git root has no `source` key at all.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from skillwire.core.display import escape
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI, LockError
from skillwire.core.manifest import DIGEST_RE
from skillwire.core.provenance import is_commit_id, read_provenance
from skillwire.core.published_index import (
    PublishedIndex,
    goes_back,
    past_clock,
    past_clock_line,
    read_published_index,
)
from skillwire.core.uri import validate_segment

LOCK_NAME = "skills.lock"
LOCK_VERSION = 1
TEMP_PREFIX = ".skillwire-"  # temporary files and directories inside the target directory

Selection = Literal["all", "named"]


@dataclass(frozen=True, order=True)
class LockedFile:
    path: str
    uri: str
    digest: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True)
class LockedSource:
    """Where a skill's files come from in git (see the module docstring): the strings already escaped."""

    repository: str
    commit: str
    ref: str | None
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"repository": self.repository, "commit": self.commit, "ref": self.ref, "path": self.path}

    def same_place(self, other: LockedSource) -> bool:
        """The same folder of the same repository at the same ref (the commit aside)."""
        return (self.repository, self.ref, self.path) == (other.repository, other.ref, other.path)

    def describe(self) -> str:
        at = f"{self.ref} = {self.commit}" if self.ref and self.ref != self.commit else self.commit
        return f"{self.repository} @ {at}" + (f" ({self.path})" if self.path else "")

    @classmethod
    def of_entry(cls, entry: SkillEntry) -> LockedSource | str | None:
        """What the lock records for the entry's provenance: None when it carries none, else why it is
        not recorded (the commit is not a full object id, ...)."""
        found = read_provenance(entry)
        if found is None or isinstance(found, str):
            return found
        return cls(
            escape(found.repository, None),
            found.commit,
            None if found.ref is None else escape(found.ref, None),
            escape(found.path, None),
        )


def carried_source(
    previous: LockedSkill | None, files: tuple[LockedFile, ...], served: LockedSource | None
) -> LockedSource | None:
    """The source a pull records for a skill now served from `served` with `files`: the locked one when it
    names the same repository, ref and folder and the files are the locked ones (that commit still holds
    exactly these bytes, and a commit elsewhere in the repository leaves this skill's lines alone), else
    `served`."""
    if previous is None or previous.source is None or served is None:
        return served
    if previous.source.same_place(served) and previous.files == files:
        return previous.source
    return served


@dataclass(frozen=True)
class LockedSkill:
    uri: str
    name: str
    path: str
    files: tuple[LockedFile, ...]
    # The publisher signature the entry carried (core/signing.py), kept as received so `pull --check`
    # can verify the copy against the publisher, not only against this server.
    signature: dict[str, Any] | None = None
    source: LockedSource | None = None  # the git repository and commit, for a skill from a git root

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(self.path.split("/"))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "uri": self.uri,
            "name": self.name,
            "path": self.path,
        }
        if self.source is not None:
            data["source"] = self.source.to_json()
        data["files"] = [f.to_json() for f in sorted(self.files)]
        if self.signature is not None:
            data["signature"] = self.signature
        return data


@dataclass(frozen=True)
class IndexVerdict:
    """What a pull does with the published index the server names (`index_verdict`)."""

    record: PublishedIndex | None  # what the lock records after the pull
    older: bool = False  # the server's index goes back from the locked one
    refused: bool = False  # older, and --allow-older was not given: nothing may be written
    dropped: str | None = None  # why the locked index no longer counts (its number is past the clock bound)


def index_verdict(
    locked: PublishedIndex | None, served: PublishedIndex | None, *, allow_older: bool, now: float
) -> IndexVerdict:
    """The lock's index against the server's, by the replica's own rule (`core.published_index.goes_back`).

    A locked number past the clock bound (`core.published_index.past_clock`, read at `now`) was recorded
    by a skillwire that still took such numbers from a server: no honest index is ever above it, so it
    would refuse every replica; it is replaced by the server's, and `dropped` says so."""
    if locked is not None and past_clock(locked.sequence, now):
        dropped = f"{locked.describe()} recorded before: its {past_clock_line(locked.sequence, now)}; replaced"
        return IndexVerdict(served, dropped=dropped)
    if served is None:
        return IndexVerdict(locked)  # a server that names no index: as before, and the record stands
    if locked is None or not goes_back(served.sequence, locked.sequence):
        return IndexVerdict(served)
    if allow_older:
        return IndexVerdict(served, older=True)
    return IndexVerdict(locked, older=True, refused=True)


def older_index_line(served: PublishedIndex, locked: PublishedIndex, where: str) -> str:
    """The one line naming both numbers: the server's index and the newer one the lock records."""
    return f"the server serves {served.describe()}, older than {locked.describe()} recorded in {where}"


@dataclass
class Lock:
    origin: str
    selection: Selection = "named"
    skills: dict[str, LockedSkill] = field(default_factory=dict)
    index: PublishedIndex | None = None  # the newest published index pulled from (see the module docstring)

    def to_text(self) -> str:
        data: dict[str, Any] = {"version": LOCK_VERSION, "origin": self.origin, "selection": self.selection}
        if self.index is not None:
            data["index"] = self.index.to_json()
        data["skills"] = [self.skills[uri].to_json() for uri in sorted(self.skills)]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    def owns(self, relative: str) -> bool:
        """True when a file at `relative` (from the lock's directory, `/`-separated) is a locked file."""
        for skill in self.skills.values():
            prefix = skill.path + "/"
            if relative.startswith(prefix) and any(f.path == relative[len(prefix) :] for f in skill.files):
                return True
        return False

    def overlapping(self, segments: tuple[str, ...]) -> list[LockedSkill]:
        """Locked skills whose directory contains, or lies inside, the directory `segments`."""
        found = []
        for skill in self.skills.values():
            other = skill.segments
            n = min(len(other), len(segments))
            if other[:n] == segments[:n]:
                found.append(skill)
        return found

    @classmethod
    def from_text(cls, text: str, where: str) -> Lock:
        def bad(reason: str) -> LockError:
            return LockError(
                f"{where} is not a usable skills.lock ({reason}); remove it, or pull into another directory"
            )

        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise bad("not a JSON object")
        version = data.get("version")
        if version != LOCK_VERSION:
            if isinstance(version, int) and not isinstance(version, bool) and version > LOCK_VERSION:
                raise LockError(f"{where} was written by a newer skillwire (version {version}); upgrade skillwire")
            raise bad(f"version {version!r}, expected {LOCK_VERSION}")
        origin, selection, skills = data.get("origin"), data.get("selection"), data.get("skills")
        if not isinstance(origin, str) or not origin:
            raise bad("no origin")
        if selection not in ("all", "named"):
            raise bad(f"selection {selection!r}")
        if not isinstance(skills, list):
            raise bad("no skills array")
        lock = cls(origin, cast(Selection, selection))
        if "index" in data:
            published = read_published_index(data["index"])
            if isinstance(published, str):
                raise bad(f"index: {published}")
            lock.index = published
        for index, raw in enumerate(cast(list[object], skills)):
            skill = skill_from_json(raw, f"skills[{index}]", bad)
            if skill.uri in lock.skills:
                raise bad(f"{skill.uri} is listed twice")
            lock.skills[skill.uri] = skill
        return lock


def _relative_path(value: object, what: str, bad: Any) -> str:
    if not isinstance(value, str) or not value:
        raise bad(f"{what} is not a path")
    for part in value.split("/"):
        try:
            validate_segment(part)
        except InvalidSkillURI:
            raise bad(f"{what} {value!r} is not a safe relative path") from None
        if part in (".", ".."):
            raise bad(f"{what} {value!r} is not a safe relative path")
    return value


def skill_from_json(raw: object, where: str, bad: Any) -> LockedSkill:
    if not isinstance(raw, dict):
        raise bad(f"{where} is not an object")
    uri, name = raw.get("uri"), raw.get("name")
    if not isinstance(uri, str) or not isinstance(name, str):
        raise bad(f"{where} needs uri and name strings")
    path = _relative_path(raw.get("path"), f"{where}.path", bad)
    files_raw = raw.get("files")
    if not isinstance(files_raw, list):
        raise bad(f"{where}.files is not an array")
    files: list[LockedFile] = []
    for index, item in enumerate(cast(list[object], files_raw)):
        at = f"{where}.files[{index}]"
        if not isinstance(item, dict):
            raise bad(f"{at} is not an object")
        file_path = _relative_path(item.get("path"), f"{at}.path", bad)
        file_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(file_uri, str):
            raise bad(f"{at}.uri is not a string")
        if not isinstance(digest, str) or not DIGEST_RE.match(digest):
            raise bad(f"{at}.digest is not sha256:<64 hex>")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise bad(f"{at}.size is not a non-negative integer")
        files.append(LockedFile(file_path, file_uri, digest, size))
    signature = raw.get("signature")
    if signature is not None and not isinstance(signature, dict):
        raise bad(f"{where}.signature is not an object")
    source = raw.get("source")
    return LockedSkill(
        uri, name, path, tuple(sorted(files)), signature, None if source is None else _source(source, where, bad)
    )


def _source(raw: object, where: str, bad: Any) -> LockedSource:
    at = f"{where}.source"
    if not isinstance(raw, dict):
        raise bad(f"{at} is not an object")
    commit = raw.get("commit")
    if not isinstance(commit, str) or not is_commit_id(commit):
        raise bad(f"{at}.commit is not a full git object id (40 or 64 lowercase hex digits)")

    def text(name: str, value: object) -> str:
        # As a pull writes them: escaped, so an edit that put a control or invisible character back is refused.
        if not isinstance(value, str) or escape(value, None) != value:
            raise bad(f"{at}.{name} is not a printable string")
        return value

    repository = text("repository", raw.get("repository"))
    if not repository:
        raise bad(f"{at}.repository is empty")
    ref = raw.get("ref")
    return LockedSource(repository, commit, None if ref is None else text("ref", ref), text("path", raw.get("path")))


def lock_path(directory: Path) -> Path:
    return directory / LOCK_NAME


def read_lock(directory: Path) -> Lock | None:
    """The lock in `directory`, or None when there is none; `LockError` when it cannot be used."""
    path = lock_path(directory)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise LockError(f"cannot read {path}: {exc}") from None
    return Lock.from_text(text, str(path))


def write_lock(directory: Path, lock: Lock) -> None:
    """Replace the lock atomically: a temporary file in the same directory, fsynced, then renamed."""
    write_atomically(lock_path(directory), lock.to_text().encode("utf-8"))


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~umask())  # mkstemp makes 0600; a lock is an ordinary file
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def locked_files(items: Iterable[tuple[str, str, str, int]]) -> tuple[LockedFile, ...]:
    """`(path, uri, digest, size)` tuples as sorted `LockedFile`s."""
    return tuple(sorted(LockedFile(p, u, d, s) for p, u, d, s in items))

"""How a mirror directory differs from its lock and from the server: what `pull --check` reports.

- `compare` / `lock_changes`: the lock against the server's entries (files added, removed, changed;
  skills removed or new; a git source whose lock line a pull would rewrite: another commit for changed
  files, another repository, ref or folder). Nothing is read from the server but entries.
- `disk_problem`: the one disk-versus-lock check. A skill whose folder or files are missing, are
  symlinks, or hold other bytes than the lock records is `missing` or `edited locally` (e.g. an
  interrupted pull, a local edit), as data (`DiskProblem`, one `describe()`); `check_disk` applies it
  to every locked skill and counts an interrupted run's leftovers.
- `unrecorded_files`: whose file is this. Inside a folder skillwire wrote, a file (or link) is skillwire's
  exactly when its record (`skills.lock`, or a host folder's `.skillwire-sync.json`) lists it; anything
  else is the person's, and is never overwritten or deleted: `pull --to` refuses to replace such a
  folder, a sync carries the person's files into the new copy and never prunes them, and both `--check`s
  report them.
- `check_signatures`: a locked publisher signature verified over the locked manifest and the SKILL.md
  on disk, through `TrustPolicy.inspect` (host/trust.py), so a key counts only inside its origin and
  prefix scope exactly as it does when a host loads the skill.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ServerError, SkillNotFound, SkillwireError
from skillwire.core.manifest import ManifestDiff, ManifestFile, diff_file_sets
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.skill_md import parse_skill_md
from skillwire.core.uri import SKILL_MD
from skillwire.core.verify import file_mismatches
from skillwire.host.identity import SkillRef
from skillwire.host.mirror.lock import (
    LOCK_NAME,
    TEMP_PREFIX,
    Lock,
    LockedFile,
    LockedSkill,
    LockedSource,
    carried_source,
    locked_files,
)
from skillwire.host.mirror.swap import find_interrupted
from skillwire.host.trust import TrustedKey, TrustPolicy

# One status set for both `--check`s (`pull --check` against skills.lock, `pull --for HOST --check` against
# a host folder's sync record), one word each, in the order a line is chosen when several apply.
CheckStatus = Literal[
    "missing",  # the folder is gone (or is a link)
    "edited locally",  # a recorded file lacks or holds other bytes
    "added locally",  # the folder holds files the record does not list: the person's (`unrecorded_files`)
    "invalid",  # the server's answer, or the recorded publisher signature, does not verify
    "changed upstream",  # the server's files (or git source) differ from the record
    "gone upstream",  # the server no longer serves it
    "in step",  # the record, the disk and the server agree
    "new",  # served, not copied here
]
STATUS_WIDTH = max(len(status) for status in get_args(CheckStatus))  # one column in both `--check`s


@dataclass
class Change:
    uri: str
    status: CheckStatus
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    note: str | None = None  # raw text (it may quote the server): escape it where it is shown

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order: what `pull --json` prints for it

    def add_note(self, note: str) -> None:
        self.note = note + (f"; {self.note}" if self.note else "")


def recorded_diff(skill: LockedSkill, files: Iterable[tuple[str, ManifestFile]]) -> ManifestDiff:
    """The recorded files of a skill against `files` (path inside the skill, manifest item), through the one
    comparison of file sets (`core.manifest.diff_file_sets`), keyed by path inside the skill."""
    return diff_file_sets(
        {f.path: (f.digest, f.size) for f in skill.files}, {path: (item.digest, item.size) for path, item in files}
    )


def compare(locked: LockedSkill, entry: SkillEntry) -> Change:
    if entry.is_dynamic:
        return Change(locked.uri, "changed upstream", note="the server now publishes it as dynamic (no manifest)")
    diff = recorded_diff(locked, _relative_files(entry))
    change = Change(
        locked.uri,
        "changed upstream" if diff else "in step",
        added=list(diff.added),
        removed=list(diff.removed),
        changed=list(diff.changed),
    )
    files = locked_files((path, item.uri, item.digest, item.size) for (path, item) in _relative_files(entry))
    note = source_drift(locked, files, LockedSource.of_entry(entry))
    if note is not None:
        change.status = "changed upstream"
        change.add_note(note)
    return change


def _relative_files(entry: SkillEntry) -> list[tuple[str, ManifestFile]]:
    return [(entry.path.file_path_of(item.uri) or item.uri, item) for item in entry.files]


def source_drift(locked: LockedSkill, files: tuple[LockedFile, ...], served: LockedSource | str | None) -> str | None:
    """How a pull would change the locked git source (the same rule `carried_source` writes by), or None."""
    usable = served if isinstance(served, LockedSource) else None
    expected = carried_source(locked, files, usable)
    before = locked.source
    if expected == before:
        return None
    if expected is None:
        assert before is not None
        why = f" ({served})" if isinstance(served, str) else ""
        return f"no longer served from a git repository{why}; locked from {before.describe()}"
    if before is None:
        return f"now served from {expected.describe()}"
    if before.same_place(expected):
        return f"the server's commit is now {expected.commit} (locked: {before.commit})"
    return f"now served from {expected.describe()} (locked: {before.describe()})"


async def lock_changes(client: SkillsClient, lock: Lock) -> list[Change]:
    """Each locked skill against the server's current entry; with selection `all`, new skills too."""
    listed: dict[str, SkillEntry] = {}
    if lock.selection == "all":
        listing = await client.list_skills()
        listed = {entry.uri: entry for entry in listing.entries}
    changes: list[Change] = []
    for uri in sorted(lock.skills):
        entry = listed.get(uri)
        if entry is None:
            try:
                entry = await client.get_skill(uri)
            except SkillNotFound:
                changes.append(Change(uri, "gone upstream", note="the server no longer serves it"))
                continue
            except ServerError as exc:
                changes.append(Change(uri, "invalid", note=str(exc)))
                continue
        changes.append(compare(lock.skills[uri], entry))
    for uri in sorted(listed.keys() - lock.skills.keys()):
        changes.append(Change(uri, "new", note="listed by the server, not pulled"))
    return changes


def _some(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


@dataclass(frozen=True)
class DiskProblem:
    """How a copy on disk differs from its record: the folder is gone, or files lack or differ (paths inside
    the skill). Data, so callers decide by fields; `describe()` is the one wording."""

    missing: bool = False
    lacking: tuple[str, ...] = ()
    differing: tuple[str, ...] = ()

    @property
    def status(self) -> CheckStatus:
        return "missing" if self.missing else "edited locally"

    def describe(self) -> str:
        if self.missing:
            return "is missing"
        parts = [f"lacks {_some(list(self.lacking))}"] if self.lacking else []
        parts += [f"has other bytes in {_some(list(self.differing))}"] if self.differing else []
        return "; ".join(parts)


def disk_problem(dest: Path, skill: LockedSkill) -> DiskProblem | None:
    """How the copy of a locked skill on disk differs from its lock entry, or None when every file matches.

    A symlink (the folder or a file) never matches: hosts and `serve` may follow it anywhere.
    """
    root = dest.joinpath(*skill.segments)
    if not root.is_dir() or root.is_symlink():
        return DiskProblem(missing=True)
    missing: list[str] = []
    differ: list[str] = []
    for item in skill.files:
        path = root.joinpath(*item.path.split("/"))
        try:
            data = path.read_bytes() if not path.is_symlink() else None
        except FileNotFoundError:
            missing.append(item.path)
            continue
        except OSError:
            data = None
        if data is None or file_mismatches(item.uri, item.size, item.digest, data):
            differ.append(item.path)
    return DiskProblem(lacking=tuple(missing), differing=tuple(differ)) if missing or differ else None


def unrecorded_files(folder: Path, recorded: Callable[[str], bool], *, relative_to: Path) -> list[str]:
    """Whose file is this: every file, link or linked folder under `folder` whose path (relative to
    `relative_to`, `/`-separated) `recorded` does not accept, sorted. Those are the person's."""
    found: list[str] = []
    for directory, dirs, names in os.walk(folder, followlinks=False):
        for name in dirs:
            path = Path(directory) / name
            if path.is_symlink():
                found.append(path.relative_to(relative_to).as_posix())
        for name in names:
            path = Path(directory) / name
            relative = path.relative_to(relative_to).as_posix()
            if path.is_symlink() or not path.is_file() or not recorded(relative):
                found.append(relative)
    return sorted(found)


def check_disk(dest: Path, shown_dest: str, lock: Lock, changes: list[Change]) -> list[str]:
    """Mark every skill whose copy on disk no longer matches the lock (`missing`, `edited locally`), or holds
    files the lock does not list (`added locally`); notes about debris."""
    interrupted = find_interrupted(dest)
    for change in changes:
        locked = lock.skills.get(change.uri)
        if locked is None or change.status not in ("in step", "changed upstream"):
            continue
        shown = f"{shown_dest.rstrip('/')}/{locked.path}"
        problem = disk_problem(dest, locked)
        if problem is None:
            root = dest.joinpath(*locked.segments)
            yours = unrecorded_files(root, lock.owns, relative_to=dest)
            if yours:
                change.status = "added locally"
                change.add_note(
                    f"{shown} holds files {LOCK_NAME} does not list ({_some(yours)}); pull refuses to replace it"
                )
            continue
        remedy = (
            "an interrupted pull moved its previous copy aside; `skillwire pull` puts it back"
            if locked.path in interrupted.aside
            else "`skillwire pull` writes it again"
        )
        change.status = problem.status
        change.add_note(f"{shown} {problem.describe()}; {remedy}")
    leftover = len(interrupted.debris) + len(interrupted.aside)
    if not leftover:
        return []
    return [f"note: {leftover} temporary {TEMP_PREFIX}* entries in {shown_dest} (the next pull removes them)"]


# A label no host ever gives an upstream is not needed: without `origin`, keys scoped to origins are
# left out of the policy (they count only under a label the person named), so this one matches nothing.
_NO_ORIGIN = "pull"


def signature_policy(keys: tuple[TrustedKey, ...], origin: str | None) -> tuple[TrustPolicy, str]:
    """The policy and origin label a locked signature is judged under: the keys of the trust file, all
    of them when the host's label for the server is known, else only those not scoped to an origin."""
    if origin is None:
        keys = tuple(key for key in keys if not key.origins)
    return TrustPolicy("warn", keys), origin or _NO_ORIGIN


def check_signatures(
    dest: Path, lock: Lock, changes: list[Change], keys: tuple[TrustedKey, ...], origin: str | None = None
) -> None:
    """For each locked skill that carried a publisher signature, verify it over the locked manifest and the
    SKILL.md on disk (whose bytes `check_disk` already held to the lock) and judge the signer as a host
    would (`TrustPolicy.inspect` with `keys`, for `origin`, the label a host gives this server). A copy
    whose signature no longer verifies is `invalid`; a signer the host would not trust is said to be."""
    policy, label = signature_policy(keys, origin)
    for change in changes:
        locked = lock.skills.get(change.uri)
        if locked is None or locked.signature is None or change.status in ("missing", "edited locally"):
            continue
        files = tuple(ManifestFile(f.uri, f.digest, f.size) for f in locked.files)
        try:
            document = parse_skill_md((dest / locked.path / SKILL_MD).read_bytes())
            entry = SkillEntry(locked.uri, document.frontmatter, files, meta={SIGNATURE_META_KEY: locked.signature})
            result = policy.inspect(SkillRef(label, locked.uri), entry)
        except (OSError, SkillwireError, ValueError) as exc:
            change.status = "invalid"
            change.add_note(f"the publisher signature in {LOCK_NAME} does not verify: {exc}")
            continue
        if result.status == "verified":
            change.add_note(result.describe())
        elif result.status == "untrusted":
            change.add_note(_untrusted_note(result.fingerprint or "", keys, origin))
        else:
            change.status = "invalid"
            change.add_note(f"the publisher signature in {LOCK_NAME} does not verify: {result.reason}")


def _untrusted_note(fingerprint: str, keys: tuple[TrustedKey, ...], origin: str | None) -> str:
    scoped = [key for key in keys if key.fingerprint == fingerprint]
    if not scoped:
        return f"signed by {fingerprint} (not in your trust file)"
    where = f"origin {origin!r}" if origin is not None else "a server named by no --origin"
    return (
        f"untrusted: signed by {fingerprint}, which your trust file trusts only as "
        + "; ".join(key.describe() for key in scoped)
        + f", not for {where}"
    )

"""Served skills synced into a host's own skills folder (`skillwire pull URL --for HOST`), as loads.

A skill written into `~/.claude/skills` (or any folder of `hostdirs.py`) is live instructions for that host
from then on, so writing one is a load and goes through the load decision (`host/load.py`, `plan_load`):
dynamic skills and skills over the limits are refused, the trust policy applies (`require` refuses an
unsigned or untrusted skill before anyone is asked), and the person's approval, bound to exactly the files
(and signer), is needed: a stored one (the bridge's store, so `skillwire approve` counts) or a yes now,
which is then stored.

Ownership: `<folder>/.skillwire-sync.json` records every skill folder skillwire wrote, with the server it
came from and every file's digest. Only a folder recorded there, from this server and for the same skill,
is ever replaced or removed. A folder of the same name that skillwire did not write (the person's own skill,
or another server's) is never touched: the skill is skipped with a line saying so. A recorded skill whose
files were edited in place is not overwritten either (nor pruned) unless `force`. Inside a folder skillwire
wrote, a file the record does not list is the person's (`drift.unrecorded_files`), even with `force`: an
update carries it into the new copy and says so (or, when the server's copy now has a file at its path,
leaves the folder untouched), a prune keeps the folder, and `check` reports it (`added locally`).

Crash safety: the folder is replaced as `pull` replaces one (`swap.py`), and the record names the new copy
as `pending` before the swap and as owned after it; the next run adopts a pending copy whose files are on
disk (the crash came after the swap) and forgets one that is not (before it). `.skillwire-*` leftovers are
repaired first, as `pull` does.

`check` (`pull --for HOST --check`) writes nothing and reports drift per skill, in the status set both
`--check`s share (`drift.CheckStatus`): in step, missing, edited locally, added locally, changed upstream,
gone upstream, or new on the server. Which skills a run syncs is `select.select_entries`, as for `pull`.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import LockError, SkillNotFound, SkillwireError
from skillwire.core.uri import SKILL_MD
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from skillwire.host.load import Approved, Ask, Refused, plan_load
from skillwire.host.mirror.drift import CheckStatus, disk_problem, recorded_diff, unrecorded_files
from skillwire.host.mirror.layout import Plan, plan_entries, plan_skill
from skillwire.host.mirror.lock import LockedSkill, write_atomically
from skillwire.host.mirror.lock import skill_from_json as locked_from_json
from skillwire.host.mirror.select import Selection
from skillwire.host.mirror.swap import (
    carry_over,
    find_interrupted,
    recover_interrupted,
    remove_folder,
    staging_directory,
    swap_in,
)
from skillwire.host.mirror.writer import failure_reason, fetch_into, locked_skill
from skillwire.host.trust import TrustPolicy

RECORD_NAME = ".skillwire-sync.json"
RECORD_VERSION = 1

SyncStatus = Literal["installed", "updated", "unchanged", "skipped", "failed", "removed", "kept"]


@dataclass(frozen=True)
class Owned:
    """A skill folder skillwire wrote: from which server (as given), under which origin label, what files."""

    origin: str
    label: str
    skill: LockedSkill  # `path` is the folder's name inside the skills folder

    def to_json(self) -> dict[str, Any]:
        return {"origin": self.origin, "label": self.label, **self.skill.to_json()}


@dataclass
class SyncRecord:
    skills: dict[str, Owned] = field(default_factory=dict)  # folder -> what skillwire wrote there
    pending: dict[str, Owned] = field(default_factory=dict)  # folder -> a copy being swapped in

    def to_text(self) -> str:
        data = {
            "version": RECORD_VERSION,
            "skills": [self.skills[k].to_json() for k in sorted(self.skills)],
            "pending": [self.pending[k].to_json() for k in sorted(self.pending)],
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_text(cls, text: str, where: str) -> SyncRecord:
        def bad(reason: str) -> LockError:
            return LockError(f"{where} is not a usable skillwire sync record ({reason}); move it away to start over")

        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(f"not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            raise bad(f"expected a JSON object with version {RECORD_VERSION}")
        record = cls()
        for key, into in (("skills", record.skills), ("pending", record.pending)):
            items = data.get(key, [])
            if not isinstance(items, list):
                raise bad(f"{key} is not an array")
            for index, raw in enumerate(cast(list[object], items)):
                where_item = f"{key}[{index}]"
                if not isinstance(raw, dict):
                    raise bad(f"{where_item} is not an object")
                origin, label = raw.get("origin"), raw.get("label")
                if not isinstance(origin, str) or not isinstance(label, str):
                    raise bad(f"{where_item} needs origin and label strings")
                skill = locked_from_json(raw, where_item, bad)
                if "/" in skill.path:
                    raise bad(f"{where_item}.path {skill.path!r} is not one folder name")
                if skill.path in into:
                    raise bad(f"{where_item}: the folder {skill.path!r} is recorded twice")
                into[skill.path] = Owned(origin, label, skill)
        return record


def read_record(folder: Path) -> SyncRecord:
    """The sync record of a skills folder (empty when there is none); `LockError` when it cannot be used."""
    path = folder / RECORD_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return SyncRecord()
    except (OSError, UnicodeDecodeError) as exc:
        raise LockError(f"cannot read {path}: {exc}") from None
    return SyncRecord.from_text(text, str(path))


def write_record(folder: Path, record: SyncRecord) -> None:
    write_atomically(folder / RECORD_NAME, record.to_text().encode("utf-8"))


def settle(folder: Path) -> tuple[SyncRecord, list[str]]:
    """Repair what an interrupted sync left, then read the record: a pending copy whose files are all on disk
    is adopted (the crash came after its swap), any other is forgotten. Returns the record and notes."""
    notes = recover_interrupted(folder, keep=frozenset({RECORD_NAME})) if folder.is_dir() else []
    record = read_record(folder)
    if record.pending:
        for name, owned in record.pending.items():
            if disk_problem(folder, owned.skill) is None:
                record.skills[name] = owned
                notes.append(f"adopted {name} (an earlier sync was interrupted after writing it)")
        record.pending.clear()
        write_record(folder, record)
    return record, notes


def flat_plan(plan: Plan) -> Plan:
    """The plan without the files of skills nested inside it (a folder holding its own SKILL.md): in a host's
    flat skills folder each of those is a skill of its own, and a second copy inside its parent would be
    discovered twice by hosts that scan recursively (Codex, Cursor)."""
    nested = {relative[: -len(SKILL_MD)] for relative, _ in plan.files if relative.endswith("/" + SKILL_MD)}
    kept = tuple(pair for pair in plan.files if not any(pair[0].startswith(root) for root in nested))
    return replace(plan, files=kept)


def same_files(skill: LockedSkill, plan: Plan) -> bool:
    """True when the recorded files are exactly the files the plan would write (paths, digests, sizes)."""
    return not recorded_diff(skill, plan.files)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def yours(folder: Path, owned: Owned) -> list[str]:
    """The person's entries inside a synced skill folder: whatever its record does not list."""
    recorded = {f.path for f in owned.skill.files}
    root = folder / owned.skill.path
    return unrecorded_files(root, recorded.__contains__, relative_to=root) if root.is_dir() else []


def in_the_way(kept: list[str], plan: Plan) -> list[str]:
    """The person's entries at a path the plan writes (or inside one, or holding one)."""
    written = [relative for relative, _ in plan.files]
    return [p for p in kept if any(p == w or p.startswith(w + "/") or w.startswith(p + "/") for w in written)]


def _some(paths: list[str]) -> str:
    return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


@dataclass
class SyncOutcome:
    uri: str
    folder: str | None
    status: SyncStatus
    reason: str | None = None  # raw text (it may quote the server): escape it where it is shown
    files: int = 0
    size: int = 0
    kept: list[str] = field(default_factory=list)  # the person's files left in place (`yours`)
    unapproved: bool = False  # skipped because nobody approved it (in a pipe: nobody could be asked)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order: what `pull --json` prints for it


AskPerson = Callable[[Ask], Awaitable[bool]]


async def approve_every(decision: Ask) -> bool:
    """The answer of `--yes`: every skill that needs an approval gets one (and it is stored)."""
    return True


async def ask_nobody(decision: Ask) -> bool:
    """The answer when nobody can be asked (not a terminal): a skill that needs an approval is not written."""
    return False


@dataclass(kw_only=True)
class HostSync:
    """Syncs one server's skills into one host skills folder (see the module docstring)."""

    client: SkillsClient
    folder: Path
    shown: str  # the folder as messages show it
    origin: str  # the server as given (URL or command), recorded per skill
    label: str  # the origin label approvals and trust scopes use
    trust: TrustPolicy
    approvals: ApprovalStore
    ask: AskPerson
    record: SyncRecord
    force: bool = False
    notes: list[str] = field(default_factory=list)

    def _ours(self, name: str, uri: str) -> Owned | None:
        owned = self.record.skills.get(name)
        if owned is not None and owned.origin == self.origin and owned.skill.uri == uri:
            return owned
        return None

    async def run(self, selection: Selection, *, prune: bool) -> list[SyncOutcome]:
        """Sync the selected skills; with the whole listing (`selection.complete`), also the ones the server
        dropped (removed when `prune`, else kept and named)."""
        outcomes = [SyncOutcome(failed.what, None, "failed", failed.reason) for failed in selection.failed]
        self.folder.mkdir(parents=True, exist_ok=True)
        outcomes += await self.sync(selection.entries)
        if selection.complete:
            outcomes += self.prune({entry.uri for entry in selection.entries}, remove=prune)
        return outcomes

    async def sync(self, entries: Iterable[SkillEntry]) -> list[SyncOutcome]:
        entries = list(entries)
        outcomes: list[SyncOutcome] = []
        for planned in plan_entries(entries, [(entry.name,) for entry in entries]):
            if not isinstance(planned, Plan):
                status: SyncStatus = "skipped" if planned.dynamic else "failed"
                outcomes.append(SyncOutcome(planned.entry.uri, None, status, planned.reason))
                continue
            outcomes.append(await self._one(flat_plan(planned)))
        return outcomes

    async def _one(self, plan: Plan) -> SyncOutcome:
        entry, name = plan.entry, plan.path
        target = self.folder / name
        shown = f"{self.shown.rstrip('/')}/{name}"
        owned = self._ours(name, entry.uri)
        exists = _exists(target)
        if exists and owned is None:
            other = self.record.skills.get(name)
            whose = (
                f"skillwire installed it from {other.origin} ({other.skill.uri})"
                if other is not None
                else "skillwire did not install it (a skill of your own?)"
            )
            return SyncOutcome(entry.uri, name, "skipped", f"{shown} exists and {whose}; left untouched")
        if owned is not None and exists:
            problem = disk_problem(self.folder, owned.skill)
            if problem is not None and not self.force:
                return SyncOutcome(
                    entry.uri,
                    name,
                    "skipped",
                    f"{shown} was edited since skillwire installed it ({problem.describe()}); "
                    "left untouched (--force replaces it)",
                )
            if problem is None and same_files(owned.skill, plan):
                return SyncOutcome(entry.uri, name, "unchanged", files=len(plan.files), size=plan.size)
        kept = yours(self.folder, owned) if owned is not None and exists else []
        blocking = in_the_way(kept, plan)
        if blocking:
            return SyncOutcome(
                entry.uri,
                name,
                "skipped",
                f"{shown} holds files skillwire did not write where the server's copy has files "
                f"({_some(blocking)}); left untouched: move them away to update it",
                kept=kept,
            )
        decision = plan_load(
            SkillRef(self.label, entry.uri), entry, allow_dynamic=False, trust=self.trust, approvals=self.approvals.get
        )
        if isinstance(decision, Refused):
            return SyncOutcome(entry.uri, name, "failed", f"not written, as a host would not load it: {decision.error}")
        if decision.signature.error is not None:  # `warn`: written, and said
            self.notes.append(f"{entry.uri}: {decision.signature.error} (trust mode 'warn': synced anyway)")
        if isinstance(decision, Ask):
            if not await self.ask(decision):
                return SyncOutcome(entry.uri, name, "skipped", "not approved; nothing was written", unapproved=True)
            self.approvals.approve(decision.request.ref, decision.bound)
        else:
            assert isinstance(decision, Approved)
        status: SyncStatus = "updated" if owned is not None and exists else "installed"
        return await self._write(plan, target, shown, status, kept)

    async def _write(self, plan: Plan, target: Path, shown: str, status: SyncStatus, kept: list[str]) -> SyncOutcome:
        entry, name = plan.entry, plan.path
        owned = Owned(self.origin, self.label, locked_skill(plan))
        self.record.pending[name] = owned
        write_record(self.folder, self.record)
        staged = staging_directory(self.folder)
        try:
            await fetch_into(self.client, plan, staged, lambda steps: None)
            carry_over(target, staged, kept)
            swap_in(staged, target, self.folder)
        except (SkillwireError, OSError) as exc:
            del self.record.pending[name]
            write_record(self.folder, self.record)
            return SyncOutcome(entry.uri, name, "failed", failure_reason(exc, shown))
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        self.record.skills[name] = owned
        del self.record.pending[name]
        write_record(self.folder, self.record)
        return SyncOutcome(entry.uri, name, status, files=len(plan.files), size=plan.size, kept=kept)

    def prune(self, served: set[str], *, remove: bool) -> list[SyncOutcome]:
        """Skills this server gave that it no longer serves: removed (`remove`), or kept with a note."""
        outcomes: list[SyncOutcome] = []
        for name, owned in sorted(self.record.skills.items()):
            if owned.origin != self.origin or owned.skill.uri in served:
                continue
            target = self.folder / name
            if not remove:
                outcomes.append(
                    SyncOutcome(owned.skill.uri, name, "kept", "the server no longer serves it (--prune removes it)")
                )
                continue
            if os.path.lexists(target):
                kept = yours(self.folder, owned)
                if kept:  # the person's: never removed, not even with --force
                    outcomes.append(
                        SyncOutcome(
                            owned.skill.uri,
                            name,
                            "kept",
                            f"gone from the server, but {target} holds files skillwire did not write "
                            f"({_some(kept)}); move them away and --prune removes it",
                            kept=kept,
                        )
                    )
                    continue
                problem = disk_problem(self.folder, owned.skill)
                if problem is not None and not self.force:
                    outcomes.append(
                        SyncOutcome(
                            owned.skill.uri,
                            name,
                            "kept",
                            f"gone from the server, but edited since skillwire installed it ({problem.describe()}); "
                            "left in place (--force removes it)",
                        )
                    )
                    continue
                try:
                    remove_folder(target, self.folder)
                except OSError as exc:
                    outcomes.append(SyncOutcome(owned.skill.uri, name, "failed", f"cannot remove {target}: {exc}"))
                    continue
            del self.record.skills[name]
            write_record(self.folder, self.record)
            outcomes.append(SyncOutcome(owned.skill.uri, name, "removed", "the server no longer serves it"))
        return outcomes


@dataclass
class Drift:
    uri: str
    folder: str | None
    status: CheckStatus
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order: what `pull --json` prints for it


def drift(
    folder: Path, record: SyncRecord, origin: str, entries: dict[str, SkillEntry], *, complete: bool
) -> list[Drift]:
    """Each skill this server synced into `folder` against the disk and the server's entries (`complete`:
    `entries` is the whole listing, so an absent skill is gone and an unsynced one is new)."""
    out: list[Drift] = []
    synced: set[str] = set()
    for name, owned in sorted(record.skills.items()):
        if owned.origin != origin:
            continue
        uri = owned.skill.uri
        synced.add(uri)
        problem = disk_problem(folder, owned.skill)
        entry = entries.get(uri)
        upstream: str | None = None
        problem_note = ""
        if entry is None and complete:
            upstream = "gone upstream"
        elif entry is not None:
            planned = plan_skill(entry, (name,)) if not entry.is_dynamic else "dynamic"
            if isinstance(planned, str):
                upstream, problem_note = "changed upstream", f"the server's entry can no longer be synced: {planned}"
            elif diff := recorded_diff(owned.skill, flat_plan(planned).files):
                files = sorted((*diff.added, *diff.removed, *diff.changed))
                upstream = "changed upstream"
                problem_note = "files: " + ", ".join(files[:5]) + (" and more" if len(files) > 5 else "")
        kept = yours(folder, owned)
        if problem is not None and problem.missing:
            out.append(Drift(uri, name, "missing", "the folder is gone (a sync writes it again)"))
        elif problem is not None:
            also = "; also changed upstream" if upstream == "changed upstream" else ""
            out.append(Drift(uri, name, "edited locally", f"{name} {problem.describe()}{also}"))
        elif kept:
            also = "; also changed upstream" if upstream == "changed upstream" else ""
            note = f"{name} holds files skillwire did not write ({_some(kept)}); a sync keeps them{also}"
            out.append(Drift(uri, name, "added locally", note))
        elif upstream == "changed upstream":
            out.append(Drift(uri, name, "changed upstream", problem_note))
        elif upstream == "gone upstream":
            out.append(Drift(uri, name, "gone upstream", "--prune removes it"))
        else:
            out.append(Drift(uri, name, "in step"))
    if complete:
        for uri in sorted(entries.keys() - synced):
            out.append(Drift(uri, None, "new", "served, not synced here"))
    return out


@dataclass
class SyncCheck:
    """`pull --for HOST --check`: each skill this server synced into the folder, and served skills not synced."""

    found: list[Drift]
    interrupted: bool  # an interrupted sync left work (the next sync repairs it first)

    @property
    def differs(self) -> bool:
        # A skill the server serves that was never synced here is told, not counted: this says whether what
        # skillwire wrote is still what it wrote and what the server serves.
        return any(d.status not in ("in step", "new") for d in self.found)


async def check(client: SkillsClient, folder: Path, record: SyncRecord, origin: str) -> SyncCheck:
    """Compare what `origin` synced into `folder` with the disk and the server; writes (and repairs) nothing."""
    listing = await client.list_skills()
    entries = {entry.uri: entry for entry in listing.entries}
    complete = not listing.stopped_early and not listing.problems
    for owned in record.skills.values():  # a synced skill the listing does not show may still be served
        if owned.origin == origin and owned.skill.uri not in entries:
            try:
                entries[owned.skill.uri] = await client.get_skill(owned.skill.uri)
            except SkillNotFound:
                continue
    leftovers = find_interrupted(folder, keep=frozenset({RECORD_NAME}))
    interrupted = bool(record.pending or leftovers.aside or leftovers.debris)
    return SyncCheck(drift(folder, record, origin, entries, complete=complete), interrupted)

"""Writing one planned skill into a mirror directory: fetched verified, staged, swapped in, recorded.

For each skill: SKILL.md first (size, digest, then frontmatter field by field against the entry, before
anything else of the skill is read), then each supporting file (size and digest). Verified files go into
a staging directory inside DIR; only when the whole skill verified does it replace the folder
(`swap.swap_in`). A skill that fails is reported, nothing of it is written, and the caller goes on with
the others. The lock is written after each skill, with no await between the swap and that write, so a
cancellation (Ctrl-C) between skills leaves the folder and the lock agreeing.

Refused before anything is fetched: a folder that leads outside DIR (through a symlink), and replacing a
folder holding files the lock does not account for.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SkillwireError, VerificationFailed
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import SKILL_MD
from skillwire.host.fetch import fetch_skill_md, fetch_verified
from skillwire.host.mirror.drift import disk_problem, unrecorded_files
from skillwire.host.mirror.layout import Plan
from skillwire.host.mirror.lock import (
    LOCK_NAME,
    Lock,
    LockedSkill,
    LockedSource,
    carried_source,
    locked_files,
    write_lock,
)
from skillwire.host.mirror.swap import crash_point, staging_directory, swap_in, within, write_file


@dataclass
class Outcome:
    uri: str
    status: Literal["pulled", "failed", "skipped"]
    path: str | None = None
    files: int = 0
    size: int = 0
    error: str | None = None  # raw text (it may quote the server): escape it where it is shown

    def to_json(self) -> dict[str, Any]:
        return asdict(self)  # every field, in order: what `pull --json` prints for it


def locked_skill(plan: Plan, previous: LockedSkill | None = None) -> LockedSkill:
    """What the lock records for a skill written by `plan`: its files, the signature it carried, and its git
    source (`carried_source`: the locked commit is kept when `previous` locked the same folder and files)."""
    entry = plan.entry
    signature = (entry.meta or {}).get(SIGNATURE_META_KEY)
    files = locked_files((relative, item.uri, item.digest, item.size) for relative, item in plan.files)
    served = LockedSource.of_entry(entry)
    return LockedSkill(
        entry.uri,
        entry.name,
        plan.path,
        files,
        dict(signature) if isinstance(signature, dict) else None,
        carried_source(previous, files, served if isinstance(served, LockedSource) else None),
    )


def source_problem(entry: SkillEntry) -> str | None:
    """Why the git source an entry claims is not recorded in the lock, or None (none claimed, or recorded)."""
    served = LockedSource.of_entry(entry)
    if not isinstance(served, str):
        return None
    return f"the server's source for {entry.uri} is not recorded in {LOCK_NAME}: {served}"


async def fetch_into(client: SkillsClient, plan: Plan, staged: Path, advance: Callable[[int], None]) -> None:
    """Every file of `plan`, verified, written under `staged` (SKILL.md first)."""
    for relative, item in plan.files:
        if relative == SKILL_MD and item.uri == plan.entry.uri:
            data = await fetch_skill_md(client, plan.entry)  # size, digest, frontmatter: before anything else
        else:
            data = await fetch_verified(client, item)
        write_file(staged, relative, data)
        crash_point("staging")
        advance(1)


def failure_reason(exc: SkillwireError | OSError, shown: str) -> str:
    reason = str(exc)
    if isinstance(exc, VerificationFailed):
        return f"{reason}; nothing of this skill was written"
    if isinstance(exc, OSError):
        return f"cannot write {shown}: {reason}"
    return reason


@dataclass
class Mirror:
    """Writes planned skills from one server into `dest` and keeps `dest/skills.lock` in step.

    `shown_dest` is how DIR appears in messages; `advance(n)` is told of each file done (a progress bar),
    `describe(name)` of each skill begun. `notes` collects warnings for the end of the run.
    """

    client: SkillsClient
    dest: Path
    shown_dest: str
    lock: Lock
    advance: Callable[[int], None] = lambda steps: None
    describe: Callable[[str], None] = lambda name: None
    notes: list[str] = field(default_factory=list)

    def target_problem(self, plan: Plan) -> str | None:
        """Why the skill's directory cannot be (re)placed: outside DIR, or holding files not from a pull."""
        target = self.dest.joinpath(*plan.segments)
        shown = f"{self.shown_dest.rstrip('/')}/{plan.path}"
        if not within(target, self.dest):
            return f"{shown} leads outside {self.shown_dest} (through a symlink)"
        if not os.path.lexists(target):
            return None
        unowned = [] if target.is_dir() and not target.is_symlink() else [plan.path]
        unowned = unowned or unrecorded_files(target, self.lock.owns, relative_to=self.dest)
        if not unowned:
            return None
        listed = ", ".join(unowned[:3]) + (f" and {len(unowned) - 3} more" if len(unowned) > 3 else "")
        return (
            f"{shown} exists and holds files {LOCK_NAME} does not account for ({listed}); "
            "move them away, or pull into another directory"
        )

    async def pull(self, plan: Plan) -> Outcome:
        entry = plan.entry
        target = self.dest.joinpath(*plan.segments)
        shown = f"{self.shown_dest.rstrip('/')}/{plan.path}"
        self.describe(entry.name)
        problem = self.target_problem(plan)
        if problem is not None:
            self.advance(len(plan.files))
            return Outcome(entry.uri, "failed", error=problem)
        staged = staging_directory(self.dest)
        done = 0

        def advance(steps: int) -> None:
            nonlocal done
            done += steps
            self.advance(steps)

        try:
            await fetch_into(self.client, plan, staged, advance)
            swap_in(staged, target, self.dest)
        except (SkillwireError, OSError) as exc:
            self.advance(len(plan.files) - done)
            return Outcome(entry.uri, "failed", error=failure_reason(exc, shown))
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        self.lock.skills[entry.uri] = locked_skill(plan, self.lock.skills.get(entry.uri))
        problem = source_problem(entry)
        if problem is not None:
            self.notes.append(problem)
        for other in self.lock.overlapping(plan.segments):
            if other.uri != entry.uri and disk_problem(self.dest, other) is not None:
                self.notes.append(
                    f"pulling {entry.uri} replaced files that {LOCK_NAME} records for {other.uri}; "
                    f"its entry is now out of date (pull it again)"
                )
        write_lock(self.dest, self.lock)
        return Outcome(entry.uri, "pulled", path=plan.path, files=len(plan.files), size=plan.size)

"""`pull --to DIR`'s algorithm: which skills, held to the locked published index, planned, written, locked.

`check_lock` is `pull --check`: the lock against the server's entries and the disk, and the index.

`Puller.open` reads what is in DIR before anything is connected to (the lock, and whose it is; an
interrupted run's leftovers are repaired first); `plan` reads the listing when one is needed, judges the
server's published index against the locked one (`lock.index_verdict`), selects (`select.py`) and lays out
(`layout.py`) the skills, and writes nothing; `write` fetches and swaps each in (`writer.Mirror`) and keeps
the lock in step; `finish` records a changed selection when nothing was pulled. The caller prints: the
warnings and results are data and plain lines here, never decided on by their text.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.errors import InvalidResponse, MirrorTargetError
from skillwire.core.published_index import PublishedIndex
from skillwire.host.discovery import is_inside_discovery_path
from skillwire.host.mirror.drift import Change, check_disk, check_signatures, lock_changes
from skillwire.host.mirror.layout import Plan, plan_entries
from skillwire.host.mirror.lock import LOCK_NAME, Lock, index_verdict, older_index_line, read_lock, write_lock
from skillwire.host.mirror.select import select_entries
from skillwire.host.mirror.swap import recover_interrupted
from skillwire.host.mirror.writer import Mirror, Outcome
from skillwire.host.trust import TrustedKey


def not_a_directory(path: Path) -> Path | None:
    """The first of `path` and its parents that exists and is not a directory (so `path` cannot be one)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return None if candidate.is_dir() else candidate
    return None


def discovery_warning(path: Path, shown: str) -> str | None:
    root = is_inside_discovery_path(Path(os.path.abspath(path)))
    if root is None:
        return None
    return (
        f"warning: {shown} is inside {root}, where agent hosts discover skills: what is pulled there becomes a "
        "local skill, loaded without its MCP origin or verification (`--for HOST` syncs into a host's folder "
        "with your approval, the trust policy and an ownership record)"
    )


def served_index(listing: Listing, origin: str | None) -> PublishedIndex | None:
    """The published index a listing came from (its `skills/list` `_meta`); `InvalidResponse` for a claim that
    is garbage (one line: `Listing.index_problem` quotes nothing the server sent)."""
    if listing.index_problem is not None:
        raise InvalidResponse(f"skills/list: {listing.index_problem}", origin=origin)
    return listing.index


def older_line(lock: Lock, served: PublishedIndex | None, older: bool, shown_dir: str) -> str | None:
    """The one line naming both indexes when the served one goes back from the one `lock` records (pull and
    pull --check say it alike), else None."""
    if not older or served is None or lock.index is None:
        return None
    return older_index_line(served, lock.index, f"{shown_dir.rstrip('/')}/{LOCK_NAME}")


def existing_lock(dest: Path, shown_dest: str) -> Lock | None:
    """DIR's lock, None when DIR has none; `MirrorTargetError` when DIR cannot be one (under a file), and
    `LockError` when the lock cannot be used."""
    blocked = not_a_directory(dest)
    if blocked is not None:
        raise MirrorTargetError(f"--to {shown_dest}: {blocked} is not a directory")
    return read_lock(dest) if dest.is_dir() else None


@dataclass
class Puller:
    """One `pull --to DIR` run (see the module docstring)."""

    dest: Path
    shown_dest: str  # DIR as messages show it
    refs: Sequence[str]  # the skills named (their SKILL.md URIs, or names); empty: every listed skill
    lock: Lock
    existed: bool  # DIR held a lock before this run
    allow_older: bool = False
    warnings: list[str] = field(default_factory=list)  # lines for before the pull, in order
    outcomes: list[Outcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # lines for after it (`Mirror.notes`)
    refused: str | None = None  # the line naming an older index that was refused: nothing was written
    planned: int = 0
    pulled: int = 0

    @classmethod
    def open(cls, dest: Path, shown_dest: str, origin: str, refs: Sequence[str], *, allow_older: bool) -> Puller:
        """Read DIR before connecting: `MirrorTargetError` (or `LockError`) when it cannot be pulled into from
        `origin`. Repairs what an interrupted pull left (each repair is a warning line)."""
        lock = existing_lock(dest, shown_dest)
        if lock is not None and lock.origin != origin:
            raise MirrorTargetError(
                f"{shown_dest} holds skills pulled from {lock.origin} ({LOCK_NAME}); pull from that server, "
                "or into another directory"
            )
        puller = cls(dest, shown_dest, refs, lock or Lock(origin), lock is not None, allow_older)
        if not refs:
            puller.lock.selection = "all"
        puller.warnings += [f"note: {note}" for note in recover_interrupted(dest)]
        warning = discovery_warning(dest, shown_dest)
        if warning:
            puller.warnings.append(warning)
        return puller

    async def plan(self, client: SkillsClient) -> list[Plan]:
        """The skills to write, in order; writes nothing. Empty when there is nothing to write or the server's
        index goes back from the locked one (`refused`)."""
        listing = None
        if not self.refs or self.lock.index is not None:
            listing = await client.list_skills()
            served = served_index(listing, client.origin)
            verdict = index_verdict(self.lock.index, served, allow_older=self.allow_older, now=time.time())
            if verdict.dropped is not None:
                self.warnings.append(f"note: {self.shown_dest.rstrip('/')}/{LOCK_NAME}: {verdict.dropped}")
            line = older_line(self.lock, served, verdict.older, self.shown_dest)
            if line is not None:
                if verdict.refused:
                    self.refused = line
                    return []
                self.warnings.append(f"note: {line}; pulling it, as --allow-older asks")
            self.lock.index = verdict.record
        selection = await select_entries(client, self.refs, listing)
        self.outcomes += [Outcome(u.what, "failed", error=u.reason) for u in selection.failed]
        if selection.stopped_early:
            self.warnings.append(f"warning: the listing may be incomplete ({selection.stopped_early})")
        if selection.listed_nothing:
            self.warnings.append("warning: the server listed no skills (name one by URI to pull it with skills/get)")
        plans: list[Plan] = []
        outer = discovery_warning(self.dest, self.shown_dest)
        warned = {outer} if outer else set()
        for planned in plan_entries(selection.entries):
            if not isinstance(planned, Plan):
                skip = planned.dynamic and not self.refs  # pulling everything: a dynamic skill is skipped
                self.outcomes.append(Outcome(planned.entry.uri, "skipped" if skip else "failed", error=planned.reason))
                continue
            inner = discovery_warning(self.dest.joinpath(*planned.segments), f"{self.shown_dest}/{planned.path}")
            if inner and not outer and inner not in warned:
                warned.add(inner)
                self.warnings.append(inner)
            plans.append(planned)
        self.planned = len(plans)
        return plans

    async def write(
        self,
        client: SkillsClient,
        plans: list[Plan],
        *,
        advance: Callable[[int], None] = lambda steps: None,
        describe: Callable[[str], None] = lambda name: None,
        pulled: Callable[[Outcome], None] = lambda outcome: None,
    ) -> None:
        """Write each planned skill (`advance`: files done, `describe`: skill begun, `pulled`: each skill
        written, as it is); the lock is written after each one."""
        try:
            self.dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # named by the path: the server has nothing to do with it
            raise MirrorTargetError(f"cannot create --to {self.shown_dest}: {exc.strerror or exc}") from None
        mirror = Mirror(client, self.dest, self.shown_dest, self.lock, advance=advance, describe=describe)
        try:
            for plan in plans:
                outcome = await mirror.pull(plan)
                self.outcomes.append(outcome)
                if outcome.status == "pulled":
                    self.pulled += 1
                    pulled(outcome)
        finally:
            self.notes += mirror.notes

    def finish(self) -> None:
        """After a run that pulled nothing into an existing DIR: the lock still records a changed selection."""
        if self.existed and not any(o.status == "pulled" for o in self.outcomes) and self.dest.is_dir():
            write_lock(self.dest, self.lock)


@dataclass
class LockCheck:
    """`pull --check`: each locked skill against the server and the disk, and the published index."""

    changes: list[Change]
    served: PublishedIndex | None  # the index the server names, if any
    older: bool  # it goes back from the locked one
    older_line: str | None  # the line saying so
    notes: list[str]  # about the disk (an interrupted pull's leftovers)

    @property
    def differs(self) -> bool:
        return self.older or any(c.status != "in step" for c in self.changes)


async def check_lock(
    client: SkillsClient, dest: Path, shown_dest: str, lock: Lock, keys: tuple[TrustedKey, ...], origin: str | None
) -> LockCheck:
    """Compare DIR's lock with the server (entries only, no file is read from it) and with the disk, and judge
    locked signatures as a host labelling the server `origin` would, with the trusted `keys`."""
    changes = await lock_changes(client, lock)
    # With selection `all` this listing is the one lock_changes just read (reused for the server's ttlMs).
    served = served_index(await client.list_skills(), client.origin) if lock.index is not None else None
    older = index_verdict(lock.index, served, allow_older=False, now=time.time()).older
    notes = check_disk(dest, shown_dest, lock, changes)  # the lock is only honest if the disk agrees
    check_signatures(dest, lock, changes, keys, origin)
    return LockCheck(changes, served, older, older_line(lock, served, older, shown_dest), notes)

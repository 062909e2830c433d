"""`skillwire pull [URI ...] --to DIR SERVER`: a verified copy of skills on disk, with a `skills.lock`.

For each chosen skill (every listed skill when none is named): its entry (from the listing, or
`skills/get` for a named one), then SKILL.md, checked for size, digest and frontmatter field by field
before anything else of the skill is read, then each supporting file, checked for size and digest.
Verified files go into a temporary directory inside DIR; only when the whole skill verified does it
replace `DIR/<skill-path>` (rename the old copy aside, rename the new one in, delete the old one).
The old copy goes aside into `DIR/.skillwire-old-*` with a synced note of where it belongs, so a crash
between the two renames is repaired by the next `pull` (the old copy is put back before anything
else), which also deletes every other `.skillwire-*` leftover of an interrupted run. A skill that
fails is reported and skipped, nothing of it is written, and the others are still pulled; the exit
code is then 1.

Layout: `DIR/<skill-path segments, decoded>/<file path>`, so `skill://acme/billing/refunds/SKILL.md`
lands in `DIR/acme/billing/refunds/SKILL.md`, and `skillwire serve DIR` publishes the same URIs
again (for the `skill://` scheme). The lock is `DIR/skills.lock` (see `skillwire.cli.lockfile`).

Refused, per skill: dynamic skills (no digests: nothing to verify or lock; skipped with a warning
when pulling everything, an error when named), skills over the limits, paths that would leave DIR
(through a symlink too), and replacing a directory holding files the lock does not account for.

`pull --check --to DIR SERVER` reads no file from the server: it compares the lock with the server's
entries and prints what changed (files added, removed, changed; skills removed or new), and checks
the copies on disk against the lock (a skill whose folder or files are missing or altered, e.g. by an
interrupted pull, is `damaged`), exit code 1 when anything differs. It writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from rich.progress import Progress

from skillwire.cli.args import UsageError, add_debug_argument, add_timeout_argument, server_target
from skillwire.cli.connect import run_client
from skillwire.cli.fetch import fetch_skill_md, fetch_verified
from skillwire.cli.lockfile import (
    LOCK_NAME,
    TEMP_PREFIX,
    Lock,
    LockedSkill,
    locked_files,
    read_lock,
    umask,
    write_lock,
)
from skillwire.cli.output import Output, printable, report_failure
from skillwire.cli.resolve import is_uri, resolve_entry, skill_md_uri
from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ServerError, SkillNotFound, SkillwireError, VerificationFailed
from skillwire.core.manifest import ManifestFile, human_size
from skillwire.core.signing import SIGNATURE_META_KEY, verify_entry
from skillwire.core.skill_md import parse_skill_md
from skillwire.core.uri import SKILL_MD
from skillwire.core.verify import file_mismatches
from skillwire.host.discovery import is_inside_discovery_path
from skillwire.host.trust import TrustStore

MAX_NAME_BYTES = 255  # a file name on the common file systems


class _IntermixedParser(argparse.ArgumentParser):
    """Lets options sit between the URIs and the server: `pull URI... --to DIR URL`."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "pull",
        usage=(
            "%(prog)s [URI ...] --to DIR [--check] [--header NAME:VALUE] [--timeout SECONDS] [--json] [--quiet] "
            "(URL | -- COMMAND ARGS)"
        ),
        help="copy skills to a directory, verified, with a skills.lock",
        description=(
            "Copy skills from a server into DIR, verifying every file against the skill's manifest "
            "(size, digest, and SKILL.md's frontmatter) before it is written, and record origin and digests "
            "in DIR/skills.lock. With no URI, every listed skill is pulled. --check compares the lock with "
            "the server instead (exit code 1 when anything changed)."
        ),
    )
    p.__class__ = _IntermixedParser
    p.add_argument(
        "items",
        nargs="*",
        metavar="URI",
        help="skills to pull (SKILL.md or root URIs, or unique names; default: all), then the server's URL "
        "(or `-- COMMAND ARGS` at the very end)",
    )
    p.add_argument("--to", required=True, metavar="DIR", type=Path, help="directory to write into")
    p.add_argument("--check", action="store_true", help="compare DIR/skills.lock with the server; write nothing")
    p.add_argument("--header", action="append", default=[], metavar="NAME:VALUE", help="HTTP header (repeatable)")
    add_timeout_argument(p)
    p.add_argument("--json", action="store_true", help="machine-readable JSON on stdout")
    p.add_argument("--quiet", "-q", action="store_true", help="print only errors")
    add_debug_argument(p)
    p.set_defaults(run=run)


def split_items(args: argparse.Namespace) -> list[str]:
    """The named skills; sets `args.server` from the last item unless the server is `-- COMMAND`."""
    items = list(args.items)
    args.server = None
    if not getattr(args, "stdio_command", None) and items and items[-1].startswith(("http://", "https://")):
        args.server = items.pop()
    return items


# -- planning ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    entry: SkillEntry
    segments: tuple[str, ...]
    files: tuple[tuple[str, ManifestFile], ...]  # (relative path, manifest item), SKILL.md first

    @property
    def path(self) -> str:
        return "/".join(self.segments)

    @property
    def size(self) -> int:
        return sum(item.size for _, item in self.files)


@dataclass
class Outcome:
    uri: str
    status: Literal["pulled", "failed", "skipped"]
    path: str | None = None
    files: int = 0
    size: int = 0
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "status": self.status,
            "path": self.path,
            "files": self.files,
            "size": self.size,
            "error": self.error,
        }


def _name_problem(segment: str) -> str | None:
    if len(segment.encode("utf-8")) > MAX_NAME_BYTES:
        return f"the name {segment[:40]!r}... is longer than {MAX_NAME_BYTES} bytes, too long for a file system"
    return None


def plan_skill(entry: SkillEntry) -> Plan | str:
    """Where the skill's files go (relative to DIR), or why they cannot be written."""
    segments = entry.path.segments
    if segments[0] == LOCK_NAME or segments[0].startswith(TEMP_PREFIX):
        return f"its path {segments[0]!r} clashes with {LOCK_NAME} or skillwire's temporary files in DIR"
    for segment in segments:
        problem = _name_problem(segment)
        if problem:
            return problem
    files: list[tuple[str, ManifestFile]] = []
    for item in entry.files:
        relative = entry.path.file_path_of(item.uri)
        if relative is None:  # `SkillEntry.from_wire` refuses this already
            return f"{item.uri} is not inside the skill"
        for part in relative.split("/"):
            problem = _name_problem(part)
            if problem:
                return problem
        files.append((relative, item))
    paths = {relative for relative, _ in files}
    folded: dict[str, str] = {}
    for relative in sorted(paths):
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if "/".join(parts[:depth]) in paths:
                return f"{'/'.join(parts[:depth])!r} is listed as a file and also holds {relative!r}"
        other = folded.setdefault(relative.casefold(), relative)
        if other != relative:
            return f"{other!r} and {relative!r} differ only in case, so they collide on many file systems"
    files.sort(key=lambda pair: (pair[0] != SKILL_MD, pair[0]))
    return Plan(entry, segments, tuple(files))


def _within(path: Path, root: Path) -> bool:
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _unowned_files(target: Path, dest: Path, lock: Lock) -> list[str]:
    """Files (or links) under `target` that no locked skill accounts for."""
    found: list[str] = []
    for directory, dirs, names in os.walk(target, followlinks=False):
        for name in dirs:
            path = Path(directory) / name
            if path.is_symlink():
                found.append(path.relative_to(dest).as_posix())
        for name in names:
            path = Path(directory) / name
            relative = path.relative_to(dest).as_posix()
            if path.is_symlink() or not path.is_file() or not lock.owns(relative):
                found.append(relative)
    return sorted(found)


# -- writing -------------------------------------------------------------------------------------------------------


def _write_file(root: Path, relative: str, data: bytes) -> None:
    path = root.joinpath(*relative.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as stream:  # "x": a name that collides (case-insensitive file systems) fails loudly
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


ASIDE_PREFIX = TEMP_PREFIX + "old-"  # DIR/.skillwire-old-XXXX/{target,old}: a copy being replaced
STAGING_PREFIX = TEMP_PREFIX + "pull-"  # DIR/.skillwire-pull-XXXX/: a skill being downloaded
ASIDE_TARGET = "target"  # inside an aside directory: the folder (relative to DIR, "/"-separated) moved aside


def _crash_point(name: str) -> None:
    """For the crash tests only: die here, as a power cut would, when SKILLWIRE_TEST_CRASH_AT names this point."""
    if os.environ.get("SKILLWIRE_TEST_CRASH_AT") == name:
        os._exit(75)


def _fsync_directory(path: Path) -> None:
    """Make renames inside `path` durable (best effort: not every file system can fsync a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _swap_in(staged: Path, target: Path, dest: Path) -> None:
    """Put the staged directory at `target`, replacing what was there with two renames.

    Between the renames `target` does not exist. So the old copy is moved into an aside directory that
    first records, in a synced file, where it came from: a crash in that window leaves a journal that
    the next `pull` (`recover_interrupted`) uses to put the old copy back, and that `pull --check` reports.
    """
    if not _within(target.parent, dest):
        raise OSError(f"{target.parent} leads outside {dest} (through a symlink)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(target):
        os.rename(staged, target)
        _fsync_directory(target.parent)
        return
    aside_dir = Path(tempfile.mkdtemp(prefix=ASIDE_PREFIX, dir=dest))
    _write_file(aside_dir, ASIDE_TARGET, target.relative_to(dest).as_posix().encode("utf-8"))
    _fsync_directory(aside_dir)
    aside = aside_dir / "old"
    os.rename(target, aside)
    _crash_point("between-renames")
    try:
        os.rename(staged, target)
    except BaseException:
        os.rename(aside, target)
        raise
    _fsync_directory(target.parent)
    shutil.rmtree(aside_dir, ignore_errors=True)


@dataclass(frozen=True)
class Interrupted:
    """What an interrupted pull left in DIR: copies moved aside (by the folder they belong at) and debris."""

    aside: dict[str, Path]  # relative folder -> the aside directory holding its previous copy as `old`
    debris: list[Path]  # staging directories, finished asides, temporary lock files


def find_interrupted(dest: Path) -> Interrupted:
    aside: dict[str, Path] = {}
    debris: list[Path] = []
    if not dest.is_dir():
        return Interrupted(aside, debris)
    for child in sorted(dest.iterdir()):
        if not child.name.startswith(TEMP_PREFIX):
            continue
        if child.name.startswith(ASIDE_PREFIX) and child.is_dir() and not child.is_symlink():
            try:
                relative = (child / ASIDE_TARGET).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                relative = ""
            parts = relative.split("/")
            valid = bool(relative) and all(p not in ("", ".", "..") for p in parts)
            if valid and (child / "old").is_dir() and not (child / "old").is_symlink():
                aside[relative] = child
                continue
        debris.append(child)
    return Interrupted(aside, debris)


def recover_interrupted(dest: Path) -> list[str]:
    """Repair what an interrupted pull left: put back every copy moved aside whose folder is missing, then
    delete the debris. Returns one note per folder put back."""
    found = find_interrupted(dest)
    notes: list[str] = []
    for relative, aside_dir in found.aside.items():
        target = dest.joinpath(*relative.split("/"))
        if not os.path.lexists(target) and _within(target.parent, dest):
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(aside_dir / "old", target)
            notes.append(f"restored {relative} (an earlier pull was interrupted while replacing it)")
        shutil.rmtree(aside_dir, ignore_errors=True)
    for path in found.debris:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    if notes or found.debris:
        _fsync_directory(dest)
    return notes


def _staging_directory(dest: Path) -> Path:
    """A fresh hidden directory inside DIR (same file system, so the final rename is atomic)."""
    staged = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=dest))
    staged.chmod(0o777 & ~umask())  # mkdtemp makes 0700; the skill directory is an ordinary one
    return staged


def _make_directory(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def _disk_matches(dest: Path, skill: LockedSkill) -> bool:
    root = dest.joinpath(*skill.segments)
    for item in skill.files:
        path = root.joinpath(*item.path.split("/"))
        try:
            data = path.read_bytes()
        except OSError:
            return False
        if file_mismatches(item.uri, item.size, item.digest, data):
            return False
    return True


@dataclass
class Puller:
    client: SkillsClient
    dest: Path
    shown_dest: str
    lock: Lock
    progress: Progress | None
    notes: list[str] = field(default_factory=list)

    def _advance(self, steps: int = 1) -> None:
        if self.progress is not None:
            self.progress.advance(self.progress.task_ids[0], steps)

    def _target_problem(self, plan: Plan) -> str | None:
        """Why the skill's directory cannot be (re)placed: outside DIR, or holding files not from a pull."""
        target = self.dest.joinpath(*plan.segments)
        shown = f"{self.shown_dest.rstrip('/')}/{plan.path}"
        if not _within(target, self.dest):
            return f"{shown} leads outside {self.shown_dest} (through a symlink)"
        if not os.path.lexists(target):
            return None
        unowned = [] if target.is_dir() and not target.is_symlink() else [plan.path]
        unowned = unowned or _unowned_files(target, self.dest, self.lock)
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
        if self.progress is not None:
            self.progress.update(self.progress.task_ids[0], description=f"pulling {printable(entry.name)}")
        problem = self._target_problem(plan)
        if problem is not None:
            self._advance(len(plan.files))
            return Outcome(entry.uri, "failed", error=problem)
        staged = _staging_directory(self.dest)
        done = 0
        try:
            for relative, item in plan.files:
                if relative == SKILL_MD and item.uri == entry.uri:
                    data = await fetch_skill_md(self.client, entry)  # size, digest, frontmatter: before anything else
                else:
                    data = await fetch_verified(self.client, item)
                _write_file(staged, relative, data)
                _crash_point("staging")
                done += 1
                self._advance()
            _swap_in(staged, target, self.dest)
        except (SkillwireError, OSError) as exc:
            self._advance(len(plan.files) - done)
            reason = printable(str(exc))
            if isinstance(exc, VerificationFailed):
                reason = f"{reason}; nothing of this skill was written"
            elif isinstance(exc, OSError):
                reason = f"cannot write {shown}: {reason}"
            return Outcome(entry.uri, "failed", error=reason)
        finally:
            shutil.rmtree(staged, ignore_errors=True)
        signature = (entry.meta or {}).get(SIGNATURE_META_KEY)
        self.lock.skills[entry.uri] = LockedSkill(
            entry.uri,
            entry.name,
            plan.path,
            locked_files((relative, item.uri, item.digest, item.size) for relative, item in plan.files),
            dict(signature) if isinstance(signature, dict) else None,
        )
        for other in self.lock.overlapping(plan.segments):
            if other.uri != entry.uri and not _disk_matches(self.dest, other):
                self.notes.append(
                    f"pulling {entry.uri} replaced files that {LOCK_NAME} records for {other.uri}; "
                    f"its entry is now out of date (pull it again)"
                )
        write_lock(self.dest, self.lock)
        return Outcome(entry.uri, "pulled", path=plan.path, files=len(plan.files), size=plan.size)


# -- pull -----------------------------------------------------------------------------------------------------------


def _discovery_warning(path: Path, shown: str) -> str | None:
    root = is_inside_discovery_path(Path(os.path.abspath(path)))
    if root is None:
        return None
    return (
        f"warning: {shown} is inside {root}, where agent hosts discover skills: what is pulled there becomes a "
        "local skill, loaded without its MCP origin or verification"
    )


async def _choose(client: SkillsClient, refs: list[str]) -> tuple[list[SkillEntry], list[Outcome], list[str]]:
    """The entries to pull, the ones that failed before planning, and warnings."""
    entries: list[SkillEntry] = []
    failed: list[Outcome] = []
    warnings: list[str] = []
    if refs:
        for ref in refs:
            try:
                entries.append(await resolve_entry(client, ref))
            except (SkillNotFound, ServerError) as exc:
                failed.append(Outcome(skill_md_uri(ref) if is_uri(ref) else ref, "failed", error=printable(str(exc))))
    else:
        listing = await client.list_skills()
        entries = list(listing.entries)
        for problem in listing.problems:
            where = problem.uri or f"page {problem.page}, entry {problem.index}"
            failed.append(Outcome(where, "failed", error=f"malformed entry: {printable(problem.reason)}"))
        if listing.stopped_early:
            warnings.append(f"warning: the listing may be incomplete ({listing.stopped_early})")
        if not entries and not listing.problems:
            warnings.append("warning: the server listed no skills (name one by URI to pull it with skills/get)")
    unique: dict[str, SkillEntry] = {}
    for entry in entries:
        unique.setdefault(entry.uri, entry)
    return list(unique.values()), failed, warnings


@dataclass
class _PullState:
    planned: int = 0
    pulled: int = 0
    interrupted: bool = False


def _can_handle_signals() -> bool:
    """Signal handlers can only be installed from the main thread (tests may call `main` elsewhere)."""
    return threading.current_thread() is threading.main_thread()


def pull(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    target = server_target(args)
    dest: Path = args.to.expanduser()
    shown_dest = str(args.to)
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"--to {shown_dest} is not a directory")
    for ref in refs:
        if is_uri(ref):
            skill_md_uri(ref)
    lock = read_lock(dest) if dest.is_dir() else None
    if lock is not None and lock.origin != target.label:
        raise UsageError(
            f"{shown_dest} holds skills pulled from {lock.origin} ({LOCK_NAME}); pull from that server, "
            "or into another directory"
        )
    existed = lock is not None
    lock = lock or Lock(target.label)
    if not refs:
        lock.selection = "all"
    for note in recover_interrupted(dest):
        out.warn(f"note: {printable(note)}")
    warning = _discovery_warning(dest, shown_dest)
    if warning:
        out.warn(warning)

    outcomes: list[Outcome] = []
    puller_notes: list[str] = []

    async def body(client: SkillsClient) -> None:
        entries, failed, warnings = await _choose(client, refs)
        outcomes.extend(failed)
        for text in warnings:
            out.warn(text)
        plans: list[Plan] = []
        seen_dirs: dict[tuple[str, ...], str] = {}
        warned_roots = {warning} if warning else set()
        for entry in entries:
            if entry.is_dynamic:
                reason = "dynamic skill: the server publishes no digests, so nothing can be verified or locked"
                outcomes.append(Outcome(entry.uri, "failed" if refs else "skipped", error=reason))
                continue
            limits = entry.limit_problem()
            planned = f"the skill {limits}" if limits else plan_skill(entry)
            if isinstance(planned, str):
                outcomes.append(Outcome(entry.uri, "failed", error=printable(planned)))
                continue
            other = seen_dirs.setdefault(planned.segments, entry.uri)
            if other != entry.uri:
                outcomes.append(
                    Outcome(entry.uri, "failed", error=f"it would be written to the same directory as {other}")
                )
                continue
            inner_warning = _discovery_warning(dest.joinpath(*planned.segments), f"{shown_dest}/{planned.path}")
            if inner_warning and not warning and inner_warning not in warned_roots:
                warned_roots.add(inner_warning)
                out.warn(inner_warning)
            plans.append(planned)
        if not plans:
            return
        state.planned = len(plans)
        _make_directory(dest)
        progress = out.progress("pulling", sum(len(p.files) for p in plans))
        # In a pipe (no progress bar) one line per skill on stderr, so a log shows how far it got.
        log_lines = not out.err_console.is_terminal and not out.quiet
        with progress if progress is not None else contextlib.nullcontext():
            puller = Puller(client, dest, shown_dest, lock, progress)
            try:
                for number, plan in enumerate(plans, 1):
                    outcome = await puller.pull(plan)
                    outcomes.append(outcome)
                    if outcome.status == "pulled":
                        state.pulled += 1
                    if log_lines:
                        out.err_console.print(
                            f"[{number}/{len(plans)}] {outcome.status} {printable(outcome.uri)}",
                            markup=False,
                            highlight=False,
                        )
            finally:
                puller_notes.extend(puller.notes)

    async def interruptible(client: SkillsClient) -> None:
        # Ctrl-C cancels the pull at its next await: a skill being fetched is dropped with its
        # staging directory, while a skill being swapped in (no await between the renames and the
        # lock write) completes, so the folder and skills.lock always agree. A second Ctrl-C is the
        # ordinary KeyboardInterrupt.
        async with anyio.create_task_group() as group:

            async def on_interrupt() -> None:
                with anyio.open_signal_receiver(signal.SIGINT) as signals:
                    async for _ in signals:
                        state.interrupted = True
                        group.cancel_scope.cancel()
                        return

            if _can_handle_signals():
                group.start_soon(on_interrupt)
            await body(client)
            group.cancel_scope.cancel()

    state = _PullState()
    try:
        run_client(target, interruptible)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    except KeyboardInterrupt:
        state.interrupted = True
    if state.interrupted:
        if state.planned:
            out.error(f"skillwire: interrupted: {state.pulled} of {state.planned} skills pulled; run again to finish")
        else:
            out.error("skillwire: interrupted before any skill was pulled; nothing was written")
        return 130
    if existed and not any(o.status == "pulled" for o in outcomes) and dest.is_dir():
        write_lock(dest, lock)  # the selection may have changed
    for note in puller_notes:
        out.warn(f"warning: {printable(note)}")
    return report(out, outcomes, shown_dest, target.label)


def report(out: Output, outcomes: list[Outcome], shown_dest: str, origin: str) -> int:
    pulled = [o for o in outcomes if o.status == "pulled"]
    failed = [o for o in outcomes if o.status == "failed"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    lock_file = f"{shown_dest.rstrip('/')}/{LOCK_NAME}"
    if out.json_mode:
        data = {
            "origin": origin,
            "to": shown_dest,
            "lock": lock_file if pulled else None,
            "ok": not failed,
            "skills": [o.to_json() for o in outcomes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    for o in failed:
        out.error(f"skillwire: failed {printable(o.uri)}: {o.error}")
    if out.json_mode:
        return 1 if failed else 0
    for o in skipped:
        out.warn(f"skipped {printable(o.uri)}: {o.error}")
    if not out.quiet:
        lines = [
            f"pulled {printable(o.uri)} -> {shown_dest.rstrip('/')}/{printable(o.path or '')} "
            f"({o.files} file{'' if o.files == 1 else 's'}, {human_size(o.size)})"
            for o in pulled
        ]
        total = len(outcomes)
        summary = f"pulled {len(pulled)} of {total} skills into {shown_dest}"
        if pulled:
            summary += f" (lock: {lock_file})"
        extra = [f"{len(failed)} failed"] if failed else []
        extra += [f"{len(skipped)} skipped"] if skipped else []
        if extra:
            summary += "; " + ", ".join(extra)
        out.write("\n".join([*lines, summary]) + "\n")
    return 1 if failed else 0


# -- check ---------------------------------------------------------------------------------------------------------


@dataclass
class Change:
    uri: str
    status: Literal["unchanged", "changed", "removed", "new", "invalid", "damaged"]
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "status": self.status,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "note": self.note,
        }


def compare(locked: LockedSkill, entry: SkillEntry) -> Change:
    if entry.is_dynamic:
        return Change(locked.uri, "changed", note="the server now publishes it as dynamic (no manifest)")
    before = {f.path: (f.digest, f.size) for f in locked.files}
    after: dict[str, tuple[str, int]] = {}
    for item in entry.files:
        after[entry.path.file_path_of(item.uri) or item.uri] = (item.digest, item.size)
    change = Change(
        locked.uri,
        "unchanged",
        added=sorted(after.keys() - before.keys()),
        removed=sorted(before.keys() - after.keys()),
        changed=sorted(p for p in before.keys() & after.keys() if before[p] != after[p]),
    )
    if change.added or change.removed or change.changed:
        change.status = "changed"
    return change


async def _changes(client: SkillsClient, lock: Lock) -> list[Change]:
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
                changes.append(Change(uri, "removed", note="the server no longer serves it"))
                continue
            except ServerError as exc:
                changes.append(Change(uri, "invalid", note=printable(str(exc))))
                continue
        changes.append(compare(lock.skills[uri], entry))
    for uri in sorted(listed.keys() - lock.skills.keys()):
        changes.append(Change(uri, "new", note="listed by the server, not pulled"))
    return changes


def _disk_problem(dest: Path, skill: LockedSkill) -> str | None:
    """How the copy of a locked skill on disk differs from `skills.lock`, or None when every file matches."""
    root = dest.joinpath(*skill.segments)
    if not root.is_dir() or root.is_symlink():
        return "is missing"
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

    def some(paths: list[str]) -> str:
        return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")

    parts = [f"lacks {some(missing)}"] if missing else []
    parts += [f"has other bytes in {some(differ)}"] if differ else []
    return "; ".join(parts) or None


def check_disk(dest: Path, shown_dest: str, lock: Lock, changes: list[Change]) -> list[str]:
    """Mark every skill whose copy on disk no longer matches the lock as `damaged`; warnings about debris."""
    interrupted = find_interrupted(dest)
    for change in changes:
        locked = lock.skills.get(change.uri)
        if locked is None or change.status not in ("unchanged", "changed"):
            continue
        problem = _disk_problem(dest, locked)
        if problem is None:
            continue
        remedy = (
            "an interrupted pull moved its previous copy aside; `skillwire pull` puts it back"
            if locked.path in interrupted.aside
            else "`skillwire pull` writes it again"
        )
        note = f"{shown_dest.rstrip('/')}/{locked.path} {problem}; {remedy}"
        change.status = "damaged"
        change.note = note + (f"; {change.note}" if change.note else "")
    leftover = len(interrupted.debris) + len(interrupted.aside)
    if not leftover:
        return []
    return [f"note: {leftover} temporary {TEMP_PREFIX}* entries in {shown_dest} (the next pull removes them)"]


def check_signatures(dest: Path, lock: Lock, changes: list[Change]) -> None:
    """For each locked skill that carried a publisher signature, verify it over the locked manifest and the
    SKILL.md on disk (whose bytes `check_disk` already held to the lock); name the signer, or mark the
    copy `invalid` when the signature no longer verifies. Whether the signer is trusted is said too, from
    the user's trust file (`skillwire trust`)."""
    try:
        trusted = {key.fingerprint: key.name for key in TrustStore().trusted_keys()}
    except ValueError:
        trusted = {}
    for change in changes:
        locked = lock.skills.get(change.uri)
        if locked is None or locked.signature is None or change.status == "damaged":
            continue
        files = tuple(ManifestFile(f.uri, f.digest, f.size) for f in locked.files)
        note: str
        try:
            document = parse_skill_md((dest / locked.path / SKILL_MD).read_bytes())
            entry = SkillEntry(locked.uri, document.frontmatter, files, meta={SIGNATURE_META_KEY: locked.signature})
            signer = verify_entry(entry)
        except (OSError, SkillwireError) as exc:
            change.status = "invalid"
            note = f"the publisher signature in {LOCK_NAME} does not verify: {printable(str(exc))}"
        else:
            name = trusted.get(signer.fingerprint)
            note = (
                f"signed by {name} ({signer.fingerprint})"
                if name
                else f"signed by {signer.fingerprint} (not in your trust file)"
            )
        change.note = note + (f"; {change.note}" if change.note else "")


def check(args: argparse.Namespace, refs: list[str], out: Output) -> int:
    if refs:
        raise UsageError("--check compares every skill in skills.lock; drop the URIs")
    target = server_target(args)
    dest: Path = args.to.expanduser()
    lock = read_lock(dest) if dest.is_dir() else None
    if lock is None:
        raise UsageError(f"no {LOCK_NAME} in {args.to}; run `skillwire pull --to {args.to} SERVER` first")
    if lock.origin != target.label:
        out.warn(f"note: {args.to}/{LOCK_NAME} was pulled from {lock.origin}; comparing with {target.label}")

    async def body(client: SkillsClient) -> list[Change]:
        return await _changes(client, lock)

    try:
        changes = run_client(target, body)
    except SkillwireError as exc:
        return report_failure(out, args, exc)
    for note in check_disk(dest, str(args.to), lock, changes):  # the lock is only honest if the disk agrees
        out.warn(note)
    check_signatures(dest, lock, changes)
    differ = [c for c in changes if c.status != "unchanged"]
    if out.json_mode:
        data = {
            "origin": target.label,
            "lock_origin": lock.origin,
            "to": str(args.to),
            "changed": bool(differ),
            "skills": [c.to_json() for c in changes],
        }
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    elif not out.quiet:
        out.write("\n".join(check_lines(changes, len(lock.skills))) + "\n")
    return 1 if differ else 0


def check_lines(changes: list[Change], locked: int) -> list[str]:
    lines: list[str] = []
    for c in changes:
        head = f"{c.status:<9} {printable(c.uri)}"
        lines.append(head + (f"  ({c.note})" if c.note else ""))
        lines += [f"  added    {printable(p)}" for p in c.added]
        lines += [f"  removed  {printable(p)}" for p in c.removed]
        lines += [f"  changed  {printable(p)}" for p in c.changed]
    differ = sum(1 for c in changes if c.status != "unchanged")
    if differ:
        lines.append(f"{differ} of {len(changes)} skills differ from {LOCK_NAME}")
    else:
        lines.append(f"up to date: all {locked} skills in {LOCK_NAME} match the server and the disk")
    return lines


def run(args: argparse.Namespace) -> int:
    refs = split_items(args)
    out = Output(quiet=args.quiet, json_mode=args.json)
    if args.check:
        return check(args, refs, out)
    return pull(args, refs, out)

"""Crash-safe replacement of a skill folder inside a mirror directory, and the repair after a crash.

A skill is downloaded into a staging directory inside the mirror (same file system, so the final rename
is atomic); only when every file verified does it replace the folder: rename the old copy aside, rename
the new one in, delete the old one. Between the two renames the folder does not exist, so the old copy
goes into `DIR/.skillwire-old-*` beside a synced note of where it belongs: a crash in that window leaves
a journal that the next run (`recover_interrupted`, before anything else) uses to put the old copy back,
and which a check reports (`find_interrupted`). Every other `.skillwire-*` entry is debris of an
interrupted run and is deleted by the same repair. Removing a folder (`remove_folder`) renames it into
debris first, so a crash never leaves half a skill where a host reads skills.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skillwire.host.mirror.lock import TEMP_PREFIX, umask

ASIDE_PREFIX = TEMP_PREFIX + "old-"  # DIR/.skillwire-old-XXXX/{target,old}: a copy being replaced
STAGING_PREFIX = TEMP_PREFIX + "pull-"  # DIR/.skillwire-pull-XXXX/: a skill being downloaded
GONE_PREFIX = TEMP_PREFIX + "gone-"  # DIR/.skillwire-gone-XXXX/: a folder being removed (debris at once)
ASIDE_TARGET = "target"  # inside an aside directory: the folder (relative to DIR, "/"-separated) moved aside


def crash_point(name: str) -> None:
    """For the crash tests only: die here, as a power cut would, when SKILLWIRE_TEST_CRASH_AT names this point."""
    if os.environ.get("SKILLWIRE_TEST_CRASH_AT") == name:
        os._exit(75)


def within(path: Path, root: Path) -> bool:
    """True when `path`, symlinks resolved, is `root` or lies inside it."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def write_file(root: Path, relative: str, data: bytes) -> None:
    path = root.joinpath(*relative.split("/"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as stream:  # "x": a name that collides (case-insensitive file systems) fails loudly
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def carry_over(old: Path, staged: Path, relatives: list[str]) -> None:
    """Copy the person's entries (`relatives`, `/`-separated, from `drift.unrecorded_files`) from the folder
    being replaced into its staged copy, so the swap keeps them: a file with its bytes and times, a link as
    the link (never followed). `OSError` for anything else (a socket, a FIFO): it cannot be carried."""
    for relative in relatives:
        source = old.joinpath(*relative.split("/"))
        into = staged.joinpath(*relative.split("/"))
        into.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), into)
        elif source.is_file():
            shutil.copy2(source, into, follow_symlinks=False)
        else:
            raise OSError(f"{relative} is neither a file nor a link, so it cannot be kept in a new copy")


def fsync_directory(path: Path) -> None:
    """Make renames inside `path` durable (best effort: not every file system can fsync a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def staging_directory(dest: Path) -> Path:
    """A fresh hidden directory inside DIR (same file system, so the final rename is atomic)."""
    staged = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=dest))
    staged.chmod(0o777 & ~umask())  # mkdtemp makes 0700; the skill directory is an ordinary one
    return staged


def swap_in(staged: Path, target: Path, dest: Path) -> None:
    """Put the staged directory at `target`, replacing what was there with two renames (module docstring)."""
    if not within(target.parent, dest):
        raise OSError(f"{target.parent} leads outside {dest} (through a symlink)")
    target.parent.mkdir(parents=True, exist_ok=True)
    if not os.path.lexists(target):
        os.rename(staged, target)
        fsync_directory(target.parent)
        return
    aside_dir = Path(tempfile.mkdtemp(prefix=ASIDE_PREFIX, dir=dest))
    write_file(aside_dir, ASIDE_TARGET, target.relative_to(dest).as_posix().encode("utf-8"))
    fsync_directory(aside_dir)
    aside = aside_dir / "old"
    os.rename(target, aside)
    crash_point("between-renames")
    try:
        os.rename(staged, target)
    except BaseException:
        os.rename(aside, target)
        raise
    fsync_directory(target.parent)
    shutil.rmtree(aside_dir, ignore_errors=True)


def remove_folder(target: Path, dest: Path) -> None:
    """Remove a skill folder: one rename into debris (so it leaves in one step), then delete the debris."""
    if not within(target.parent, dest):
        raise OSError(f"{target.parent} leads outside {dest} (through a symlink)")
    gone = Path(tempfile.mkdtemp(prefix=GONE_PREFIX, dir=dest))
    os.rename(target, gone / "old")
    fsync_directory(target.parent)
    crash_point("removing")
    shutil.rmtree(gone, ignore_errors=True)


@dataclass(frozen=True)
class Interrupted:
    """What an interrupted run left in DIR: copies moved aside (by the folder they belong at) and debris."""

    aside: dict[str, Path]  # relative folder -> the aside directory holding its previous copy as `old`
    debris: list[Path]  # staging directories, finished asides, removed folders, temporary lock files


def find_interrupted(dest: Path, *, keep: frozenset[str] = frozenset()) -> Interrupted:
    """The leftovers of an interrupted run in `dest`; names in `keep` are records of our own, not debris."""
    aside: dict[str, Path] = {}
    debris: list[Path] = []
    if not dest.is_dir():
        return Interrupted(aside, debris)
    for child in sorted(dest.iterdir()):
        if not child.name.startswith(TEMP_PREFIX) or child.name in keep:
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


def recover_interrupted(dest: Path, *, keep: frozenset[str] = frozenset()) -> list[str]:
    """Repair what an interrupted run left: put back every copy moved aside whose folder is missing, then
    delete the debris. Returns one note per folder put back."""
    found = find_interrupted(dest, keep=keep)
    notes: list[str] = []
    for relative, aside_dir in found.aside.items():
        target = dest.joinpath(*relative.split("/"))
        if not os.path.lexists(target) and within(target.parent, dest):
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
        fsync_directory(dest)
    return notes

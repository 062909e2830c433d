"""Which file-system events wake a catalog's refresh, and how they are batched (`watching`).

On Linux the watcher is inotify armed with change events only (`CHANGE_MASK`: created, deleted,
written, moved, attributes, a watched folder itself deleted or moved). watchfiles (notify 8) also arms
`IN_OPEN` on every folder and drops those events in its own thread, so every open of a served file,
by any process and by the server's own `resources/read`, woke that thread: 60 ms of system CPU per
read of a 20,000-file catalog, and a quarter of a 2,000-skill listing's server CPU while another
process read the catalog (docs/sdk-upstream.md, issue 25). Here a read wakes nothing: the kernel never
queues an event for it. Waiting costs nothing either (the event loop polls the inotify descriptor; no
thread sleeps and wakes every 50 ms as watchfiles' does).

Elsewhere (not Linux), or when inotify cannot be set up (no `inotify_init1`, too many instances, the
watch limit `fs.inotify.max_user_watches` reached, at arming or later), it is watchfiles' `awatch`,
with one log line saying why. Both backends batch alike: a batch is yielded once no new event came
for `_STEP_MS`, or `debounce_ms` after its first event, and paths watchfiles' `DefaultFilter` drops
(`.git`, `__pycache__`, editor swap files, ...) are dropped on both (inotify does not even watch the
folders it names). A batch of None means events were lost (the kernel's queue overflowed): only a
full rescan is right, after the watches were armed afresh.

Symlinked folders are not followed, as the scan does not follow them (`filesystem.py`).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
import struct
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from skillwire.ops.metrics import record_watch_events

if TYPE_CHECKING:
    from watchfiles import DefaultFilter

__all__: list[str] = []  # internal: `SkillCatalog.watch` is the interface

logger = logging.getLogger("skillwire.catalog")
# watchfiles logs every batch of changes at INFO; that is noise in a server's output.
logging.getLogger("watchfiles").setLevel(logging.WARNING)

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
# Everything that changes what a scan would see, nothing a reader causes (IN_OPEN, IN_ACCESS,
# IN_CLOSE_NOWRITE are left out). IN_MODIFY as well as IN_CLOSE_WRITE: a writer that keeps its file
# open (an appender, mmap) is seen before it closes, as watchfiles saw it.
CHANGE_MASK = (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB) | (
    IN_DELETE_SELF | IN_MOVE_SELF
)
_ARM_MASK = CHANGE_MASK | IN_ONLYDIR | IN_DONT_FOLLOW
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of NUL-padded name)
_STEP_MS = 50  # awatch's default step: a batch ends after this long without a new event


class _Unavailable(Exception):
    """inotify cannot watch these folders (the reason is the message): watchfiles watches instead."""


def _libc() -> ctypes.CDLL | None:
    # The C library this process has already loaded (dlopen(NULL)): ctypes.util.find_library would run
    # `ldconfig -p` as a subprocess at every server start. (That is also why inotify_simple and
    # asyncinotify, which call it, are not used: the rest of what they wrap is the three calls below.)
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return libc if hasattr(libc, "inotify_init1") else None


@dataclass
class _Inotify:
    """One inotify instance watching every folder under `roots` (the roots as given, their sub-folders
    joined to them), and the folder each watch descriptor stands for."""

    roots: tuple[str, ...]
    libc: ctypes.CDLL
    fd: int = -1
    folders: dict[int, str] = field(default_factory=dict)
    root_wds: set[int] = field(default_factory=set)

    def open(self) -> None:
        fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            code = ctypes.get_errno()
            raise _Unavailable(f"inotify_init1 failed: {os.strerror(code)}")
        self.fd = fd
        self.folders, self.root_wds = {}, set()
        for root in self.roots:
            wd = self._add(root)
            if wd is not None:
                self.root_wds.add(wd)
                self._arm_below(root)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _add(self, folder: str) -> int | None:
        wd: int = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), _ARM_MASK)
        if wd >= 0:
            self.folders[wd] = folder
            return wd
        code = ctypes.get_errno()
        if code == errno.ENOSPC:
            limit = _read_limit()
            raise _Unavailable(f"the inotify watch limit is reached (fs.inotify.max_user_watches = {limit})")
        if code == errno.ENOMEM:
            raise _Unavailable("inotify_add_watch: out of kernel memory")
        # Gone since it was listed, not a folder any more, or not ours to read: the scan will say so, and
        # its parent's events still come.
        return None

    def _arm_below(self, top: str) -> None:
        """Watch every folder below `top` (already watched): each is watched before it is listed, so a
        folder made meanwhile is either listed here or announced by its parent's IN_CREATE."""
        ignored = _ignored_dirs()
        pending = [top]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if entry.name in ignored or not entry.is_dir(follow_symlinks=False):
                            continue
                        if self._add(entry.path) is not None:
                            pending.append(entry.path)
            except OSError:
                continue  # gone or unreadable: as in `_add`

    def drain(self) -> tuple[list[str], bool]:
        """Read every queued event: the paths they name, and whether only a full rescan is right (the queue
        overflowed, or a root itself was deleted or moved). Folders created
        or moved in are watched (with everything already below them) before this returns."""
        paths: list[str] = []
        rescan = False
        delivered = 0
        ignored = _ignored_dirs()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = os.fsdecode(data[offset : offset + length].rstrip(b"\0"))
                offset += length
                delivered += 1
                if mask & IN_Q_OVERFLOW:
                    rescan = True
                    continue
                folder = self.folders.get(wd)
                if mask & IN_IGNORED:
                    self.folders.pop(wd, None)  # its folder went away (or left the tree); the kernel dropped it
                    continue
                if folder is None:
                    continue  # a watch dropped above, whose events were still queued
                if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                    if wd in self.root_wds:
                        rescan = True  # a root itself went away: only a full rescan can say what is left
                    else:
                        paths.append(folder)
                    continue
                path = os.path.join(folder, name) if name else folder
                paths.append(path)
                if mask & IN_ISDIR:
                    if mask & IN_MOVED_FROM:
                        self._forget_below(path)
                    elif mask & (IN_CREATE | IN_MOVED_TO) and name not in ignored and self._add(path) is not None:
                        self._arm_below(path)
        record_watch_events("inotify", delivered)
        return paths, rescan

    def _forget_below(self, moved: str) -> None:
        """A folder moved away (elsewhere in the tree or out of it): its watches would report under its
        old name, so they are dropped; one moved within the tree is watched again by its IN_MOVED_TO."""
        below = moved + os.sep
        for wd, folder in list(self.folders.items()):
            if folder == moved or folder.startswith(below):
                del self.folders[wd]
                self.libc.inotify_rm_watch(self.fd, wd)


def _read_limit() -> str:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as limit:
            return limit.read().strip()
    except OSError:
        return "unknown"


@functools.cache
def _default_filter() -> DefaultFilter:
    # Imported when a watcher starts, not with the catalog: watchfiles loads its Rust extension.
    from watchfiles import DefaultFilter

    return DefaultFilter()


def _ignored_dirs() -> frozenset[str]:
    return frozenset(_default_filter().ignore_dirs)


def _kept(paths: list[str]) -> list[str]:
    """`paths` in order without repeats, less those watchfiles' DefaultFilter drops (it ignores the kind
    of change; `Change.modified` stands for any)."""
    from watchfiles import Change

    keep = _default_filter()
    return [path for path in dict.fromkeys(paths) if keep(Change.modified, path)]


@asynccontextmanager
async def watching(
    paths: Sequence[str], *, debounce_ms: int, stop_event: anyio.Event | None = None
) -> AsyncIterator[AsyncIterator[list[str] | None]]:
    """Arm a watcher on `paths` (folders, recursively) and yield its batches of changed paths (None: events
    were lost, rescan everything), until `stop_event` is set. Everything changed after this enters is in
    some batch: inotify's watches are in place when it yields, and watchfiles' are in place before the
    batches' first await (the order `SkillCatalog.watch` relies on)."""
    libc = _libc()
    inotify: _Inotify | None = None
    if libc is None:
        reason = "inotify is not available on this system"
    else:
        candidate = _Inotify(tuple(paths), libc)
        try:
            # In a worker thread: a walk of 30,000 folders, and the event loop keeps answering meanwhile.
            await anyio.to_thread.run_sync(candidate.open)
            inotify, reason = candidate, ""
        except _Unavailable as why:
            candidate.close()
            reason = str(why)
    if inotify is None:
        if libc is not None:
            logger.warning("watching the catalog with watchfiles: %s", reason, extra={"event": "watch_fallback"})
        yield _watchfiles_batches(paths, debounce_ms, stop_event)
        return
    try:
        yield _inotify_batches(inotify, paths, debounce_ms, stop_event)
    finally:
        inotify.close()


async def _inotify_batches(
    inotify: _Inotify, paths: Sequence[str], debounce_ms: int, stop_event: anyio.Event | None
) -> AsyncIterator[list[str] | None]:
    while True:
        if await _readable(inotify.fd, None, stop_event) is _STOP:
            return
        try:
            batch, rescan = await anyio.to_thread.run_sync(inotify.drain)
            deadline = time.monotonic() + debounce_ms / 1000
            while (left := deadline - time.monotonic()) > 0:
                ready = await _readable(inotify.fd, min(left, _STEP_MS / 1000), stop_event)
                if ready is _STOP:
                    return
                if ready is _TIMEOUT:
                    break
                more, lost = await anyio.to_thread.run_sync(inotify.drain)
                batch += more
                rescan |= lost
            if rescan:
                # Watches of folders made while events were lost may be missing: armed afresh, then a
                # full rescan sees everything made before (the new watches see everything after).
                inotify.close()
                await anyio.to_thread.run_sync(inotify.open)
                logger.info("the catalog watcher lost events or a root; rescanning everything")
                yield None
                continue
        except _Unavailable as why:
            inotify.close()
            logger.warning("watching the catalog with watchfiles: %s", why, extra={"event": "watch_fallback"})
            yield None  # what the watches missed
            async for changes in _watchfiles_batches(paths, debounce_ms, stop_event):
                yield changes
            return
        if kept := _kept(batch):
            yield kept


_READY, _TIMEOUT, _STOP = object(), object(), object()


async def _readable(fd: int, within: float | None, stop_event: anyio.Event | None) -> object:
    """Wait until `fd` has data (`_READY`), `within` seconds pass (`_TIMEOUT`) or `stop_event` is set."""
    if stop_event is not None and stop_event.is_set():
        return _STOP
    with anyio.move_on_after(within):
        if stop_event is None:
            await anyio.wait_readable(fd)
            return _READY
        async with anyio.create_task_group() as group:

            async def stop() -> None:
                await stop_event.wait()
                group.cancel_scope.cancel()

            group.start_soon(stop)
            await anyio.wait_readable(fd)
            group.cancel_scope.cancel()
            return _READY
        return _STOP
    return _TIMEOUT


async def _watchfiles_batches(
    paths: Sequence[str], debounce_ms: int, stop_event: anyio.Event | None
) -> AsyncIterator[list[str] | None]:
    from watchfiles import awatch

    async for changes in awatch(*paths, debounce=debounce_ms, step=_STEP_MS, stop_event=stop_event, recursive=True):
        record_watch_events("watchfiles", len(changes))
        yield [path for _, path in changes]

"""Opening a file a scan found, so that nothing else is ever opened in its place and nothing blocks.

Between a scan and a read, anything in a served tree can be swapped: a file for a symlink to a file
outside the root, a FIFO, a device or a directory; a skill folder for a symlink to another folder.
Every open therefore uses `O_NOFOLLOW | O_NONBLOCK | O_NOCTTY` (a FIFO opens at once, a terminal
never becomes ours) and checks the *opened descriptor* with `fstat`: it must be a regular file. The
path itself is a scan's resolved path, which holds no symlink, so it is opened one component at a
time from the top, each directory with `O_NOFOLLOW | O_DIRECTORY` relative to its parent: a folder
swapped for a symlink fails the open instead of leading outside the root.

That walk costs one `openat` per level, which is nothing next to a request but a fifth more on a
cold 100,000-file scan; a scan instead passes the device and inode its walk saw (`identity`), and a
descriptor that is not that very file is refused. The scan's window between walking and opening is
milliseconds; a served file's is the life of the snapshot, so reads always walk.
"""

from __future__ import annotations

import errno
import os
import stat

from skillwire.core.errors import UnsafeFile

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS = (
    os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
)
# O_PATH (Linux) opens a directory one may search but not list; O_DIRECTORY makes a symlink fail.
_DIR_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
)
_CAN_WALK = bool(_NOFOLLOW) and os.open in os.supports_dir_fd


def _walk_open(path: str) -> int:
    head, _, name = path.rpartition(os.sep)
    if not name:
        raise UnsafeFile(errno.EISDIR, "a path ending in a separator is not a file", path)
    parts = [part for part in head.split(os.sep) if part]
    fd = os.open(os.sep if os.path.isabs(path) else os.curdir, _DIR_FLAGS)
    try:
        for part in parts:
            try:
                parent, fd = fd, os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafeFile(
                        exc.errno, "a folder on its path is no longer a folder (a symlink?)", path
                    ) from None
                raise
            os.close(parent)
        try:
            return os.open(name, _FILE_FLAGS, dir_fd=fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile(exc.errno, "it is now a symlink", path) from None
            raise
    finally:
        os.close(fd)


def open_regular(path: str, *, identity: tuple[int, int] | None = None) -> int:
    """A read-only descriptor of the regular file at `path`, never through a symlink, never blocking.

    With `identity` (`st_dev`, `st_ino` as a walk saw them), `path` is opened in one call and the file
    must be that one; without it, `path` is opened a component at a time (see the module docstring).
    Raises `UnsafeFile` (an `OSError`) for anything but the expected regular file.
    """
    if identity is None and _CAN_WALK:
        fd = _walk_open(path)
    else:
        try:
            fd = os.open(path, _FILE_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile(exc.errno, "it is now a symlink", path) from None
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(errno.EINVAL, "it is no longer a regular file", path)
        if identity is not None and (st.st_dev, st.st_ino) != identity:
            raise UnsafeFile(errno.ESTALE, "it is no longer the file the scan found", path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd: int, expected_size: int) -> bytes:
    """Up to `expected_size + 1` bytes from `fd`: one more than expected shows the file grew."""
    data = os.read(fd, expected_size + 1)
    # Asked for one byte more than expected and got no more than expected: that read met the end of
    # the file, so asking again (one more system call per file, a tenth of a cold scan's) tells nothing.
    # A grown file is still caught by the byte too many; a changed one by its digest.
    while len(data) < expected_size and (more := os.read(fd, expected_size + 1 - len(data))):
        data += more  # a short read; rare on regular files
    return data


def read_regular(path: str, expected_size: int, *, identity: tuple[int, int] | None = None) -> bytes:
    """The bytes of the regular file at `path` (see `open_regular`), and one more if it grew."""
    fd = open_regular(path, identity=identity)
    try:
        return read_fd(fd, expected_size)
    finally:
        os.close(fd)

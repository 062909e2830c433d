"""Watch folders for *opens* with Linux inotify, to prove another process never opened a file there.

A server under test runs as a subprocess, so a spy on `os.open` cannot see what it opens; the kernel
can. `OpenWatch` reports every `IN_OPEN` / `IN_ACCESS` on the watched folders (the folder itself and
each entry directly in it) by any process, ours included, so a test drains the events of its own
setup before it makes the requests it judges.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from pathlib import Path
from types import TracebackType

IN_ACCESS = 0x00000001
IN_OPEN = 0x00000020
IN_NONBLOCK = os.O_NONBLOCK
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len


def _libc() -> ctypes.CDLL:
    # The C library this process has already loaded (dlopen(NULL)); ctypes.util.find_library would run
    # `ldconfig -p` as a subprocess, at collection time, in the test run that starts no process.
    return ctypes.CDLL(None, use_errno=True)


def available() -> bool:
    return sys.platform.startswith("linux") and hasattr(_libc(), "inotify_init1")


class OpenWatch:
    def __init__(self, folders: list[Path]) -> None:
        self._libc = _libc()
        self._fd = self._libc.inotify_init1(IN_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._names: dict[int, Path] = {}
        for folder in folders:
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), IN_OPEN | IN_ACCESS)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder} failed")
            self._names[wd] = folder

    def events(self) -> list[tuple[Path, int]]:
        """Every open or read since the last call: (path, mask)."""
        found: list[tuple[Path, int]] = []
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return found
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size
                name = data[offset : offset + length].rstrip(b"\0")
                offset += length
                folder = self._names.get(wd, Path("?"))
                found.append((folder / os.fsdecode(name) if name else folder, mask))

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> OpenWatch:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

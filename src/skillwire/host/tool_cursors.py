"""The secret `list_skills` cursors are MAC'd with: one per install, so nobody else can forge one.

A cursor carries where a listing continues (and, for a query, the query itself); `core/cursor` MACs it so
a cursor that was cut or edited is refused. With a key everyone knows (the codec's public default) anyone
could write a cursor of their own, such as one carrying a 2,900-character query past the 500-character
limit a fresh request has. So the key is secret, and chosen here, in this order:

1. `SkillTools(cursor_secret=...)`, an embedding application's own choice;
2. `$SKILLWIRE_LIST_SKILLS_SECRET`: what replicas that must continue each other's cursors share (several
   bridges behind one address, say), by configuration;
3. otherwise the install's own: 32 random bytes made once and kept in `<user config>/skillwire/
   list-skills-cursor.key`, created with mode 0600 (never readable by another user; a file anyone else can
   read or write, a symlink or another user's file is not used). A new bridge started per call (as
   langchain-mcp-adapters does) reads the same file, so a cursor from one process continues in the next;
   where the file cannot be made or used, a random secret for this process alone (one warning line), and
   cursors then end with the process.

Whatever the key, a decoded cursor's fields pass the same checks as a fresh request's (tool_listing.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import stat
from pathlib import Path

import platformdirs

__all__: list[str] = []  # internal: SkillTools(cursor_secret=...) is the public way in

SECRET_ENV = "SKILLWIRE_LIST_SKILLS_SECRET"
SECRET_FILE_NAME = "list-skills-cursor.key"
_SECRET_BYTES = 32
logger = logging.getLogger("skillwire.host.tools")


def default_secret_path() -> Path:
    return platformdirs.user_config_path("skillwire") / SECRET_FILE_NAME


def install_secret(path: Path | None = None) -> bytes:
    """The key of this install's `list_skills` cursors (see the module docstring for the order)."""
    configured = os.environ.get(SECRET_ENV, "")
    if configured:
        return configured.encode()
    where = path if path is not None else default_secret_path()
    try:
        return _read_or_create(where)
    except (OSError, ValueError) as exc:
        logger.warning(
            "list_skills cursors: %s cannot be used (%s); this process uses a secret of its own, so its cursors "
            "end with it (set %s to share one)",
            where,
            exc,
            SECRET_ENV,
        )
        return secrets.token_bytes(_SECRET_BYTES)


def _read_or_create(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    # Written whole under a temporary name, then linked into place: two processes starting at once both end
    # up with the one file that got there first, never a half-written one.
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(_SECRET_BYTES) + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _read(path)


def _read(path: Path) -> bytes:
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "r", encoding="ascii") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise ValueError("it is not a regular file")
        if hasattr(os, "getuid") and status.st_uid != os.getuid():
            raise ValueError("another user owns it")
        if status.st_mode & 0o077:
            raise ValueError(f"its mode is {stat.S_IMODE(status.st_mode):o}; only its owner may read it (0600)")
        text = handle.read(2 * _SECRET_BYTES + 2).strip()
    if len(text) != 2 * _SECRET_BYTES:
        raise ValueError("it does not hold a secret of the expected length")
    return bytes.fromhex(text)

"""The skill folders a command line names (`serve` and `sign` take the same roots, so they sign exactly
what is served): each one must exist and be a folder before anything is scanned."""

from __future__ import annotations

from skillwire.catalog.filesystem import SkillRoot
from skillwire.cli.args import UsageError
from skillwire.core.errors import SkillwireError


def parse_roots(paths: list[str]) -> list[SkillRoot]:
    """The folders to serve; a path that does not exist or is not a folder is a `UsageError`."""
    roots: list[SkillRoot] = []
    for spec in paths:
        try:
            root = SkillRoot.parse(spec)
        except SkillwireError as exc:
            raise UsageError(f"cannot serve {spec!r}: {exc}") from None
        if not root.path.exists():
            raise UsageError(f"no such folder: {root.path}")
        if not root.path.is_dir():
            raise UsageError(f"not a folder: {root.path} (serve the folder that holds your skill folders)")
        roots.append(root)
    return roots

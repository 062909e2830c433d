"""Old names kept working for a while after a rename: each use warns with a `DeprecationWarning` naming
the new one, so code written against the old name keeps running and is told what to change."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Warn that `old` is now `new`; `stacklevel` points the warning at the caller's line."""
    warnings.warn(f"{old} is renamed {new}; the old name will be removed", DeprecationWarning, stacklevel=stacklevel)


def renamed_attributes(module: str, renamed: Mapping[str, tuple[str, object]]) -> Callable[[str], object]:
    """A module `__getattr__` answering each old name in `renamed` (old -> (what to use instead, the
    value)) with a warning; any other missing name is the usual `AttributeError`."""

    def __getattr__(name: str) -> object:
        if name in renamed:
            new, value = renamed[name]
            warn_renamed(f"{module}.{name}", new)
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__

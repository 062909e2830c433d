"""A Debian tool an end-to-end test needs (Prometheus, HAProxy): found, installed with apt-get when missing
and this is root, or the test is skipped saying why. One place, so every such test installs alike."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

import pytest

# Where Debian puts daemons (haproxy), which a non-root PATH often leaves out.
SYSTEM_DIRS = ("/usr/sbin",)


def _find(name: str, also_in: Sequence[str]) -> str | None:
    found = shutil.which(name)
    if found is not None:
        return found
    return next((path for folder in also_in if os.access(path := os.path.join(folder, name), os.X_OK)), None)


def apt_tool(name: str, package: str | None = None, *, also_in: Sequence[str] = SYSTEM_DIRS) -> str:
    """The path of the program `name`: on PATH or in `also_in`; else `apt-get install package` (default: the
    same name) when running as root where apt-get exists, then looked for again; else `pytest.skip`."""
    package = package or name
    found = _find(name, also_in)
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-q", package], env=env, capture_output=True, timeout=600)
        found = _find(name, also_in)
    if found is None:
        pytest.skip(f"no {name} binary, and `apt-get install {package}` was not possible (not root or no apt)")
    return found

"""`pull --for claude` enters cli/ once (issue 38): the library (`host/mirror/`, `host/resolve.py`) resolves the
names and answers `--yes` itself, so the command line is called back only to ask a person at a terminal.

Traced at run time by `scripts/walk-trace` (a profile hook over a real stdio server of the examples): every
call into a `skillwire.cli` function whose nearest skillwire caller is outside cli/ is an entry.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from support.servers import REPO_ROOT


@pytest.mark.parametrize("named", [False, True], ids=["every-skill", "one-by-name"])
def test_pull_for_claude_enters_cli_once(named: bool) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, str(REPO_ROOT / "scripts" / "walk-trace"), "--list"]
    argv += ["--name", "pdf-processing"] if named else []
    result = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("exit 0; skills written: "), result.stdout
    written = result.stdout.splitlines()[0].removeprefix("exit 0; skills written: ").split(", ")
    assert written == ["pdf-processing"] if named else len(written) > 1, result.stdout
    entries = re.search(r"cli/ entries: (\d+)", result.stdout)
    assert entries is not None, result.stdout
    assert int(entries.group(1)) == 1, result.stdout  # `main` only: no return upward into cli/

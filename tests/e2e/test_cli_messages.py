"""The command-line messages a new user hit (issue 20, first-hour items), each as the user runs it."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from support.bridge import SKILLWIRE, write_skill


def _run(*args: str, cwd: Path, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    env_home = {"HOME": str(cwd), "XDG_CONFIG_HOME": str(cwd / ".config"), "XDG_CACHE_HOME": str(cwd / ".cache")}
    import os

    return subprocess.run(
        [*SKILLWIRE, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        stdin=stdin,
        env={**os.environ, **env_home},
    )


def test_trust_add_with_a_missing_file_says_no_such_file(tmp_path: Path) -> None:
    done = _run("trust", "add", "acme", str(tmp_path / "missing.pub"), cwd=tmp_path)
    assert done.returncode == 2
    assert "no such file" in done.stderr
    assert "not an OpenSSH public key" not in done.stderr


def test_an_ordinary_error_has_no_traceback_hint(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = _run("ls", f"http://127.0.0.1:{port}/mcp", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip()
    assert "--debug" not in done.stderr, done.stderr


def test_serve_counts_in_the_singular(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "only-one", "The only skill.")
    done = _run("serve", str(tmp_path / "skills"), "--stdio", "--no-watch", cwd=tmp_path)
    assert "serving 1 skill, " in done.stderr, done.stderr
    assert "1 skills" not in done.stderr

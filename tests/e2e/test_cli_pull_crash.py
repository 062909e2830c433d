"""`pull` killed at its crash points (issue 11 item 8): `--check` tells the truth about the disk, and the next
`pull` repairs the folder and removes every `.skillwire-*` leftover.

The crash is real: `skillwire pull` runs as a subprocess with `SKILLWIRE_TEST_CRASH_AT` naming the point
where it dies at once (`os._exit`, no cleanup), as a power cut or SIGKILL would leave it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli import run_cli
from support.servers import EXAMPLES

STDIO = [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", "--no-digest-cache", "-q"]
SERVER = ["--", *STDIO, str(EXAMPLES)]


def pull_process(dest: Path, crash_at: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "SKILLWIRE_TEST_CRASH_AT": crash_at}
    return subprocess.run(
        [sys.executable, "-m", "skillwire.cli.main", "pull", "--to", str(dest), *SERVER],
        capture_output=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def leftovers(dest: Path) -> list[str]:
    return sorted(p.name for p in dest.iterdir() if p.name.startswith(".skillwire-"))


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.relative_to(root).as_posix().startswith(".skillwire-")
    }


@pytest.mark.parametrize("crash_at", ["between-renames", "staging"])
def test_a_pull_killed_mid_replace_is_reported_by_check_and_repaired_by_the_next_pull(
    tmp_path: Path, crash_at: str
) -> None:
    dest = tmp_path / "skills"
    first = run_cli("pull", "--to", str(dest), *SERVER)
    assert first.code == 0, first.err
    before = tree(dest)

    crashed = pull_process(dest, crash_at)
    assert crashed.returncode == 75, crashed.stderr.decode()
    assert leftovers(dest), "the crash left nothing behind: the crash point was not reached"

    check = run_cli("pull", "--check", "--json", "--to", str(dest), *SERVER)
    report = json.loads(check.out)
    damaged = [s for s in report["skills"] if s["status"] in ("missing", "edited locally")]
    if crash_at == "between-renames":
        # One skill folder is gone from where the lock says it is: --check must not say "in step".
        assert check.code == 1
        assert len(damaged) == 1, report
        assert damaged[0]["status"] == "missing"
        assert "is missing" in damaged[0]["note"]
        assert "`skillwire pull` puts it back" in damaged[0]["note"]
    else:
        # Killed while downloading into staging: the folders are intact, only debris is left (and named).
        assert check.code == 0
        assert damaged == []
    assert "temporary .skillwire-* entries" in check.err

    repaired = run_cli("pull", "--to", str(dest), *SERVER)
    assert repaired.code == 0, repaired.err
    if crash_at == "between-renames":
        assert "note: restored " in repaired.err
    assert leftovers(dest) == []
    assert tree(dest) == before

    again = run_cli("pull", "--check", "--to", str(dest), *SERVER)
    assert again.code == 0, again.text + again.err
    assert again.text.splitlines()[-1].startswith("in step: all ")


def test_check_reports_a_file_changed_or_removed_on_disk(tmp_path: Path) -> None:
    dest = tmp_path / "skills"
    assert run_cli("pull", "--to", str(dest), *SERVER).code == 0
    (dest / "git-workflow" / "SKILL.md").write_text("edited by hand\n")
    check = run_cli("pull", "--check", "--to", str(dest), *SERVER)
    assert check.code == 1
    line = next(line for line in check.text.splitlines() if line.startswith("edited locally"))
    assert "git-workflow has other bytes in SKILL.md" in line


def test_check_reports_a_file_added_inside_a_pulled_folder(tmp_path: Path) -> None:
    # The rule `pull --for HOST --check` applies (issue 35, defect 1): a file the lock does not list is not
    # the pull's, so the folder is not "in step" (and a pull refuses to replace it).
    dest = tmp_path / "skills"
    assert run_cli("pull", "--to", str(dest), *SERVER).code == 0
    (dest / "git-workflow" / "mine.md").write_text("my notes\n")
    check = run_cli("pull", "--check", "--to", str(dest), *SERVER)
    assert check.code == 1, check.text
    line = next(line for line in check.text.splitlines() if "git-workflow" in line)
    assert line.startswith("added locally    skill://git-workflow/SKILL.md")
    assert "holds files skills.lock does not list (git-workflow/mine.md)" in line

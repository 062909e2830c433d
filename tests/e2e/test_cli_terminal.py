"""Output for people: progress bars and colour on a real terminal (tmux), none of it when piped.

Each terminal test runs one command in a detached tmux session on a private tmux server, records
everything the command wrote to the terminal (`pipe-pane`, so a transient progress bar is caught
even though it is erased at the end), and reads the final screen (`capture-pane`). Skipped, with
the reason, when tmux is not installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TMUX = shutil.which("tmux")
CLI = [sys.executable, "-m", "skillwire.cli.main"]
BAR = "━"  # rich's progress bar
TOTAL_FILES = 15  # the example skills' manifests, summed per skill (code-review includes security-audit's 2)

needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install -y tmux)")


@dataclass
class TerminalRun:
    raw: str  # every byte written to the terminal, ANSI sequences included
    screen: list[str]  # the final screen (wrapped lines joined), without trailing blanks, up to the exit marker
    exit_code: int


class Terminal:
    """A private tmux server; `run` executes one command in a fresh session of the given size."""

    def __init__(self, workdir: Path) -> None:
        assert TMUX is not None
        self.tmux = TMUX
        self.workdir = workdir
        self.name = f"skillwire-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES", "TMUX")}
        self.env.setdefault("LANG", "C.UTF-8")

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            [self.tmux, "-L", self.name, *args], capture_output=True, text=True, env=self.env, timeout=30
        )
        if proc.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def run(self, argv: list[str], *, width: int = 100, height: int = 40, timeout: float = 180) -> TerminalRun:
        session = uuid.uuid4().hex[:8]
        go, raw = self.workdir / f"{session}.go", self.workdir / f"{session}.raw"
        raw.touch()
        script = (
            f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done; "
            f'{shlex.join(argv)}; echo "__EXIT__ $?"; sleep 600'
        )
        self._tmux("new-session", "-d", "-s", session, "-x", str(width), "-y", str(height), "sh", "-c", script)
        self._tmux("pipe-pane", "-t", session, "-o", f"cat >> {shlex.quote(str(raw))}")
        go.touch()  # start only once the pane's output is being recorded
        deadline = time.monotonic() + timeout
        while True:
            screen = self._tmux("capture-pane", "-p", "-J", "-t", session).splitlines()
            marker = next((line for line in screen if line.startswith("__EXIT__ ")), None)
            if marker is not None:
                break
            if time.monotonic() > deadline:
                raise AssertionError("the command did not finish in the terminal:\n" + "\n".join(screen))
            time.sleep(0.1)
        time.sleep(0.2)  # let pipe-pane flush
        self._tmux("kill-session", "-t", session)
        lines = [line.rstrip() for line in screen]
        end = lines.index(marker)
        return TerminalRun(raw.read_text(encoding="utf-8", errors="replace"), lines[:end], int(marker.split()[1]))

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.name, "kill-server"], capture_output=True, env=self.env, timeout=30)
        # tmux leaves its socket file behind
        socket_dir = Path(self.env.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        (socket_dir / self.name).unlink(missing_ok=True)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    if TMUX is None:
        pytest.skip("tmux is not installed (apt-get install -y tmux)")
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


@needs_tmux
def test_pull_shows_a_progress_bar_on_a_terminal(terminal: Terminal, examples_url: str, tmp_path: Path) -> None:
    out = tmp_path / "pulled"
    run = terminal.run([*CLI, "pull", "--to", str(out), examples_url])
    assert run.exit_code == 0, "\n".join(run.screen)
    assert BAR in run.raw
    assert re.search(rf"\b\d+/{TOTAL_FILES}\b", run.raw), run.raw[-2000:]
    assert "pulling " in run.raw
    assert "\x1b[" in run.raw  # colour and cursor control on a terminal
    # The bar is transient: the final screen holds only the report.
    assert not any(BAR in line for line in run.screen)
    assert run.screen[-1] == f"pulled 5 of 5 skills into {out} (lock: {out}/skills.lock)"
    assert (out / "skills.lock").exists()


@needs_tmux
def test_quiet_and_json_show_no_progress_bar_on_a_terminal(
    terminal: Terminal, examples_url: str, tmp_path: Path
) -> None:
    quiet = terminal.run([*CLI, "pull", "--quiet", "--to", str(tmp_path / "q"), examples_url])
    assert quiet.exit_code == 0
    assert BAR not in quiet.raw
    assert [line for line in quiet.screen if line] == []
    as_json = terminal.run([*CLI, "pull", "--json", "--to", str(tmp_path / "j"), examples_url])
    assert as_json.exit_code == 0
    assert BAR not in as_json.raw


@needs_tmux
def test_ls_on_a_terminal_is_a_coloured_table_cut_to_the_width(terminal: Terminal, examples_url: str) -> None:
    run = terminal.run([*CLI, "ls", examples_url], width=100)
    assert run.exit_code == 0, "\n".join(run.screen)
    assert "\x1b[" in run.raw
    table = [line for line in run.screen if line]
    assert len(table) == 6, table  # header and 5 rows: descriptions are cut, not wrapped
    assert table[0].split() == ["NAME", "FILES", "SIZE", "FLAGS", "URI", "DESCRIPTION"]
    assert all(len(line) <= 100 for line in table)
    assert any(line.endswith("...") for line in table[1:])
    assert any("skill://pdf-processing/SKILL.md" in line for line in table)


def test_piped_output_has_no_progress_bar_and_no_colour(examples_url: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    runs = {}
    for args in (["pull", "--to", str(tmp_path / "piped")], ["ls"], ["get", "skill://pdf-processing/SKILL.md"]):
        proc = subprocess.run([*CLI, *args, examples_url], capture_output=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        for stream in (proc.stdout, proc.stderr):
            text = stream.decode("utf-8")
            assert "\x1b[" not in text
            assert BAR not in text
        runs[args[0]] = proc
    # No bar and no warnings: in a pipe stderr is silent, and stdout says each skill once, then the sum
    # (issue 20: progress only on a terminal, nothing said twice).
    assert runs["pull"].stderr == b""
    pulled = runs["pull"].stdout.decode().splitlines()
    assert [line.split()[0] for line in pulled[:-1]] == ["pulled"] * 5
    assert all(line.split()[1].startswith("skill://") for line in pulled[:-1])
    assert pulled[-1].startswith("pulled 5 of 5 skills into ")
    assert runs["get"].stdout.decode().startswith("uri: skill://pdf-processing/SKILL.md\n")

"""`scripts/install-tools` (issue 37): it says what it installs, one line per step, and SKILLWIRE_TEST_HOSTS=0
and SKILLWIRE_TEST_FRAMEWORKS=0 leave out the host CLIs and the frameworks venv. Run from a copy of the script
in a temporary tree whose Node tools are marked installed, with no npm and no pip reachable: a step that
tried to install would fail."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from support.conformance import absent_tool_reason

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-tools"


def run_install_tools(tree: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tree / "scripts").mkdir(parents=True, exist_ok=True)
    shutil.copy(SCRIPT, tree / "scripts" / "install-tools")
    (tree / ".tools").mkdir(exist_ok=True)
    (tree / ".tools" / ".installed-v3").touch()  # the Node tools: already there
    bash = shutil.which("bash")
    assert bash is not None
    # A PATH of the few commands the script itself uses, and no npm or python: nothing can be installed.
    tools = tree / "bin"
    tools.mkdir(exist_ok=True)
    for name in ("dirname", "mkdir", "touch"):
        found = shutil.which(name)
        assert found is not None
        (tools / name).symlink_to(found)
    return subprocess.run(
        [bash, str(tree / "scripts" / "install-tools")],
        env={"PATH": str(tools), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_variables_leave_the_host_clis_and_the_frameworks_out_and_say_so(tmp_path: Path) -> None:
    done = run_install_tools(tmp_path, {"SKILLWIRE_TEST_HOSTS": "0", "SKILLWIRE_TEST_FRAMEWORKS": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "install-tools: SKILLWIRE_TEST_HOSTS=0: not installing Claude Code, Codex and Gemini CLI; their tests skip",
        "install-tools: SKILLWIRE_TEST_FRAMEWORKS=0: not installing the agent frameworks; their tests skip",
    ]
    assert not (tmp_path / ".tools" / "hosts").exists()


def test_each_step_is_announced_with_its_size_before_it_runs(tmp_path: Path) -> None:
    done = run_install_tools(tmp_path, {"SKILLWIRE_TEST_FRAMEWORKS": "0"})
    assert done.returncode != 0  # npm is not reachable: the host step was tried
    first = done.stderr.splitlines()[0]
    assert first.startswith("install-tools: Claude Code 2.1.328, Codex 0.169.0 and Gemini CLI 0.61.0 from npm")
    assert "about 860 MB" in first
    assert "SKILLWIRE_TEST_HOSTS=0 skips them" in first


def test_a_skipped_host_test_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLWIRE_TEST_HOSTS", "0")
    assert (
        absent_tool_reason("Codex", "hosts")
        == "Codex is not installed in .tools/hosts: SKILLWIRE_TEST_HOSTS=0 left it out"
    )
    monkeypatch.delenv("SKILLWIRE_TEST_HOSTS")
    assert absent_tool_reason("Codex", "hosts").endswith("(run scripts/install-tools)")

"""`skillwire pull SERVER --for HOST` (issue 20 item 8): served skills synced into a host's own skills folder.

A real `skillwire serve` (stdio, and HTTP on 127.0.0.1) over a copy of the examples; HOME points into the test's
folder, so `--for claude` writes `$HOME/.claude/skills`. Each sync is a load: the approval (stored in a real
SQLite approval store) and the trust policy apply before a skill is written; only folders skillwire wrote are
replaced or pruned; `--check` reports drift; a sync killed between its two renames is repaired by the next.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from support.cli import CliResult
from support.cli import run_cli as cli
from support.conformance import absent_tool_reason, missing_tools_reason, node_binary
from support.servers import EXAMPLES, REPO_ROOT, serve_http

STDIO = [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", "--no-watch", "--no-digest-cache", "-q"]
RECORD = ".skillwire-sync.json"
SERVED = {"refunds", "pdf-processing", "code-review", "security-audit", "git-workflow"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    copy = tmp_path / "served"
    shutil.copytree(EXAMPLES, copy)
    return copy


def sync(root: Path, home: Path, *args: str) -> CliResult:
    return cli(
        "pull",
        "--for",
        "claude",
        "--approvals",
        str(home / "approvals.sqlite"),
        *args,
        "--",
        *STDIO,
        str(root),
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")},
    )


def folders(skills: Path) -> set[str]:
    return {p.name for p in skills.iterdir() if p.is_dir()} if skills.is_dir() else set()


def test_sync_into_claude_code_asks_owns_updates_prunes_and_never_touches_a_persons_own_skill(
    root: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    skills = home / ".claude" / "skills"
    own = skills / "git-workflow" / "SKILL.md"  # the person's own skill, with the name of a served one
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: git-workflow\ndescription: mine, not the server's\n---\nMy own steps.\n")
    mine = own.read_bytes()

    # Nobody can answer in a pipe: nothing is written without an approval, and the run says so (exit 2).
    asked = sync(root, home)
    assert asked.code == 2, asked.err
    assert folders(skills) == {"git-workflow"}
    assert "add --yes" in asked.err

    done = sync(root, home, "--yes")
    assert done.code == 0, done.err
    assert folders(skills) == SERVED
    assert own.read_bytes() == mine  # never touched
    # A nested skill is a folder of its own, not a second copy inside its parent (hosts scan recursively).
    assert not (skills / "code-review" / "security-audit").exists()
    assert (skills / "security-audit" / "SKILL.md").is_file()
    assert "skillwire did not install it" in done.err
    assert "left untouched" in done.err
    for name, source in (("refunds", "acme/billing/refunds"), ("pdf-processing", "pdf-processing")):
        assert (skills / name / "SKILL.md").read_bytes() == (root / source / "SKILL.md").read_bytes()
    record = json.loads((skills / RECORD).read_text())
    assert sorted(s["path"] for s in record["skills"]) == sorted(SERVED - {"git-workflow"})
    # The approval is the load's: bound to the files, under the server's label, in the approval store.
    label = record["skills"][0]["label"]
    with ApprovalStore(home / "approvals.sqlite") as store:
        assert store.get(SkillRef(label, "skill://acme/billing/refunds/SKILL.md")) is not None

    again = sync(root, home)  # approved and unchanged: nothing to ask, nothing written
    assert again.code == 0, again.err
    assert "4 unchanged" in again.text

    # Upstream: one skill changes, one is removed. --check says so and writes nothing.
    refunds_md = root / "acme" / "billing" / "refunds" / "SKILL.md"
    refunds_md.write_bytes(refunds_md.read_bytes() + b"\nA new step.\n")
    shutil.rmtree(root / "pdf-processing")
    checked = sync(root, home, "--check")
    assert checked.code == 1, checked.text + checked.err
    status = {line.split("  ")[0].strip(): line for line in checked.text.splitlines()}
    assert any(s.startswith("changed upstream") and "refunds" in line for s, line in status.items())
    assert any(s.startswith("gone upstream") and "pdf-processing" in line for s, line in status.items())

    # A changed skill needs a new approval; a removed one stays until --prune.
    pending = sync(root, home)
    assert b"A new step." not in (skills / "refunds" / "SKILL.md").read_bytes()
    assert "kept skill://pdf-processing/SKILL.md: the server no longer serves it (--prune removes it)" in pending.err
    pruned = sync(root, home, "--yes", "--prune")
    assert pruned.code == 0, pruned.err
    assert (skills / "refunds" / "SKILL.md").read_bytes() == refunds_md.read_bytes()
    assert folders(skills) == SERVED - {"pdf-processing"}
    assert own.read_bytes() == mine

    # Edited in place: reported, not overwritten, until --force.
    review = skills / "code-review" / "SKILL.md"
    review.write_bytes(review.read_bytes() + b"\nmy local note\n")
    edited = sync(root, home, "--check")
    assert edited.code == 1
    assert any(line.startswith("edited locally") and "code-review" in line for line in edited.text.splitlines())
    refunds_before = refunds_md.read_bytes()
    refunds_md.write_bytes(refunds_before + b"\nAnother step.\n")  # so there is something to write
    (root / "code-review" / "SKILL.md").write_bytes((root / "code-review" / "SKILL.md").read_bytes() + b"\nv2\n")
    kept = sync(root, home, "--yes")
    assert b"my local note" in review.read_bytes()
    assert "was edited since skillwire installed it" in kept.err
    forced = sync(root, home, "--yes", "--force")
    assert forced.code == 0, forced.err
    assert review.read_bytes() == (root / "code-review" / "SKILL.md").read_bytes()
    assert sync(root, home, "--check").code == 0


def test_in_a_pipe_without_yes_a_sync_that_needs_approval_fails_in_one_line(root: Path, tmp_path: Path) -> None:
    # Issue 37, broken 4: a cron or CI sync without --yes exited 0 having written nothing.
    home = tmp_path / "home"
    skills = home / ".claude" / "skills"
    unasked = sync(root, home)
    assert unasked.code == 2, unasked.err
    assert unasked.err.splitlines() == [
        "skillwire: not a terminal, so nobody was asked: 5 skills needing your approval not written; "
        "add --yes to approve them all (or run it on a terminal)"
    ]
    assert folders(skills) == set()
    assert sync(root, home, "--yes").code == 0
    again = sync(root, home)  # everything approved and unchanged: nothing needed asking
    assert again.code == 0, again.err
    assert again.err == ""


def test_the_persons_files_inside_a_synced_folder_are_kept_and_reported(root: Path, tmp_path: Path) -> None:
    # Issue 35, defect 1: an update and --prune deleted a file the person added inside a synced skill folder,
    # and --check said "in step". Anything the record does not list is the person's.
    home = tmp_path / "home"
    skills = home / ".claude" / "skills"
    assert sync(root, home, "--yes").code == 0
    mine = skills / "refunds" / "my-notes.md"
    mine.write_text("my own notes\n")
    deep = skills / "pdf-processing" / "local" / "todo.md"
    deep.parent.mkdir()
    deep.write_text("mine too\n")

    checked = sync(root, home, "--check")
    assert checked.code == 1, checked.text
    lines = {line.split("  ")[-1].strip("()").split(" ", 1)[0]: line for line in checked.text.splitlines()}
    assert lines["refunds"].startswith("added locally")
    assert "my-notes.md" in lines["refunds"]
    assert "local/todo.md" in lines["pdf-processing"]
    assert checked.text.splitlines()[-1] == "2 of 5 skills differ"

    refunds_md = root / "acme" / "billing" / "refunds" / "SKILL.md"
    refunds_md.write_bytes(refunds_md.read_bytes() + b"\nA new step.\n")
    updated = sync(root, home, "--yes")
    assert updated.code == 0, updated.err
    assert (skills / "refunds" / "SKILL.md").read_bytes() == refunds_md.read_bytes()
    assert mine.read_text() == "my own notes\n"
    assert (
        f"note: updated skill://acme/billing/refunds/SKILL.md, keeping the files skillwire did not write in "
        f"{skills}/refunds: my-notes.md"
    ) in updated.err.splitlines()

    shutil.rmtree(root / "pdf-processing")
    pruned = sync(root, home, "--yes", "--prune", "--force")  # not even --force deletes the person's files
    assert pruned.code == 0, pruned.err
    assert deep.read_text() == "mine too\n"
    assert (skills / "pdf-processing" / "SKILL.md").is_file()
    assert "holds files skillwire did not write (local/todo.md); move them away and --prune removes it" in pruned.err

    # The server's new copy has a file where the person has one: the folder is left as it is.
    (skills / "refunds" / "examples" / "later.md").write_text("my later\n")
    (root / "acme" / "billing" / "refunds" / "examples" / "later.md").write_text("the server's later\n")
    blocked = sync(root, home, "--yes", "--force")
    assert (skills / "refunds" / "examples" / "later.md").read_text() == "my later\n"
    assert "where the server's copy has files (examples/later.md); left untouched" in blocked.err
    assert mine.read_text() == "my own notes\n"


def test_the_trust_policy_refuses_before_anything_is_written(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    refused = sync(root, home, "--yes", "--trust", "require")
    assert refused.code == 1
    assert "not written, as a host would not load it" in refused.err
    assert folders(home / ".claude" / "skills") == set()
    with ApprovalStore(home / "approvals.sqlite") as store:
        assert store.list() == []  # refused before the approval step


def test_sync_over_http_into_a_projects_codex_folder(root: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {"HOME": str(tmp_path / "home")}
    approvals = str(tmp_path / "approvals.sqlite")
    with serve_http([str(root), "--no-watch", "--no-digest-cache"]) as server:
        args = ("--for", "codex", "--project", str(project))
        done = cli("pull", server.url, *args, "--yes", "--approvals", approvals, env=env)
        assert done.code == 0, done.err
        skills = project / ".agents" / "skills"
        assert folders(skills) == SERVED
        assert not (tmp_path / "home" / ".agents").exists()
        checked = cli("pull", server.url, *args, "--check", env=env)
        assert checked.code == 0, checked.text + checked.err
        assert "in step: all 5 synced skills" in checked.text


def test_a_sync_killed_between_its_renames_is_repaired_by_the_next(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    skills = home / ".claude" / "skills"
    assert sync(root, home, "--yes").code == 0
    md = root / "git-workflow" / "SKILL.md"
    md.write_bytes(md.read_bytes() + b"\nchanged upstream\n")
    env = {**os.environ, "HOME": str(home), "SKILLWIRE_TEST_CRASH_AT": "between-renames"}
    command = [sys.executable, "-m", "skillwire.cli.main", "pull", "--for", "claude", "--yes"]
    command += ["--approvals", str(home / "approvals.sqlite"), "--", *STDIO, str(root)]
    crashed = subprocess.run(command, capture_output=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert crashed.returncode == 75, crashed.stderr.decode()
    assert not (skills / "git-workflow").exists()  # killed with the old copy aside
    checked = sync(root, home, "--check")
    assert "an interrupted sync left work" in checked.err
    repaired = sync(root, home, "--yes")
    assert repaired.code == 0, repaired.err
    assert (skills / "git-workflow" / "SKILL.md").read_bytes() == md.read_bytes()
    assert sorted(p.name for p in skills.iterdir() if p.name.startswith(".skillwire-")) == [RECORD]
    assert sync(root, home, "--check").code == 0


def gemini_cli() -> Path | None:
    """Gemini CLI's entry script from `.tools/hosts/` (`scripts/install-tools`), or None when it is absent."""
    script = REPO_ROOT / ".tools" / "hosts" / "node_modules" / ".bin" / "gemini"
    return script.resolve() if script.exists() else None


def test_gemini_cli_discovers_exactly_the_synced_skills_beside_a_persons_own(root: Path, tmp_path: Path) -> None:
    # A real host reading the folder: `gemini skills list` scans ~/.gemini/skills offline, without signing in.
    script = gemini_cli()
    if script is None or missing_tools_reason() is not None:
        pytest.skip(absent_tool_reason("Gemini CLI", "hosts"))
    home = tmp_path / "home"
    skills = home / ".gemini" / "skills"
    own = skills / "git-workflow" / "SKILL.md"
    own.parent.mkdir(parents=True)
    own.write_text("---\nname: git-workflow\ndescription: my own git steps, not the server's\n---\nMine.\n")
    done = cli(
        "pull",
        "--for",
        "gemini",
        "--yes",
        "--approvals",
        str(home / "a.sqlite"),
        "--",
        *STDIO,
        str(root),
        env={"HOME": str(home)},
    )
    assert done.code == 0, done.err
    work = tmp_path / "elsewhere"
    work.mkdir()
    listed = subprocess.run(
        [str(node_binary()), str(script), "skills", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=work,
        stdin=subprocess.DEVNULL,
        env={"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "NO_COLOR": "1"},
        check=False,
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    locations = re.findall(r"Location:\s+(\S+)/SKILL\.md", listed.stdout)
    found = {Path(location).name: Path(location) for location in locations}
    assert set(found) == SERVED, listed.stdout
    assert len(locations) == len(SERVED)  # each once: the nested skill is not also found inside its parent
    assert all(path.parent == skills for path in found.values())
    assert "my own git steps, not the server's" in listed.stdout  # the person's skill, untouched, still theirs
    description = "Process customer refund requests"
    assert description in listed.stdout


@pytest.mark.parametrize("crash_at", ["staging", "removing"])
def test_a_sync_killed_while_staging_or_pruning_leaves_a_folder_the_next_sync_completes(
    root: Path, tmp_path: Path, crash_at: str
) -> None:
    home = tmp_path / "home"
    skills = home / ".claude" / "skills"
    assert sync(root, home, "--yes").code == 0
    before = (skills / "git-workflow" / "SKILL.md").read_bytes()
    if crash_at == "staging":
        md = root / "git-workflow" / "SKILL.md"
        md.write_bytes(md.read_bytes() + b"\nchanged upstream\n")
    else:
        shutil.rmtree(root / "git-workflow")
    env = {**os.environ, "HOME": str(home), "SKILLWIRE_TEST_CRASH_AT": crash_at}
    command = [sys.executable, "-m", "skillwire.cli.main", "pull", "--for", "claude", "--yes", "--prune"]
    command += ["--approvals", str(home / "approvals.sqlite"), "--", *STDIO, str(root)]
    crashed = subprocess.run(command, capture_output=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert crashed.returncode == 75, crashed.stderr.decode()
    if crash_at == "staging":  # the old copy is untouched while the new one is staged
        assert (skills / "git-workflow" / "SKILL.md").read_bytes() == before
    else:  # the folder left in one rename: never half a skill where the host reads skills
        assert not (skills / "git-workflow").exists()
    finished = sync(root, home, "--yes", "--prune")
    assert finished.code == 0, finished.err
    assert sorted(p.name for p in skills.iterdir() if p.name.startswith(".skillwire-")) == [RECORD]
    if crash_at == "staging":
        assert (skills / "git-workflow" / "SKILL.md").read_bytes() == (root / "git-workflow" / "SKILL.md").read_bytes()
    else:
        assert not (skills / "git-workflow").exists()
        assert "git-workflow" not in (skills / RECORD).read_text()
    assert sync(root, home, "--check").code == 0

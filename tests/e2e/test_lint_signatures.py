"""`skillwire lint` on a folder `skillwire sign` signed: a skill whose files no longer match its signature is
one warning line naming the skill, the first file that differs, and that it must be signed again.

The key is made with OpenSSH's own `ssh-keygen` in a temporary folder and the folder is signed by the real
`skillwire sign`; lint runs in process (so the rule-coverage collector sees the finding) and once as the
command a person types.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillwire.catalog.signatures import SIGNATURES_FILE
from skillwire.checks.lint import lint_path
from support.bridge import write_skill

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="OpenSSH's ssh-keygen is not installed")
SKILLWIRE = [sys.executable, "-m", "skillwire.cli.main"]


def _signed_root(tmp_path: Path) -> Path:
    key = tmp_path / "release-key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "release", "-f", str(key)], check=True)
    root = tmp_path / "skills"
    write_skill(root, "refunds", "Refund rules.", files={"references/policy.md": "30 days.\n", "z.md": "last\n"})
    write_skill(root, "billing", "Billing rules.", files={"notes.md": "net 30\n"})
    done = subprocess.run(
        [*SKILLWIRE, "sign", str(root), "--key", str(key)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (root / SIGNATURES_FILE).is_file()
    return root


def _stale(root: Path) -> list[tuple[str, str, str, str | None]]:
    report = lint_path(str(root))
    return [(f.file, f.message, f.suggestion, f.skill) for f in report.findings if f.rule == "signature-stale"]


def test_lint_names_the_first_file_changed_since_signing(tmp_path: Path) -> None:
    root = _signed_root(tmp_path)
    assert _stale(root) == []  # just signed: nothing to say

    (root / "refunds" / "z.md").write_text("edited\n")
    (root / "refunds" / "references" / "policy.md").write_text("60 days.\n")
    (stale,) = _stale(root)
    file, message, suggestion, skill = stale
    # The first in path order of the two edits, and only the edited skill.
    assert file == str(root / "refunds" / "references" / "policy.md")
    assert message == (
        "skill://refunds/SKILL.md no longer matches its publisher signature: references/policy.md changed since "
        "signing; skillwire serve sends it unsigned"
    )
    assert suggestion == f"re-sign it: skillwire sign {root} --key KEY"
    assert skill == str(root / "refunds")

    # The command a person runs: one warning line for it, and lint still exits 0 (a warning, not an error).
    done = subprocess.run([*SKILLWIRE, "lint", str(root)], capture_output=True, text=True, timeout=120)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "signature-stale" in line]
    assert len(lines) == 1, done.stdout + done.stderr
    assert "references/policy.md changed since signing" in lines[0]
    assert done.returncode == 0, done.stdout + done.stderr


def test_lint_names_an_added_and_a_removed_file(tmp_path: Path) -> None:
    root = _signed_root(tmp_path)
    (root / "billing" / "notes.md").unlink()
    (root / "refunds" / "a-new.md").write_text("new\n")
    found = {skill: (file, message) for file, message, _, skill in _stale(root)}
    assert found[str(root / "billing")] == (
        str(root / "billing" / "SKILL.md"),
        "skill://billing/SKILL.md no longer matches its publisher signature: notes.md removed since signing; "
        "skillwire serve sends it unsigned",
    )
    assert found[str(root / "refunds")][0] == str(root / "refunds" / "a-new.md")
    assert "a-new.md was added since signing" in found[str(root / "refunds")][1]


def test_a_signatures_file_without_the_signed_file_list_still_warns(tmp_path: Path) -> None:
    # A signatures file written before the signed files were recorded: the warning cannot name the file.
    root = _signed_root(tmp_path)
    body = json.loads((root / SIGNATURES_FILE).read_text())
    for record in body["signatures"].values():
        del record["files"]
    (root / SIGNATURES_FILE).write_text(json.dumps(body))
    (root / "billing" / "notes.md").write_text("net 60\n")
    (stale,) = _stale(root)
    assert stale[0] == str(root / "billing" / "SKILL.md")
    assert "its files changed (this signatures file does not record which)" in stale[1]


def test_a_broken_signatures_file_is_one_finding(tmp_path: Path) -> None:
    root = _signed_root(tmp_path)
    (root / SIGNATURES_FILE).write_text('{"version": 1, "namespace": "skillwire-manifest-v1", "signatures": 3}')
    report = lint_path(str(root))
    (unreadable,) = [f for f in report.findings if f.rule == "unreadable"]
    assert "'signatures' is not an object" in unreadable.message

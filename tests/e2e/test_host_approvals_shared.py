"""Approvals shared between processes: two processes open one approvals database and each sees the
other's approvals and revocations (tests/host/test_approvals.py has the store's rules in one process).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from host.test_approvals import BASE, SKILL, manifest
from skillwire.host.approvals import ApprovalStatus, ApprovalStore
from skillwire.host.identity import SkillRef

# One child process (importing skillwire is slow): it checks the parent's approval, approves a skill of its
# own, then checks with an edited manifest, which revokes the parent's approval.
_CHILD = textwrap.dedent(
    """
    import json, sys
    from skillwire.core.manifest import ManifestFile
    from skillwire.host.approvals import ApprovalStore
    from skillwire.host.identity import SkillRef

    path, base, edited = sys.argv[1], *(
        [ManifestFile(f["uri"], f["digest"], f["size"]) for f in json.loads(arg)] for arg in sys.argv[2:]
    )
    work = SkillRef("work", "skill://acme/refunds/SKILL.md")
    with ApprovalStore(path) as store:
        print(store.check(work, base).status)
        store.approve(SkillRef("other", work.uri), base, allowed_tools="Read")
        print(store.check(work, edited).status)
    """
)


def test_two_processes_see_each_others_approvals(tmp_path: Path) -> None:
    path = tmp_path / "approvals.sqlite"
    edited = manifest(SKILL_md=b"changed")
    with ApprovalStore(path) as store:  # stays open while the other process reads and writes
        store.approve(SkillRef("work", SKILL), BASE)
        argv = [
            sys.executable,
            "-c",
            _CHILD,
            str(path),
            *(json.dumps([f.to_wire() for f in m]) for m in (BASE, edited)),
        ]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["approved", "changed"]  # it saw this process's approval

        seen = store.get(SkillRef("other", SKILL))  # this process sees the other's approval ...
        assert seen is not None
        assert seen.allowed_tools == "Read"
        assert store.check(SkillRef("work", SKILL), BASE).status is ApprovalStatus.MISSING  # ... and its revocation
